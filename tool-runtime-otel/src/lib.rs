//! The toolkit's spans and metrics exported to OpenTelemetry over OTLP/HTTP, set up from the
//! standard `OTEL_*` environment variables in two lines:
//!
//! ```no_run
//! # fn main() -> Result<(), tool_runtime_otel::Error> {
//! # let tools = tool_runtime::ToolSet::new::<tool_runtime::ToolRef>([]).unwrap();
//! // Logs to stderr filtered by RUST_LOG; spans and metrics over OTLP when OTEL_* asks for them.
//! let _telemetry = tool_runtime_otel::init("warn")?;
//! let server = tool_runtime_mcp::McpServer::new(tools).with_propagator(tool_runtime_otel::W3c);
//! # Ok(()) }
//! ```
//!
//! The toolkit's spans are `tracing` spans named and attributed as OpenTelemetry's GenAI and MCP
//! semantic conventions say (`execute_tool {tool}`, `tools/call {tool}` of kind server or
//! client); its durations (a tool call's told to this crate directly, see below) are
//! `tracing` events this crate records into the conventions' histograms (`gen_ai.execute_tool.duration`, `mcp.server.operation.duration`,
//! `mcp.client.operation.duration`, in seconds, with the conventions' bucket boundaries). This
//! crate is the bridge: [`Telemetry::from_env`] builds the exporters, [`Telemetry::layer`] is the
//! `tracing` layer for a subscriber of the host's own, [`init`] installs one with logs to stderr,
//! and [`W3c`] carries W3C trace context across MCP hops (`traceparent`, `tracestate`, `baggage`
//! in `_meta`).
//!
//! The layer writes each span straight from its fields into what the OTLP exporter sends, and
//! decides whether a trace is kept when its first span starts: a span of a trace not kept costs
//! its ids, nothing more, and the toolkit's spans inside it are not made (the calls still count
//! in the histograms). A tool call is not recorded through `tracing` at all: the layer exposes
//! the core's [`Observer`](tool_runtime::observe::Observer), which the toolkit tells of each call
//! directly, so a call's span and histogram cost no walk of the subscriber's layers and no
//! lookup in its registry (the call's `tracing` span is still made for another layer that wants
//! it, a log's; spans and events made on the thread while the call runs there are still its
//! children, but `tracing::Span::current()` inside a tool is the span around the call: see
//! [`Telemetry::with_call_observer`]). The histograms are bound to their attributes once per
//! thread (the SDK's experimental bound instruments, which this crate turns on), so a call's
//! measurements are not hashed and looked up in a map the server's threads share. Recording a
//! tool call's span and histogram takes about 3,300 more instructions than the call without a
//! subscriber (1.7x to 2.6x the three example tools' calls); a stateless MCP call over HTTP
//! 1.14x, or 1.07x outside the sample (`scripts/otel-overhead.sh`).
//!
//! The variables read (OpenTelemetry's SDK configuration):
//!
//! | variable | effect |
//! |---|---|
//! | `OTEL_SDK_DISABLED=true` | nothing is exported |
//! | `OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `..._METRICS_ENDPOINT` | where to send; export is on only when one of them is set (or an exporter is named below) |
//! | `OTEL_TRACES_EXPORTER`, `OTEL_METRICS_EXPORTER` | `otlp` (turns export on) or `none` |
//! | `OTEL_EXPORTER_OTLP_PROTOCOL` | `http/protobuf` (the default and the only one supported) |
//! | `OTEL_EXPORTER_OTLP_HEADERS`, `..._TIMEOUT`, `..._COMPRESSION` | read by the OTLP exporter |
//! | `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES` | the resource (default service name: the executable's) |
//! | `OTEL_BSP_*`, `OTEL_METRIC_EXPORT_INTERVAL` | batching and the metrics' export interval |
//! | `OTEL_TRACES_SAMPLER`, `OTEL_TRACES_SAMPLER_ARG` | which traces are kept (the SDK's sampler) |
//! | `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` | the opt-in: tool calls' arguments and results (as a person may see them, after the tool's `redact`) on their spans, as `gen_ai.tool.call.arguments` / `.result`; off by default |
//! | `TOOL_RUNTIME_OTEL_ONE_SPAN_PER_CALL=true` | a tool call the MCP server runs is recorded on the server's `tools/call {tool}` span rather than in a child `execute_tool {tool}` span ([`Telemetry::with_one_span_per_call`]: one span a `tools/call` request, not two); off by default |

#![deny(missing_docs)]

