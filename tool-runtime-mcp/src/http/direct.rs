//! Stateless 2026-07-28 `tools/call` and `tools/list` answered by the server itself, after every
//! check of `shares::admit` (credentials, shares, the body, admission), without rmcp's
//! per-request machinery: rmcp parses the body a second time into its message types,
//! serializes the message back to compare its `Mcp-*` headers, starts a service task with its
//! channels for one request and sends the answer through them; about a third of a stateless
//! call's instructions.
//!
//! Only a request to the endpoint's path whose every part is plainly valid takes this path; any
//! other (an `Origin` header, a progress token, an approval's answer, an encoded header or a
//! quoted `Accept`, a member this path does not know, a version other than 2026-07-28) goes on
//! to the router and rmcp's endpoint as before, which keep the last word on what is malformed.
//! At shutdown a call still running is dropped and answered 500, as rmcp does. The rules rmcp applies to such a request are applied here the
//! same way (the `Host` header, `Accept`, `Content-Type`, `MCP-Protocol-Version` against
//! `_meta`, `Mcp-Method` and `Mcp-Name` against the body), and the answer is the one rmcp would
//! send, byte for byte (`tests/direct.rs` compares them).

use axum::body::{Body, Bytes};
use axum::response::Response;
use http::HeaderMap;
use http::request::Parts;
use rmcp::model::{
    CallToolRequestParams, ErrorCode, ErrorData, Extensions, JsonObject, JsonRpcError,
    JsonRpcResponse, JsonRpcVersion2_0, ProtocolVersion, RequestId, RequestMetaObject,
    ServerJsonRpcMessage, ServerResult,
};
use tokio_util::sync::CancellationToken;

use super::reply::refuse;
use crate::incoming::{Direct, Incoming};
use crate::server::McpServer;

/// The only protocol version this path answers.
const VERSION: &str = "2026-07-28";

/// A request this path answers.
pub(super) struct Plan {
    id: RequestId,
    meta: RequestMetaObject,
    method: Method,
}

enum Method {
    Call { name: String },
    List { cursor: Option<String> },
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Message {
    #[allow(dead_code)]
    jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    method: String,
    #[serde(default)]
    params: Option<Params>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    #[serde(default)]
    name: Option<String>,
    /// `{}` where the body checks cut the arguments out (their text is in the request's
    /// `RawArguments`).
    #[serde(default)]
    arguments: Option<JsonObject>,
    #[serde(default)]
    cursor: Option<String>,
    #[serde(rename = "_meta")]
    meta: RequestMetaObject,
}

/// The `Host` names (and ports) the server answers to, read once: the same rule as rmcp's (an
/// entry without a port allows any port; an empty list allows any host, a list of blank
/// entries none).
pub(super) struct Hosts {
    any: bool,
    allowed: Vec<(String, Option<u16>)>,
}

impl Hosts {
    pub(super) fn new(allowed: &[String]) -> Self {
        Hosts {
            any: allowed.is_empty(),
            allowed: allowed
                .iter()
                .map(|a| a.trim())
                .filter(|a| !a.is_empty())
                .map(|a| match http::uri::Authority::try_from(a) {
                    Ok(authority) => (normalize(authority.host()), authority.port_u16()),
                    Err(_) => (normalize(a), None),
                })
                .collect(),
        }
    }

    fn allow(&self, headers: &HeaderMap) -> bool {
        let Some(authority) = single(headers, http::header::HOST.as_str())
            .and_then(|h| http::uri::Authority::try_from(h).ok())
        else {
            return false;
        };
        let (host, port) = (normalize(authority.host()), authority.port_u16());
        self.any
            || self
                .allowed
                .iter()
                .any(|(h, p)| *h == host && p.is_none_or(|p| Some(p) == port))
    }
}

fn normalize(host: &str) -> String {
    host.trim_matches('[')
        .trim_matches(']')
        .to_ascii_lowercase()
}

/// The header's one value as text; `None` when it is absent, given twice or not text.
fn single<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    let mut values = headers.get_all(name).iter();
    let value = values.next()?;
    if values.next().is_some() {
        return None;
    }
    value.to_str().ok()
}

