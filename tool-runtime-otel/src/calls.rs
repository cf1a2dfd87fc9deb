//! The toolkit's tool calls recorded directly (the core's
//! [`Observer`](tool_runtime::observe::Observer)), not through `tracing`: each call's
//! `execute_tool {tool}` span written into the exporter's data, and its duration into the
//! `gen_ai.execute_tool.duration` histogram, with no walk of the subscriber's layers and no
//! lookup in its registry. The core still makes an observed call's `tracing` span and duration
//! event for the subscriber's other layers (a log's), under targets of their own, which the
//! layer turns off for itself.
//!
//! A call is not a `tracing` span, so the spans and events made while it runs find it here:
//! each thread keeps the calls running on it, each with the `tracing` span that was current
//! when it was entered. A span or event made while that span is still the current one is the
//! call's (its child, its span event); one made inside a span entered after the call is that
//! span's, as `tracing` says.
//!
//! With one span per call ([`Telemetry::with_one_span_per_call`](crate::Telemetry::with_one_span_per_call)),
//! a call whose current span already traces its execution (the MCP server's `tools/call {tool}`)
//! takes that span's ids and, when it ends, adds what it recorded to that span ([`Merge`])
//! instead of sending a span of its own.

use std::borrow::Cow;
use std::cell::RefCell;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use opentelemetry::trace::{SpanContext, SpanId, SpanKind, Status, TraceId};
use opentelemetry::{Key, KeyValue, Value};
use opentelemetry_sdk::trace::SpanEvents;
use tool_runtime::observe::{CallEnd, CallObserver, CallStart, ObservedCall};
use tracing::span::Id;

use crate::metrics::Histograms;
use crate::sampler::Sampler;
use crate::span_data::{self, Body, Carried, Sink, Traced, new_span_id, span_context};
use crate::values::text;

/// The observer the layer exposes.
pub(crate) struct Calls {
    shared: Arc<Shared>,
}

/// Which observer a running call is of: a thread may run calls under several subscribers (one
/// set for a scope inside another's), and each layer finds only its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Owner(usize);

struct Shared {
    sink: Option<Arc<Sink>>,
    histograms: Option<Arc<Histograms>>,
    sampler: Sampler,
    /// Arguments and results on the spans (the host's opt-in).
    content: bool,
    /// The context of a `tracing` span the layer records (or of its closest ancestor it does).
    context: fn(&tracing::Dispatch, &Id) -> Option<Traced>,
    /// Set with one span per call: a call is then recorded on the span around it when that
    /// span describes its execution.
    merge: Option<Merge>,
}

/// How a call is recorded on the `tracing` span it runs in when that span already traces its
/// execution (see [`Telemetry::with_one_span_per_call`](crate::Telemetry::with_one_span_per_call)):
/// what the layer does with its own spans, reached through the registry it is typed by.
#[derive(Clone, Copy)]
pub(crate) struct Merge {
    /// The context of the span `id`, when it is a kept span executing the tool named.
    pub(crate) target: fn(&tracing::Dispatch, &Id, &str) -> Option<Traced>,
    /// Adds a call's attributes and events to the span `id`, if it is still the one with that
    /// span id.
    pub(crate) absorb: fn(&tracing::Dispatch, &Id, SpanId, Body),
}

/// One call's span, shared by the thread-local list of running calls while it runs.
pub(crate) struct CallSpan {
    pub(crate) trace_id: TraceId,
    pub(crate) span_id: SpanId,
    /// Whether its trace is kept: a call of a trace not kept records no span, and its children
    /// none either.
    pub(crate) sampled: bool,
    pub(crate) carried: Option<Arc<Carried>>,
    /// Its parent's id, and whether it came from another process.
    parent: Option<(SpanId, bool)>,
    /// Its name, fields and events; `None` when its trace is not kept.
    body: Mutex<Option<Body>>,
    /// The `tracing` span it is recorded on (and shares ids with), rather than a span of its
    /// own: held open (a reference the call closes when it has added what it recorded).
    into: Option<Id>,
}

impl CallSpan {
    /// Adds to its body, if it records one.
    pub(crate) fn with_body(&self, f: impl FnOnce(&mut Body)) {
        let mut body = self.body.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(body) = body.as_mut() {
            f(body);
        }
    }

    /// A call recorded on the span `into` (of context `span`), which traces its execution
    /// already, and is the MCP conventions' server span: the call adds only what that span's
    /// definition allows (its arguments and result, when asked for), the toolkit's own
    /// `outcome` and `duration_us`, and its events.
    fn recorded_on(into: Id, (span, carried): Traced) -> Self {
        CallSpan {
            trace_id: span.trace_id(),
            span_id: span.span_id(),
            sampled: true,
            carried,
            parent: None,
            body: Mutex::new(Some(Body {
                name: Cow::Borrowed(""),
                kind: SpanKind::Internal,
                status: Status::Unset,
                start: SystemTime::UNIX_EPOCH,
                attributes: Vec::new(),
                events: SpanEvents::default(),
            })),
            into: Some(into),
        }
    }

