//! One way to call a tool. [`ToolSet::call`](crate::ToolSet::call), [`Tool::call`] and
//! [`ToolSet::resume`](crate::ToolSet::resume) return a [`Call`]: `.await` it, or run it with
//! [`Call::blocking`] where there is no async runtime. Arguments are JSON text or an already
//! parsed value ([`Arguments`]); the output is one [`CallOutput`] with a view for each audience.
//!
//! ```
//! use tool_runtime::{tool, Context, ToolSet};
//!
//! #[tool(description = "Hitung total porsi: peserta ditambah 5 cadangan.")]
//! fn porsi(#[arg(description = "Jumlah peserta", range = 1..=500)] peserta: u32) -> u32 {
//!     peserta + 5
//! }
//!
//! let tools = ToolSet::new([porsi::tool()]).unwrap();
//! let cx = Context::new();
//! // Text, as a model sends it, or a value, as a transport has parsed it.
//! let out = tools.call(&cx, "porsi", r#"{"peserta": 25}"#).blocking().unwrap();
//! assert_eq!(out.json(), "30");
//! let out = tools.call(&cx, "porsi", serde_json::json!({"peserta": 25})).blocking().unwrap();
//! assert_eq!(out.value(), &serde_json::json!(30));
//! # pollster::block_on(async {
//! let out = tools.call(&cx, "porsi", "{\"peserta\": 1}").await.unwrap();
//! assert_eq!(out.deserialize::<u32>().unwrap(), 6);
//! # });
//! ```

use std::borrow::Cow;
use std::fmt;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context as TaskContext, Poll};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::arg::ToolOutput;
use crate::context::Context;
use crate::host::{Disclosure, ModelOutput, PendingCall};
use crate::tool::{CatchUnwind, Invocation, Tool, ToolError};

/// A call's arguments: JSON text as a model sends it (decoded in one pass when valid), or a
/// value a transport has already parsed. Made with `.into()` from `&str`, `String`,
/// `serde_json::Value` or a `serde_json::Map`. Empty text means no arguments (`{}`), which some
/// providers send for tools without parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Arguments<'a>(pub(crate) Repr<'a>);

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Repr<'a> {
    Text(Cow<'a, str>),
    /// Boxed: a `Value` is several times the size of text, and calls move their arguments.
    Value(Box<Value>),
}

impl<'a> Arguments<'a> {
    /// JSON text.
    pub fn text(text: impl Into<Cow<'a, str>>) -> Self {
        Arguments(Repr::Text(text.into()))
    }

    /// A parsed value.
    pub fn value(value: Value) -> Self {
        Arguments(Repr::Value(Box::new(value)))
    }
}

/// Text: `&str`, `&String`, `&&str`, ...
impl<'a, T: AsRef<str> + ?Sized> From<&'a T> for Arguments<'a> {
    fn from(text: &'a T) -> Self {
        Arguments::text(text.as_ref())
    }
}

impl From<String> for Arguments<'_> {
    fn from(text: String) -> Self {
        Arguments::text(text)
    }
}

impl From<Value> for Arguments<'_> {
    fn from(value: Value) -> Self {
        Arguments::value(value)
    }
}

impl From<Map<String, Value>> for Arguments<'_> {
    fn from(map: Map<String, Value>) -> Self {
        Arguments::value(Value::Object(map))
    }
}

/// What a call does once started: run as asked, or run a call a person approved.
enum Mode {
    Fresh,
    Resume {
        id: u64,
    },
    /// A call an [`ApprovalStore`](crate::approvals::ApprovalStore) handed out once: approved.
    Held,
}

/// A tool call, ready to run: `.await` it, or [`Call::blocking`]. It does nothing until then.
///
/// Every call goes the same way: the caller's permissions, then the arguments against the
/// schema, then approval, then the tool. A panic in the tool becomes [`ToolError::Panicked`].
/// The output, [`CallOutput`], has a view for each audience.
///
/// ```
/// use tool_runtime::{tool, Context, ToolSet};
///
/// #[tool(description = "Hitung total porsi: peserta ditambah 5 cadangan.")]
/// fn porsi(#[arg(description = "Jumlah peserta", range = 1..=500)] peserta: u32) -> u32 {
///     peserta + 5
/// }
///
/// let tools = ToolSet::new([porsi::tool()]).unwrap();
/// let cx = Context::new();
/// // Text, as a model sends it, or a value, as a transport has parsed it.
/// let out = tools.call(&cx, "porsi", r#"{"peserta": 25}"#).blocking().unwrap();
/// assert_eq!(out.json(), "30");
/// let out = tools.call(&cx, "porsi", serde_json::json!({"peserta": 25})).blocking().unwrap();
/// assert_eq!(out.value(), &serde_json::json!(30));
/// # pollster::block_on(async {
/// let out = tools.call(&cx, "porsi", "{\"peserta\": 1}").await.unwrap();
/// assert_eq!(out.deserialize::<u32>().unwrap(), 6);
/// # });
/// ```
#[must_use = "a call does nothing until it is awaited or run with `.blocking()`"]
pub struct Call<'a> {
    /// Boxed: the error (an unknown name) is rare and large.
    tool: Result<&'static Tool, Box<ToolError>>,
    cx: &'a Context,
    arguments: Arguments<'a>,
    mode: Mode,
}

