//! A tool: its metadata, its schemas (built once), and how it is invoked.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context as TaskContext, Poll};

use schemars::{Schema, SchemaGenerator};
use serde_json::{Map, Value};

use crate::call::{Arguments, Call, CallOutput, Repr};
use crate::context::Context;
use crate::host::{Annotations, Grants, PendingCall, hold};
use crate::schema;
use crate::validate::{SchemaError, Validator, Violations};

/// A boxed, sendable future, as returned by async tools.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a tool call produced when it did not produce a value. Every failure is data: none of
/// them panics or takes down the caller. [`model_message`](ToolError::model_message) is what to
/// send back to the model as the call's result.
///
/// ```
/// use tool_runtime::{Context, ToolError, ToolSet, tool};
///
/// #[tool(description = "Bagi satu bilangan bulat dengan bilangan lain dan kembalikan hasilnya.")]
/// fn bagi(
///     #[arg(description = "Bilangan yang dibagi", range = -1000..=1000)] a: i32,
///     #[arg(description = "Pembagi", range = -1000..=1000)] b: i32,
/// ) -> Result<i32, String> {
///     a.checked_div(b).ok_or_else(|| "pembagi tidak boleh nol".to_owned())
/// }
///
/// let tools = ToolSet::new([bagi::tool()]).unwrap();
/// let cx = Context::new();
///
/// // A misspelt name: nothing runs, and the closest name is suggested.
/// let err = tools.call(&cx, "bagii", r#"{"a": 6, "b": 3}"#).blocking().unwrap_err();
/// assert!(matches!(&err, ToolError::UnknownTool { did_you_mean: Some(n), .. } if n == "bagi"));
///
/// // Arguments that break the schema: every violation is listed, and the tool does not run.
/// let err = tools.call(&cx, "bagi", r#"{"a": "6"}"#).blocking().unwrap_err();
/// let ToolError::InvalidArguments(violations) = &err else { panic!("{err}") };
/// assert_eq!(violations.len(), 2);
///
/// // The tool ran and returned `Err`.
/// let err = tools.call(&cx, "bagi", r#"{"a": 6, "b": 0}"#).blocking().unwrap_err();
/// assert_eq!(err, ToolError::Failed { message: "pembagi tidak boleh nol".into() });
/// assert!(err.model_message().contains("pembagi tidak boleh nol"));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ToolError {
    /// No tool of that name in the set.
    UnknownTool {
        /// The name the call asked for.
        name: String,
        /// The set's closest name, when one is close enough to be a likely misspelling.
        did_you_mean: Option<String>,
    },
    /// The arguments broke the schema; every violation is listed.
    InvalidArguments(Violations),
    /// The tool ran and returned `Err`; the message is the error's `Display`.
    Failed {
        /// The error's `Display` (or why the tool's output could not be serialized).
        message: String,
    },
    /// The tool panicked. The message is for the application; the model sees it only when the
    /// tool opted in with `#[tool(panic_to_model = true)]`.
    Panicked {
        /// The panic's message (its `&str` or `String` payload).
        message: String,
        /// Whether the model may see `message` (`#[tool(panic_to_model = true)]`).
        to_model: bool,
    },
    /// The tool needs a host value of this type and the caller's [`Context`] has none.
    MissingContext {
        /// The missing type, as [`std::any::type_name`] writes it.
        type_name: &'static str,
    },
    /// The tool's schema could not be compiled (a bad `pattern`, for example).
    Schema(SchemaError),
    /// The caller's [`Grants`] lack what the tool `requires`. Nothing ran.
    Forbidden {
        /// The tool that was called.
        tool: &'static str,
        /// The permissions it requires that the caller's grants lack.
        missing: Vec<&'static str>,
    },
    /// The tool changes something and needs a person's approval: nothing ran. The arguments
    /// are validated; give the [`PendingCall`] to `ToolSet::resume` once approved.
    ApprovalRequired(PendingCall),
    /// `resume` was given a call that is not waiting: it already ran, was rejected, or was never
    /// issued by this process.
    NotPending {
        /// The call's [`PendingCall::id`].
        id: u64,
    },
    /// The tool did not finish within its time limit and was stopped.
    TimedOut {
        /// The time limit the call ran into, in seconds.
        seconds: f64,
    },
    /// The server was at its limit of calls and did not run this one.
    Busy,
}

