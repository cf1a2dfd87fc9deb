//! The layer as a host uses it: a tool call's span and histogram as OpenTelemetry data, traces
//! sampled when they start, and W3C trace context across a hop.

use opentelemetry::trace::{SpanKind, Status, TraceId};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{
    InMemoryMetricExporter, InMemoryMetricExporterBuilder, PeriodicReader, SdkMeterProvider,
    Temporality,
};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SimpleSpanProcessor, SpanData};
use tool_runtime::{Context, ToolSet, tool};
use tool_runtime_mcp::trace::{Propagator as _, TraceContext};
use tool_runtime_otel::{Sampler, Telemetry, W3c};
use tracing_subscriber::layer::SubscriberExt as _;

#[tool(description = "Count the portions of a catering order; changes nothing.")]
fn hitung_porsi(
    #[arg(description = "How many people", range = 1..=500)] orang: u32,
) -> Result<u32, String> {
    if orang == 13 {
        return Err("no order for 13".into());
    }
    Ok(orang)
}

#[tool(description = "Count the tables a catering order needs; changes nothing.")]
fn hitung_meja(#[arg(description = "How many people", range = 1..=500)] orang: u32) -> u32 {
    orang.div_ceil(8)
}

/// Taken by every test: `tracing` caches whether a callsite is wanted across the subscribers
/// alive at once, so tests that each set their own (on their own threads) can see another's
/// answer; one at a time, each sees its own. (A program has one subscriber.)
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

struct Setup {
    spans: InMemorySpanExporter,
    metrics: InMemoryMetricExporter,
    meter: SdkMeterProvider,
    telemetry: Telemetry,
}

fn setup(sampler: Sampler) -> Setup {
    setup_with(sampler, Temporality::Cumulative)
}

fn setup_with(sampler: Sampler, temporality: Temporality) -> Setup {
    let spans = InMemorySpanExporter::default();
    let metrics = InMemoryMetricExporterBuilder::new()
        .with_temporality(temporality)
        .build();
    let meter = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(metrics.clone()).build())
        .build();
    let telemetry = Telemetry::new(
        Some(Box::new(SimpleSpanProcessor::new(spans.clone()))),
        Some(meter.clone()),
    )
    .with_sampler(sampler);
    Setup {
        spans,
        metrics,
        meter,
        telemetry,
    }
}

impl Setup {
    fn run<T>(&self, f: impl FnOnce() -> T) -> T {
        let subscriber = tracing_subscriber::registry().with(self.telemetry.layer());
        tracing::subscriber::with_default(subscriber, f)
    }

    fn finished(&self) -> Vec<SpanData> {
        self.spans.get_finished_spans().unwrap()
    }
}

fn attribute(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.to_string())
}

fn call(tools: &ToolSet, arguments: &str) {
    let _ = tools
        .call(&Context::new(), "hitung_porsi", arguments)
        .blocking();
}

