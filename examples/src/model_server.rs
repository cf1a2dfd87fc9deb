//! Stand-in models served over real HTTP: one [`TestModel`] per API, each under its own prefix
//! (`http://{addr}/{api id}`), answering the requests its provider wrote: whole, or streamed in
//! the API's framing (server-sent events, AWS's event stream for Bedrock). The test model
//! checks each request (its format, that every call of the turn before is answered once, in
//! order); a request it refuses is answered `400` with the reason. No real model is called.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::Value;
use tool_runtime::provider::{Api, HttpRequest};
use tool_runtime::testing::TestModel;

/// Serves `models` (one per API) on a local port; the base URL of each is
/// `http://{addr}/{api.id()}`.
pub async fn serve(models: Vec<Arc<TestModel>>) -> SocketAddr {
    let by_id: HashMap<&'static str, Arc<TestModel>> =
        models.into_iter().map(|m| (m.api().id(), m)).collect();
    let app = Router::new()
        .fallback(post(answer))
        .with_state(Arc::new(by_id));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

/// The base URL of `api`'s model on a server at `addr`.
pub fn base(addr: SocketAddr, api: Api) -> String {
    format!("http://{addr}/{}", api.id())
}

type Models = Arc<HashMap<&'static str, Arc<TestModel>>>;

async fn answer(State(models): State<Models>, uri: Uri, body: Bytes) -> Response {
    let path = uri.path_and_query().map(|p| p.as_str()).unwrap_or_default();
    let Some((id, rest)) = path.strip_prefix('/').and_then(|p| p.split_once('/')) else {
        return (StatusCode::NOT_FOUND, format!("no API at {path}")).into_response();
    };
    let Some(model) = models.get(id) else {
        return (StatusCode::NOT_FOUND, format!("no model of API `{id}`")).into_response();
    };
    let body: Value = match serde_json::from_slice(&body) {
        Ok(body) => body,
        Err(e) => return (StatusCode::BAD_REQUEST, format!("not JSON: {e}")).into_response(),
    };
    let request = HttpRequest::post(format!("/{rest}"), body, false);
    let provider = model.api().provider();
    let streamed = provider
        .read_request(&request)
        .map(|sent| sent.stream)
        .unwrap_or(false);
    let refused = |e: &dyn std::error::Error| {
        let mut text = e.to_string();
        if let Some(cause) = e.source() {
            text.push_str(&format!(": {cause}"));
        }
        (StatusCode::BAD_REQUEST, text).into_response()
    };
    if !streamed {
        return match model.respond(&request) {
            Ok(response) => axum::Json(response).into_response(),
            Err(e) => refused(&e),
        };
    }
    match model.respond_streamed(&request) {
        Ok(events) => match provider.framing().encode(&events) {
            Some(bytes) => {
                let kind = provider.framing().content_type();
                ([(header::CONTENT_TYPE, kind)], bytes).into_response()
            }
            None => (StatusCode::NOT_IMPLEMENTED, "no framing for this stream").into_response(),
        },
        Err(e) => refused(&e),
    }
}
