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
//! client); its durations are `tracing` events this crate records into the conventions'
//! histograms (`gen_ai.execute_tool.duration`, `mcp.server.operation.duration`,
//! `mcp.client.operation.duration`, in seconds, with the conventions' bucket boundaries). This
//! crate is the bridge: [`Telemetry::from_env`] builds the exporters, [`Telemetry::layer`] is the
//! `tracing` layer for a subscriber of the host's own, [`init`] installs one with logs to stderr,
//! and [`W3c`] carries W3C trace context across MCP hops (`traceparent`, `tracestate`, `baggage`
//! in `_meta`).
//!
//! The layer writes each span straight from its fields into what the OTLP exporter sends, and
//! decides whether a trace is kept when its first span starts: a span of a trace not kept costs
//! its ids, nothing more. Recording a tool call's span and histogram costs about 2x the
//! instructions of the call without a subscriber (`scripts/otel-overhead.sh`).
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

#![deny(missing_docs)]

mod metrics;
mod sampler;
mod spans;
mod values;

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use opentelemetry::InstrumentationScope;
use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::TraceContextExt as _;
use opentelemetry_otlp::{MetricExporter, SpanExporter, WithExportConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{BatchSpanProcessor, SpanProcessor};
use tool_runtime_mcp::trace::{Propagator, TraceContext};
use tracing::Subscriber;
use tracing::level_filters::LevelFilter;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt as _;

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
    spans: Option<Arc<spans::Sink>>,
    meter: Option<SdkMeterProvider>,
    sampler: Sampler,
    /// Arguments and results on the spans (the opt-in).
    content: bool,
}

pub use sampler::Sampler;

impl fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Telemetry")
            .field("traces", &self.spans.is_some())
            .field("sampler", &self.sampler)
            .field("metrics", &self.meter.is_some())
            .field("content", &self.content)
            .finish()
    }
}

/// What one signal's variables ask for.
#[derive(Debug, PartialEq, Eq)]
enum Asked {
    Off,
    Otlp,
}

/// Reads `OTEL_{SIGNAL}_EXPORTER` and the endpoints: export is on when an exporter is named or an
/// endpoint is set, never by default (a program run without any `OTEL_*` sends nothing).
fn asked(
    var: &dyn Fn(&str) -> Option<String>,
    exporter: &'static str,
    endpoint: &str,
) -> Result<Asked, Error> {
    match var(exporter).as_deref().map(str::trim) {
        Some("none") => return Ok(Asked::Off),
        Some("otlp") => return Ok(Asked::Otlp),
        Some("") | None => {}
        Some(other) => {
            return Err(Error::Unsupported {
                variable: exporter,
                value: other.to_owned(),
                expected: "`otlp` or `none`",
            });
        }
    }
    let set = |k: &str| var(k).is_some_and(|v| !v.trim().is_empty());
    Ok(if set("OTEL_EXPORTER_OTLP_ENDPOINT") || set(endpoint) {
        Asked::Otlp
    } else {
        Asked::Off
    })
}

impl Telemetry {
    /// Telemetry through exporters of the host's own: finished spans handed to `spans` (a
    /// [`BatchSpanProcessor`] over any exporter, or the SDK's in-memory one in a test), the
    /// histograms recorded in `metrics`; every trace kept unless
    /// [`with_sampler`](Self::with_sampler) says otherwise.
    pub fn new(spans: Option<Box<dyn SpanProcessor>>, metrics: Option<SdkMeterProvider>) -> Self {
        Telemetry {
            spans: spans.map(|processor| {
                Arc::new(spans::Sink {
                    processor,
                    scope: scope(),
                })
            }),
            meter: metrics,
            sampler: Sampler::AlwaysOn,
            content: false,
        }
    }

    /// Which traces are kept (from `OTEL_TRACES_SAMPLER` with [`from_env`](Self::from_env)).
    pub fn with_sampler(mut self, sampler: Sampler) -> Self {
        self.sampler = sampler;
        self
    }