mod calls;
mod metrics;
#[cfg(feature = "otlp")]
mod otlp;
mod sampler;
mod span_data;
mod spans;
mod values;

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use opentelemetry::InstrumentationScope;
use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::TraceContextExt as _;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SpanProcessor;
use tool_runtime_mcp::trace::{Propagator, TraceContext};
use tracing::Subscriber;
use tracing::level_filters::LevelFilter;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::registry::LookupSpan;

/// The targets of the toolkit's duration events: metrics, never span events.
pub(crate) const METRIC_TARGETS: [&str; 2] = ["tool_runtime::metrics", "tool_runtime_mcp::metrics"];

/// The target of the toolkit's argument and result events (a host's opt-in).
const VALUES_TARGET: &str = "tool_runtime::values";

/// Why telemetry could not be set up.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A variable holds a value this crate does not support (its name, the value, what it takes).
    Unsupported {
        /// The variable, e.g. `OTEL_EXPORTER_OTLP_PROTOCOL`.
        variable: &'static str,
        /// The value it holds.
        value: String,
        /// The values it takes.
        expected: &'static str,
    },
    /// The OTLP exporter could not be built (e.g. an endpoint that is not a URL).
    Exporter(String),
    /// A global `tracing` subscriber was already set ([`init`] only).
    AlreadyInitialized,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Unsupported {
                variable,
                value,
                expected,
            } => write!(
                f,
                "{variable}={value:?} is not supported: expected {expected}"
            ),
            Error::Exporter(e) => write!(f, "the OTLP exporter could not be built: {e}"),
            Error::AlreadyInitialized => f.write_str("a global tracing subscriber is already set"),
        }
    }
}

impl std::error::Error for Error {}

/// The exporters the environment asked for; dropping it flushes what is buffered and shuts
/// them down (keep it alive for the program's life: `let _telemetry = ...`).
pub struct Telemetry {
    spans: Option<Arc<span_data::Sink>>,
    meter: Option<SdkMeterProvider>,
    sampler: Sampler,
    /// Arguments and results on the spans (the opt-in).
    content: bool,
    /// Tool calls recorded through the core's observer (the default), not as `tracing` spans.
    observe_calls: bool,
    /// A call recorded on the `execute_tool` span it runs in, rather than as its child.
    one_span_per_call: bool,
}

#[cfg(feature = "otlp")]
pub use otlp::init;
pub use sampler::Sampler;

impl fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Telemetry")
            .field("traces", &self.spans.is_some())
            .field("sampler", &self.sampler)
            .field("metrics", &self.meter.is_some())
            .field("content", &self.content)
            .field("observe_calls", &self.observe_calls)
            .field("one_span_per_call", &self.one_span_per_call)
            .finish()
    }
}

impl Telemetry {
    /// Telemetry through exporters of the host's own: finished spans handed to `spans` (a
    /// [`BatchSpanProcessor`](opentelemetry_sdk::trace::BatchSpanProcessor) over any exporter,
    /// or the SDK's in-memory one in a test), the histograms recorded in `metrics`; every trace
    /// kept unless [`with_sampler`](Self::with_sampler) says otherwise. Without the `otlp`
    /// feature this is the only way in.
    pub fn new(spans: Option<Box<dyn SpanProcessor>>, metrics: Option<SdkMeterProvider>) -> Self {
        Telemetry {
            spans: spans.map(|processor| {
                Arc::new(span_data::Sink {
                    processor,
                    scope: scope(),
                })
            }),
            meter: metrics,
            sampler: Sampler::AlwaysOn,
            content: false,
            observe_calls: true,
            one_span_per_call: false,
        }
    }

    /// Which traces are kept (from `OTEL_TRACES_SAMPLER` with [`from_env`](Self::from_env)).
    pub fn with_sampler(mut self, sampler: Sampler) -> Self {
        self.sampler = sampler;
        self
    }

    /// Whether tool calls' arguments and results go on their spans, as
    /// `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result` (the result as a person may
    /// see it, after the tool's `redact`): the conventions' opt-in, off by default
    /// (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` with
    /// [`from_env`](Self::from_env)).
    pub fn with_message_content(mut self, captured: bool) -> Self {
        self.content = captured;
        self
    }

