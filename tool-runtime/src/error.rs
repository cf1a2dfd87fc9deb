//! What a call produced when it did not produce a value.

use std::fmt;
use std::sync::Arc;

use crate::approval::{PendingCall, StoreError};
use crate::validate::{SchemaError, Violations};

/// What a tool call produced when it did not produce a value. Every failure is data: none of
/// them panics or takes down the caller. [`model_message`](ToolError::model_message) is what to
/// send back to the model as the call's result.
///
/// ```
/// use tool_runtime::{Context, ToolError, ToolSet, tool};
///
/// #[tool(description = "Divide one whole number by another and return the quotient.")]
/// fn divide(
///     #[arg(description = "The number divided", range = -1000..=1000)] a: i32,
///     #[arg(description = "The divisor", range = -1000..=1000)] b: i32,
/// ) -> Result<i32, String> {
///     a.checked_div(b).ok_or_else(|| "the divisor must not be zero".to_owned())
/// }
///
/// let tools = ToolSet::new([divide::tool()]).unwrap();
/// let cx = Context::new();
///
/// // A misspelt name: nothing runs, and the closest name is suggested.
/// let err = tools.call(&cx, "divde", r#"{"a": 6, "b": 3}"#).blocking().unwrap_err();
/// assert!(matches!(&err, ToolError::UnknownTool { did_you_mean: Some(n), .. } if n == "divide"));
///
/// // Arguments that break the schema: every violation is listed, and the tool does not run.
/// let err = tools.call(&cx, "divide", r#"{"a": "6"}"#).blocking().unwrap_err();
/// let ToolError::InvalidArguments(violations) = &err else { panic!("{err}") };
/// assert_eq!(violations.len(), 2);
///
/// // The tool ran and returned `Err`.
/// let err = tools.call(&cx, "divide", r#"{"a": 6, "b": 0}"#).blocking().unwrap_err();
/// assert_eq!(err, ToolError::failed("the divisor must not be zero"));
/// assert!(err.model_message().contains("the divisor must not be zero"));
/// ```
///
/// A tool's own error, when it is an [`Error`](std::error::Error), is kept as the
/// [`source`](std::error::Error::source) of [`Failed`](ToolError::Failed): the host can
/// downcast it; the model reads its text.
#[derive(Clone, Debug)]
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
        /// The error's `Display` (or why the tool's output could not be serialized): what the
        /// model reads.
        message: String,
        /// The tool's error itself, when it is an [`Error`](std::error::Error): the
        /// [`source`](std::error::Error::source) of this one.
        error: Option<Arc<dyn std::error::Error + Send + Sync>>,
    },
    /// The tool panicked. The message is for the application; the model sees it only when the
    /// tool opted in with `#[tool(panic_to_model = true)]`.
    Panicked {
        /// The panic's message (its `&str` or `String` payload).
        message: String,
        /// Whether the model may see `message` (`#[tool(panic_to_model = true)]`).
        to_model: bool,
    },
    /// The tool needs a host value of this type and the caller's
    /// [`Context`](crate::Context) has none.
    MissingContext {
        /// The missing type, as [`std::any::type_name`] writes it.
        type_name: &'static str,
    },
    /// The tool's schema could not be compiled (a bad `pattern`, for example).
    Schema(SchemaError),
    /// The caller's [`Grants`](crate::Grants) lack what the tool `requires`. Nothing ran.
    Forbidden {
        /// The tool that was called.
        tool: String,
        /// The permissions it requires that the caller's grants lack.
        missing: Vec<String>,
    },
    /// The tool changes something and needs a person's approval: nothing ran. The arguments
    /// are validated and the call is held in the tool set's approval store; give its ticket to
    /// [`ToolSet::resume`](crate::ToolSet::resume) once approved.
    ApprovalRequired(Box<PendingCall>),
    /// [`ToolSet::resume`](crate::ToolSet::resume) found no call held under the ticket: it
    /// already ran, was rejected, expired, or was never held in this store. Nothing ran.
    NotPending {
        /// The ticket given.
        ticket: String,
    },
    /// The approval store failed while holding or handing out the call. Nothing ran.
    ApprovalStore(Arc<StoreError>),
    /// The tool did not finish within its time limit and was stopped.
    TimedOut {
        /// The time limit the call ran into, in seconds.
        seconds: f64,
    },
    /// The server was at its limit of calls and did not run this one.
    Busy,
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
            ToolError::Failed { error: Some(_), .. } => f.write_str("the tool failed"),
            ToolError::Failed { message, .. } => write!(f, "the tool failed: {message}"),
            ToolError::Panicked { message, .. } => write!(f, "the tool panicked: {message}"),
            ToolError::MissingContext { type_name } => write!(
                f,
                "the tool needs a `{type_name}` from the host, and the call's Context has none: add it with Context::with"
            ),
            ToolError::Schema(_) => f.write_str("the tool's schema is invalid"),
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
                "`{}` needs approval before it runs (ticket {})",
                p.tool, p.ticket
            ),
            ToolError::NotPending { ticket } => {
                write!(f, "no call is waiting for approval under ticket {ticket}")
            }
            ToolError::ApprovalStore(_) => f.write_str("the call could not be held or resumed"),
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

