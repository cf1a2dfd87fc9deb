//! Tool calls recorded by a telemetry crate directly, beside `tracing`.
//!
//! Every call of a tool makes a `tracing` span (`execute_tool {tool}`) and a duration event,
//! and a telemetry layer can record both. A span through a `tracing` subscriber costs a walk
//! of its layers at each step (made, entered, left, recorded, closed) and a lookup in its
//! registry at each, about twice what a cheap tool's call costs. A layer that records the
//! toolkit's calls itself exposes an [`Observer`] (from its `downcast_raw`, as `tracing`
//! layers expose their parts): the toolkit then tells it of each call directly. The call's
//! span and duration event are still made for the subscriber's other layers, under the targets
//! [`SPAN_TARGET`] and [`METRICS_TARGET`], which the observing layer turns off for itself
//! (a log line inside a tool still shows the call's span when a log's layer wants it). A call
//! of a trace the observer does not keep ([`ObservedCall::sampled`]) makes no span, for any
//! layer. `tool-runtime-otel`'s layer is an observer.
//!
//! The observer is the current `tracing` dispatcher's: a call made where no subscriber is set,
//! or under one without such a layer, is observed by none, and its span and event have their
//! usual targets (`tool_runtime::call`, `tool_runtime::metrics`).
//!
//! What an observer cannot see, as it is not a `tracing` span: inside a tool,
//! `tracing::Span::current()` is the span around the call (an MCP request's, say), so work a
//! tool hands to another task with the current span is that span's, not the call's.

use std::sync::Arc;
use std::time::Duration;

use crate::tool::Tool;

/// The target of an observed call's `tracing` span (the target of an unobserved one is
/// `tool_runtime::call`): a filter on `tool_runtime::call` applies to both.
pub const SPAN_TARGET: &str = "tool_runtime::call::observed";

/// The target of an observed call's duration event (an unobserved one's is
/// `tool_runtime::metrics`): a filter on `tool_runtime::metrics` applies to both.
pub const METRICS_TARGET: &str = "tool_runtime::metrics::observed";

/// What records the toolkit's calls (see the [module](self)).
pub trait CallObserver: Send + Sync + 'static {
    /// A call of `call.tool` starts, on the thread it starts on: what is kept for it until it
    /// ends, or `None` to record nothing of it. Called while `tracing` lends
    /// [`call.dispatch`](CallStart::dispatch), inside which `tracing`'s dispatcher functions
    /// see no subscriber: read the current span from `call.dispatch`.
    fn start(&self, call: &CallStart<'_>) -> Option<Box<dyn ObservedCall>>;
}

/// One call an observer records. The toolkit calls, in order: [`sampled`](Self::sampled) and
/// [`wants_values`](Self::wants_values) (each may be asked again, and must answer the same),
/// then for each run of the call [`enter`](Self::enter), [`arguments`](Self::arguments) the
/// first time, and [`exit`](Self::exit), and at its end [`finish`](Self::finish). A call
/// dropped before it ends (its caller went away) is dropped without `finish`.
pub trait ObservedCall: Send {
    /// Whether the call's trace is kept (the default: yes). A call of a trace not kept makes
    /// no `tracing` span, for any layer.
    fn sampled(&self) -> bool {
        true
    }

    /// The call runs on this thread until the matching [`exit`](Self::exit): each poll of an
    /// async tool's future, and the run of a sync tool, are inside one such pair (spans and
    /// events made there are the call's children).
    fn enter(&self);

    /// The call stops running on this thread (see [`enter`](Self::enter)).
    fn exit(&self);

    /// Whether the observer records arguments and results (a host's opt-in).
    fn wants_values(&self) -> bool {
        false
    }

    /// The call's arguments as they arrived, when [`wants_values`](Self::wants_values).
    fn arguments(&self, text: &str) {
        let _ = text;
    }

    /// The call ended.
    fn finish(self: Box<Self>, end: &CallEnd<'_>);
}

/// A call starting.
#[derive(Debug)]
#[non_exhaustive]
pub struct CallStart<'a> {
    /// The tool called.
    pub tool: &'a Tool,
    /// The call's span name by OpenTelemetry's GenAI conventions: `execute_tool {tool}`.
    pub span_name: &'a str,
    /// The id the model gave the call, if any.
    pub call_id: Option<&'a str>,
    /// The dispatcher whose observer is told (the current one). `tracing` lends no dispatcher
    /// while it lends this one: an observer reads the current span from it.
    pub dispatch: &'a tracing::Dispatch,
}

/// A call ended.
#[derive(Debug)]
#[non_exhaustive]
pub struct CallEnd<'a> {
    /// How long it took, from its start to its end (waits included).
    pub took: Duration,
    /// `ok`, or the kind of its error ([`ToolError::kind`](crate::ToolError::kind):
    /// `invalid_arguments`, `failed` for the tool's own error, …, and `approval_required` for
    /// a call held for a person's approval, which is not a failure).
    pub outcome: &'a str,
    /// For a failure, OpenTelemetry's `error.type`: `tool_error` for the tool's own error,
    /// else the error's kind; `None` for a success or a call held for approval.
    pub error_type: Option<&'a str>,
    /// The result as a person may see it (the tool's `redact` copy), when the observer
    /// [wants values](ObservedCall::wants_values) and the call succeeded.
    pub result: Option<&'a str>,
}

/// The observer a `tracing` layer exposes: return a pointer to one from the layer's
/// `downcast_raw` when asked for `TypeId::of::<Observer>()`.
#[derive(Clone)]
pub struct Observer(Arc<dyn CallObserver>);

impl std::fmt::Debug for Observer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Observer")
    }
}

impl Observer {
    /// An observer of calls.
    pub fn new(observer: impl CallObserver) -> Self {
        Observer(Arc::new(observer))
    }

    /// A call of `tool` starts: told to the current dispatcher's observer, if its subscriber
    /// has one.
    #[inline]
    pub(crate) fn start(tool: &Tool, call_id: Option<&str>) -> Option<Box<dyn ObservedCall>> {
        // No subscriber was ever set: nothing to look up (the common case costs a load).
        if !tracing::dispatcher::has_been_set() {
            return None;
        }
        Self::start_observed(tool, call_id)
    }

    #[inline(never)]
    fn start_observed(tool: &Tool, call_id: Option<&str>) -> Option<Box<dyn ObservedCall>> {
        tracing::dispatcher::get_default(|dispatch| {
            let observer = dispatch.downcast_ref::<Observer>()?;
            observer.0.start(&CallStart {
                tool,
                span_name: tool.span_name(),
                call_id,
                dispatch,
            })
        })
    }
}