impl ToolError {
    /// The text to send back to the model as the tool result, in English; a tool set with its
    /// own [`Wording`](crate::Wording) words it with [`ToolSet::model_message`](crate::ToolSet::model_message).
    pub fn model_message(&self) -> String {
        crate::Wording::english().error_message(self)
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolError::UnknownTool { name, did_you_mean } => {
                write!(f, "there is no tool named `{name}`")?;
                match did_you_mean {
                    Some(s) => write!(f, "; did you mean `{s}`?"),
                    None => Ok(()),
                }
            }
            ToolError::InvalidArguments(v) => v.fmt(f),
            ToolError::Failed { message } => write!(f, "the tool failed: {message}"),
            ToolError::Panicked { message, .. } => write!(f, "the tool panicked: {message}"),
            ToolError::MissingContext { type_name } => write!(
                f,
                "the tool needs a `{type_name}` from the host, and the call's Context has none: add it with Context::with"
            ),
            ToolError::Schema(e) => write!(f, "the tool's schema is invalid: {e}"),
            ToolError::Forbidden { tool, missing } => write!(
                f,
                "the caller may not use `{tool}`: it lacks {}",
                missing
                    .iter()
                    .map(|m| format!("`{m}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            ToolError::ApprovalRequired(p) => write!(
                f,
                "`{}` needs approval before it runs (call {})",
                p.tool, p.id
            ),
            ToolError::NotPending { id } => write!(f, "call {id} is not waiting for approval"),
            ToolError::TimedOut { seconds } => {
                write!(
                    f,
                    "the tool did not finish within {seconds} s and was stopped"
                )
            }
            ToolError::Busy => f.write_str("the server is at its limit of calls; nothing ran"),
        }
    }
}

impl std::error::Error for ToolError {}

/// The result of starting a call: sync tools are done at once, async ones are awaited.
pub enum Invocation<'a> {
    /// A sync tool's result, or a failure before the tool ran (permission, validation,
    /// approval, a missing host value).
    Ready(Result<CallOutput, ToolError>),
    /// An async tool's future, still to be awaited.
    Pending(BoxFuture<'a, Result<CallOutput, ToolError>>),
}

/// A call's arguments on their way into the tool's parameters.
pub struct Input<'t> {
    pub(crate) arguments: Arguments<'t>,
    pub(crate) validator: &'t Validator,
}

impl Input<'_> {
    /// The complete path: parse, validate against the whole schema (every violation, defaults
    /// filled in), and hand back the arguments object.
    pub(crate) fn into_checked_map(self) -> Result<Map<String, Value>, ToolError> {
        let value = match self.arguments.0 {
            Repr::Text(t) if t.trim().is_empty() => self
                .validator
                .validate_text("{}")
                .map_err(ToolError::InvalidArguments)?,
            Repr::Text(t) => self
                .validator
                .validate_text(&t)
                .map_err(ToolError::InvalidArguments)?,
            Repr::Value(v) => {
                let mut v = *v;
                let violations = self.validator.validate(&mut v);
                if !violations.is_empty() {
                    return Err(ToolError::InvalidArguments(violations));
                }
                v
            }
        };
        match value {
            Value::Object(map) => Ok(map),
            _ => Err(ToolError::Schema(SchemaError(
                "the input schema's root is not an object".into(),
            ))),
        }
    }
}

/// Invokes a tool: decodes its arguments from `Input` and runs it.
pub type InvokeFn = for<'a> fn(&'a Context, Input<'_>) -> Invocation<'a>;
/// Builds a schema body.
pub type SchemaFn = fn(&mut SchemaGenerator) -> Schema;