    /// Whether tool calls are told to the layer directly (the default), through the core's
    /// [`Observer`](tool_runtime::observe::Observer), or recorded as `tracing` spans like any
    /// other (`false`). Directly, a call costs about 3,600 fewer instructions (no walk of the
    /// subscriber's layers, no lookup in its registry), but it is not a `tracing` span:
    /// inside a tool, `tracing::Span::current()` is the span around the call, so work a tool
    /// hands to another task with the current span is that span's, not the call's; and a
    /// filter the host puts this layer behind does not apply to calls. Turn it off when either
    /// matters.
    pub fn with_call_observer(mut self, observed: bool) -> Self {
        self.observe_calls = observed;
        self
    }

    /// Whether a tool call that runs inside a span already describing its execution (a span
    /// with `gen_ai.operation.name = "execute_tool"` and the tool's `gen_ai.tool.name`, as the
    /// MCP server's `tools/call {tool}` span is) is recorded on that span rather than in a
    /// child `execute_tool {tool}` span; off by default
    /// (`TOOL_RUNTIME_OTEL_ONE_SPAN_PER_CALL=true` with [`from_env`](Self::from_env)). A traced
    /// `tools/call` request then exports one span instead of two. The MCP server span's
    /// definition allows no `gen_ai.tool.type`, `.description` or `.call.id`, so the call adds
    /// only its arguments and result (when asked for,
    /// [`with_message_content`](Self::with_message_content)), the toolkit's `outcome` and
    /// `duration_us`, and its events; how the request ended (`error.type`, the status) is the
    /// span's owner's to say. Spans and calls made inside the tool are that span's children.
    /// The first call in the span is recorded on it; another in the same request (a call
    /// resumed after an approval, or run again after a question) gets its own span. The
    /// conventions leave the choice open: the MCP client span's note lets an instrumentation
    /// fold into an outer `execute_tool` span, behind an option, and says nothing of the
    /// server's side. It needs the call observer
    /// ([`with_call_observer`](Self::with_call_observer)); a call of another tool, or with no
    /// such span around it, keeps its own span.
    pub fn with_one_span_per_call(mut self, merged: bool) -> Self {
        self.one_span_per_call = merged;
        self
    }

    /// The `tracing` layer that exports: spans (the toolkit's at `INFO`, and the host's own at
    /// `INFO` and above; rmcp's only from `WARN`) and the toolkit's duration histograms. Add
    /// it to a subscriber of the host's own; [`init`] does it for the usual one.
    ///
    /// Unless every trace is kept ([`Sampler::AlwaysOn`]), the toolkit's own spans (targets
    /// `tool_runtime*`) inside a trace not kept are not made, for any layer of the subscriber:
    /// a log line written inside one shows the request's span but not the tool's. Whether a
    /// span is inside such a trace is read from the spans entered and the tool calls running
    /// on its thread (the toolkit makes its spans there; a span given another parent
    /// explicitly is judged by the current one). The host's own spans are left to its layers.
    /// The layer records tool calls through the core's observer unless
    /// [`with_call_observer(false)`](Self::with_call_observer); it is meant to be the only
    /// one of this crate in a subscriber (a second one would see no tool call).
    pub fn layer<S>(&self) -> impl Layer<S> + Send + Sync + 'static
    where
        S: Subscriber + for<'span> LookupSpan<'span> + Send + Sync,
    {
        // A list rather than optional layers: an absent `Option` layer tells the subscriber
        // its most verbose level is OFF, which turns every span off.
        let mut layers: Vec<Box<dyn Layer<S> + Send + Sync>> = Vec::new();
        let histograms = self.meter.as_ref().map(metrics::Histograms::new);
        if self.spans.is_some() || histograms.is_some() {
            // Spans (the toolkit's at `INFO`, the host's own at `INFO` and above, rmcp's from
            // `WARN`) when traces are exported; the duration events when metrics are.
            let mut targets = match self.spans {
                Some(_) => Targets::new()
                    .with_default(LevelFilter::INFO)
                    .with_target("rmcp", LevelFilter::WARN)
                    .with_target(VALUES_TARGET, LevelFilter::OFF),
                None => Targets::new(),
            };
            let metrics = match histograms {
                Some(_) => LevelFilter::INFO,
                None => LevelFilter::OFF,
            };
            for target in METRIC_TARGETS {
                targets = targets.with_target(target, metrics);
            }
            layers.push(Box::new(
                spans::SpanLayer::new(
                    self.spans.clone(),
                    histograms,
                    self.sampler.clone(),
                    self.content,
                    self.observe_calls,
                    self.one_span_per_call,
                )
                .with_filter(spans::Sampled {
                    targets,
                    every_trace: matches!(self.sampler, Sampler::AlwaysOn),
                }),
            ));
        }
        // The toolkit records arguments and results only when some layer wants its target
        // `tool_runtime::values` at TRACE: this one does, when the host opted in, and takes
        // nothing (the values go on the spans as attributes, not as events).
        if self.content {
            layers.push(Box::new(
                tracing_subscriber::layer::Identity::new()
                    .with_filter(Targets::new().with_target(VALUES_TARGET, LevelFilter::TRACE)),
            ));
        }
        layers
    }

