//! One way to call a tool. [`ToolSet::call`](crate::ToolSet::call), [`Tool::call`] and
//! [`ToolSet::resume`](crate::ToolSet::resume) return a [`Call`]: `.await` it, or run it with
//! [`Call::blocking`] where there is no async runtime. Arguments are JSON text or an already
//! parsed value ([`Arguments`]); the output is one [`CallOutput`] with a view for each audience.
//!
//! Every call goes the same way: the host's [`Middleware`] (if any), the caller's permissions, the
//! arguments against the schema, approval (the call is held in the set's approval store), then
//! the tool. A panic in the tool becomes [`ToolError::Panicked`].

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use crate::approval::{ApprovalStore, Holder, MemoryApprovals, PendingCall, new_ticket, unix_now};
use crate::arguments::{Arguments, Repr};
use crate::context::Context;
use crate::error::ToolError;
use crate::future::BoxFuture;
use crate::observe::{self, CallEnd, ObservedCall, Observer};
use crate::output::CallOutput;
use crate::tool::{CatchUnwind, Step, Tool};

/// What wraps every call of a tool set: audit, policy, rate limits. Given to a set with
/// [`ToolSet::with_middleware`](crate::ToolSet::with_middleware); each call goes through every
/// middleware in the order they were added, then through the set's own pipeline (permissions,
/// validation, approval, the tool).
///
/// A middleware gets the call as a [`Next`]: it can look at the tool, the caller's
/// [`Context`] and the arguments, refuse (return an error without awaiting `next`), or await
/// `next` to run the rest and look at or change the outcome. It is a trait of one method rather
/// than a `tower::Service` because a call borrows the host's `Context` and may run with no
/// executor at all ([`Call::blocking`]).
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use tool_runtime::{BoxFuture, CallOutput, Context, Middleware, Next, ToolError, ToolSet, tool};
///
/// #[tool(description = "Add two whole numbers and return the sum.")]
/// fn add(
///     #[arg(description = "The first number", range = -1000..=1000)] a: i32,
///     #[arg(description = "The second number", range = -1000..=1000)] b: i32,
/// ) -> i32 {
///     a + b
/// }
///
/// /// Counts the calls that ran, and refuses every call after the third.
/// #[derive(Default)]
/// struct Quota(AtomicUsize);
///
/// impl Middleware for Quota {
///     fn call<'a>(&'a self, next: Next<'a>) -> BoxFuture<'a, Result<CallOutput, ToolError>> {
///         Box::pin(async move {
///             if self.0.fetch_add(1, Ordering::SeqCst) >= 3 {
///                 return Err(ToolError::Busy);
///             }
///             next.await
///         })
///     }
/// }
///
/// let tools = ToolSet::new([add::tool()]).unwrap().with_middleware(Quota::default());
/// let cx = Context::new();
/// for _ in 0..3 {
///     assert!(tools.call(&cx, "add", r#"{"a": 1, "b": 2}"#).blocking().is_ok());
/// }
/// assert_eq!(tools.call(&cx, "add", r#"{"a": 1, "b": 2}"#).blocking(), Err(ToolError::Busy));
/// ```
pub trait Middleware: Send + Sync {
    /// Runs around one call: await `next` to run the rest of the pipeline.
    fn call<'a>(&'a self, next: Next<'a>) -> BoxFuture<'a, Result<CallOutput, ToolError>>;
}

/// Finds a tool by name for a call that resumes (a tool set implements it).
pub(crate) trait Lookup: Sync {
    fn find(&self, name: &str) -> Result<&Tool, ToolError>;
}

/// What a call runs through besides its tool: where it is held for approval, and the middleware
/// around it. Each tool set owns one (its clones and the sets made from it share it).
#[derive(Clone)]
pub(crate) struct Pipeline {
    pub(crate) approvals: Arc<dyn ApprovalStore>,
    pub(crate) layers: Arc<[Arc<dyn Middleware>]>,
}

impl Pipeline {
    /// A store of its own, with the default bounds; no middleware.
    pub(crate) fn new() -> Pipeline {
        Pipeline {
            approvals: Arc::new(MemoryApprovals::new()),
            layers: Arc::new([]),
        }
    }
}

