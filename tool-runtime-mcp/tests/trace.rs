//! One trace across MCP hops: the W3C trace context a remote call writes into `params._meta`
//! reaches the server's propagator as it was sent; on HTTP a request's `traceparent` header is
//! read too (`_meta` wins when both are there); a malformed one is ignored.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tool_runtime::{Context, ToolSet, tool};
use tool_runtime_mcp::McpServer;
use tool_runtime_mcp::http::HttpServer;
use tool_runtime_mcp::remote::{Remote, RemoteOptions};
use tool_runtime_mcp::trace::{Propagator, TraceContext};

#[tool(description = "Return the leave days left of the signed-in employee.")]
fn leave_left() -> u8 {
    7
}

const CALLER: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const HEADER: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

/// Records what each request carried; gives `inject` for the calls it makes.
#[derive(Clone, Default)]
struct Recorder {
    carried: Arc<Mutex<Vec<TraceContext>>>,
    inject: Option<TraceContext>,
}

impl Propagator for Recorder {
    fn extract(&self, _: &tracing::Span, carried: &TraceContext) {
        self.carried.lock().unwrap().push(carried.clone());
    }

    fn inject(&self, _: &tracing::Span) -> Option<TraceContext> {
        self.inject.clone()
    }
}

/// A server whose propagator is `recorder`; spans are on (a subscriber is set), as the
/// propagator only runs for a span that records.
async fn server(recorder: Recorder) -> SocketAddr {
    let tools = ToolSet::new([leave_left::tool()]).unwrap();
    let bound = HttpServer::new(McpServer::new(tools).with_propagator(recorder))
        .bind("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let addr = bound.local_addr().unwrap();
    tokio::spawn(bound.serve());
    addr
}

/// The server's tools imported over HTTP with `options` (the remote kept with them).
async fn imported(addr: SocketAddr, options: RemoteOptions) -> (Remote, ToolSet) {
    let remote = Remote::http("hr", format!("http://{addr}/mcp"), None, options)
        .await
        .unwrap();
    let set = ToolSet::new(remote.tools().await.unwrap().tools).unwrap();
    (remote, set)
}

/// A remote's options whose propagator gives `sent` for every call (the tool needs no
/// approval).
fn injecting(sent: &TraceContext) -> RemoteOptions {
    RemoteOptions {
        propagator: Some(Arc::new(Recorder {
            inject: Some(sent.clone()),
            ..Recorder::default()
        })),
        approval: HashMap::from([("leave_left".to_owned(), false)]),
        ..RemoteOptions::default()
    }
}

fn subscriber() -> tracing::subscriber::DefaultGuard {
    let guard = tracing::subscriber::set_default(
        tracing_subscriber::registry().with(tracing_subscriber::filter::LevelFilter::INFO),
    );
    tracing::callsite::rebuild_interest_cache();
    guard
}

use tracing_subscriber::layer::SubscriberExt;

#[tokio::test]
async fn a_remote_call_carries_the_callers_trace_to_the_server() {
    let _subscriber = subscriber();
    let server_side = Recorder::default();
    let addr = server(server_side.clone()).await;
    let mut sent = TraceContext::new(CALLER);
    sent.tracestate = Some("congo=t61rcWkgMzE".into());
    sent.baggage = Some("tenant=acme".into());
    let (_remote, set) = imported(addr, injecting(&sent)).await;
    let out = set.call(&Context::new(), "leave_left", "{}").await.unwrap();
    assert_eq!(out.into_value(), serde_json::json!({"result": 7}));
    let carried = server_side.carried.lock().unwrap().clone();
    // The listing carried none; the call carried the caller's, every field as sent.
    assert_eq!(carried, [sent]);
}

/// One stateless call with `meta` in its `_meta` and `headers`.
async fn post(addr: SocketAddr, meta: &str, headers: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}{meta}}},"name":"leave_left","arguments":{{}}}}}}"#
    );
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: leave_left\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    answer
}

