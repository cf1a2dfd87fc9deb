//! The answers the HTTP layer writes itself, before rmcp sees a request: a JSON-RPC error with
//! its HTTP status.

use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// A JSON-RPC error `code` with `message` for the request `id`, with the HTTP `status`.
pub(super) fn refuse(status: http::StatusCode, code: i64, message: &str, id: Value) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    (status, axum::Json(body)).into_response()
}

/// A body larger than `max` bytes (413).
pub(super) fn too_large(max: usize) -> Response {
    refuse(
        http::StatusCode::PAYLOAD_TOO_LARGE,
        -32600,
        &format!("the body is larger than {max} bytes"),
        Value::Null,
    )
}

/// A refusal for a share that is full now (429 for the caller's own, 503 for the server's), with
/// `Retry-After: 1`.
pub(super) fn retry_later(status: http::StatusCode, message: &str, id: Value) -> Response {
    let mut response = refuse(status, -32000, message, id);
    response.headers_mut().insert(
        http::header::RETRY_AFTER,
        http::HeaderValue::from_static("1"),
    );
    response
}