/// A tool call, ready to run: `.await` it, or [`Call::blocking`]. It does nothing until then.
///
/// ```
/// use tool_runtime::{tool, Context, ToolSet};
///
/// #[tool(description = "Count the portions to order: the guests plus 5 spare.")]
/// fn portions(#[arg(description = "Number of guests", range = 1..=500)] guests: u32) -> u32 {
///     guests + 5
/// }
///
/// let tools = ToolSet::new([portions::tool()]).unwrap();
/// let cx = Context::new();
/// // Text, as a model sends it, or a value, as a transport has parsed it.
/// let out = tools.call(&cx, "portions", r#"{"guests": 25}"#).blocking().unwrap();
/// assert_eq!(out.json(), "30");
/// let out = tools.call(&cx, "portions", serde_json::json!({"guests": 25})).blocking().unwrap();
/// assert_eq!(out.value(), &serde_json::json!(30));
/// # pollster::block_on(async {
/// let out = tools.call(&cx, "portions", "{\"guests\": 1}").await.unwrap();
/// assert_eq!(out.deserialize::<u32>().unwrap(), 6);
/// # });
/// ```
#[must_use = "a call does nothing until it is awaited or run with `.blocking()`"]
pub struct Call<'a>(Inner<'a>);

enum Inner<'a> {
    Run(Run<'a>),
    /// A call a person approved, still in the approval store under its ticket.
    Resume {
        cx: &'a Context,
        ticket: String,
        set: &'a dyn Lookup,
        pipeline: &'a Pipeline,
        call_id: Option<&'a str>,
    },
}

/// A call by tool, with what it runs through.
struct Run<'a> {
    /// Boxed: the error (an unknown name) is rare and large.
    tool: Result<&'a Tool, Box<ToolError>>,
    cx: &'a Context,
    arguments: Arguments<'a>,
    pipeline: &'a Pipeline,
    /// The middleware still to run: `pipeline.layers[layer..]`.
    layer: u32,
    /// Taken from the approval store: it runs without asking again.
    approved: bool,
    /// The id the model gave the call, for its span (`gen_ai.tool.call.id`).
    call_id: Option<&'a str>,
}

impl<'a> Call<'a> {
    #[inline]
    pub(crate) fn new(
        tool: Result<&'a Tool, Box<ToolError>>,
        cx: &'a Context,
        arguments: Arguments<'a>,
        pipeline: &'a Pipeline,
    ) -> Self {
        Call(Inner::Run(Run {
            tool,
            cx,
            arguments,
            pipeline,
            layer: 0,
            approved: false,
            call_id: None,
        }))
    }

    pub(crate) fn resume(
        cx: &'a Context,
        ticket: &str,
        set: &'a dyn Lookup,
        pipeline: &'a Pipeline,
    ) -> Self {
        Call(Inner::Resume {
            cx,
            ticket: ticket.to_owned(),
            set,
            pipeline,
            call_id: None,
        })
    }

    /// The id the model gave this call (a provider's tool call id), recorded on the call's span
    /// as `gen_ai.tool.call.id`.
    pub fn call_id(mut self, id: &'a str) -> Self {
        match &mut self.0 {
            Inner::Run(run) => run.call_id = Some(id),
            Inner::Resume { call_id, .. } => *call_id = Some(id),
        }
        self
    }

    /// Runs the call on this thread, for code without an async runtime: a sync tool runs with
    /// no executor at all; an async tool's future (or an approval store's) is driven here until
    /// it is done (it must not need a particular runtime's reactor, such as Tokio's timers or
    /// sockets).
    pub fn blocking(self) -> Result<CallOutput, ToolError> {
        match self.start() {
            Started::Done(r) => r,
            Started::Boxed(f) => pollster::block_on(f),
            Started::Traced(mut f) => {
                let out = {
                    let _entered = f.trace.enter();
                    pollster::block_on(&mut f.call)
                };
                f.trace.finish(out)
            }
        }
    }

