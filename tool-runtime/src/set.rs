//! Tool sets: the registry of every `#[tool]` in the program, explicit sets for one agent, and
//! dispatch by name.

use std::fmt;

use rustc_hash::FxHashMap;
use serde_json::Value;

use crate::context::Context;
use crate::host::{CallOutput, PendingCall, release};
use crate::tool::{Format, Source, Tool, ToolError};
use crate::validate::SchemaError;

/// Registers a tool in the program-wide registry; `#[tool]` submits one for every tool.
#[doc(hidden)]
pub struct Registration(pub &'static Tool);

inventory::collect!(Registration);

/// Why a set of tools could not be formed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolSetError {
    /// Two tools share a name (from two crates: within one crate this is a compile error).
    DuplicateName { name: &'static str },
    /// A tool's schema did not compile into a validator.
    Schema {
        tool: &'static str,
        error: SchemaError,
    },
}

impl fmt::Display for ToolSetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolSetError::DuplicateName { name } => write!(
                f,
                "two tools are named `{name}`: rename one with #[tool(name = \"...\")] so the model can tell them apart"
            ),
            ToolSetError::Schema { tool, error } => write!(f, "tool `{tool}`: {error}"),
        }
    }
}

impl std::error::Error for ToolSetError {}

/// A set of tools with unique names, in a fixed order, callable by name.
#[derive(Clone, Debug)]
pub struct ToolSet {
    tools: Vec<&'static Tool>,
    /// Name to index, hashed with FxHash: names are few and short, and SipHash's DoS resistance
    /// buys nothing for a set fixed at start-up.
    by_name: FxHashMap<&'static str, usize>,
}

impl ToolSet {
    /// A set of exactly these tools, in this order.
    pub fn new(tools: impl IntoIterator<Item = &'static Tool>) -> Result<ToolSet, ToolSetError> {
        let tools: Vec<&'static Tool> = tools.into_iter().collect();
        let mut by_name = FxHashMap::default();
        for (i, t) in tools.iter().enumerate() {
            if by_name.insert(t.name(), i).is_some() {
                return Err(ToolSetError::DuplicateName { name: t.name() });
            }
            t.check().map_err(|error| ToolSetError::Schema {
                tool: t.name(),
                error,
            })?;
        }
        Ok(ToolSet { tools, by_name })
    }

    /// Every `#[tool]` linked into the program, ordered by name.
    pub fn all() -> Result<ToolSet, ToolSetError> {
        let mut tools: Vec<&'static Tool> = inventory::iter::<Registration>
            .into_iter()
            .map(|r| r.0)
            .collect();
        tools.sort_by_key(|t| t.name());
        ToolSet::new(tools)
    }

    #[inline]
    pub fn get(&self, name: &str) -> Option<&'static Tool> {
        // A short scan beats hashing the name for the sets one agent should have (the seeds'
        // advice is at most about ten tools).
        if self.tools.len() <= 16 {
            return self.tools.iter().copied().find(|t| t.name() == name);
        }
        self.by_name.get(name).map(|&i| self.tools[i])
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = &'static Tool> + '_ {
        self.tools.iter().copied()
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.tools.iter().map(|t| t.name())
    }

    /// Calls a tool with its arguments as JSON text, as a model sends them. Empty text means no
    /// arguments (`{}`), which some providers send for tools without parameters.
    pub async fn call(
        &self,
        cx: &Context,
        name: &str,
        arguments: &str,
    ) -> Result<Value, ToolError> {
        let tool = self.find(name)?;
        let out = tool
            .run(cx, Source::Text(arguments), Format::Value, false)
            .await?;
        Ok(out.into_value())
    }

    /// [`ToolSet::call`] with the output as JSON text, serialized straight from the tool's value.
    pub async fn call_json(
        &self,
        cx: &Context,
        name: &str,
        arguments: &str,
    ) -> Result<String, ToolError> {
        let tool = self.find(name)?;
        let out = tool
            .run(cx, Source::Text(arguments), Format::Text, false)
            .await?;
        Ok(out.into_text())
    }

    /// Calls a tool and returns its output for each audience: the application's value, what the
    /// model receives (`to_model`), and what a person may see (`redact`).
    pub async fn call_full(
        &self,
        cx: &Context,
        name: &str,
        arguments: &str,
    ) -> Result<CallOutput, ToolError> {
        let tool = self.find(name)?;
        let out = tool
            .run(cx, Source::Text(arguments), Format::Value, false)
            .await?;
        Ok(out.into_call_output())
    }

