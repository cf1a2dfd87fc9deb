//! A schema lowered into an API's dialect, and what a request carries made of it.

use std::fmt;

use serde_json::Value;

use super::{Api, Provider};
use crate::defer::CALL_TOOL;
use crate::set::ToolSet;
use crate::tool::Tool;

/// Which of a set's tools one request writes, and which of them the turn offers.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Offer {
    /// The tools the conversation declared in its first request, in that order (the set's
    /// search tool and [`CALL_TOOL`](crate::defer::CALL_TOOL) by name): every later request
    /// writes the same list. `None`: the set's own.
    pub(crate) declared: Option<Vec<String>>,
    /// The tools this turn offers, when fewer than declared: written as the API's narrowing of
    /// one request (OpenAI's `allowed_tools`, Gemini's `allowedFunctionNames`), never by
    /// editing the tool list.
    pub(crate) narrow: Option<Vec<String>>,
}

/// A lowered schema, whether it can be sent in the provider's strict mode, and why not.
#[derive(Clone, Debug, PartialEq)]
pub struct Lowered {
    /// The schema in the provider's dialect.
    pub schema: Value,
    /// Whether the schema can be sent in the provider's strict mode.
    pub strict: bool,
    /// Why `strict` is false: what the provider's strict mode cannot express without changing
    /// the schema's meaning.
    pub reasons: Vec<String>,
}

impl Lowered {
    /// The schema wrapped into what a request carries (a tool entry, a structured-output
    /// field) by `wrap`, which is given the schema and whether it is strict.
    pub fn wrap(self, wrap: impl FnOnce(Value, bool) -> Value) -> Exported {
        let Lowered {
            schema,
            strict,
            reasons,
        } = self;
        Exported {
            json: wrap(schema, strict),
            strict,
            reasons,
        }
    }
}

/// A tool, or a structured-output format, written for one API: the JSON to put in the request,
/// whether it is sent as strict, and why not.
#[derive(Clone, Debug, PartialEq)]
pub struct Exported {
    /// The JSON for the request (a tool-list entry, or the structured-output field).
    pub json: Value,
    /// Whether the provider enforces the schema (`strict: true`).
    pub strict: bool,
    /// Why `strict` is off, one reason per feature the API cannot enforce.
    pub reasons: Vec<String>,
}

/// Why a tool set could not be exported for an API.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExportError {
    /// The set breaks a per-request limit of the provider: nothing was sent.
    Limit {
        /// The provider whose limit it is ([`Provider::name`](super::Provider::name)).
        provider: &'static str,
        /// Which limit.
        limit: RequestLimit,
        /// How many the request would have carried.
        found: usize,
        /// The most the provider takes.
        allowed: usize,
        /// What the set has too many of, how many, the limit, and what to do.
        message: String,
    },
    /// A name the provider does not accept.
    Name {
        /// The provider that refuses the name.
        provider: &'static str,
        /// Which tool and name, and the rule the name breaks.
        message: String,
    },
}

/// A per-request limit a provider enforces on the tools it is sent (its 400 when broken).
/// Limits the toolkit can meet without refusing are met instead: Anthropic's on strict tools
/// (20 a request) send the tools past them non-strict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RequestLimit {
    /// Tools in one request (OpenAI: 128 functions; Gemini: 128 function declarations).
    Tools,
}

impl ExportError {
    /// The error of a request carrying `found` of what `limit` counts, over `allowed`;
    /// `advice` ends the message (what to do instead).
    pub fn over(
        provider: &'static str,
        limit: RequestLimit,
        found: usize,
        allowed: usize,
        advice: &str,
    ) -> ExportError {
        let what = match limit {
            RequestLimit::Tools => "tools in one request",
        };
        let mut message = format!("{found} {what}, over the limit of {allowed}");
        if !advice.is_empty() {
            message.push_str(": ");
            message.push_str(advice);
        }
        ExportError::Limit {
            provider,
            limit,
            found,
            allowed,
            message,
        }
    }
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExportError::Limit {
                provider, message, ..
            }
            | ExportError::Name { provider, message } => {
                write!(f, "{provider}: {message}")
            }
        }
    }
}

impl std::error::Error for ExportError {}

/// A deferred tool's entry for an API that searches itself: marked `defer_loading`, and not
/// strict (Anthropic takes at most 20 strict tools a request, deferred ones included; every
/// call is still checked against the schema by the tool set's validator).
fn deferred_entry(entry: &mut Exported) {
    entry.strict = false;
    if let Some(fields) = entry.json.as_object_mut() {
        fields.remove("strict");
        fields.insert("defer_loading".into(), true.into());
    }
}