    #[inline]
    fn start(self) -> Started<'a> {
        match self.0 {
            Inner::Run(run) => run.start(),
            Inner::Resume {
                cx,
                ticket,
                set,
                pipeline,
                call_id,
            } => Started::Boxed(Box::pin(async move {
                let held = pipeline.approvals.take(&ticket).await?;
                let Some(held) = held else {
                    return Err(ToolError::NotPending { ticket });
                };
                let tool = set.find(&held.tool)?;
                // A caller who may not run it does not use it up: it waits for one who may.
                if let Some(e) = tool.forbidden(cx) {
                    pipeline.approvals.hold(held).await?;
                    return Err(e);
                }
                let run = Run {
                    tool: Ok(tool),
                    cx,
                    arguments: Arguments::value(held.arguments),
                    pipeline,
                    layer: 0,
                    approved: true,
                    call_id,
                };
                Call(Inner::Run(run)).await
            })),
        }
    }
}

impl<'a> Run<'a> {
    #[inline]
    fn start(self) -> Started<'a> {
        if let Some(layer) = self.pipeline.layers.get(self.layer as usize) {
            let next = Next(Run {
                layer: self.layer + 1,
                ..self
            });
            return Started::Boxed(layer.call(next));
        }
        let tool = match self.tool {
            Ok(t) => t,
            Err(e) => return Started::Done(Err(*e)),
        };
        let mut trace = Trace::start(tool, self.call_id);
        let _entered = trace.enter();
        // Arguments only on a span that is recorded (a call timed for its histogram alone
        // shows none).
        if let Some(observed) = &trace.observed
            && observed.wants_values()
        {
            match &self.arguments.repr {
                Repr::Text(t) => observed.arguments(t),
                Repr::Value(v) | Repr::NotAFunction(v) => observed.arguments(&v.to_string()),
            }
        }
        if !trace.span.is_disabled() && values_wanted() {
            match &self.arguments.repr {
                Repr::Text(t) => {
                    trace.span.record("gen_ai.tool.call.arguments", &**t);
                    tracing::trace!(target: "tool_runtime::values", arguments = &**t)
                }
                Repr::Value(v) | Repr::NotAFunction(v) => {
                    let text = v.to_string();
                    trace
                        .span
                        .record("gen_ai.tool.call.arguments", text.as_str());
                    tracing::trace!(target: "tool_runtime::values", arguments = text)
                }
            }
        }
        let step = tool.start(self.cx, self.arguments, self.approved);
        drop(_entered);
        let call = match step {
            Step::Done(r) => return Started::Done(trace.finish(r)),
            Step::Running(f) => Running::Tool(f),
            Step::Hold(arguments) => {
                let approvals = &*self.pipeline.approvals;
                let holder = self.cx.get::<Holder>();
                let owner = holder.map(|h| h.owner.clone());
                let expires_at = holder
                    .and_then(|h| h.ttl)
                    .map(|ttl| unix_now().saturating_add(ttl.as_secs().max(1)));
                Running::Boxed(Box::pin(async move {
                    let pending = PendingCall::new(new_ticket()?, tool.name(), arguments)
                        .with_owner(owner)
                        .with_expiry(expires_at);
                    approvals.hold(pending.clone()).await?;
                    Err(ToolError::ApprovalRequired(Box::new(pending)))
                }))
            }
        };
        Started::Traced(Traced { call, trace })
    }
}

/// A call on its way through a [`Middleware`]: look at it, then `.await` it to run the rest of
/// the pipeline (further middleware, permissions, validation, approval, the tool).
#[must_use = "the call does not run until `next` is awaited"]
pub struct Next<'a>(Run<'a>);

impl<'a> Next<'a> {
    /// The tool called, or why there is none (an unknown name).
    pub fn tool(&self) -> Result<&'a Tool, &ToolError> {
        self.0.tool.as_ref().map(|t| *t).map_err(|e| &**e)
    }

    /// The name the call asked for.
    pub fn name(&self) -> &str {
        match &self.0.tool {
            Ok(t) => t.name(),
            Err(e) => match &**e {
                ToolError::UnknownTool { name, .. } => name,
                _ => "",
            },
        }
    }

    /// The caller's context.
    pub fn context(&self) -> &'a Context {
        self.0.cx
    }

    /// The arguments as they arrived (not yet validated).
    pub fn arguments(&self) -> &Arguments<'a> {
        &self.0.arguments
    }

    /// Whether this call was approved by a person and taken from the approval store (a
    /// resumed call): it runs without asking again.
    pub fn is_approved(&self) -> bool {
        self.0.approved
    }
}