#[test]
fn a_tool_call_is_the_conventions_span_and_histogram() {
    let _serial = one_at_a_time();
    let tools = ToolSet::new([hitung_porsi::tool()]).unwrap();
    let s = setup(Sampler::AlwaysOn);
    s.run(|| {
        call(&tools, r#"{"orang": 25}"#);
        call(&tools, r#"{"orang": 13}"#);
    });
    let spans = s.finished();
    assert_eq!(spans.len(), 2, "{spans:#?}");
    let ok = &spans[0];
    assert_eq!(ok.name, "execute_tool hitung_porsi");
    assert_eq!(ok.span_kind, SpanKind::Internal);
    assert_eq!(ok.status, Status::Unset);
    assert_eq!(
        attribute(ok, "gen_ai.operation.name").as_deref(),
        Some("execute_tool")
    );
    assert_eq!(
        attribute(ok, "gen_ai.tool.name").as_deref(),
        Some("hitung_porsi")
    );
    assert_eq!(attribute(ok, "outcome").as_deref(), Some("ok"));
    assert!(ok.end_time >= ok.start_time);
    assert!(ok.span_context.is_sampled() && ok.span_context.is_valid());
    // Fields that set the name, kind and status are not attributes.
    assert_eq!(attribute(ok, "otel.name"), None);
    assert_eq!(attribute(ok, "otel.kind"), None);
    let failed = &spans[1];
    assert!(matches!(failed.status, Status::Error { .. }), "{failed:?}");
    assert_eq!(
        attribute(failed, "error.type").as_deref(),
        Some("tool_error")
    );
    assert_ne!(failed.span_context.trace_id(), ok.span_context.trace_id());

    let (unit, points) = execute_tool_points(&s);
    assert_eq!(unit, "s");
    assert_eq!(points.len(), 2, "one point per error.type");
    assert_eq!(
        points[0].bounds,
        [
            0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92
        ]
    );
    assert_eq!(points.iter().map(|p| p.count).sum::<u64>(), 2);
}

/// One point of an exported histogram.
struct Point {
    attributes: Vec<(String, String)>,
    count: u64,
    bounds: Vec<f64>,
}

impl Point {
    fn attribute(&self, key: &str) -> Option<String> {
        self.attributes
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    }
}

/// The `gen_ai.execute_tool.duration` histogram exported so far: its unit and its points
/// (none when it was not exported).
fn execute_tool_points(s: &Setup) -> (String, Vec<Point>) {
    s.meter.force_flush().unwrap();
    let exported = s.metrics.get_finished_metrics().unwrap();
    let Some(metric) = exported
        .iter()
        .flat_map(|r| r.scope_metrics())
        .flat_map(|m| m.metrics())
        .find(|m| m.name() == "gen_ai.execute_tool.duration")
    else {
        return (String::new(), Vec::new());
    };
    let AggregatedMetrics::F64(MetricData::Histogram(histogram)) = metric.data() else {
        panic!("not an f64 histogram: {:?}", metric.data());
    };
    let points = histogram
        .data_points()
        .map(|p| Point {
            attributes: p
                .attributes()
                .map(|kv| (kv.key.to_string(), kv.value.to_string()))
                .collect(),
            count: p.count(),
            bounds: p.bounds().collect(),
        })
        .collect();
    (metric.unit().to_owned(), points)
}

#[test]
fn a_trace_not_kept_records_nothing_and_its_children_follow_it() {
    let _serial = one_at_a_time();
    let tools = ToolSet::new([hitung_porsi::tool()]).unwrap();
    let s = setup(Sampler::TraceIdRatio(0.0));
    s.run(|| {
        let request = tracing::info_span!("request", otel.kind = "server");
        let _entered = request.enter();
        call(&tools, r#"{"orang": 25}"#);
    });
    assert!(s.finished().is_empty());
    // Half the traces: each trace whole or not at all.
    let s = setup(Sampler::TraceIdRatio(0.5));
    s.run(|| {
        for _ in 0..200 {
            let request = tracing::info_span!("request");
            let _entered = request.enter();
            call(&tools, r#"{"orang": 25}"#);
        }
    });
    let spans = s.finished();
    let roots = spans.iter().filter(|s| s.name == "request").count();
    assert!((60..140).contains(&roots), "{roots} of 200 traces kept");
    assert_eq!(spans.len(), 2 * roots, "a kept trace has both its spans");
    for child in spans.iter().filter(|s| s.name != "request") {
        let parent = spans
            .iter()
            .find(|p| p.span_context.span_id() == child.parent_span_id)
            .expect("its parent was kept");
        assert_eq!(
            parent.span_context.trace_id(),
            child.span_context.trace_id()
        );
        assert!(!child.parent_span_is_remote);
    }
}

/// How many calls the `gen_ai.execute_tool.duration` histogram counted.
fn calls_counted(s: &Setup) -> u64 {
    execute_tool_points(s).1.iter().map(|p| p.count).sum()
}

/// Each measurement keeps its own attributes, however often the same ones come back (a thread
/// reuses the attribute lists it made while an event's fields repeat).
#[test]
fn repeated_and_different_attributes_each_count_where_they_belong() {
    let _serial = one_at_a_time();
    let tools = ToolSet::new([hitung_porsi::tool(), hitung_meja::tool()]).unwrap();
    let s = setup(Sampler::AlwaysOn);
    s.run(|| {
        for (tool, orang) in [
            ("hitung_porsi", 25),
            ("hitung_porsi", 13),
            ("hitung_meja", 25),
            ("hitung_porsi", 40),
            ("hitung_porsi", 13),
            ("hitung_meja", 13),
            ("hitung_porsi", 25),
        ] {
            let arguments = format!(r#"{{"orang": {orang}}}"#);
            let _ = tools.call(&Context::new(), tool, &arguments).blocking();
        }
    });
    let mut counts: Vec<(String, Option<String>, u64)> = execute_tool_points(&s)
        .1
        .iter()
        .map(|p| {
            (
                p.attribute("gen_ai.tool.name").unwrap_or_default(),
                p.attribute("error.type"),
                p.count,
            )
        })
        .collect();
    counts.sort();
    let tool_error = Some("tool_error".to_owned());
    assert_eq!(
        counts,
        [
            ("hitung_meja".to_owned(), None, 2),
            ("hitung_porsi".to_owned(), None, 3),
            ("hitung_porsi".to_owned(), tool_error, 2),
        ]
    );
}

/// A thread keeps the histograms it recorded into, bound to their attributes: a second
/// provider's calls on the same thread count in the second's, not the first's.
#[test]
fn two_providers_on_one_thread_each_count_their_own_calls() {
    let _serial = one_at_a_time();
    let tools = ToolSet::new([hitung_porsi::tool()]).unwrap();
    let first = setup(Sampler::AlwaysOn);
    first.run(|| call(&tools, r#"{"orang": 25}"#));
    let second = setup(Sampler::AlwaysOn);
    second.run(|| {
        call(&tools, r#"{"orang": 25}"#);
        call(&tools, r#"{"orang": 25}"#);
    });
    assert_eq!((calls_counted(&first), calls_counted(&second)), (1, 2));
}

/// Under delta temporality each collection counts the calls since the one before, however
/// long a thread keeps the histogram it recorded into bound.
#[test]
fn under_delta_temporality_each_collection_counts_the_calls_since_the_last() {
    let _serial = one_at_a_time();
    let tools = ToolSet::new([hitung_porsi::tool()]).unwrap();
    let s = setup_with(Sampler::AlwaysOn, Temporality::Delta);
    let collected = |s: &Setup| {
        s.meter.force_flush().unwrap();
        let counts: Vec<u64> = s
            .metrics
            .get_finished_metrics()
            .unwrap()
            .iter()
            .map(|r| {
                r.scope_metrics()
                    .flat_map(|m| m.metrics())
                    .filter(|m| m.name() == "gen_ai.execute_tool.duration")
                    .map(|m| match m.data() {
                        AggregatedMetrics::F64(MetricData::Histogram(h)) => {
                            h.data_points().map(|p| p.count()).sum::<u64>()
                        }
                        other => panic!("not an f64 histogram: {other:?}"),
                    })
                    .sum()
            })
            .collect();
        s.metrics.reset();
        counts
    };
    s.run(|| {
        call(&tools, r#"{"orang": 25}"#);
        call(&tools, r#"{"orang": 25}"#);
    });
    assert_eq!(collected(&s), [2]);
    assert_eq!(collected(&s).iter().sum::<u64>(), 0, "nothing since");
    s.run(|| call(&tools, r#"{"orang": 25}"#));
    assert_eq!(collected(&s), [1]);
}

/// Sampling decided before a span is built: inside a request whose trace is not kept, the
/// tool's span and a client span are not built at all (no layer wants them), the call still
/// counts in the histogram, and the trace goes on to the next hop marked not sampled.
#[test]
fn inside_a_trace_not_kept_no_span_is_built_and_every_call_still_counts() {
    let _serial = one_at_a_time();
    let tools = ToolSet::new([hitung_porsi::tool()]).unwrap();
    let s = setup(Sampler::AlwaysOff);
    let (built, carried, request_trace) = s.run(|| {
        // A request that carried no context: decided when its span starts.
        W3c.before_span(&TraceContext::new(""));
        let request = tracing::info_span!("request", otel.kind = "server");
        let _entered = request.enter();
        call(&tools, r#"{"orang": 25}"#);
        // The toolkit's spans (their targets); a host's own is left to the other layers.
        let inner = tracing::info_span!(target: "tool_runtime::agent", "chat");
        let client = tracing::info_span!(target: "tool_runtime_mcp::remote", "tools/call remote");
        assert!(!tracing::info_span!("the host's own").is_disabled());
        (
            [!inner.is_disabled(), !client.is_disabled()],
            W3c.inject(&client),
            W3c.inject(&request).map(|c| c.traceparent),
        )
    });
    assert_eq!(
        built,
        [false, false],
        "the toolkit's spans inside a trace not kept"
    );
    assert!(s.finished().is_empty());
    assert_eq!(calls_counted(&s), 1, "the call's duration still counts");
    let carried = carried.expect("the trace goes on");
    assert!(
        carried.traceparent.ends_with("-00"),
        "not sampled: {}",
        carried.traceparent
    );
    assert_eq!(
        Some(carried.traceparent),
        request_trace,
        "the request's own context"
    );

    // Kept: the same spans are built and exported, children of the request.
    let s = setup(Sampler::AlwaysOn);
    let (built, off) = s.run(|| {
        W3c.before_span(&TraceContext::new(""));
        let request = tracing::info_span!("request", otel.kind = "server");
        let _entered = request.enter();
        call(&tools, r#"{"orang": 25}"#);
        // A span off for another reason (no layer wants `DEBUG`) carries nothing: not the
        // kept trace around it.
        let off = tracing::debug_span!(target: "tool_runtime::call", "off");
        assert!(off.is_disabled());
        (
            !tracing::info_span!(target: "tool_runtime::agent", "chat").is_disabled(),
            W3c.inject(&off),
        )
    });
    assert!(built);
    assert_eq!(off, None);
    let spans = s.finished();
    assert_eq!(spans.len(), 3, "{spans:?}");
    assert_eq!(calls_counted(&s), 1);
}

#[test]
fn a_remote_parent_decides_and_the_trace_goes_on_to_the_next_hop() {
    let _serial = one_at_a_time();
    const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let mut carried = TraceContext::new(PARENT);
    carried.tracestate = Some("vendor=7".into());
    carried.baggage = Some("tenant=acme".into());
    // The remote parent kept the trace: kept here, though this process keeps none of its own
    // (the server tells the propagator before it makes the request's span, then extracts).
    let s = setup(Sampler::ParentBased(Box::new(Sampler::AlwaysOff)));
    let sent = s.run(|| {
        W3c.before_span(&carried);
        let server = tracing::info_span!("server", otel.kind = "server");
        W3c.extract(&server, &carried);
        let _entered = server.enter();
        let client = tracing::info_span!("client", otel.kind = "client");
        W3c.inject(&client).expect("a context to send on")
    });
    let spans = s.finished();
    let server = spans.iter().find(|s| s.name == "server").unwrap();
    let client = spans.iter().find(|s| s.name == "client").unwrap();
    assert_eq!(
        server.span_context.trace_id(),
        TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap()
    );
    assert_eq!(server.parent_span_id.to_string(), "00f067aa0ba902b7");
    assert!(server.parent_span_is_remote);
    assert_eq!(server.span_kind, SpanKind::Server);
    assert_eq!(client.parent_span_id, server.span_context.span_id());
    assert_eq!(
        sent.traceparent,
        format!(
            "00-4bf92f3577b34da6a3ce929d0e0e4736-{}-01",
            client.span_context.span_id()
        )
    );
    assert_eq!(sent.tracestate.as_deref(), Some("vendor=7"));
    assert_eq!(sent.baggage.as_deref(), Some("tenant=acme"));

    // The remote parent did not keep it: nothing here either, and the next hop is told so.
    let s = setup(Sampler::default());
    carried.traceparent = PARENT.replace("-01", "-00");
    let sent = s.run(|| {
        W3c.before_span(&carried);
        let server = tracing::info_span!("server");
        W3c.extract(&server, &carried);
        let _entered = server.enter();
        let client = tracing::info_span!("client");
        W3c.inject(&client).unwrap()
    });
    assert!(s.finished().is_empty());
    assert!(sent.traceparent.ends_with("-00"), "{}", sent.traceparent);

    // `extract` alone (no `before_span`) on a span this process kept: it joins the remote trace;
    // and a parent announced but taken by no span is not the next request's.
    let s = setup(Sampler::default());
    carried.traceparent = PARENT.into();
    s.run(|| {
        let server = tracing::info_span!("joined");
        W3c.extract(&server, &carried);
        drop(server);
        W3c.before_span(&carried);
        W3c.extract(&tracing::Span::none(), &carried);
        drop(tracing::info_span!("fresh"));
    });
    let spans = s.finished();
    let joined = spans.iter().find(|s| s.name == "joined").unwrap();
    let fresh = spans.iter().find(|s| s.name == "fresh").unwrap();
    assert_eq!(joined.parent_span_id.to_string(), "00f067aa0ba902b7");
    assert!(!fresh.parent_span_is_remote);
    assert_ne!(
        fresh.span_context.trace_id(),
        joined.span_context.trace_id()
    );

    // `before_span` alone: the next span takes the parent, and its decision, when it starts
    // (before it records anything); told there is none, it starts a trace of its own.
    let s = setup(Sampler::ParentBased(Box::new(Sampler::AlwaysOff)));
    s.run(|| {
        W3c.before_span(&carried);
        drop(tracing::info_span!("told"));
        W3c.before_span(&TraceContext::new(""));
        drop(tracing::info_span!("alone"));
    });
    let spans = s.finished();
    let names: Vec<&str> = spans.iter().map(|s| &*s.name).collect();
    assert_eq!(names, ["told"], "the trace of its own is not sampled here");
    assert_eq!(spans[0].parent_span_id.to_string(), "00f067aa0ba902b7");
    assert!(spans[0].parent_span_is_remote);
}

/// The layer alone in a subscriber, without the opt-in to arguments and results: the
/// toolkit's spans stay enabled (an absent optional layer once told the subscriber every level
/// was off).
#[test]
fn the_layer_alone_leaves_spans_on() {
    let _serial = one_at_a_time();
    let telemetry = setup(Sampler::AlwaysOn).telemetry;
    let subscriber = tracing_subscriber::registry().with(telemetry.layer());
    let disabled =
        tracing::subscriber::with_default(subscriber, || tracing::info_span!("x").is_disabled());
    assert!(!disabled, "{telemetry:?}");
}

#[tool(description = "Count the portions of a catering order and note it; changes nothing.")]
fn hitung_dan_catat(#[arg(description = "How many people", range = 1..=500)] orang: u32) -> u32 {
    tracing::info!(orang, "counted");
    let inner = tracing::info_span!("inner");
    let _entered = inner.enter();
    tracing::info!("inside inner");
    orang
}

#[tool(description = "Wait for a kitchen's answer that never comes; changes nothing.")]
async fn tunggu_dapur(#[arg(description = "How many people", range = 1..=500)] orang: u32) -> u32 {
    std::future::pending::<()>().await;
    orang
}

/// The names of the spans a layer was given (a log's layer, say, that wants every span).
#[derive(Clone, Default)]
struct Names(std::sync::Arc<std::sync::Mutex<Vec<&'static str>>>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Names {
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        _: &tracing::span::Id,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) {
        self.0.lock().unwrap().push(attrs.metadata().name());
    }
}

fn named<'a>(spans: &'a [SpanData], name: &str) -> &'a SpanData {
    spans
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no span {name:?} in {spans:#?}"))
}

/// A call is recorded through the core's observer, not through `tracing`: what is made while
/// it runs is still its own (a span its child, an event its span event), with or without
/// another layer that makes the call's `tracing` span for itself, and its span goes out once.
#[test]
fn spans_and_events_made_inside_a_call_are_the_calls() {
    let _serial = one_at_a_time();
    let tools = ToolSet::new([hitung_dan_catat::tool()]).unwrap();
    for other_layer in [false, true] {
        let s = setup(Sampler::AlwaysOn);
        let names = Names::default();
        let run = || {
            let request = tracing::info_span!("request", otel.kind = "server");
            let _entered = request.enter();
            tools
                .call(&Context::new(), "hitung_dan_catat", r#"{"orang": 25}"#)
                .blocking()
                .unwrap();
        };
        if other_layer {
            let subscriber = tracing_subscriber::registry()
                .with(s.telemetry.layer())
                .with(names.clone());
            tracing::subscriber::with_default(subscriber, run);
        } else {
            s.run(run);
        }
        let spans = s.finished();
        assert_eq!(spans.len(), 3, "{spans:#?}");
        let request = named(&spans, "request");
        let call = named(&spans, "execute_tool hitung_dan_catat");
        let inner = named(&spans, "inner");
        assert_eq!(call.parent_span_id, request.span_context.span_id());
        assert_eq!(inner.parent_span_id, call.span_context.span_id());
        let trace = request.span_context.trace_id();
        assert!(
            [call, inner]
                .iter()
                .all(|s| s.span_context.trace_id() == trace)
        );
        let events =
            |s: &SpanData| -> Vec<String> { s.events.iter().map(|e| e.name.to_string()).collect() };
        assert_eq!(events(call), ["counted"]);
        assert_eq!(events(inner), ["inside inner"]);
        assert!(events(request).is_empty());
        assert_eq!(attribute(call, "outcome").as_deref(), Some("ok"));
        // The other layer still had the call's `tracing` span.
        let had = names.0.lock().unwrap().contains(&"execute_tool");
        assert_eq!(had, other_layer);
    }
}

/// With one span per call, a call running inside a span that describes its execution already
/// (the MCP server's `tools/call {tool}`) is recorded on that span: the call's outcome and events
/// go there, what it makes is that span's child, and how the request ended stays the span's
/// owner's to say. A second call of the tool in the same span (a call resumed after an
/// approval), or a call of another tool, keeps a span of its own.
#[test]
fn with_one_span_per_call_a_call_is_recorded_on_the_span_executing_it() {
    let _serial = one_at_a_time();
    let tools = ToolSet::new([
        hitung_dan_catat::tool(),
        hitung_porsi::tool(),
        hitung_meja::tool(),
    ])
    .unwrap();
    for merged in [false, true] {
        let s = setup(Sampler::AlwaysOn);
        let s = Setup {
            telemetry: s
                .telemetry
                .with_one_span_per_call(merged)
                .with_message_content(true),
            ..s
        };
        let request = |tool: &str| {
            tracing::info_span!(
                "mcp.server",
                otel.name = format!("tools/call {tool}"),
                otel.kind = "server",
                gen_ai.operation.name = "execute_tool",
                gen_ai.tool.name = tool,
                error.r#type = tracing::field::Empty,
            )
        };
        s.run(|| {
            request("hitung_dan_catat").in_scope(|| {
                let cx = Context::new();
                for orang in [25, 26] {
                    tools
                        .call(&cx, "hitung_dan_catat", format!(r#"{{"orang": {orang}}}"#))
                        .blocking()
                        .unwrap();
                }
                tools
                    .call(&cx, "hitung_meja", r#"{"orang": 25}"#)
                    .blocking()
                    .unwrap();
            });
            request("hitung_porsi").in_scope(|| call(&tools, r#"{"orang": 13}"#));
        });
        let spans = s.finished();
        let names: Vec<&str> = spans.iter().map(|s| s.name.as_ref()).collect();
        let request = named(&spans, "tools/call hitung_dan_catat");
        let failed = named(&spans, "tools/call hitung_porsi");
        let meja = named(&spans, "execute_tool hitung_meja");
        let inner: Vec<&SpanData> = spans.iter().filter(|s| s.name == "inner").collect();
        assert_eq!(inner.len(), 2, "{names:?}");
        assert_eq!(meja.parent_span_id, request.span_context.span_id());
        let events =
            |s: &SpanData| -> Vec<String> { s.events.iter().map(|e| e.name.to_string()).collect() };
        let own = spans
            .iter()
            .filter(|s| s.name == "execute_tool hitung_dan_catat")
            .collect::<Vec<_>>();
        if !merged {
            assert_eq!(spans.len(), 8, "{names:?}");
            assert_eq!(own.len(), 2, "{names:?}");
            assert_eq!(inner[0].parent_span_id, own[0].span_context.span_id());
            assert!(attribute(request, "outcome").is_none());
            continue;
        }
        assert_eq!(spans.len(), 6, "{names:?}");
        // The first call is the request's span; the second has its own, under it.
        assert_eq!(own.len(), 1, "{names:?}");
        let second = own[0];
        assert_eq!(second.parent_span_id, request.span_context.span_id());
        assert_eq!(
            attribute(second, "gen_ai.tool.call.arguments").as_deref(),
            Some(r#"{"orang": 26}"#)
        );
        assert_eq!(inner[0].parent_span_id, request.span_context.span_id());
        assert_eq!(inner[1].parent_span_id, second.span_context.span_id());
        assert_eq!(events(request), ["counted"]);
        assert_eq!(events(second), ["counted"]);
        assert_eq!(
            attribute(request, "gen_ai.tool.call.arguments").as_deref(),
            Some(r#"{"orang": 25}"#)
        );
        assert_eq!(
            attribute(request, "gen_ai.tool.call.result").as_deref(),
            Some("25")
        );
        // Only what the MCP server span's definition allows, and the toolkit's own.
        assert!(attribute(request, "gen_ai.tool.description").is_none());
        assert!(attribute(request, "gen_ai.tool.type").is_none());
        assert_eq!(attribute(request, "outcome").as_deref(), Some("ok"));
        assert!(attribute(request, "duration_us").is_some());
        let tool_names = request
            .attributes
            .iter()
            .filter(|kv| kv.key.as_str() == "gen_ai.tool.name")
            .count();
        assert_eq!(tool_names, 1, "{:?}", request.attributes);
        // The failed call's outcome is on the span; the request's status and `error.type`
        // are the owner's to record (here it recorded neither).
        assert_eq!(attribute(failed, "outcome").as_deref(), Some("failed"));
        assert_eq!(failed.status, Status::Unset, "{failed:#?}");
        assert!(attribute(failed, "error.type").is_none());
        assert!(spans.iter().all(|s| s.name != "execute_tool hitung_porsi"));
    }
}

/// A call dropped before it ends (its caller went away) still sends its span, with no outcome,
/// and is not counted as a call that ended.
#[test]
fn a_call_dropped_before_it_ends_still_sends_its_span() {
    let _serial = one_at_a_time();
    use std::future::IntoFuture as _;
    use std::task::{Context as TaskContext, Poll, Waker};
    let tools = ToolSet::new([tunggu_dapur::tool()]).unwrap();
    let s = setup(Sampler::AlwaysOn);
    s.run(|| {
        let cx = Context::new();
        let mut call = std::pin::pin!(
            tools
                .call(&cx, "tunggu_dapur", r#"{"orang": 25}"#)
                .into_future()
        );
        let polled = call
            .as_mut()
            .poll(&mut TaskContext::from_waker(Waker::noop()));
        assert!(matches!(polled, Poll::Pending));
    });
    let spans = s.finished();
    assert_eq!(spans.len(), 1, "{spans:#?}");
    assert_eq!(spans[0].name, "execute_tool tunggu_dapur");
    assert_eq!(attribute(&spans[0], "outcome"), None);
    assert_eq!(
        attribute(&spans[0], "gen_ai.tool.name").as_deref(),
        Some("tunggu_dapur")
    );
    let (_, points) = execute_tool_points(&s);
    assert_eq!(points.iter().map(|p| p.count).sum::<u64>(), 0);
}

#[tool(
    description = "Count the portions of a catering order through another tool; changes nothing."
)]
fn hitung_lewat_alat(
    #[arg(description = "How many people", range = 1..=500)] orang: u32,
) -> Result<u32, String> {
    let inner = ToolSet::new([hitung_porsi::tool()]).map_err(|e| e.to_string())?;
    let out = inner
        .call(
            &Context::new(),
            "hitung_porsi",
            format!(r#"{{"orang": {orang}}}"#),
        )
        .blocking()
        .map_err(|e| e.to_string())?;
    Ok(out.value().as_u64().unwrap_or_default() as u32)
}

#[tool(description = "Carry the trace to another server as a remote call would; changes nothing.")]
fn bawa_jejak(
    #[arg(description = "How many people", range = 1..=500)] orang: u32,
) -> Result<String, String> {
    let client = tracing::info_span!(target: "tool_runtime_mcp::remote", "tools/call remote");
    let carried = W3c.inject(&client).ok_or("no context carried")?;
    Ok(format!("{orang} {}", carried.traceparent))
}

/// Inside a trace not kept, a call makes no `tracing` span for any layer (a log's included),
/// still counts, and what it carries to the next hop is its trace, marked not sampled.
#[test]
fn a_call_of_a_trace_not_kept_makes_no_span_for_any_layer_and_carries_its_trace_on() {
    let _serial = one_at_a_time();
    let tools = ToolSet::new([hitung_porsi::tool(), bawa_jejak::tool()]).unwrap();
    for kept in [false, true] {
        let s = setup(if kept {
            Sampler::AlwaysOn
        } else {
            Sampler::AlwaysOff
        });
        let names = Names::default();
        let subscriber = tracing_subscriber::registry()
            .with(s.telemetry.layer())
            .with(names.clone());
        let carried = tracing::subscriber::with_default(subscriber, || {
            {
                let request = tracing::info_span!("request", otel.kind = "server");
                let _entered = request.enter();
                call(&tools, r#"{"orang": 25}"#);
            }
            // A call that starts its own trace, and carries it to the next hop.
            let out = tools
                .call(&Context::new(), "bawa_jejak", r#"{"orang": 25}"#)
                .blocking()
                .unwrap();
            out.value().as_str().unwrap().to_owned()
        });
        let made = names.0.lock().unwrap().clone();
        assert_eq!(
            made.iter().filter(|n| **n == "execute_tool").count(),
            if kept { 2 } else { 0 },
            "{made:?}"
        );
        assert_eq!(calls_counted(&s), 2);
        let flags = if kept { "-01" } else { "-00" };
        assert!(carried.ends_with(flags), "{carried}");
        if kept {
            // Carried from the client span, a child of the call that started the trace.
            let spans = s.finished();
            let call = named(&spans, "execute_tool bawa_jejak");
            assert!(carried.contains(&call.span_context.trace_id().to_string()));
        }
    }
}

/// A tool that calls another tool through a tool set: the inner call is the outer call's child.
#[test]
fn a_call_made_inside_a_call_is_its_child() {
    let _serial = one_at_a_time();
    let tools = ToolSet::new([hitung_lewat_alat::tool()]).unwrap();
    let s = setup(Sampler::AlwaysOn);
    s.run(|| {
        tools
            .call(&Context::new(), "hitung_lewat_alat", r#"{"orang": 25}"#)
            .blocking()
            .unwrap()
    });
    let spans = s.finished();
    assert_eq!(spans.len(), 2, "{spans:#?}");
    let outer = named(&spans, "execute_tool hitung_lewat_alat");
    let inner = named(&spans, "execute_tool hitung_porsi");
    assert_eq!(inner.parent_span_id, outer.span_context.span_id());
    assert_eq!(inner.span_context.trace_id(), outer.span_context.trace_id());
    assert_eq!(outer.parent_span_id, opentelemetry::trace::SpanId::INVALID);
}

/// A call started where `W3c` was told of a remote parent (with no request span between) is
/// that parent's child, as a root span would be.
#[test]
fn a_call_with_no_span_around_it_takes_the_remote_parent_it_was_told_of() {
    let _serial = one_at_a_time();
    const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let tools = ToolSet::new([hitung_porsi::tool()]).unwrap();
    let s = setup(Sampler::ParentBased(Box::new(Sampler::AlwaysOff)));
    s.run(|| {
        W3c.before_span(&TraceContext::new(PARENT));
        call(&tools, r#"{"orang": 25}"#);
    });
    let spans = s.finished();
    assert_eq!(spans.len(), 1, "{spans:#?}");
    assert_eq!(
        spans[0].span_context.trace_id().to_string(),
        "4bf92f3577b34da6a3ce929d0e0e4736"
    );
    assert_eq!(spans[0].parent_span_id.to_string(), "00f067aa0ba902b7");
    assert!(spans[0].parent_span_is_remote);
}

/// With the host's opt-in, a call's arguments and result are on its span.
#[test]
fn arguments_and_results_are_on_the_span_only_when_asked_for() {
    let _serial = one_at_a_time();
    let tools = ToolSet::new([hitung_porsi::tool()]).unwrap();
    for asked in [false, true] {
        let spans = InMemorySpanExporter::default();
        let telemetry = Telemetry::new(
            Some(Box::new(SimpleSpanProcessor::new(spans.clone()))),
            None,
        )
        .with_message_content(asked);
        let subscriber = tracing_subscriber::registry().with(telemetry.layer());
        tracing::subscriber::with_default(subscriber, || call(&tools, r#"{"orang": 25}"#));
        let finished = spans.get_finished_spans().unwrap();
        let arguments = attribute(&finished[0], "gen_ai.tool.call.arguments");
        let result = attribute(&finished[0], "gen_ai.tool.call.result");
        if asked {
            assert_eq!(arguments.as_deref(), Some(r#"{"orang": 25}"#));
            assert_eq!(result.as_deref(), Some("25"));
        } else {
            assert_eq!((arguments, result), (None, None));
        }
    }
}

/// With the call observer off, a call is a `tracing` span like any other: the current span
/// inside the tool is the call's, and what is exported is the same.
#[test]
fn with_the_call_observer_off_a_call_is_a_tracing_span() {
    let _serial = one_at_a_time();
    #[tool(description = "Name the span current inside a tool; changes nothing.")]
    fn nama_rentang() -> String {
        tracing::Span::current()
            .metadata()
            .map_or("none", |m| m.name())
            .to_owned()
    }
    let tools = ToolSet::new([nama_rentang::tool()]).unwrap();
    for observed in [true, false] {
        let spans = InMemorySpanExporter::default();
        let telemetry = Telemetry::new(
            Some(Box::new(SimpleSpanProcessor::new(spans.clone()))),
            None,
        )
        .with_call_observer(observed);
        let subscriber = tracing_subscriber::registry().with(telemetry.layer());
        let current = tracing::subscriber::with_default(subscriber, || {
            let request = tracing::info_span!("request");
            let _entered = request.enter();
            let out = tools
                .call(&Context::new(), "nama_rentang", "{}")
                .blocking()
                .unwrap();
            out.value().as_str().unwrap().to_owned()
        });
        assert_eq!(current, if observed { "request" } else { "execute_tool" });
        let finished = spans.get_finished_spans().unwrap();
        let call = named(&finished, "execute_tool nama_rentang");
        let request = named(&finished, "request");
        assert_eq!(call.parent_span_id, request.span_context.span_id());
        assert_eq!(attribute(call, "outcome").as_deref(), Some("ok"));
    }
}

#[tool(
    description = "Cancel a catering order; changes the order.",
    destructive
)]
fn batalkan_pesanan(
    #[arg(description = "The order's number", range = 1..=9999)] nomor: u32,
) -> u32 {
    nomor
}

/// A call held for a person's approval is not a failure; once approved, its call is another
/// span, which runs the tool.
#[test]
fn a_call_held_for_approval_is_not_a_failure_and_its_resumed_call_runs() {
    let _serial = one_at_a_time();
    let tools = ToolSet::new([batalkan_pesanan::tool()]).unwrap();
    let s = setup(Sampler::AlwaysOn);
    s.run(|| {
        let cx = Context::new();
        let held = tools
            .call(&cx, "batalkan_pesanan", r#"{"nomor": 7}"#)
            .blocking()
            .unwrap_err();
        let tool_runtime::ToolError::ApprovalRequired(pending) = held else {
            panic!("{held:?}")
        };
        tools.resume(&cx, &pending.ticket).blocking().unwrap();
    });
    let spans = s.finished();
    assert_eq!(spans.len(), 2, "{spans:#?}");
    assert_eq!(
        attribute(&spans[0], "outcome").as_deref(),
        Some("approval_required")
    );
    assert_eq!(spans[0].status, Status::Unset);
    assert_eq!(attribute(&spans[0], "error.type"), None);
    assert_eq!(attribute(&spans[1], "outcome").as_deref(), Some("ok"));
    let (_, points) = execute_tool_points(&s);
    assert_eq!(points.iter().map(|p| p.count).sum::<u64>(), 2);
    assert!(points.iter().all(|p| p.attribute("error.type").is_none()));
}

/// Yields once: the first poll is pending.
struct YieldOnce(bool);

impl std::future::Future for YieldOnce {
    type Output = ();
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        if self.0 {
            return std::task::Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    }
}

#[tool(description = "Ask the kitchen, which answers on a later poll; changes nothing.")]
async fn tanya_dapur(#[arg(description = "How many people", range = 1..=500)] orang: u32) -> u32 {
    tracing::info!("asked");
    YieldOnce(false).await;
    tracing::info!("answered");
    orang
}

/// An async call polled on one thread, then on another: what it makes on each is its own, and
/// neither thread keeps it once the poll is over.
#[test]
fn an_async_call_polled_on_two_threads_is_one_call() {
    use std::future::IntoFuture as _;
    use std::task::{Context as TaskContext, Poll, Waker};
    let _serial = one_at_a_time();
    let tools = ToolSet::new([tanya_dapur::tool()]).unwrap();
    let s = setup(Sampler::AlwaysOn);
    let dispatch = tracing::Dispatch::new(tracing_subscriber::registry().with(s.telemetry.layer()));
    let cx = Context::new();
    let mut call = Box::pin(
        tools
            .call(&cx, "tanya_dapur", r#"{"orang": 25}"#)
            .into_future(),
    );
    let first = tracing::dispatcher::with_default(&dispatch, || {
        call.as_mut()
            .poll(&mut TaskContext::from_waker(Waker::noop()))
    });
    assert!(first.is_pending());
    let second = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                tracing::dispatcher::with_default(&dispatch, || {
                    // Nothing of the call is left on this thread before or after its poll.
                    tracing::info_span!("before").in_scope(|| {});
                    let out = call
                        .as_mut()
                        .poll(&mut TaskContext::from_waker(Waker::noop()));
                    tracing::info_span!("after").in_scope(|| {});
                    out
                })
            })
            .join()
            .unwrap()
    });
    assert!(matches!(second, Poll::Ready(Ok(_))), "{second:?}");
    drop(call);
    let spans = s.finished();
    let call = named(&spans, "execute_tool tanya_dapur");
    let events: Vec<_> = call.events.iter().map(|e| e.name.to_string()).collect();
    assert_eq!(events, ["asked", "answered"]);
    for other in ["before", "after"] {
        assert_eq!(
            named(&spans, other).parent_span_id,
            opentelemetry::trace::SpanId::INVALID,
            "{other} is not the call's"
        );
    }
}