/// Whether `Accept` plainly names both JSON and event streams (any weights, parameters or quotes:
/// rmcp reads them).
fn accepts_both(headers: &HeaderMap) -> bool {
    let (mut json, mut sse) = (false, false);
    for value in headers.get_all(http::header::ACCEPT) {
        let Ok(value) = value.to_str() else {
            return false;
        };
        if value.contains('"') {
            return false;
        }
        for range in value.split(',') {
            let range = range.trim();
            if range.contains(';') {
                return false;
            }
            json |= range.eq_ignore_ascii_case("application/json");
            sse |= range.eq_ignore_ascii_case("text/event-stream");
        }
    }
    json && sse
}

/// The plan for answering `body` (the envelope, a call's arguments cut out) directly, or `None`
/// when it goes to rmcp.
pub(super) fn plan(parts: &Parts, body: &[u8], path: &str, hosts: &Hosts) -> Option<Plan> {
    let headers = &parts.headers;
    // Another path is the router's (its 404), never this endpoint's.
    if parts.uri.path() != path
        || headers.contains_key(http::header::ORIGIN)
        || !hosts.allow(headers)
        || !accepts_both(headers)
        || single(headers, "mcp-protocol-version") != Some(VERSION)
    {
        return None;
    }
    let content_type = single(headers, http::header::CONTENT_TYPE.as_str())?;
    let essence = content_type
        .split_once(';')
        .map_or(content_type, |(e, _)| e);
    if !essence.trim().eq_ignore_ascii_case("application/json") {
        return None;
    }
    let message: Message = serde_json::from_slice(body).ok()?;
    let params = message.params?;
    let meta = params.meta;
    if meta.protocol_version()?.as_str() != VERSION
        || !meta
            .missing_required_keys(&ProtocolVersion::V_2026_07_28)
            .is_empty()
        || meta.get_progress_token().is_some()
        || single(headers, "mcp-method") != Some(message.method.as_str())
    {
        return None;
    }
    let method = match message.method.as_str() {
        "tools/call" => {
            let name = params.name?;
            if params.cursor.is_some()
                || params.arguments.is_some_and(|a| !a.is_empty())
                // A name that reads as an encoded header value is rmcp's to decode.
                || name.starts_with("=?base64?")
                || single(headers, "mcp-name") != Some(name.as_str())
            {
                return None;
            }
            Method::Call { name }
        }
        "tools/list" if params.name.is_none() && params.arguments.is_none() => Method::List {
            cursor: params.cursor,
        },
        _ => return None,
    };
    Some(Plan {
        id: message.id,
        meta,
        method,
    })
}

/// The answer to a planned request, as rmcp writes it. When the server shuts down (`shutdown`,
/// the token rmcp's endpoint also stops on) before the answer, the call is dropped and the
/// answer is a 500, as rmcp's.
pub(super) async fn answer(
    mcp: &McpServer,
    plan: Plan,
    parts: Parts,
    shutdown: &CancellationToken,
) -> Response {
    let id = plan.id.clone();
    tokio::select! {
        response = respond(mcp, plan, parts) => response,
        () = shutdown.cancelled() => refuse(
            http::StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::INTERNAL_ERROR.0.into(),
            "the server is shutting down",
            id.into_json_value(),
        ),
    }
}

async fn respond(mcp: &McpServer, plan: Plan, parts: Parts) -> Response {
    let Plan { id, meta, method } = plan;
    let mut extensions = Extensions::new();
    extensions.insert(parts);
    let incoming = Incoming::Direct(Direct {
        ct: CancellationToken::new(),
        id: id.clone(),
        meta,
        extensions,
        session: None,
    });
    let result = match method {
        Method::Call { name } => mcp
            .call_tool(CallToolRequestParams::new(name), incoming)
            .await
            .map(ServerResult::from),
        Method::List { cursor } => mcp
            .list_tools(cursor.as_deref(), &incoming)
            .await
            .map(ServerResult::ListToolsResult),
    };
    let (message, status) = match result {
        Ok(mut result) => {
            // As rmcp's handler does for 2026-07-28: a list says how long it may be cached.
            result.fill_missing_cache_hints();
            (
                ServerJsonRpcMessage::Response(JsonRpcResponse {
                    jsonrpc: JsonRpcVersion2_0,
                    id,
                    result,
                }),
                http::StatusCode::OK,
            )
        }
        Err(error) => {
            let status = status_of(&error);
            (
                ServerJsonRpcMessage::Error(JsonRpcError::new(Some(id), error)),
                status,
            )
        }
    };
    match serde_json::to_vec(&message) {
        Ok(body) => Response::builder()
            .status(status)
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(Body::from(Bytes::from(body)))
            .unwrap_or_default(),
        Err(_) => refuse(
            http::StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::INTERNAL_ERROR.0.into(),
            "the answer could not be written",
            serde_json::Value::Null,
        ),
    }
}