impl<'a> IntoFuture for Next<'a> {
    type Output = Result<CallOutput, ToolError>;
    type IntoFuture = CallFuture<'a>;

    fn into_future(self) -> CallFuture<'a> {
        CallFuture(State::Start(Call(Inner::Run(self.0))))
    }
}

enum Started<'a> {
    Done(Result<CallOutput, ToolError>),
    /// The tool runs (or its call is being held) inside its span.
    Traced(Traced<'a>),
    /// Middleware, or a resumed call: the tool's own span starts inside.
    Boxed(BoxFuture<'a, Result<CallOutput, ToolError>>),
}

/// A running call and its span.
struct Traced<'a> {
    call: Running<'a>,
    trace: Trace<'a>,
}

enum Running<'a> {
    Tool(CatchUnwind<'a>),
    Boxed(BoxFuture<'a, Result<CallOutput, ToolError>>),
}

impl Future for Running<'_> {
    type Output = Result<CallOutput, ToolError>;

    fn poll(self: Pin<&mut Self>, task: &mut TaskContext<'_>) -> Poll<Self::Output> {
        match self.get_mut() {
            Running::Tool(f) => Pin::new(f).poll(task),
            Running::Boxed(f) => f.as_mut().poll(task),
        }
    }
}

/// Whether a subscriber records the toolkit's histograms (`tool_runtime::metrics` at `INFO`).
fn metrics_wanted() -> bool {
    tracing::enabled!(target: "tool_runtime::metrics", tracing::Level::INFO)
}

/// Whether the host asked for arguments and results (`tool_runtime::values` at `TRACE`).
fn values_wanted() -> bool {
    tracing::enabled!(target: "tool_runtime::values", tracing::Level::TRACE)
}

/// The `tracing` span of one call, by OpenTelemetry's GenAI conventions (semantic-conventions-genai,
/// span `gen_ai.execute_tool.internal`, Development status): named `execute_tool {tool}` (the
/// `otel.name` field, which `tool-runtime-otel` and `tracing-opentelemetry` read), kind internal, with
/// `gen_ai.operation.name`, `gen_ai.tool.name`, `gen_ai.tool.type`, `gen_ai.tool.description`,
/// `gen_ai.tool.call.id` when the model gave one, and when it fails `error.type` (`tool_error`
/// for the tool's own error, else the error's kind: `invalid_arguments`, `forbidden`,
/// `timed_out`, …) with status `ERROR` (a call held for approval is not a failure).
/// Also, for a `fmt` subscriber, `outcome` (`ok` or the error's kind) and `duration_us`; and
/// the `gen_ai.execute_tool.duration` histogram (seconds) as an `INFO` event of the target
/// `tool_runtime::metrics` with the field `histogram.gen_ai.execute_tool.duration`, which
/// `tracing-opentelemetry`'s metrics layer (or `tool-runtime-otel`'s, with its observer off)
/// reads.
/// Arguments and results are recorded only when a host turns on the target
/// `tool_runtime::values` at `TRACE` in its filter (its opt-in): then as `TRACE` events of that
/// target and as the conventions' opt-in attributes `gen_ai.tool.call.arguments` and
/// `gen_ai.tool.call.result`, the result as a person may see it (the tool's `redact` copy; none
/// when redaction failed).
///
/// A subscriber whose layer exposes an [`Observer`] records the call through it instead: the
/// span and the duration event are still made for its other layers, under the targets
/// [`observe::SPAN_TARGET`] and [`observe::METRICS_TARGET`], which the observing layer turns
/// off for itself; a call the observer does not keep makes no span.
struct Trace<'a> {
    span: tracing::Span,
    /// When the call started and the tool's name; `None` when no subscriber wants the span
    /// nor the histograms: then nothing is timed or recorded.
    started: Option<(std::time::Instant, &'a str)>,
    /// The call as the subscriber's observer records it.
    observed: Option<Box<dyn ObservedCall>>,
}