/// What `#[tool]` declares about a tool; the generated code fills it in.
#[doc(hidden)]
pub struct Spec {
    pub name: &'static str,
    pub description: &'static str,
    pub not_for: Option<&'static str>,
    /// Show a panic's message to the model (`#[tool(panic_to_model = true)]`).
    pub panic_to_model: bool,
    /// An `async fn`: it may wait; a sync tool blocks the thread it runs on.
    pub is_async: bool,
    /// How long one call may run (`#[tool(timeout = "30s")]`), in milliseconds.
    pub timeout_ms: Option<u64>,
    /// Permissions the caller's [`Grants`] must hold (`#[tool(requires = "..")]`).
    pub requires: &'static [&'static str],
    /// A person approves each call before it runs.
    pub needs_approval: bool,
    pub annotations: Annotations,
    /// Lints this tool silences, as `(id, reason)` (`#[tool(allow_lint = "id: reason")]`).
    pub allow_lints: &'static [(&'static str, &'static str)],
    pub input: SchemaFn,
    pub output: SchemaFn,
    pub invoke: InvokeFn,
}

/// One tool as `#[tool]` declared it. Lives in a `static`; schemas are built on first use.
pub struct Tool {
    spec: Spec,
    built: OnceLock<Built>,
}

struct Built {
    description: String,
    input_schema: Value,
    output_schema: Value,
    validator: Result<Validator, SchemaError>,
}

impl Tool {
    #[doc(hidden)]
    pub const fn __new(spec: Spec) -> Tool {
        Tool {
            spec,
            built: OnceLock::new(),
        }
    }