#[tokio::test]
async fn the_meta_context_wins_over_the_headers_and_a_malformed_one_is_ignored() {
    let _subscriber = subscriber();
    let recorder = Recorder::default();
    let addr = server(recorder.clone()).await;
    let header = format!("traceparent: {HEADER}\r\n");
    let in_meta = format!(r#","traceparent":"{CALLER}""#);
    for (meta, headers) in [
        ("", header.as_str()),
        (in_meta.as_str(), header.as_str()),
        (r#","traceparent":"00-zz-00f067aa0ba902b7-01""#, ""),
        (
            "",
            "traceparent: 00-00000000000000000000000000000000-b7ad6b7169203331-01\r\n",
        ),
    ] {
        let answer = post(addr, meta, headers).await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }
    let carried: Vec<String> = recorder
        .carried
        .lock()
        .unwrap()
        .iter()
        .map(|c| c.traceparent.clone())
        .collect();
    assert_eq!(carried, [HEADER, CALLER]);
}

/// The events that carry a histogram (a field named `histogram.…`), their fields as text.
#[derive(Clone, Default)]
struct Histograms(Arc<Mutex<Vec<HashMap<String, String>>>>);

struct Fields<'a>(&'a mut HashMap<String, String>);

impl tracing::field::Visit for Fields<'_> {
    fn record_f64(&mut self, field: &tracing::field::Field, value: f64) {
        self.0.insert(field.name().to_owned(), value.to_string());
    }

    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Histograms {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        let mut fields = HashMap::new();
        event.record(&mut Fields(&mut fields));
        if fields.keys().any(|k| k.starts_with("histogram.")) {
            self.0.lock().unwrap().push(fields);
        }
    }
}

#[tokio::test]
async fn every_hop_reports_its_duration_as_the_conventions_histograms() {
    let histograms = Histograms::default();
    let _subscriber =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(histograms.clone()));
    tracing::callsite::rebuild_interest_cache();
    let addr = server(Recorder::default()).await;
    let options = RemoteOptions {
        approval: HashMap::from([("leave_left".to_owned(), false)]),
        ..RemoteOptions::default()
    };
    let (_remote, set) = imported(addr, options).await;
    set.call(&Context::new(), "leave_left", "{}").await.unwrap();
    let err = set.call(&Context::new(), "leave_left", r#"{"x":1}"#).await;
    assert!(err.is_err());
    let seen = histograms.0.lock().unwrap().clone();
    let with = |metric: &str, pairs: &[(&str, &str)]| {
        seen.iter()
            .filter(|f| {
                f.get(metric)
                    .and_then(|v| v.parse::<f64>().ok())
                    .is_some_and(|s| (0.0..10.0).contains(&s))
                    && pairs
                        .iter()
                        .all(|(k, v)| f.get(*k).map(String::as_str) == Some(*v))
            })
            .count()
    };
    let tool = ("gen_ai.tool.name", "leave_left");
    // The server's listing and its one call, and the call the client made through its set.
    assert_eq!(
        with(
            "histogram.mcp.server.operation.duration",
            &[("mcp.method.name", "tools/list")]
        ),
        1,
        "{seen:#?}"
    );
    assert_eq!(
        with(
            "histogram.mcp.server.operation.duration",
            &[("mcp.method.name", "tools/call"), tool]
        ),
        1,
        "{seen:#?}"
    );
    assert_eq!(
        with(
            "histogram.mcp.client.operation.duration",
            &[("mcp.method.name", "tools/call"), tool]
        ),
        1,
        "{seen:#?}"
    );
    // The server ran the tool once; the client's set ran its remote tool once, and refused
    // the arguments it does not take before sending them.
    assert_eq!(
        with("histogram.gen_ai.execute_tool.duration", &[tool]),
        3,
        "{seen:#?}"
    );
    assert_eq!(
        with(
            "histogram.gen_ai.execute_tool.duration",
            &[tool, ("error.type", "invalid_arguments")]
        ),
        1,
        "{seen:#?}"
    );
}

