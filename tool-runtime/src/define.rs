//! Tools defined at run time: a name, a description, an input JSON Schema (and optionally an
//! output schema, permissions, approval, annotations) and a [`Handler`]. They live in the same
//! [`ToolSet`](crate::ToolSet) as `#[tool]` functions and go through the same pipeline:
//! permissions, the same validator with the same repair messages, approval, the lints.
//!
//! A schema the validator cannot enforce exactly is refused when the tool is defined, with every
//! problem and where it is ([`DefineError`]): a tool is never half-checked.

use std::fmt;
use std::future::Future;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::error::ToolError;
use crate::handler::{FnHandler, Handler, Run};
use crate::host::Annotations;
use crate::task::TaskSupport;
use crate::tool::{Defined, Tool};
use crate::validate::{SchemaProblem, Validator};

/// A tool being defined at run time; [`ToolDef::build`] checks it and makes the [`Tool`].
///
/// ```
/// use serde_json::json;
/// use tool_runtime::{Context, Tool, ToolSet};
///
/// let porsi = Tool::define(
///     "hitung_porsi",
///     "Hitung porsi katering: jumlah peserta ditambah 5 cadangan. Mengembalikan jumlah porsi.",
///     json!({
///         "type": "object",
///         "properties": {
///             "jumlah_peserta": {"type": "integer", "minimum": 1, "maximum": 500,
///                                "description": "Jumlah peserta"}
///         },
///         "required": ["jumlah_peserta"],
///         "additionalProperties": false
///     }),
/// )
/// .output_schema(json!({"type": "integer"}))
/// .build_fn(|args| async move {
///     Ok(json!(args["jumlah_peserta"].as_u64().unwrap_or(0) + 5))
/// })
/// .unwrap();
///
/// let tools = ToolSet::new([porsi]).unwrap();
/// let cx = Context::new();
/// let out = tools.call(&cx, "hitung_porsi", r#"{"jumlah_peserta": 25}"#).blocking().unwrap();
/// assert_eq!(out.json(), "30");
/// // "25" is a string: refused before the handler runs, with the same message a `#[tool]` gets.
/// assert!(tools.call(&cx, "hitung_porsi", r#"{"jumlah_peserta": "25"}"#).blocking().is_err());
/// ```
#[must_use = "a definition does nothing until it is built"]
pub struct ToolDef {
    name: String,
    description: String,
    input: Value,
    output: Option<Value>,
    not_for: Option<String>,
    requires: Vec<String>,
    needs_approval: bool,
    task: TaskSupport,
    asks: bool,
    commits: bool,
    annotations: Annotations,
    timeout: Option<Duration>,
    max_result_chars: Option<u32>,
    allow_lints: Vec<(String, String)>,
    linear_patterns_only: bool,
}

impl Tool {
    /// Starts the definition of a tool at run time: its name (1 to 64 letters, digits, `_` or
    /// `-`, starting with a letter or `_`: what every provider accepts), the description the
    /// model reads, and the JSON Schema of its arguments (an object). See [`ToolDef`].
    pub fn define(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> ToolDef {
        ToolDef {
            name: name.into(),
            description: description.into(),
            input: input_schema,
            output: None,
            not_for: None,
            requires: Vec::new(),
            needs_approval: false,
            task: TaskSupport::Forbidden,
            asks: false,
            commits: false,
            annotations: Annotations::default(),
            timeout: None,
            max_result_chars: None,
            allow_lints: Vec::new(),
            linear_patterns_only: false,
        }
    }
}

impl ToolDef {
    /// The JSON Schema every result must fit: a result that does not is a tool error, never
    /// passed on. Without one, any JSON value is accepted.
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output = Some(schema);
        self
    }

    /// What the tool is not for, naming the tool to use instead (the boundary sentence).
    pub fn not_for(mut self, text: impl Into<String>) -> Self {
        self.not_for = Some(text.into());
        self
    }