    /// The name the model calls it by.
    pub fn name(&self) -> &'static str {
        self.spec.name
    }

    /// The description the model reads, with the boundary sentence from `not_for`.
    pub fn description(&self) -> &str {
        &self.built().description
    }

    /// The description as written, without the boundary sentence.
    pub fn spec_description(&self) -> &'static str {
        self.spec.description
    }

    /// Whether the tool silences lint `id` (`#[tool(allow_lint = "id: reason")]`), and why.
    pub fn silences_lint(&self, id: &str) -> Option<&'static str> {
        self.spec
            .allow_lints
            .iter()
            .find(|(i, _)| *i == id)
            .map(|(_, why)| *why)
    }

    /// Permissions a caller needs to see and call this tool.
    pub fn requires(&self) -> &'static [&'static str] {
        self.spec.requires
    }

    /// Whether the tool is an `async fn`. A server runs a sync tool on a thread where blocking
    /// is allowed, never on the async workers.
    pub fn is_async(&self) -> bool {
        self.spec.is_async
    }

    /// How long one call may run (`#[tool(timeout = "30s")]`); `None` for the server's default.
    pub fn timeout(&self) -> Option<std::time::Duration> {
        self.spec.timeout_ms.map(std::time::Duration::from_millis)
    }

    /// Whether each call waits for a person's approval.
    pub fn needs_approval(&self) -> bool {
        self.spec.needs_approval
    }

    /// MCP hints about the tool (never trusted for security).
    pub fn annotations(&self) -> &Annotations {
        &self.spec.annotations
    }

    /// Whether the caller's [`Grants`] in `cx` hold every permission the tool `requires`.
    pub fn permits(&self, cx: &Context) -> bool {
        self.forbidden(cx).is_none()
    }

    pub(crate) fn forbidden(&self, cx: &Context) -> Option<ToolError> {
        if self.spec.requires.is_empty() {
            return None;
        }
        let missing = match cx.get::<Grants>() {
            Some(g) => g.missing(self.spec.requires),
            None => self.spec.requires.to_vec(),
        };
        (!missing.is_empty()).then_some(ToolError::Forbidden {
            tool: self.spec.name,
            missing,
        })
    }

    /// What the tool is not for, as written in `not_for`.
    pub fn not_for(&self) -> Option<&'static str> {
        self.spec.not_for
    }

    /// The canonical input schema (JSON Schema 2020-12).
    pub fn input_schema(&self) -> &Value {
        &self.built().input_schema
    }

    /// The canonical output schema (JSON Schema 2020-12) of the value the tool returns.
    pub fn output_schema(&self) -> &Value {
        &self.built().output_schema
    }

    /// Whether the schema compiled into a validator; a tool set refuses a tool that did not.
    pub fn check(&self) -> Result<(), SchemaError> {
        self.built()
            .validator
            .as_ref()
            .map(|_| ())
            .map_err(Clone::clone)
    }

    fn built(&self) -> &Built {
        self.built.get_or_init(|| {
            let mut g = schema::input_generator();
            let input = (self.spec.input)(&mut g);
            let input_schema = schema::finish_root(input, &mut g).to_value();
            let mut g = schema::output_generator();
            let output = (self.spec.output)(&mut g);
            let mut output_schema = schema::finish_root(output, &mut g).to_value();
            schema::strip_number_formats(&mut output_schema);
            let validator = Validator::new(&input_schema);
            let description = crate::Wording::english().description(self);
            Built {
                description,
                input_schema,
                output_schema,
                validator,
            }
        })
    }

    /// Calls the tool: `.await` the [`Call`], or run it with [`Call::blocking`].
    pub fn call<'a>(
        &'static self,
        cx: &'a Context,
        arguments: impl Into<Arguments<'a>>,
    ) -> Call<'a> {
        Call::new(Ok(self), cx, arguments.into())
    }

    /// Permission, then validation, then approval, then the tool itself.
    pub(crate) fn start<'a>(
        &self,
        cx: &'a Context,
        arguments: Arguments<'_>,
        approved: bool,
    ) -> Invocation<'a> {
        if let Some(e) = self.forbidden(cx) {
            return Invocation::Ready(Err(e));
        }
        let validator = match &self.built().validator {
            Ok(v) => v,
            Err(e) => return Invocation::Ready(Err(ToolError::Schema(e.clone()))),
        };
        let input = Input {
            arguments,
            validator,
        };
        if self.spec.needs_approval && !approved {
            let held = input
                .into_checked_map()
                .map(|args| hold(self.spec.name, Value::Object(args)));
            return Invocation::Ready(Err(match held {
                Ok(pending) => ToolError::ApprovalRequired(pending),
                Err(e) => e,
            }));
        }
        let invoke = self.spec.invoke;
        match catch_unwind(AssertUnwindSafe(|| invoke(cx, input))) {
            Ok(inv) => inv,
            Err(panic) => Invocation::Ready(Err(panicked(panic, self.spec.panic_to_model))),
        }
    }
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.spec.name)
            .finish_non_exhaustive()
    }
}

fn panicked(panic: Box<dyn Any + Send>, to_model: bool) -> ToolError {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with a non-string payload".into());
    ToolError::Panicked { message, to_model }
}

/// Turns a panic while polling an async tool into [`ToolError::Panicked`].
pub(crate) struct CatchUnwind<'a> {
    future: BoxFuture<'a, Result<CallOutput, ToolError>>,
    panic_to_model: bool,
}

impl<'a> CatchUnwind<'a> {
    pub(crate) fn new(future: BoxFuture<'a, Result<CallOutput, ToolError>>, tool: &Tool) -> Self {
        CatchUnwind {
            future,
            panic_to_model: tool.spec.panic_to_model,
        }
    }
}

impl Future for CatchUnwind<'_> {
    type Output = Result<CallOutput, ToolError>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let to_model = self.panic_to_model;
        let fut = self.future.as_mut();
        match catch_unwind(AssertUnwindSafe(|| fut.poll(cx))) {
            Ok(p) => p,
            Err(panic) => Poll::Ready(Err(panicked(panic, to_model))),
        }
    }
}

/// An async tool's future, as the generated code starts it.
pub fn boxed<'a, F>(f: F) -> Invocation<'a>
where
    F: std::future::Future<Output = Result<CallOutput, ToolError>> + Send + 'a,
{
    Invocation::Pending(Box::pin(f))
}