    /// Its context, to carry on to a child.
    pub(crate) fn context(&self) -> SpanContext {
        span_context(
            self.trace_id,
            self.span_id,
            self.sampled,
            self.carried.as_deref(),
        )
    }
}

/// A call running on a thread.
struct Running {
    call: Arc<CallSpan>,
    /// The `tracing` span current when it was entered.
    over: Option<Id>,
    /// The observer it is of.
    owner: Owner,
}

thread_local! {
    /// The calls running on this thread, innermost last.
    static RUNNING: RefCell<Vec<Running>> = const { RefCell::new(Vec::new()) };
}

/// The call a span or event made now belongs to: `owner`'s innermost call running on this
/// thread, if `current` (the current `tracing` span) is still the one current when it was
/// entered.
pub(crate) fn running(owner: Owner, current: Option<&Id>) -> Option<Arc<CallSpan>> {
    RUNNING
        .try_with(|running| {
            let running = running.try_borrow().ok()?;
            let innermost = running.iter().rev().find(|r| r.owner == owner)?;
            (innermost.over.as_ref() == current).then(|| innermost.call.clone())
        })
        .ok()
        .flatten()
}

impl Calls {
    pub(crate) fn new(
        sink: Option<Arc<Sink>>,
        histograms: Option<Arc<Histograms>>,
        sampler: Sampler,
        content: bool,
        context: fn(&tracing::Dispatch, &Id) -> Option<Traced>,
        merge: Option<Merge>,
    ) -> Self {
        Calls {
            shared: Arc::new(Shared {
                sink,
                histograms,
                sampler,
                content,
                context,
                merge,
            }),
        }
    }

    /// The mark of this observer's calls.
    pub(crate) fn owner(&self) -> Owner {
        Owner(Arc::as_ptr(&self.shared) as usize)
    }
}

impl CallObserver for Calls {
    fn start(&self, call: &CallStart<'_>) -> Option<Box<dyn ObservedCall>> {
        let shared = &self.shared;
        let tool = text(call.tool.name());
        let (span, kept) = match &shared.sink {
            // Only histograms: no trace to keep or not.
            None => (None, true),
            Some(_) => match shared.span(self.owner(), call, &tool) {
                Some(span) => {
                    let kept = span.sampled;
                    (Some(Arc::new(span)), kept)
                }
                None => (None, false),
            },
        };
        Some(Box::new(Recorded {
            dispatch: span.as_ref().map(|_| call.dispatch.clone()),
            owner: self.owner(),
            shared: shared.clone(),
            span,
            kept,
            tool,
        }))
    }
}

impl Shared {
    /// The call's span: a child of the call or span current on this thread, or of the remote
    /// parent [`W3c`](crate::W3c) was told of (as a root span would be). None inside a local
    /// trace not kept: what is made inside the call follows that parent's decision. A call
    /// that starts a trace, kept or not, has one, so that what is made inside it follows its
    /// decision rather than starting traces of its own. With [`Merge`], the span of the
    /// `tracing` span around it, when that span executes the same tool.
    fn span(&self, owner: Owner, call: &CallStart<'_>, tool: &Value) -> Option<CallSpan> {
        let current = call.dispatch.current_span().id().cloned();
        let parent = match running(owner, current.as_ref()) {
            Some(call) => Some((call.context(), call.carried.clone())),
            None => {
                if let (Some(merge), Some(id)) = (&self.merge, &current)
                    && let Some(span) = (merge.target)(call.dispatch, id, call.tool.name())
                {
                    // Held open until the call has added what it recorded.
                    let held = call.dispatch.clone_span(id);
                    return Some(CallSpan::recorded_on(held, span));
                }
                current
                    .as_ref()
                    .and_then(|id| (self.context)(call.dispatch, id))
            }
        };
        let (trace_id, parent, sampled, carried) = match parent {
            Some((context, _)) if !context.is_sampled() => return None,
            Some((context, carried)) => (
                context.trace_id(),
                Some((context.span_id(), false)),
                true,
                carried,
            ),
            None => {
                let start = span_data::root(&self.sampler);
                (start.trace_id, start.parent, start.sampled, start.carried)
            }
        };
        let body = sampled.then(|| {
            let mut attributes = Vec::with_capacity(10);
            attributes.push(KeyValue::new(
                Key::from_static_str("gen_ai.operation.name"),
                Value::from("execute_tool"),
            ));
            attributes.push(KeyValue::new(
                Key::from_static_str("gen_ai.tool.name"),
                tool.clone(),
            ));
            attributes.push(KeyValue::new(
                Key::from_static_str("gen_ai.tool.type"),
                Value::from("function"),
            ));
            attributes.push(KeyValue::new(
                Key::from_static_str("gen_ai.tool.description"),
                text(call.tool.description()),
            ));
            if let Some(id) = call.call_id {
                attributes.push(KeyValue::new(
                    Key::from_static_str("gen_ai.tool.call.id"),
                    text(id),
                ));
            }
            Body {
                name: Cow::Owned(call.span_name.to_owned()),
                kind: SpanKind::Internal,
                status: Status::Unset,
                start: SystemTime::now(),
                attributes,
                events: SpanEvents::default(),
            }
        });
        Some(CallSpan {
            trace_id,
            span_id: new_span_id(),
            sampled,
            carried,
            parent,
            body: Mutex::new(body),
            into: None,
        })
    }
}

