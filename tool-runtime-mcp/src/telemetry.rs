//! The server's spans by OpenTelemetry's MCP conventions (semantic-conventions-genai,
//! `model/mcp`, Development status; the files the tests check against are vendored in
//! `examples/tests/semconv`): one `tracing` span per request the server answers,
//! named `{mcp.method.name} {target}` (the `otel.name` field `tool-runtime-otel` reads), kind
//! server, with `mcp.method.name`, `mcp.protocol.version`, `mcp.session.id` (HTTP sessions),
//! `jsonrpc.request.id`, `network.transport` (`pipe` on stdio, `tcp` on HTTP), `client.address`
//! and `client.port` (HTTP), `gen_ai.tool.name` and `gen_ai.operation.name` for a `tools/call`,
//! `rpc.response.status_code` (the JSON-RPC code, as a string) for an error answer, and when the
//! request failed `error.type` (the code, or `tool_error` for a result with `isError`) and
//! `otel.status_code` `ERROR`; the codes that say the caller's request could not be served
//! (-32700, -32600, -32601, -32602, -32002) are not the server's failure. The tool's own
//! `execute_tool` span runs inside it (`tool-runtime-otel` can record the call on this span
//! instead: its `with_one_span_per_call`). Each request's duration is also the
//! `mcp.server.operation.duration` histogram (see [`record_duration`]). Without a subscriber
//! nothing is formatted or recorded.

use rmcp::model::ErrorData;

use crate::incoming::Incoming;

/// The span of one request: `method`, and for a `tools/call` the tool's `name`.
pub(crate) fn request_span(
    method: &'static str,
    tool: Option<&str>,
    context: &Incoming,
) -> tracing::Span {
    let span = tracing::info_span!(
        "mcp.server",
        otel.name = tracing::field::Empty,
        otel.kind = "server",
        otel.status_code = tracing::field::Empty,
        mcp.method.name = method,
        mcp.protocol.version = tracing::field::Empty,
        mcp.session.id = tracing::field::Empty,
        jsonrpc.request.id = tracing::field::Empty,
        network.transport = tracing::field::Empty,
        client.address = tracing::field::Empty,
        client.port = tracing::field::Empty,
        gen_ai.operation.name = tool.map(|_| "execute_tool"),
        gen_ai.tool.name = tool,
        error.r#type = tracing::field::Empty,
        rpc.response.status_code = tracing::field::Empty,
    );
    if span.is_disabled() {
        return span;
    }
    // Every value at once (each `record` is a walk through the subscriber's layers), and
    // written only by a layer that keeps them (a span of a trace not kept formats nothing).
    let name = Named(method, tool);
    let id = context.id();
    let version = context.protocol_version();
    let (session, address, port) = peer_of(context);
    let Some(metadata) = span.metadata() else {
        return span;
    };
    let fields = metadata.fields();
    /// The fields filled once the request is read, found once (one callsite).
    static FILLED: std::sync::OnceLock<Option<[tracing::field::Field; 7]>> =
        std::sync::OnceLock::new();
    let found = FILLED.get_or_init(|| {
        Some([
            fields.field("otel.name")?,
            fields.field("jsonrpc.request.id")?,
            fields.field("mcp.protocol.version")?,
            fields.field("network.transport")?,
            fields.field("mcp.session.id")?,
            fields.field("client.address")?,
            fields.field("client.port")?,
        ])
    });
    let Some(
        [
            f_name,
            f_id,
            f_version,
            f_transport,
            f_session,
            f_address,
            f_port,
        ],
    ) = found
    else {
        return span;
    };
    use tracing::field::{Value, display};
    let name = display(&name);
    let id = display(id);
    let version = version.map(display);
    let address = address.map(display);
    span.record_all(&fields.value_set(&[
        (f_name, Some(&name as &dyn Value)),
        (f_id, Some(&id as &dyn Value)),
        (f_version, version.as_ref().map(|v| v as &dyn Value)),
        (f_transport, Some(&transport(context) as &dyn Value)),
        (f_session, session.as_ref().map(|v| v as &dyn Value)),
        (f_address, address.as_ref().map(|v| v as &dyn Value)),
        (f_port, port.as_ref().map(|v| v as &dyn Value)),
    ]));
    span
}