impl<'a> Call<'a> {
    pub(crate) fn new(
        tool: Result<&'static Tool, Box<ToolError>>,
        cx: &'a Context,
        arguments: Arguments<'a>,
    ) -> Self {
        Call {
            tool,
            cx,
            arguments,
            mode: Mode::Fresh,
        }
    }

    pub(crate) fn resume(
        tool: Result<&'static Tool, Box<ToolError>>,
        cx: &'a Context,
        pending: PendingCall,
    ) -> Self {
        Call {
            tool,
            cx,
            arguments: Arguments::value(pending.arguments),
            mode: Mode::Resume { id: pending.id },
        }
    }

    /// A call taken from an approval store, which gives each held call out once.
    pub(crate) fn held(
        tool: Result<&'static Tool, Box<ToolError>>,
        cx: &'a Context,
        arguments: Value,
    ) -> Self {
        Call {
            tool,
            cx,
            arguments: Arguments::value(arguments),
            mode: Mode::Held,
        }
    }

    /// Runs the call on this thread, for code without an async runtime: a sync tool runs with
    /// no executor at all; an async tool's future is driven here until it is done (it must not
    /// need a particular runtime's reactor, such as Tokio's timers or sockets).
    pub fn blocking(self) -> Result<CallOutput, ToolError> {
        match self.start() {
            Started::Done(r) => r,
            Started::Running(mut f) => {
                let out = {
                    let _entered = f.trace.span.enter();
                    pollster::block_on(&mut f.call)
                };
                f.trace.finish(out)
            }
        }
    }

    fn start(self) -> Started<'a> {
        let tool = match self.tool {
            Ok(t) => t,
            Err(e) => return Started::Done(Err(*e)),
        };
        let trace = Trace::start(tool.name());
        let _entered = trace.span.enter();
        match &self.arguments.0 {
            Repr::Text(t) => tracing::trace!(target: "tool_runtime::values", arguments = &**t),
            Repr::Value(v) => tracing::trace!(target: "tool_runtime::values", arguments = %v),
        }
        let approved = match self.mode {
            Mode::Fresh => false,
            Mode::Resume { id } => {
                if let Some(e) = tool.forbidden(self.cx) {
                    return Started::Done(Err(e));
                }
                if !crate::host::release(id) {
                    return Started::Done(Err(ToolError::NotPending { id }));
                }
                true
            }
            Mode::Held => true,
        };
        let started = tool.start(self.cx, self.arguments, approved);
        drop(_entered);
        match started {
            Invocation::Ready(r) => Started::Done(trace.finish(r)),
            Invocation::Pending(f) => Started::Running(Traced {
                call: CatchUnwind::new(f, tool),
                trace,
            }),
        }
    }
}

enum Started<'a> {
    Done(Result<CallOutput, ToolError>),
    Running(Traced<'a>),
}

/// A running call and its span.
struct Traced<'a> {
    call: CatchUnwind<'a>,
    trace: Trace,
}

/// The `tracing` span of one call: `tool_call` with the tool's name, and when it ends its
/// outcome (`ok` or the error's kind) and duration. Arguments and results are recorded only as
/// `TRACE` events of the target `tool_runtime::values`, which a host turns on in its filter.
struct Trace {
    span: tracing::Span,
    /// `None` when no subscriber wants the span: then nothing is timed or recorded.
    started: Option<std::time::Instant>,
}

impl Trace {
    fn start(tool: &'static str) -> Trace {
        let span = tracing::info_span!(
            "tool_call",
            tool,
            outcome = tracing::field::Empty,
            duration_us = tracing::field::Empty,
        );
        let started = (!span.is_disabled()).then(std::time::Instant::now);
        Trace { span, started }
    }