/// The HTTP status rmcp gives a stateless request's JSON-RPC error.
fn status_of(error: &ErrorData) -> http::StatusCode {
    match error.code {
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
        | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
        | ErrorCode::HEADER_MISMATCH => http::StatusCode::BAD_REQUEST,
        ErrorCode::METHOD_NOT_FOUND => http::StatusCode::NOT_FOUND,
        _ => http::StatusCode::OK,
    }
}

/// A session's `resources/read` of a kept result ([`crate::kept`]), answered here as one JSON
/// object: rmcp answers every request of a 2025-11-25 session as an event stream, and a client
/// may cap an event's size (the official Python SDK's default is 1 MiB), so a result kept whole
/// because it was large could not be read back at a client's defaults. The protocol lets a
/// server answer any request either way ("the client MUST support both"); 2026-07-28 requests
/// already get JSON from rmcp.
pub(super) struct SessionRead {
    id: RequestId,
    uri: String,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadMessage {
    #[allow(dead_code)]
    jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    method: String,
    params: ReadParams,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadParams {
    uri: String,
    #[serde(default, rename = "_meta")]
    #[allow(dead_code)]
    meta: Option<serde_json::Value>,
}

/// The plan for answering a session's read of a kept result here, or `None` when the request
/// goes to rmcp (the checks are the stateless path's, but for the version: the session's).
pub(super) fn session_read(
    parts: &Parts,
    body: &[u8],
    path: &str,
    hosts: &Hosts,
) -> Option<SessionRead> {
    let headers = &parts.headers;
    if parts.uri.path() != path
        || headers.contains_key(http::header::ORIGIN)
        || !hosts.allow(headers)
        || !accepts_both(headers)
    {
        return None;
    }
    let content_type = single(headers, http::header::CONTENT_TYPE.as_str())?;
    let essence = content_type
        .split_once(';')
        .map_or(content_type, |(e, _)| e);
    if !essence.trim().eq_ignore_ascii_case("application/json") {
        return None;
    }
    let message: ReadMessage = serde_json::from_slice(body).ok()?;
    (message.method == "resources/read" && crate::kept::id_of(&message.params.uri).is_some())
        .then_some(SessionRead {
            id: message.id,
            uri: message.params.uri,
        })
}

/// The answer to a session's read of a kept result, as one JSON object.
pub(super) async fn read(mcp: &McpServer, plan: SessionRead, parts: Parts) -> Response {
    let SessionRead { id, uri } = plan;
    let mut extensions = Extensions::new();
    extensions.insert(parts);
    let incoming = Incoming::Direct(Direct {
        ct: CancellationToken::new(),
        id: id.clone(),
        meta: RequestMetaObject::default(),
        extensions,
        session: None,
    });
    let message = match mcp.read_kept(&uri, &incoming).await {
        Ok(result) => ServerJsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: JsonRpcVersion2_0,
            id,
            result: ServerResult::ReadResourceResult(result),
        }),
        Err(error) => ServerJsonRpcMessage::Error(JsonRpcError::new(Some(id), error)),
    };
    match serde_json::to_vec(&message) {
        Ok(body) => Response::builder()
            .status(http::StatusCode::OK)
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(Body::from(Bytes::from(body)))
            .unwrap_or_default(),
        Err(_) => refuse(
            http::StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::INTERNAL_ERROR.0.into(),
            "the answer could not be written",
            serde_json::Value::Null,
        ),
    }
}