/// A subscriber that keeps no span and records the histograms (a backend that keeps only some
/// traces and counts every call): every hop still counts its duration, and a remote call still
/// carries what the propagator gives for a span that was not made.
#[tokio::test]
async fn with_no_span_made_every_hop_still_counts_and_the_context_still_goes_on() {
    use tracing_subscriber::filter::{LevelFilter, Targets};
    let histograms = Histograms::default();
    let metrics_only = Targets::new()
        .with_target("tool_runtime::metrics", LevelFilter::INFO)
        .with_target("tool_runtime_mcp::metrics", LevelFilter::INFO);
    // A global filter: every other span and event is off for the whole subscriber.
    let _subscriber = tracing::subscriber::set_default(
        tracing_subscriber::registry()
            .with(metrics_only)
            .with(histograms.clone()),
    );
    tracing::callsite::rebuild_interest_cache();
    let server_side = Recorder::default();
    let addr = server(server_side.clone()).await;
    let sent = TraceContext::new("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
    let (_remote, set) = imported(addr, injecting(&sent)).await;
    assert!(tracing::info_span!(target: "tool_runtime_mcp::remote", "probe").is_disabled());
    set.call(&Context::new(), "leave_left", "{}").await.unwrap();
    assert_eq!(server_side.carried.lock().unwrap().clone(), [sent]);
    let seen = histograms.0.lock().unwrap().clone();
    let count = |metric: &str, method: Option<&str>| {
        seen.iter()
            .filter(|f| f.contains_key(metric))
            .filter(|f| {
                method.is_none_or(|m| f.get("mcp.method.name").map(String::as_str) == Some(m))
            })
            .count()
    };
    assert_eq!(
        count(
            "histogram.mcp.server.operation.duration",
            Some("tools/call")
        ),
        1,
        "{seen:#?}"
    );
    assert_eq!(
        count(
            "histogram.mcp.client.operation.duration",
            Some("tools/call")
        ),
        1,
        "{seen:#?}"
    );
    // The server's tool, and the client's remote tool.
    assert_eq!(
        count("histogram.gen_ai.execute_tool.duration", None),
        2,
        "{seen:#?}"
    );
}

/// A span's name, its parent's name, and its fields.
type SeenSpan = (String, Option<String>, HashMap<String, String>);

/// Every span made.
#[derive(Clone, Default)]
struct Spans(Arc<Mutex<Vec<SeenSpan>>>);

impl<S> tracing_subscriber::Layer<S> for Spans
where
    S: tracing::Subscriber + for<'l> tracing_subscriber::registry::LookupSpan<'l>,
{
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        id: &tracing::span::Id,
        cx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        let mut fields = HashMap::new();
        attrs.record(&mut Fields(&mut fields));
        let parent = cx
            .span(id)
            .and_then(|s| s.parent())
            .map(|p| p.name().to_owned());
        let mut seen = self.0.lock().unwrap();
        seen.push((attrs.metadata().name().to_owned(), parent, fields));
        if let Some(span) = cx.span(id) {
            span.extensions_mut().insert(Index(seen.len() - 1));
        }
    }

    fn on_record(
        &self,
        id: &tracing::span::Id,
        values: &tracing::span::Record<'_>,
        cx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        let Some(span) = cx.span(id) else { return };
        let Some(&Index(i)) = span.extensions().get::<Index>() else {
            return;
        };
        values.record(&mut Fields(&mut self.0.lock().unwrap()[i].2));
    }
}

/// Where a span's entry is in [`Spans`].
struct Index(usize);

/// Names the span a remote call's context was taken from.
struct Names(Arc<Mutex<Vec<String>>>);

impl Propagator for Names {
    fn extract(&self, _: &tracing::Span, _: &TraceContext) {}

    fn inject(&self, span: &tracing::Span) -> Option<TraceContext> {
        let name = span.metadata().map_or("none", |m| m.name());
        self.0.lock().unwrap().push(name.to_owned());
        None
    }
}

#[tokio::test]
async fn a_remote_call_is_a_client_span_inside_the_callers_execute_tool() {
    let spans = Spans::default();
    let _subscriber =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(spans.clone()));
    tracing::callsite::rebuild_interest_cache();
    let addr = server(Recorder::default()).await;
    let injected_from = Arc::new(Mutex::new(Vec::new()));
    let options = RemoteOptions {
        propagator: Some(Arc::new(Names(injected_from.clone()))),
        approval: HashMap::from([("leave_left".to_owned(), false)]),
        ..RemoteOptions::default()
    };
    let (_remote, set) = imported(addr, options).await;
    set.call(&Context::new(), "leave_left", "{}").await.unwrap();
    let seen = spans.0.lock().unwrap().clone();
    let clients: Vec<_> = seen.iter().filter(|(n, ..)| n == "mcp.client").collect();
    assert_eq!(clients.len(), 1, "{seen:#?}");
    let (_, parent, fields) = clients[0];
    assert_eq!(parent.as_deref(), Some("execute_tool"));
    for (name, value) in [
        ("otel.kind", "client"),
        ("mcp.method.name", "tools/call"),
        ("gen_ai.tool.name", "leave_left"),
        ("network.transport", "tcp"),
        ("server.address", "127.0.0.1"),
        ("server.port", addr.port().to_string().as_str()),
    ] {
        assert_eq!(
            fields.get(name).map(String::as_str),
            Some(value),
            "{name}: {fields:?}"
        );
    }
    // The context the remote server continues is the client span's.
    assert_eq!(*injected_from.lock().unwrap(), ["mcp.client"]);
}