/// A call running on this thread: its span entered, and its observer told.
struct Entered<'t> {
    observed: Option<&'t dyn ObservedCall>,
    _span: tracing::span::Entered<'t>,
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        // Left in the reverse order of entering: the observer first, then the span.
        if let Some(observed) = self.observed {
            observed.exit();
        }
    }
}

impl<'a> Trace<'a> {
    fn start(tool: &'a Tool, call_id: Option<&str>) -> Trace<'a> {
        /// The call's span, of one of two callsites (the same fields; evaluated only when a
        /// subscriber wants the span, and recorded with it: each later `record` is a walk
        /// through every layer).
        macro_rules! call_span {
            ($target:expr) => {
                tracing::info_span!(
                    target: $target,
                    "execute_tool",
                    otel.name = tool.span_name(),
                    otel.kind = "internal",
                    otel.status_code = tracing::field::Empty,
                    gen_ai.operation.name = "execute_tool",
                    gen_ai.tool.name = tool.name(),
                    gen_ai.tool.type = "function",
                    gen_ai.tool.description = tool.description(),
                    gen_ai.tool.call.id = call_id,
                    gen_ai.tool.call.arguments = tracing::field::Empty,
                    gen_ai.tool.call.result = tracing::field::Empty,
                    error.r#type = tracing::field::Empty,
                    outcome = tracing::field::Empty,
                    duration_us = tracing::field::Empty,
                )
            };
        }
        let observed = Observer::start(tool, call_id);
        let span = match &observed {
            None => call_span!("tool_runtime::call"),
            // Made for the subscriber's other layers; its observer turns this target off.
            Some(observed) if observed.sampled() => call_span!(observe::SPAN_TARGET),
            // A trace the observer does not keep: no span, for any layer.
            Some(_) => tracing::Span::none(),
        };
        // Timed when the span is recorded, or its duration counted without it (a subscriber
        // that keeps only some traces still counts every call).
        let timed = observed.is_some() || !span.is_disabled() || metrics_wanted();
        let started = timed.then(|| (std::time::Instant::now(), tool.name()));
        Trace {
            span,
            started,
            observed,
        }
    }

    /// Enters the call's span, then tells its observer.
    fn enter(&self) -> Entered<'_> {
        let span = self.span.enter();
        let observed = self.observed.as_deref();
        if let Some(observed) = observed {
            observed.enter();
        }
        Entered {
            observed,
            _span: span,
        }
    }

    /// The call's outcome, recorded on its span when a subscriber listens. Inlined: without
    /// one, the outcome only passes through.
    #[inline(always)]
    fn finish(&mut self, out: Result<CallOutput, ToolError>) -> Result<CallOutput, ToolError> {
        match self.started {
            None => out,
            Some((started, tool)) => self.record(started, tool, out),
        }
    }

    #[inline(never)]
    fn record(
        &mut self,
        started: std::time::Instant,
        tool: &str,
        out: Result<CallOutput, ToolError>,
    ) -> Result<CallOutput, ToolError> {
        let took = started.elapsed();
        let elapsed = took.as_micros() as u64;
        let mut error_type = None;
        let outcome = match &out {
            Ok(_) => "ok",
            // Held for a person's approval: not a failure.
            Err(e @ ToolError::ApprovalRequired(_)) => e.kind(),
            Err(e) => {
                let kind = match e {
                    ToolError::Failed { .. } => "tool_error",
                    other => other.kind(),
                };
                error_type = Some(kind);
                e.kind()
            }
        };
        self.record_outcome(outcome, error_type, elapsed);
        match self.observed.take() {
            Some(observed) => {
                let shown = match &out {
                    Ok(output) if observed.wants_values() => {
                        output.for_display().map(|shown| shown.to_string())
                    }
                    _ => None,
                };
                observed.finish(&CallEnd {
                    took,
                    outcome,
                    error_type,
                    result: shown.as_deref(),
                });
                self.duration_event(true, took, tool, error_type);
            }
            None => self.duration_event(false, took, tool, error_type),
        }
        if let Ok(output) = &out
            && !self.span.is_disabled()
            && values_wanted()
            && let Some(shown) = output.for_display()
        {
            let shown = shown.to_string();
            self.span.record("gen_ai.tool.call.result", shown.as_str());
            tracing::trace!(target: "tool_runtime::values", parent: &self.span, output = shown);
        }
        out
    }