    /// Permissions the caller's grants must hold to see and call the tool.
    pub fn requires<S: Into<String>>(mut self, permissions: impl IntoIterator<Item = S>) -> Self {
        self.requires = permissions.into_iter().map(Into::into).collect();
        self
    }

    /// Whether each call waits for a person's approval (held in the set's approval store).
    pub fn needs_approval(mut self, yes: bool) -> Self {
        self.needs_approval = yes;
        self
    }

    /// Whether a call may run as a task the caller follows after its request
    /// ([`TaskSupport`]; by default it may not).
    pub fn task(mut self, support: TaskSupport) -> Self {
        self.task = support;
        self
    }

    /// Whether the handler may ask the person questions while it runs (it reads
    /// [`Answers`](crate::Answers) from its context and returns [`Unanswered`](crate::Unanswered)):
    /// a server keeps such a call's arguments to run it again with the answers.
    pub fn asks(mut self, yes: bool) -> Self {
        self.asks = yes;
        self
    }

    /// Whether the handler passes a commit point ([`Commit`](crate::Commit), read from its
    /// context) before it changes anything: a cancel stops it until then. By default a tool
    /// that is not read-only is committed from its start.
    pub fn commits(mut self, yes: bool) -> Self {
        self.commits = yes;
        self
    }

    /// MCP hints about the tool (never trusted for security).
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// Refuses a `pattern` that only a backtracking engine can run (a backreference,
    /// lookaround): for schemas the host did not write (a remote server's), whose crafted
    /// pattern and string could keep a thread busy for minutes, at definition (the schema's
    /// `examples` are checked then) or at any call. Every other pattern runs in linear time. Off
    /// by default: a host's own patterns are its own.
    pub fn linear_patterns_only(mut self, only: bool) -> Self {
        self.linear_patterns_only = only;
        self
    }

    /// How many characters of a result the model receives (1 to 10,000,000): beyond them it gets
    /// the start and a notice, and an MCP client a link to the whole (see
    /// [`Tool::max_result_chars`]).
    pub fn max_result_chars(mut self, max: u32) -> Self {
        self.max_result_chars = Some(max);
        self
    }

    /// How long one call may run on a server (its default otherwise).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Silences lint `id` for this tool, saying why (as `#[tool(allow_lint = "id: reason")]`).
    pub fn allow_lint(mut self, id: impl Into<String>, reason: impl Into<String>) -> Self {
        self.allow_lints.push((id.into(), reason.into()));
        self
    }

    /// Checks the definition and makes the tool, run by `handler`.
    pub fn build(self, handler: impl Handler) -> Result<Tool, DefineError> {
        self.finish(Box::new(handler))
    }

