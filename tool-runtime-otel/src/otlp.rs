//! The export over OTLP/HTTP, set up from the standard `OTEL_*` variables (feature `otlp`, on by
//! default): [`Telemetry::from_env`] and [`init`].

use std::sync::Arc;

use opentelemetry_otlp::{MetricExporter, SpanExporter, WithExportConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{BatchSpanProcessor, SpanProcessor as _};
use tracing_subscriber::Layer as _;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

use crate::{Error, Sampler, Telemetry, scope, span_data};

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
                Some(Arc::new(span_data::Sink {
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
        Ok(Some(Telemetry {
            spans,
            meter,
            sampler: Sampler::from_vars(var)?,
            content: flag(var, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"),
            observe_calls: true,
            one_span_per_call: flag(var, "TOOL_RUNTIME_OTEL_ONE_SPAN_PER_CALL"),
        }))
    }
}

/// Whether the variable `name` is `true` (in any case).
fn flag(var: &dyn Fn(&str) -> Option<String>, name: &str) -> bool {
    var(name).is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
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
    fn one_span_per_call_is_asked_for_by_its_variable() {
        let asked = |pairs: &'static [(&'static str, &'static str)]| {
            Telemetry::from_vars(&vars(pairs))
                .unwrap()
                .unwrap()
                .one_span_per_call
        };
        const ENDPOINT: (&str, &str) = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9");
        const MERGE: &str = "TOOL_RUNTIME_OTEL_ONE_SPAN_PER_CALL";
        assert!(!asked(&[ENDPOINT]));
        assert!(!asked(&[ENDPOINT, (MERGE, "no")]));
        assert!(asked(&[ENDPOINT, (MERGE, " TRUE ")]));
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