/// One call recorded.
struct Recorded {
    shared: Arc<Shared>,
    owner: Owner,
    /// Its span, when spans are exported and its parent's trace is kept (or it has none).
    span: Option<Arc<CallSpan>>,
    /// The dispatcher it started under (with a span): where the current span is read.
    dispatch: Option<tracing::Dispatch>,
    /// Whether its trace is kept.
    kept: bool,
    /// The tool's name, the histogram's attribute.
    tool: Value,
}

impl ObservedCall for Recorded {
    fn sampled(&self) -> bool {
        self.kept
    }

    fn enter(&self) {
        if let (Some(span), Some(dispatch)) = (&self.span, &self.dispatch) {
            let current = dispatch.current_span().id().cloned();
            let _ = RUNNING.try_with(|running| {
                if let Ok(mut running) = running.try_borrow_mut() {
                    running.push(Running {
                        call: span.clone(),
                        over: current,
                        owner: self.owner,
                    });
                }
            });
        }
    }

    fn exit(&self) {
        if let Some(span) = &self.span {
            let _ = RUNNING.try_with(|running| {
                if let Ok(mut running) = running.try_borrow_mut()
                    && let Some(at) = running.iter().rposition(|r| Arc::ptr_eq(&r.call, span))
                {
                    running.remove(at);
                }
            });
        }
    }

    fn wants_values(&self) -> bool {
        self.shared.content && self.span.as_ref().is_some_and(|s| s.sampled)
    }

    fn arguments(&self, arguments: &str) {
        if let Some(span) = &self.span {
            span.with_body(|body| {
                body.attributes.push(KeyValue::new(
                    Key::from_static_str("gen_ai.tool.call.arguments"),
                    Value::from(arguments.to_owned()),
                ));
            });
        }
    }

    fn finish(mut self: Box<Self>, end: &CallEnd<'_>) {
        if let Some(histograms) = &self.shared.histograms {
            histograms.execute_tool(end.took.as_secs_f64(), &self.tool, end.error_type);
        }
        self.export(Some(end));
        // Sent: nothing left for `drop`.
        self.span = None;
    }
}

impl Drop for Recorded {
    /// A call dropped before it ended (its caller went away): its span still goes out, with
    /// no outcome, as a `tracing` span closed early would.
    fn drop(&mut self) {
        self.export(None);
    }
}

impl Recorded {
    /// Sends the call's span, with its outcome when it ended.
    fn export(&self, end: Option<&CallEnd<'_>>) {
        let (Some(span), Some(sink)) = (&self.span, &self.shared.sink) else {
            return;
        };
        let body = span.body.lock().unwrap_or_else(|e| e.into_inner()).take();
        let Some(mut body) = body else {
            return;
        };
        if let Some(end) = end {
            ended(&mut body, end);
        }
        match (&span.into, &self.shared.merge, &self.dispatch) {
            (Some(into), Some(merge), Some(dispatch)) => {
                (merge.absorb)(dispatch, into, span.span_id, body);
                dispatch.try_close(into.clone());
            }
            _ => sink.send(span.context(), span.parent, body),
        }
    }
}

/// A call's outcome on its span: the result (when values are recorded), `error.type` and
/// status `ERROR` for a failure, `outcome` and `duration_us`.
fn ended(body: &mut Body, end: &CallEnd<'_>) {
    if let Some(result) = end.result {
        body.attributes.push(KeyValue::new(
            Key::from_static_str("gen_ai.tool.call.result"),
            Value::from(result.to_owned()),
        ));
    }
    if let Some(kind) = end.error_type {
        body.attributes.push(KeyValue::new(
            Key::from_static_str("error.type"),
            text(kind),
        ));
        if !matches!(body.status, Status::Error { .. }) {
            body.status = Status::error("");
        }
    }
    body.attributes.push(KeyValue::new(
        Key::from_static_str("outcome"),
        text(end.outcome),
    ));
    body.attributes.push(KeyValue::new(
        Key::from_static_str("duration_us"),
        Value::I64(i64::try_from(end.took.as_micros()).unwrap_or(i64::MAX)),
    ));
}