    /// The exporters `OTEL_*` asks for (see the crate's table); `None` when it asks for none,
    /// or `OTEL_SDK_DISABLED=true`.
    pub fn from_env() -> Result<Option<Telemetry>, Error> {
        Telemetry::from_vars(&|k| std::env::var(k).ok())
    }

    fn from_vars(var: &dyn Fn(&str) -> Option<String>) -> Result<Option<Telemetry>, Error> {
        if var("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
            return Ok(None);
        }
        let traces = asked(
            var,
            "OTEL_TRACES_EXPORTER",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        )?;
        let metrics = asked(
            var,
            "OTEL_METRICS_EXPORTER",
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
        )?;
        if traces == Asked::Off && metrics == Asked::Off {
            return Ok(None);
        }
        for protocol in [
            "OTEL_EXPORTER_OTLP_PROTOCOL",
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
            "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
        ] {
            if let Some(value) = var(protocol).filter(|v| !v.trim().is_empty())
                && value.trim() != "http/protobuf"
            {
                return Err(Error::Unsupported {
                    variable: protocol,
                    value,
                    expected: "`http/protobuf` (OTLP over HTTP; gRPC is not built in)",
                });
            }
        }
        let resource = resource(var);
        let spans = match traces {
            Asked::Off => None,
            Asked::Otlp => {
                let exporter = SpanExporter::builder()
                    .with_http()
                    .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
                    .build()
                    .map_err(|e| Error::Exporter(e.to_string()))?;
                let mut processor = BatchSpanProcessor::builder(exporter).build();
                processor.set_resource(&resource);
                Some(Arc::new(spans::Sink {
                    processor: Box::new(processor),
                    scope: scope(),
                }))
            }
        };
        let meter = match metrics {
            Asked::Off => None,
            Asked::Otlp => {
                let exporter = MetricExporter::builder()
                    .with_http()
                    .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
                    .build()
                    .map_err(|e| Error::Exporter(e.to_string()))?;
                Some(
                    SdkMeterProvider::builder()
                        .with_reader(PeriodicReader::builder(exporter).build())
                        .with_resource(resource)
                        .build(),
                )
            }
        };
        let content = var("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
        Ok(Some(Telemetry {
            spans,
            meter,
            sampler: Sampler::from_vars(var)?,
            content,
        }))
    }

    /// The `tracing` layer that exports: spans (the toolkit's at `INFO`, and the host's own at
    /// `INFO` and above; rmcp's only from `WARN`) and the toolkit's duration histograms. Add
    /// it to a subscriber of the host's own; [`init`] does it for the usual one.
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
                spans::SpanLayer::new(self.spans.clone(), histograms, self.sampler.clone())
                    .with_filter(targets),
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

/// The resource: `OTEL_SERVICE_NAME` / `OTEL_RESOURCE_ATTRIBUTES` as the SDK reads them, and
/// the executable's name when neither names the service.
fn resource(var: &dyn Fn(&str) -> Option<String>) -> Resource {
    let named = var("OTEL_SERVICE_NAME").is_some_and(|v| !v.trim().is_empty())
        || var("OTEL_RESOURCE_ATTRIBUTES").is_some_and(|v| v.contains("service.name="));
    let builder = Resource::builder();
    if named {
        return builder.build();
    }
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "unknown_service".to_owned());
    builder.with_service_name(exe).build()
}

/// Installs the global `tracing` subscriber: logs to stderr filtered by `RUST_LOG` (else by
/// `default_logs`, e.g. `"warn"`), and, when `OTEL_*` asks for it, the OTLP export of
/// [`Telemetry::layer`]. Keep what it returns alive; it is `None` when nothing is exported.
pub fn init(default_logs: &str) -> Result<Option<Telemetry>, Error> {
    let telemetry = Telemetry::from_env()?;
    let logs = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_logs)),
        );
    let export = telemetry.as_ref().map(|t| t.layer());
    tracing_subscriber::registry()
        .with(logs)
        .with(export)
        .try_init()
        .map_err(|_| Error::AlreadyInitialized)?;
    Ok(telemetry)
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
        let parent = remote_parent(carried);
        let carried = spans::Carried {
            trace_state: parent.trace_state().clone(),
            baggage: carried.baggage.clone(),
        };
        spans::expect_parent(parent, carried);
    }

    fn extract(&self, span: &tracing::Span, carried: &TraceContext) {
        // A span made after `before_span` took its parent already.
        spans::forget_parent();
        let parent = remote_parent(carried);
        // Nothing to do for a span this crate's layer does not record.
        span.with_subscriber(|(id, dispatch)| {
            if let Some(hooks) = dispatch.downcast_ref::<spans::Hooks>() {
                hooks.set_parent(dispatch, id, &parent, carried.baggage.clone());
            }
        });
    }

    fn inject(&self, span: &tracing::Span) -> Option<TraceContext> {
        let context = span
            .with_subscriber(|(id, dispatch)| {
                dispatch
                    .downcast_ref::<spans::Hooks>()
                    .and_then(|hooks| hooks.context(dispatch, id))
            })
            .flatten()?;
        let (context, carried) = context;
        let cx = opentelemetry::Context::new().with_remote_span_context(context);
        let mut fields = HashMap::new();
        TraceContextPropagator::new().inject_context(&cx, &mut fields);
        let mut out = TraceContext::from_fields(|k| fields.get(k).cloned())?;
        out.baggage = carried.and_then(|c| c.baggage.clone());
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(name, _)| *name == k)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn nothing_is_exported_unless_the_environment_asks() {
        for pairs in [
            &[][..],
            &[("OTEL_SERVICE_NAME", "hr")][..],
            &[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
                ("OTEL_SDK_DISABLED", "true"),
            ][..],
            &[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
                ("OTEL_TRACES_EXPORTER", "none"),
                ("OTEL_METRICS_EXPORTER", "none"),
            ][..],
        ] {
            let got = Telemetry::from_vars(&vars(pairs)).unwrap();
            assert!(got.is_none(), "{pairs:?}: {got:?}");
        }
    }

    #[test]
    fn an_endpoint_or_a_named_exporter_turns_each_signal_on() {
        let both = Telemetry::from_vars(&vars(&[(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "http://127.0.0.1:4318",
        )]))
        .unwrap()
        .unwrap();
        assert!(both.spans.is_some() && both.meter.is_some());
        let traces = Telemetry::from_vars(&vars(&[(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "http://127.0.0.1:4318/v1/traces",
        )]))
        .unwrap()
        .unwrap();
        assert!(traces.spans.is_some() && traces.meter.is_none());
        let metrics = Telemetry::from_vars(&vars(&[("OTEL_METRICS_EXPORTER", "otlp")]))
            .unwrap()
            .unwrap();
        assert!(metrics.spans.is_none() && metrics.meter.is_some());
    }

    #[test]
    fn arguments_and_results_are_asked_for_only_when_the_host_opts_in() {
        let wanted = |pairs: &'static [(&'static str, &'static str)]| {
            let telemetry = Telemetry::from_vars(&vars(pairs)).unwrap().unwrap();
            let subscriber = tracing_subscriber::registry().with(telemetry.layer());
            tracing::subscriber::with_default(
                subscriber,
                || tracing::enabled!(target: "tool_runtime::values", tracing::Level::TRACE),
            )
        };
        const ENDPOINT: (&str, &str) = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9");
        const CONTENT: &str = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";
        assert!(!wanted(&[ENDPOINT]));
        assert!(!wanted(&[ENDPOINT, (CONTENT, "false")]));
        assert!(wanted(&[ENDPOINT, (CONTENT, "true")]));
    }

    #[test]
    fn an_unsupported_value_is_named_with_what_is_expected() {
        let err = Telemetry::from_vars(&vars(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ]))
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "OTEL_EXPORTER_OTLP_PROTOCOL=\"grpc\" is not supported: expected `http/protobuf` (OTLP over HTTP; gRPC is not built in)"
        );
        let err = Telemetry::from_vars(&vars(&[("OTEL_TRACES_EXPORTER", "zipkin")])).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("OTEL_TRACES_EXPORTER=\"zipkin\""),
            "{err}"
        );
    }
}
