//! The server's spans by OpenTelemetry's MCP conventions (semantic-conventions-genai,
//! `model/mcp`, Development status; the files the tests check against are vendored in
//! `examples/tests/semconv`): one `tracing` span per request the server answers,
//! named `{mcp.method.name} {target}` (the `otel.name` field `tracing-opentelemetry` reads), kind
//! server, with `mcp.method.name`, `mcp.protocol.version`, `mcp.session.id` (HTTP sessions),
//! `jsonrpc.request.id`, `network.transport` (`pipe` on stdio, `tcp` on HTTP), `client.address`
//! and `client.port` (HTTP), `gen_ai.tool.name` and `gen_ai.operation.name` for a `tools/call`,
//! `rpc.response.status_code` (the JSON-RPC code, as a string) for an error answer, and when the
//! request failed `error.type` (the code, or `tool_error` for a result with `isError`) and
//! `otel.status_code` `ERROR`; the codes that say the caller's request could not be served
//! (-32700, -32600, -32601, -32602, -32002) are not the server's failure. The tool's own
//! `execute_tool` span runs inside it. Each request's duration is also the
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
    match tool {
        Some(tool) => span.record("otel.name", format!("{method} {tool}")),
        None => span.record("otel.name", method),
    };
    span.record("jsonrpc.request.id", context.id().to_string());
    if let Some(version) = context.protocol_version() {
        span.record("mcp.protocol.version", version.to_string());
    }
    span.record("network.transport", transport(context));
    #[cfg(feature = "http")]
    if let Some(parts) = context.parts() {
        if let Some(session) = parts
            .headers
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        {
            span.record("mcp.session.id", session);
        }
        if let Some(crate::caller::PeerAddr(peer)) = parts.extensions.get() {
            span.record("client.address", peer.ip().to_string());
            // An `int` as OpenTelemetry has it (`tracing-opentelemetry` exports a `u16` as text).
            span.record("client.port", i64::from(peer.port()));
        }
    }
    span
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

/// A request's duration as the MCP conventions' `mcp.server.operation.duration` histogram
/// (seconds): an `INFO` event of the target `tool_runtime_mcp::metrics` with the field
/// `histogram.mcp.server.operation.duration`, which `tracing-opentelemetry`'s metrics layer
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