    /// Exports what is buffered now (e.g. before a process exits on its own path).
    pub fn flush(&self) {
        if let Some(sink) = &self.spans {
            let _ = sink.processor.force_flush();
        }
        if let Some(meter) = &self.meter {
            let _ = meter.force_flush();
        }
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        self.flush();
        if let Some(sink) = self.spans.take() {
            let _ = sink.processor.shutdown();
        }
        if let Some(meter) = self.meter.take() {
            let _ = meter.shutdown();
        }
    }
}

/// Who produced the spans and metrics.
fn scope() -> InstrumentationScope {
    InstrumentationScope::builder("tool-runtime")
        .with_version(env!("CARGO_PKG_VERSION"))
        .build()
}

/// W3C trace context (`traceparent`, `tracestate`) and baggage carried in MCP requests' `_meta`,
/// between the spans [`Telemetry::layer`] records: a request's context becomes its server
/// span's remote parent (and that parent's sampling decision the trace's), and a call to
/// another server carries its client span's context on, with the baggage that came in. Set it
/// on the server
/// ([`McpServer::with_propagator`](tool_runtime_mcp::McpServer::with_propagator)) and on the
/// remote servers a gateway calls
/// ([`RemoteOptions::propagator`](tool_runtime_mcp::remote::RemoteOptions::propagator)).
#[derive(Clone, Copy, Debug, Default)]
pub struct W3c;

/// The remote parent `carried` names (invalid when it names none).
fn remote_parent(carried: &TraceContext) -> opentelemetry::trace::SpanContext {
    let parent = TraceContextPropagator::new().extract(&carried.fields());
    parent.span().span_context().clone()
}

impl Propagator for W3c {
    fn before_span(&self, carried: &TraceContext) {
        if carried.traceparent.is_empty() {
            // The request carried none: the span starts its own trace.
            span_data::expect_parent(
                opentelemetry::trace::SpanContext::empty_context(),
                span_data::Carried::default(),
            );
            return;
        }
        let parent = remote_parent(carried);
        let carried = span_data::Carried {
            trace_state: parent.trace_state().clone(),
            baggage: carried.baggage.clone(),
        };
        span_data::expect_parent(parent, carried);
    }

    fn extract(&self, span: &tracing::Span, carried: &TraceContext) {
        // A span made after `before_span` took its parent already.
        span_data::forget_parent();
        if carried.traceparent.is_empty() {
            return;
        }
        let parent = remote_parent(carried);
        // Nothing to do for a span this crate's layer does not record.
        span.with_subscriber(|(id, dispatch)| {
            if let Some(hooks) = dispatch.downcast_ref::<spans::Hooks>() {
                hooks.set_parent(dispatch, id, &parent, carried.baggage.clone());
            }
        });
    }

    fn inject(&self, span: &tracing::Span) -> Option<TraceContext> {
        // A span not made (inside a trace not kept): the trace goes on from the call or span
        // around it, marked not sampled, so the next hop does not start one of its own. A span
        // off for any other reason has no context to carry.
        let context = if span.is_disabled() {
            let around = tracing::dispatcher::get_default(|dispatch| {
                let hooks = dispatch.downcast_ref::<spans::Hooks>()?;
                let current = dispatch.current_span().id().cloned();
                match hooks.running(current.as_ref()) {
                    Some(call) => Some((call.context(), call.carried.clone())),
                    None => hooks.context(dispatch, current.as_ref()?),
                }
            })?;
            if around.0.is_sampled() {
                return None;
            }
            around
        } else {
            span.with_subscriber(|(id, dispatch)| {
                dispatch
                    .downcast_ref::<spans::Hooks>()
                    .and_then(|hooks| hooks.context(dispatch, id))
            })
            .flatten()?
        };
        let (context, carried) = context;
        let cx = opentelemetry::Context::new().with_remote_span_context(context);
        let mut fields = HashMap::new();
        TraceContextPropagator::new().inject_context(&cx, &mut fields);
        let mut out = TraceContext::from_fields(|k| fields.get(k).cloned())?;
        out.baggage = carried.and_then(|c| c.baggage.clone());
        Some(out)
    }
}