/// A request span's name: `{method} {tool}`, or the method alone.
struct Named<'a>(&'static str, Option<&'a str>);

impl std::fmt::Display for Named<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.1 {
            Some(tool) => write!(f, "{} {tool}", self.0),
            None => f.write_str(self.0),
        }
    }
}

/// On HTTP: the session header, the peer's address and port (an `int` as OpenTelemetry has
/// it: a `u16` may be exported as text).
fn peer_of(context: &Incoming) -> (Option<&str>, Option<std::net::IpAddr>, Option<i64>) {
    #[cfg(feature = "http")]
    if let Some(parts) = context.parts() {
        let session = parts
            .headers
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok());
        let peer = parts
            .extensions
            .get::<crate::caller::PeerAddr>()
            .map(|crate::caller::PeerAddr(peer)| *peer);
        return (
            session,
            peer.map(|p| p.ip()),
            peer.map(|p| i64::from(p.port())),
        );
    }
    let _ = context;
    (None, None, None)
}

fn transport(context: &Incoming) -> &'static str {
    #[cfg(feature = "http")]
    if context.parts().is_some() {
        return "tcp";
    }
    let _ = context;
    "pipe"
}

/// Whether a JSON-RPC error code is the server's failure. The MCP conventions' server side: the
/// codes that say the caller sent a request the server could not serve (parse error, invalid
/// request, method not found, invalid params, which is also an unknown tool, and resource not
/// found) are not; every other code is.
fn server_failed(code: i32) -> bool {
    !matches!(code, -32700 | -32600 | -32601 | -32602 | -32002)
}

/// Records how the request ended on its span: a JSON-RPC error's code always
/// (`rpc.response.status_code`), and as `error.type` with status `ERROR` when the code is the
/// server's failure; a tool result with `isError` as `tool_error`.
pub(crate) fn record_outcome(span: &tracing::Span, error: Option<&ErrorData>, tool_error: bool) {
    if span.is_disabled() {
        return;
    }
    if let Some(e) = error {
        let code = e.code.0.to_string();
        span.record("rpc.response.status_code", code.as_str());
        if server_failed(e.code.0) {
            span.record("error.type", code.as_str());
            span.record("otel.status_code", "ERROR");
        }
    } else if tool_error {
        span.record("error.type", "tool_error");
        span.record("otel.status_code", "ERROR");
    }
}

/// Whether a subscriber records the server's and client's histograms: a request is timed when
/// its span is recorded or they are (a subscriber keeping only some traces counts every call).
pub(crate) fn metrics_wanted() -> bool {
    tracing::enabled!(target: "tool_runtime_mcp::metrics", tracing::Level::INFO)
}

/// A request's duration as the MCP conventions' `mcp.server.operation.duration` histogram
/// (seconds): an `INFO` event of the target `tool_runtime_mcp::metrics` with the field
/// `histogram.mcp.server.operation.duration`, which `tool-runtime-otel`
/// reads (its other fields are the attributes). Emitted inside the request's span.
pub(crate) fn record_duration(
    started: std::time::Instant,
    method: &'static str,
    tool: Option<&str>,
    error: Option<&ErrorData>,
    tool_error: bool,
) {
    let code = error.map(|e| e.code.0.to_string());
    let failed = error.is_some_and(|e| server_failed(e.code.0));
    let error_type = code
        .as_deref()
        .filter(|_| failed)
        .or(tool_error.then_some("tool_error"));
    tracing::event!(
        target: "tool_runtime_mcp::metrics",
        tracing::Level::INFO,
        histogram.mcp.server.operation.duration = started.elapsed().as_secs_f64(),
        mcp.method.name = method,
        gen_ai.tool.name = tool,
        error.r#type = error_type,
        rpc.response.status_code = code.as_deref(),
    );
}