    /// [`ToolDef::build`] with a closure that takes the validated arguments and does not need
    /// the caller's context.
    pub fn build_fn<F, Fut>(self, handler: F) -> Result<Tool, DefineError>
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        self.finish(Box::new(FnHandler(handler)))
    }

    fn finish(self, handler: Box<dyn Handler>) -> Result<Tool, DefineError> {
        let mut problems = Vec::new();
        if !valid_name(&self.name) {
            problems.push(DefineProblem::Name(
                "use 1 to 64 letters, digits, `_` or `-`, starting with a letter or `_` (what every provider accepts)".into(),
            ));
        }
        if self.description.trim().is_empty() {
            problems.push(DefineProblem::Description(
                "it is empty: say what the tool returns and when to use it".into(),
            ));
        }
        if let Some(n) = self.max_result_chars
            && !(1..=MOST_RESULT_CHARS).contains(&n)
        {
            problems.push(DefineProblem::MaxResultChars(format!(
                "a number of characters from 1 to {MOST_RESULT_CHARS}; got {n}"
            )));
        }
        let input_schema = canonical(self.input);
        if input_schema.get("type").and_then(Value::as_str) != Some("object") {
            problems.push(DefineProblem::Input(SchemaProblem {
                at: String::new(),
                what: "the arguments' schema must be an object (`\"type\": \"object\"`)".into(),
            }));
        }
        let linear = self.linear_patterns_only;
        let input = Validator::compile_with(&input_schema, linear)
            .map_err(|e| problems.extend(e.into_iter().map(DefineProblem::Input)))
            .ok();
        let output_schema = self.output.map(canonical);
        let output = match &output_schema {
            Some(schema) => Validator::compile_with(schema, linear)
                .map(Some)
                .map_err(|e| problems.extend(e.into_iter().map(DefineProblem::Output)))
                .ok()
                .flatten(),
            None => None,
        };
        let (Some(validator), true) = (input, problems.is_empty()) else {
            return Err(DefineError {
                tool: self.name,
                problems,
            });
        };
        let defined = Defined {
            name: self.name,
            description: self.description,
            not_for: self.not_for,
            requires: self.requires,
            needs_approval: self.needs_approval,
            task: self.task,
            asks: self.asks,
            commits: self.commits,
            annotations: self.annotations,
            timeout: self.timeout,
            max_result_chars: self.max_result_chars,
            allow_lints: self.allow_lints,
            run: Run { handler, output },
        };
        let output_schema = output_schema.unwrap_or_else(|| Value::Object(Map::new()));
        Ok(Tool::defined(
            defined,
            input_schema,
            output_schema,
            validator,
        ))
    }
}

/// The tool names every provider and MCP accept: `^[A-Za-z_][A-Za-z0-9_-]{0,63}$` (the rule
/// `#[tool]` checks at compile time).
fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && name.len() <= 64
}

/// A schema in the toolkit's canonical form: draft-07's `definitions` become `$defs` (and their
/// `$ref`s follow), `$schema` is dropped (the toolkit speaks 2020-12 to everyone).
fn canonical(mut schema: Value) -> Value {
    fn refs(v: &mut Value) {
        match v {
            Value::Object(o) => {
                if let Some(Value::String(r)) = o.get_mut("$ref")
                    && let Some(rest) = r.strip_prefix("#/definitions/")
                {
                    *r = format!("#/$defs/{rest}");
                }
                o.values_mut().for_each(refs);
            }
            Value::Array(a) => a.iter_mut().for_each(refs),
            _ => {}
        }
    }
    if let Value::Object(o) = &mut schema {
        o.remove("$schema");
        if !o.contains_key("$defs")
            && let Some(defs) = o.remove("definitions")
        {
            o.insert("$defs".into(), defs);
            refs(&mut schema);
        }
    }
    schema
}

/// Why a tool could not be defined: every problem found, not only the first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DefineError {
    /// The name the definition gave.
    pub tool: String,
    /// Each problem, in the order found.
    pub problems: Vec<DefineProblem>,
}

/// The largest bound on a result the model receives: ten million characters.
const MOST_RESULT_CHARS: u32 = 10_000_000;

/// One problem of a definition.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DefineProblem {
    /// The name is not one every provider accepts.
    Name(String),
    /// The description says nothing.
    Description(String),
    /// The input schema asks something the validator cannot enforce exactly.
    Input(SchemaProblem),
    /// The output schema asks something the validator cannot enforce exactly.
    Output(SchemaProblem),
    /// The bound on a result the model receives is out of its range.
    MaxResultChars(String),
}

impl fmt::Display for DefineProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DefineProblem::Name(what) => write!(f, "the name: {what}"),
            DefineProblem::Description(what) => write!(f, "the description: {what}"),
            DefineProblem::Input(p) => write!(f, "the input schema {p}"),
            DefineProblem::Output(p) => write!(f, "the output schema {p}"),
            DefineProblem::MaxResultChars(what) => write!(f, "max_result_chars: {what}"),
        }
    }
}

impl fmt::Display for DefineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tool `{}` cannot be defined:", self.tool)?;
        for p in &self.problems {
            write!(f, "\n  - {p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for DefineError {}