    /// The conventions' histogram (seconds), as an event `tool-runtime-otel`'s layer reads: a
    /// `histogram.` field, the others its attributes. An observed call's is for the
    /// subscriber's other layers, under its own target (its observer turns it off). Its parent
    /// is named rather than entered: entering and leaving a span are two more walks of the
    /// layers.
    fn duration_event(
        &self,
        observed: bool,
        took: std::time::Duration,
        tool: &str,
        error_type: Option<&str>,
    ) {
        macro_rules! duration {
            ($target:expr) => {
                tracing::event!(
                    target: $target,
                    parent: &self.span,
                    tracing::Level::INFO,
                    histogram.gen_ai.execute_tool.duration = took.as_secs_f64(),
                    gen_ai.tool.name = tool,
                    error.r#type = error_type,
                )
            };
        }
        if observed {
            duration!(observe::METRICS_TARGET);
        } else {
            duration!("tool_runtime::metrics");
        }
    }
}

impl Trace<'_> {
    /// The outcome's fields, recorded in one walk through the subscriber's layers (each
    /// `record` is one): `outcome` and `duration_us`, and for a failure `error.type` and
    /// `otel.status_code`.
    fn record_outcome(&self, outcome: &str, error_type: Option<&str>, elapsed: u64) {
        /// The four fields of each of the two `execute_tool` callsites (unobserved, observed),
        /// found once: a field belongs to its callsite.
        static FIELDS: [std::sync::OnceLock<Option<[tracing::field::Field; 4]>>; 2] =
            [const { std::sync::OnceLock::new() }; 2];
        let Some(metadata) = self.span.metadata() else {
            return;
        };
        let fields = metadata.fields();
        let callsite = usize::from(metadata.target() == observe::SPAN_TARGET);
        let found = FIELDS[callsite].get_or_init(|| {
            Some([
                fields.field("outcome")?,
                fields.field("duration_us")?,
                fields.field("error.type")?,
                fields.field("otel.status_code")?,
            ])
        });
        let Some([outcome_field, duration, error, status]) = found else {
            return;
        };
        use tracing::field::Value;
        match error_type {
            None => self.span.record_all(&fields.value_set(&[
                (outcome_field, Some(&outcome as &dyn Value)),
                (duration, Some(&elapsed as &dyn Value)),
            ])),
            Some(kind) => self.span.record_all(&fields.value_set(&[
                (outcome_field, Some(&outcome as &dyn Value)),
                (error, Some(&kind as &dyn Value)),
                (status, Some(&"ERROR" as &dyn Value)),
                (duration, Some(&elapsed as &dyn Value)),
            ])),
        };
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
    Boxed(BoxFuture<'a, Result<CallOutput, ToolError>>),
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
                Started::Traced(f) => *this = State::Running(f),
                Started::Boxed(f) => *this = State::Boxed(f),
            }
        }
        let out = match this {
            State::Running(f) => {
                let out = {
                    let _entered = f.trace.enter();
                    Pin::new(&mut f.call).poll(task)
                };
                match out {
                    Poll::Ready(r) => Poll::Ready(f.trace.finish(r)),
                    Poll::Pending => Poll::Pending,
                }
            }
            State::Boxed(f) => f.as_mut().poll(task),
            State::Start(_) => unreachable!("started above"),
            State::Done => Poll::Ready(Err(ToolError::failed(
                "internal error: a finished call was polled again",
            ))),
        };
        if out.is_ready() {
            *this = State::Done;
        }
        out
    }
}