    fn finish(&self, out: Result<CallOutput, ToolError>) -> Result<CallOutput, ToolError> {
        let Some(started) = self.started else {
            return out;
        };
        let elapsed = started.elapsed().as_micros() as u64;
        self.span.record("outcome", outcome(&out));
        self.span.record("duration_us", elapsed);
        if let Ok(output) = &out {
            let _entered = self.span.enter();
            tracing::trace!(target: "tool_runtime::values", output = output.json());
        }
        out
    }
}

/// `ok`, or the kind of error, as a span records it.
fn outcome(out: &Result<CallOutput, ToolError>) -> &'static str {
    match out {
        Ok(_) => "ok",
        Err(ToolError::UnknownTool { .. }) => "unknown_tool",
        Err(ToolError::InvalidArguments(_)) => "invalid_arguments",
        Err(ToolError::Failed { .. }) => "failed",
        Err(ToolError::Panicked { .. }) => "panicked",
        Err(ToolError::MissingContext { .. }) => "missing_context",
        Err(ToolError::Schema(_)) => "schema",
        Err(ToolError::Forbidden { .. }) => "forbidden",
        Err(ToolError::ApprovalRequired(_)) => "approval_required",
        Err(ToolError::NotPending { .. }) => "not_pending",
        Err(ToolError::TimedOut { .. }) => "timed_out",
        Err(ToolError::Busy) => "busy",
    }
}

impl<'a> IntoFuture for Call<'a> {
    type Output = Result<CallOutput, ToolError>;
    type IntoFuture = CallFuture<'a>;

    fn into_future(self) -> CallFuture<'a> {
        CallFuture(State::Start(self))
    }
}

/// The future of an awaited [`Call`]. A sync tool runs on its first poll.
#[must_use = "futures do nothing unless polled"]
pub struct CallFuture<'a>(State<'a>);

enum State<'a> {
    Start(Call<'a>),
    Running(Traced<'a>),
    Done,
}

impl Future for CallFuture<'_> {
    type Output = Result<CallOutput, ToolError>;

    fn poll(mut self: Pin<&mut Self>, task: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let this = &mut self.0;
        if let State::Start(_) = this {
            let State::Start(call) = std::mem::replace(this, State::Done) else {
                unreachable!("checked above")
            };
            match call.start() {
                Started::Done(r) => return Poll::Ready(r),
                Started::Running(f) => *this = State::Running(f),
            }
        }
        match this {
            State::Running(f) => {
                let out = {
                    let _entered = f.trace.span.enter();
                    Pin::new(&mut f.call).poll(task)
                };
                match out {
                    Poll::Ready(r) => {
                        let r = f.trace.finish(r);
                        *this = State::Done;
                        Poll::Ready(r)
                    }
                    Poll::Pending => Poll::Pending,
                }
            }
            State::Start(_) => unreachable!("started above"),
            State::Done => Poll::Ready(Err(ToolError::Failed {
                message: "internal error: a finished call was polled again".into(),
            })),
        }
    }
}

/// A finished call, for each of its audiences: the application's value, what the model
/// receives, and what a person may see.
///
/// The output is serialized once, to JSON text, straight from the tool's return value; the
/// [`Value`] is parsed from that text on first use.
#[derive(Clone)]
pub struct CallOutput {
    json: String,
    value: OnceLock<Box<Value>>,
    /// What the `to_model` and `redact` hooks made; `None` for tools without hooks, which keeps
    /// the common output small to move.
    hooked: Option<Box<Hooked>>,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Hooked {
    pub(crate) model: Option<ModelOutput>,
    pub(crate) disclosure: Disclosure,
}

static FULL: Disclosure = Disclosure::Full;

impl CallOutput {
    pub(crate) fn new(json: String, hooked: Option<Box<Hooked>>) -> Self {
        CallOutput {
            json,
            value: OnceLock::new(),
            hooked,
        }
    }

    /// The output as JSON text, as serde wrote it from the tool's value.
    pub fn json(&self) -> &str {
        &self.json
    }

    /// The output as JSON text, without a copy.
    pub fn into_json(self) -> String {
        self.json
    }

    /// The output as a JSON value, for the application.
    pub fn value(&self) -> &Value {
        self.value.get_or_init(|| Box::new(parse(&self.json)))
    }

    /// [`CallOutput::value`] by value.
    pub fn into_value(self) -> Value {
        match self.value.into_inner() {
            Some(v) => *v,
            None => parse(&self.json),
        }
    }

    /// The output read back into a Rust type (the tool's output type, or any type that reads
    /// the same JSON).
    pub fn deserialize<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(&self.json)
    }

    /// What the model receives: the tool's `to_model` summary, or else the output as JSON text.
    pub fn model(&self) -> ModelOutput {
        match self.summary() {
            Some(m) => m.clone(),
            None => ModelOutput::text(self.json.clone()),
        }
    }