impl std::error::Error for ToolError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ToolError::Schema(e) => Some(e),
            ToolError::ApprovalStore(e) => Some(&**e),
            ToolError::Failed { error: Some(e), .. } => Some(&**e),
            _ => None,
        }
    }
}

/// Errors are equal when they are of one kind with equal data; two failures of tools, when
/// their messages are (an error's source is not compared).
impl PartialEq for ToolError {
    fn eq(&self, other: &ToolError) -> bool {
        use ToolError::*;
        match (self, other) {
            (
                UnknownTool {
                    name: a,
                    did_you_mean: x,
                },
                UnknownTool {
                    name: b,
                    did_you_mean: y,
                },
            ) => a == b && x == y,
            (InvalidArguments(a), InvalidArguments(b)) => a == b,
            (Failed { message: a, .. }, Failed { message: b, .. }) => a == b,
            (
                Panicked {
                    message: a,
                    to_model: x,
                },
                Panicked {
                    message: b,
                    to_model: y,
                },
            ) => a == b && x == y,
            (MissingContext { type_name: a }, MissingContext { type_name: b }) => a == b,
            (Schema(a), Schema(b)) => a == b,
            (
                Forbidden {
                    tool: a,
                    missing: x,
                },
                Forbidden {
                    tool: b,
                    missing: y,
                },
            ) => a == b && x == y,
            (ApprovalRequired(a), ApprovalRequired(b)) => a == b,
            (NotPending { ticket: a }, NotPending { ticket: b }) => a == b,
            (ApprovalStore(a), ApprovalStore(b)) => a == b,
            (TimedOut { seconds: a }, TimedOut { seconds: b }) => a == b,
            (Busy, Busy) => true,
            _ => false,
        }
    }
}

impl From<StoreError> for ToolError {
    fn from(e: StoreError) -> Self {
        ToolError::ApprovalStore(Arc::new(e))
    }
}

impl ToolError {
    /// A failure described by `message`, with no error behind it.
    pub fn failed(message: impl Into<String>) -> ToolError {
        ToolError::Failed {
            message: message.into(),
            error: None,
        }
    }

    /// A failure caused by `error`: the model reads its text, the host can downcast it from
    /// [`source`](std::error::Error::source).
    pub fn failed_with(error: impl std::error::Error + Send + Sync + 'static) -> ToolError {
        ToolError::Failed {
            message: error.to_string(),
            error: Some(Arc::new(error)),
        }
    }

    /// A short, stable name of the error's kind (`invalid_arguments`, `timed_out`, `failed`,
    /// …): a call's span records it as `outcome`, and as `error.type` (with `tool_error` for
    /// [`Failed`](ToolError::Failed), the tool's own error).
    pub fn kind(&self) -> &'static str {
        match self {
            ToolError::UnknownTool { .. } => "unknown_tool",
            ToolError::InvalidArguments(_) => "invalid_arguments",
            ToolError::Failed { .. } => "failed",
            ToolError::Panicked { .. } => "panicked",
            ToolError::MissingContext { .. } => "missing_context",
            ToolError::Schema(_) => "schema",
            ToolError::Forbidden { .. } => "forbidden",
            ToolError::ApprovalRequired(_) => "approval_required",
            ToolError::NotPending { .. } => "not_pending",
            ToolError::ApprovalStore(_) => "approval_store",
            ToolError::TimedOut { .. } => "timed_out",
            ToolError::Busy => "busy",
        }
    }
}