    /// [`ToolSet::call_full`] with arguments already parsed as JSON.
    pub async fn call_full_value(
        &self,
        cx: &Context,
        name: &str,
        arguments: Value,
    ) -> Result<CallOutput, ToolError> {
        let tool = self.find(name)?;
        let out = tool
            .run(cx, Source::Value(arguments), Format::Value, false)
            .await?;
        Ok(out.into_call_output())
    }

    /// [`ToolSet::call_full`] for code without an async runtime.
    pub fn call_full_blocking(
        &self,
        cx: &Context,
        name: &str,
        arguments: &str,
    ) -> Result<CallOutput, ToolError> {
        let out =
            self.find(name)?
                .run_blocking(cx, Source::Text(arguments), Format::Value, false)?;
        Ok(out.into_call_output())
    }

    /// Runs a call a person approved. It runs once: a second `resume` of the same call (or of a
    /// copy) is [`ToolError::NotPending`]. Permissions are checked again with this context.
    pub async fn resume(
        &self,
        cx: &Context,
        pending: PendingCall,
    ) -> Result<CallOutput, ToolError> {
        let tool = self.find(pending.tool)?;
        if let Some(e) = tool.forbidden(cx) {
            return Err(e);
        }
        if !release(pending.id) {
            return Err(ToolError::NotPending { id: pending.id });
        }
        let out = tool
            .run(cx, Source::Value(pending.arguments), Format::Value, true)
            .await?;
        Ok(out.into_call_output())
    }

    /// [`ToolSet::resume`] for code without an async runtime.
    pub fn resume_blocking(
        &self,
        cx: &Context,
        pending: PendingCall,
    ) -> Result<CallOutput, ToolError> {
        pollster::block_on(self.resume(cx, pending))
    }

    /// Drops a call a person rejected; it can no longer be resumed.
    pub fn reject(&self, pending: PendingCall) {
        release(pending.id);
    }

    /// The tools this caller may see and call: those whose `requires` its grants satisfy. Calls
    /// are checked again at run time, so a guessed name of another tool is still refused.
    pub fn visible_to(&self, cx: &Context) -> ToolSet {
        let tools: Vec<&'static Tool> = self.iter().filter(|t| t.allowed(cx)).collect();
        let by_name = tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name(), i))
            .collect();
        ToolSet { tools, by_name }
    }

    /// Calls a tool with arguments already parsed as JSON.
    pub async fn call_value(
        &self,
        cx: &Context,
        name: &str,
        arguments: Value,
    ) -> Result<Value, ToolError> {
        self.find(name)?.call(cx, arguments).await
    }

    /// [`ToolSet::call`] for code without an async runtime: a sync tool runs on this thread with
    /// no executor at all; an async tool's future is driven here until it is done.
    pub fn call_blocking(
        &self,
        cx: &Context,
        name: &str,
        arguments: &str,
    ) -> Result<Value, ToolError> {
        let out =
            self.find(name)?
                .run_blocking(cx, Source::Text(arguments), Format::Value, false)?;
        Ok(out.into_value())
    }

    /// [`ToolSet::call_json`] for code without an async runtime.
    pub fn call_json_blocking(
        &self,
        cx: &Context,
        name: &str,
        arguments: &str,
    ) -> Result<String, ToolError> {
        let out =
            self.find(name)?
                .run_blocking(cx, Source::Text(arguments), Format::Text, false)?;
        Ok(out.into_text())
    }

    #[inline]
    fn find(&self, name: &str) -> Result<&'static Tool, ToolError> {
        match self.get(name) {
            Some(tool) => Ok(tool),
            None => Err(self.unknown(name)),
        }
    }

    #[cold]
    fn unknown(&self, name: &str) -> ToolError {
        ToolError::UnknownTool {
            name: name.to_owned(),
            did_you_mean: self
                .names()
                .map(|n| (strsim::jaro_winkler(n, name), n))
                .filter(|(s, _)| *s >= 0.8)
                .max_by(|a, b| a.0.total_cmp(&b.0))
                .map(|(_, n)| n.to_owned()),
        }
    }
}