    /// The tool's `to_model` summary, if it has one.
    pub fn summary(&self) -> Option<&ModelOutput> {
        self.hooked.as_ref().and_then(|h| h.model.as_ref())
    }

    /// What of the output may be shown to a person: all of it, the tool's `redact` copy, or
    /// nothing when redaction failed.
    pub fn disclosure(&self) -> &Disclosure {
        match &self.hooked {
            Some(h) => &h.disclosure,
            None => &FULL,
        }
    }

    /// The value a UI or transcript may show, if any.
    pub fn for_display(&self) -> Option<&Value> {
        match self.disclosure() {
            Disclosure::Full => Some(self.value()),
            Disclosure::Redacted(v) => Some(v),
            Disclosure::Withheld { .. } => None,
        }
    }
}

/// serde_json's own text is always JSON; `Null` would only stand for a broken invariant.
fn parse(json: &str) -> Value {
    serde_json::from_str(json).unwrap_or(Value::Null)
}

/// The output as JSON text.
impl fmt::Display for CallOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.json)
    }
}

impl fmt::Debug for CallOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("CallOutput");
        d.field("json", &self.json);
        if let Some(h) = &self.hooked {
            d.field("summary", &h.model)
                .field("disclosure", &h.disclosure);
        }
        d.finish()
    }
}

impl PartialEq for CallOutput {
    fn eq(&self, other: &Self) -> bool {
        self.json == other.json && self.hooked == other.hooked
    }
}

/// A `redact` function as the macro wraps it: the redacted JSON, or why redaction failed.
pub type RedactFn<T> = fn(&T) -> Result<Value, String>;

/// The optional output hooks of a tool: `to_model` and `redact`.
pub struct Hooks<T: 'static> {
    /// What the model receives instead of the output's JSON (`#[tool(to_model = path)]`).
    pub to_model: Option<fn(&T) -> ModelOutput>,
    /// What a person may see (`#[tool(redact = path)]`).
    pub redact: Option<RedactFn<T>>,
}

impl<T> Hooks<T> {
    /// No hooks: the model and a person see the output's JSON.
    pub const NONE: Hooks<T> = Hooks {
        to_model: None,
        redact: None,
    };
}

/// The JSON of what a `redact` function returns, or why it failed.
pub fn redacted<U: Serialize, E: std::fmt::Display>(r: Result<U, E>) -> Result<Value, String> {
    r.map_err(|e| e.to_string())
        .and_then(|u| serde_json::to_value(u).map_err(|e| e.to_string()))
}

/// A tool's value as its `CallOutput`. Only the serialization and the hook calls are generic;
/// the rest is shared by every tool.
pub fn ok<T: ToolOutput>(value: T, hooks: &Hooks<T>) -> Result<CallOutput, ToolError> {
    let json = serde_json::to_string(&value);
    let hooked = match (hooks.to_model, hooks.redact) {
        (None, None) => None,
        (to_model, redact) => Some(Box::new(Hooked {
            model: to_model.map(|f| f(&value)),
            disclosure: match redact {
                None => Disclosure::Full,
                Some(f) => guarded_redaction(&|| f(&value)),
            },
        })),
    };
    output(json, hooked)
}

/// Fail closed: a redaction that errors or panics shows nothing.
fn guarded_redaction(redact: &dyn Fn() -> Result<Value, String>) -> Disclosure {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(redact)) {
        Ok(Ok(v)) => Disclosure::Redacted(v),
        Ok(Err(reason)) => Disclosure::Withheld { reason },
        Err(_) => Disclosure::Withheld {
            reason: "the redaction function panicked".into(),
        },
    }
}

fn output(
    json: Result<String, serde_json::Error>,
    hooked: Option<Box<Hooked>>,
) -> Result<CallOutput, ToolError> {
    match json {
        Ok(json) => Ok(CallOutput::new(json, hooked)),
        Err(e) => Err(ToolError::Failed {
            message: format!("the output could not be serialized: {e}"),
        }),
    }
}

/// A tool's `Result` as the call's result: `Ok` through [`ok`], `Err` as
/// [`ToolError::Failed`] with the error's `Display`.
pub fn result<T: ToolOutput, E: std::fmt::Display>(
    r: Result<T, E>,
    hooks: &Hooks<T>,
) -> Result<CallOutput, ToolError> {
    match r {
        Ok(v) => ok(v, hooks),
        Err(e) => Err(ToolError::Failed {
            message: e.to_string(),
        }),
    }
}