impl ToolSet {
    /// One tool for `api`, with the boundary sentence in this set's wording.
    pub fn export_tool(&self, tool: &Tool, api: Api) -> Exported {
        api.provider()
            .tool(tool.name(), &self.description(tool), tool.input_schema())
    }

    /// Every tool of the set in `api`'s format, ready for the request's tool list (for Gemini:
    /// one tool holding all `functionDeclarations`; for Bedrock: `toolConfig.tools`). Checks
    /// the provider's per-request limits.
    pub fn export(&self, api: Api) -> Result<Vec<Value>, ExportError> {
        self.export_in(api.provider())
    }

    /// [`export`](ToolSet::export) by a provider itself (inside its
    /// [`Provider::request`](super::Provider::request)).
    pub fn export_in(&self, provider: &dyn Provider) -> Result<Vec<Value>, ExportError> {
        let entries = self
            .iter()
            .map(|t| {
                let entry = provider.tool(t.name(), &self.description(t), t.input_schema());
                (&**t, entry)
            })
            .collect();
        provider.tools(entries)
    }

    /// The names a conversation declares in its first request, in the set's order, of the
    /// tools `permits` lets the caller call: every tool but the deferred ones, and then, when
    /// the set defers, its search tool and [`CALL_TOOL`] (through which the model calls what
    /// it found); or, where the API searches itself ([`Provider::tool_search`]), every
    /// deferred tool too (written marked deferred, beside the API's own search tool).
    pub(crate) fn declared_names(
        &self,
        provider: &dyn Provider,
        permits: impl Fn(&Tool) -> bool,
    ) -> Vec<String> {
        use crate::defer::Loading;
        let native = provider.tool_search().is_some();
        let mut names: Vec<String> = self
            .iter()
            .filter(|t| match self.loading(t.name()) {
                Loading::Always => true,
                Loading::Search => !native,
                Loading::Deferred => native,
            })
            .filter(|t| permits(t))
            .map(|t| t.name().to_owned())
            .collect();
        let reachable = self
            .iter()
            .any(|t| self.loading(t.name()) == Loading::Deferred && permits(t));
        if !native && reachable && self.get(CALL_TOOL).is_none() {
            names.push(CALL_TOOL.to_owned());
        }
        names
    }

    /// [`CALL_TOOL`]'s description and input schema, when the set defers tools (and has no
    /// tool of its own by that name).
    pub fn call_tool_definition(&self) -> Option<(String, Value)> {
        if !self.defers() || self.get(CALL_TOOL).is_some() {
            return None;
        }
        let deferred = self.iter().filter(|t| self.is_deferred(t.name())).count();
        Some((
            crate::defer::call_tool_description(deferred),
            crate::defer::call_tool_schema(),
        ))
    }

    /// The tools one request writes, in `provider`'s format: those its conversation declared,
    /// in that order (a name the set no longer has is left out), or the set's own list;
    /// deferred ones marked so, beside the API's own search tool, where the API searches
    /// itself.
    pub(crate) fn export_offered(
        &self,
        provider: &dyn Provider,
        offer: &Offer,
    ) -> Result<Vec<Value>, ExportError> {
        use crate::defer::Loading;
        let native = provider.tool_search();
        let own;
        let names = match &offer.declared {
            Some(declared) => declared,
            None => {
                own = self.declared_names(provider, |_| true);
                &own
            }
        };
        let mut entries = Vec::with_capacity(names.len());
        for name in names {
            if let Some(t) = self.get(name) {
                let mut entry = provider.tool(t.name(), &self.description(t), t.input_schema());
                if native.is_some() && self.loading(t.name()) == Loading::Deferred {
                    deferred_entry(&mut entry);
                }
                entries.push((&**t, entry));
            } else if name == CALL_TOOL
                && let Some((description, schema)) = self.call_tool_definition()
            {
                let entry = provider.tool(CALL_TOOL, &description, &schema);
                entries.push((crate::defer::call_tool(), entry));
            }
        }
        let mut tools = provider.tools(entries)?;
        let deferring = tools.iter().any(|t| t["defer_loading"] == true);
        if let Some(native) = native.filter(|_| deferring) {
            tools.push(native);
        }
        Ok(tools)
    }
}
