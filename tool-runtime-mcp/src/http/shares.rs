//! What keeps one caller from harming another: each caller (the principal a token names, else
//! the peer's address) has a share of requests in progress (streams included) and of sessions,
//! sessions belong to the caller who opened them, a request's body must arrive in time and fit
//! the bytes all bodies in flight may take, and a body is checked (depth, number of values, a key
//! given twice, a request id still in flight in its session) before rmcp parses it. When a
//! share is full it is the caller's own oldest session that gives way, or its own new request
//! that is refused: never another caller's.

use std::collections::{HashMap, HashSet};
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde::de::DeserializeSeed;
use serde_json::{Value, json};
use tokio::sync::Semaphore;
use tool_runtime::json::Distinct;

use super::connections::ConnectionOwner;
use super::{HttpConfig, holding};
use crate::caller::{OwnerKey, PeerAddr, Principal, owner_key};

/// The header that names a 2025-11-25 session.
const SESSION: &str = "mcp-session-id";
/// JSON nesting a request may have (serde_json refuses deeper).
const MAX_NESTING: usize = 127;

/// The shares of the HTTP server's callers.
pub(super) struct Shares {
    config: HttpConfig,
    sessions: Arc<LocalSessionManager>,
    state: Mutex<Ledger>,
    /// KiB of request bodies being read or handled, over all callers.
    body_kib: Arc<Semaphore>,
}

#[derive(Default)]
struct Ledger {
    /// Requests in progress, by caller.
    requests: HashMap<String, usize>,
    /// Who opened each session we know of, and in which order.
    sessions: HashMap<String, Opened>,
    /// (session, request id) of the requests in progress in a session.
    ids: HashSet<(String, String)>,
    opened: u64,
}

struct Opened {
    owner: String,
    order: u64,
}

impl Shares {
    pub(super) fn new(config: &HttpConfig, sessions: Arc<LocalSessionManager>) -> Self {
        let kib = (config.max_body_bytes_in_flight / 1024).max(config.max_body_bytes / 1024 + 1);
        Shares {
            config: config.clone(),
            sessions,
            state: Mutex::default(),
            body_kib: Arc::new(Semaphore::new(kib.min(Semaphore::MAX_PERMITS))),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Ledger> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A place for one more request of `owner`, or `None` when its share is taken.
    fn enter(self: &Arc<Self>, owner: &str) -> Option<InProgress> {
        let mut state = self.lock();
        let n = state.requests.entry(owner.to_owned()).or_default();
        if *n >= self.config.requests_per_caller {
            return None;
        }
        *n += 1;
        Some(InProgress {
            shares: self.clone(),
            owner: owner.to_owned(),
            id: None,
        })
    }

    /// Whether `session` was opened by a caller other than `owner`.
    fn owned_by_other(&self, session: &str, owner: &str) -> bool {
        self.lock()
            .sessions
            .get(session)
            .is_some_and(|o| o.owner != owner)
    }

    /// Makes room for a new session of `owner`: its oldest session closes when it has its share
    /// open; when the server has as many as it allows, the oldest session of the caller with the
    /// most closes. The newcomer is never refused for another caller's sessions.
    async fn make_room(&self, owner: &str) {
        let live: HashSet<String> = self
            .sessions
            .sessions
            .read()
            .await
            .keys()
            .map(|k| k.to_string())
            .collect();
        let close = {
            let mut state = self.lock();
            state.sessions.retain(|id, _| live.contains(id));
            let mine = |state: &Ledger, who: &str| {
                state
                    .sessions
                    .iter()
                    .filter(|(_, o)| o.owner == who)
                    .min_by_key(|(_, o)| o.order)
                    .map(|(id, _)| id.clone())
            };
            let count = |state: &Ledger, who: &str| {
                state.sessions.values().filter(|o| o.owner == who).count()
            };
            if count(&state, owner) >= self.config.max_sessions_per_caller {
                mine(&state, owner)
            } else if live.len() >= self.config.max_sessions {
                let mut per: HashMap<&str, usize> = HashMap::new();
                for o in state.sessions.values() {
                    *per.entry(&o.owner).or_default() += 1;
                }
                let top = per
                    .into_iter()
                    .max_by_key(|(_, n)| *n)
                    .map(|(w, _)| w.to_owned());
                top.and_then(|t| mine(&state, &t))
            } else {
                None
            }
        };
        if let Some(id) = close {
            self.lock().sessions.remove(&id);
            let _ = self.sessions.close_session(&Arc::from(id.as_str())).await;
        }
    }

    /// Records who opened `session`.
    fn opened(&self, session: &str, owner: &str) {
        let mut state = self.lock();
        state.opened += 1;
        let order = state.opened;
        state.sessions.insert(
            session.to_owned(),
            Opened {
                owner: owner.to_owned(),
                order,
            },
        );
    }

    /// A claim on `id` in `session`, or `false` when a request with that id is in progress there.
    fn claim(&self, session: &str, id: &str) -> bool {
        self.lock().ids.insert((session.to_owned(), id.to_owned()))
    }
}

/// One request in progress: given back when its response body is finished or dropped.
struct InProgress {
    shares: Arc<Shares>,
    owner: String,
    /// The (session, request id) it claimed.
    id: Option<(String, String)>,
}

impl Drop for InProgress {
    fn drop(&mut self) {
        let mut state = self.shares.lock();
        if let Some(n) = state.requests.get_mut(&self.owner) {
            *n -= 1;
            if *n == 0 {
                state.requests.remove(&self.owner);
            }
        }
        if let Some(id) = self.id.take() {
            state.ids.remove(&id);
        }
    }
}

fn refuse(status: http::StatusCode, code: i64, message: &str, id: Value) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    (status, axum::Json(body)).into_response()
}

/// The members of a JSON-RPC body the checks look at.
#[derive(serde::Deserialize)]
struct Envelope {
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    id: Option<Value>,
}

/// Every request to the endpoint, after its credentials are checked: the caller's share, the
/// session's owner, then (for a POST) the body; then rmcp.
pub(super) async fn admit(
    State(shares): State<Arc<Shares>>,
    mut request: Request,
    next: Next,
) -> Response {
    let owner = owner_key(
        request.extensions().get::<Principal>(),
        request.extensions().get::<PeerAddr>().map(|p| p.0),
    );
    request.extensions_mut().insert(OwnerKey(owner.clone()));
    if let Some(connection) = request.extensions().get::<ConnectionOwner>() {
        connection.set(&owner);
    }
    let Some(mut turn) = shares.enter(&owner) else {
        let mut response = refuse(
            http::StatusCode::TOO_MANY_REQUESTS,
            -32000,
            "this caller has as many requests in progress as it may; try again when one ends",
            Value::Null,
        );
        response.headers_mut().insert(
            http::header::RETRY_AFTER,
            http::HeaderValue::from_static("1"),
        );
        return response;
    };
    let session = request
        .headers()
        .get(SESSION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    // Another caller's session is as unknown as one that does not exist.
    if let Some(s) = &session
        && shares.owned_by_other(s, &owner)
    {
        return refuse(
            http::StatusCode::NOT_FOUND,
            -32001,
            "session not found",
            Value::Null,
        );
    }
    let method = request.method().clone();
    let mut body_permit = None;
    let mut opens_session = false;
    let request = if method == http::Method::POST {
        let (parts, body) = request.into_parts();
        let declared = parts
            .headers
            .get(http::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<usize>().ok());
        if declared.is_some_and(|n| n > shares.config.max_body_bytes) {
            return too_large(shares.config.max_body_bytes);
        }
        let kib = declared.unwrap_or(shares.config.max_body_bytes) / 1024 + 1;
        let permit = match tokio::time::timeout(
            Duration::from_secs(1),
            shares.body_kib.clone().acquire_many_owned(kib as u32),
        )
        .await
        {
            Ok(Ok(p)) => p,
            _ => {
                let mut response = refuse(
                    http::StatusCode::SERVICE_UNAVAILABLE,
                    -32000,
                    "the server is reading as many request bodies as it may; try again shortly",
                    Value::Null,
                );
                response.headers_mut().insert(
                    http::header::RETRY_AFTER,
                    http::HeaderValue::from_static("1"),
                );
                return response;
            }
        };
        body_permit = Some(permit);
        let bytes = match read_body(body, declared, &shares.config).await {
            Ok(b) => b,
            Err(response) => return *response,
        };
        let envelope = match check_body(&bytes, &shares.config) {
            Ok(e) => e,
            Err(response) => return *response,
        };
        // Two requests of one session with one id: rmcp would answer one of them.
        if let (Some(s), Some(id), Some(_)) = (&session, &envelope.id, &envelope.method) {
            let id = id.to_string();
            if !shares.claim(s, &id) {
                return refuse(
                    http::StatusCode::CONFLICT,
                    -32600,
                    "invalid request: a request with this id is still in progress in this session",
                    envelope.id.clone().unwrap_or(Value::Null),
                );
            }
            turn.id = Some((s.clone(), id));
        }
        opens_session = envelope.method.as_deref() == Some("initialize") && session.is_none();
        if opens_session {
            shares.make_room(&owner).await;
        }
        Request::from_parts(parts, Body::from(bytes))
    } else {
        request
    };
    let response = next.run(request).await;
    if opens_session
        && let Some(id) = response
            .headers()
            .get(SESSION)
            .and_then(|v| v.to_str().ok())
    {
        shares.opened(id, &owner);
    }
    if method == http::Method::DELETE
        && response.status().is_success()
        && let Some(s) = &session
    {
        shares.lock().sessions.remove(s);
    }
    // The request keeps its share (and its body's bytes) until its response body is finished
    // or dropped.
    holding(response, (turn, body_permit))
}

fn too_large(max: usize) -> Response {
    refuse(
        http::StatusCode::PAYLOAD_TOO_LARGE,
        -32600,
        &format!("the body is larger than {max} bytes"),
        Value::Null,
    )
}

/// The body, whole, if it is no larger than `max_body_bytes` and arrives within
/// `body_read_timeout` plus the time its declared length takes at `min_body_rate`.
async fn read_body(
    body: Body,
    declared: Option<usize>,
    config: &HttpConfig,
) -> Result<Bytes, Box<Response>> {
    let rate = config.min_body_rate.max(1) as f64;
    let deadline =
        config.body_read_timeout + Duration::from_secs_f64(declared.unwrap_or(0) as f64 / rate);
    let limited = http_body_util::Limited::new(body, config.max_body_bytes);
    match tokio::time::timeout(deadline, limited.collect()).await {
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(e))
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some() =>
        {
            Err(Box::new(too_large(config.max_body_bytes)))
        }
        Ok(Err(_)) => Err(Box::new(refuse(
            http::StatusCode::BAD_REQUEST,
            -32600,
            "the body could not be read",
            Value::Null,
        ))),
        Err(_) => {
            let mut response = refuse(
                http::StatusCode::REQUEST_TIMEOUT,
                -32600,
                "the body did not arrive in time",
                Value::Null,
            );
            response.headers_mut().insert(
                http::header::CONNECTION,
                http::HeaderValue::from_static("close"),
            );
            Err(Box::new(response))
        }
    }
}

/// A body rmcp may parse: not deeper than serde_json reads, not more values than
/// `max_json_values` (memory to parse it grows with them), JSON-RPC, no key given twice.
fn check_body(bytes: &[u8], config: &HttpConfig) -> Result<Envelope, Box<Response>> {
    let bad = |code, message: &str| {
        Err(Box::new(refuse(
            http::StatusCode::BAD_REQUEST,
            code,
            message,
            Value::Null,
        )))
    };
    let shape = tool_runtime::json::shape(bytes);
    if shape.depth > MAX_NESTING {
        return bad(-32600, "invalid request: nested too deeply");
    }
    if shape.values > config.max_json_values {
        return bad(
            -32600,
            &format!(
                "invalid request: more than {} JSON values",
                config.max_json_values
            ),
        );
    }
    // One pass reads the envelope and checks every key; a body it refuses is read again below
    // to say what is wrong with it.
    let mut de = serde_json::Deserializer::from_slice(bytes);
    if let Ok(envelope) = Distinct(PhantomData::<Envelope>).deserialize(&mut de)
        && de.end().is_ok()
    {
        return Ok(envelope);
    }
    let envelope: Envelope = match serde_json::from_slice(bytes) {
        Ok(e) => e,
        Err(e) if e.is_syntax() || e.is_eof() => {
            return bad(-32700, "parse error: the body is not JSON");
        }
        Err(_) => return bad(-32600, "invalid request: expected a JSON-RPC object"),
    };
    // Which value was meant cannot be known, and another reader may have read the other one.
    if tool_runtime::json::has_duplicate_keys(bytes) {
        return bad(-32600, "invalid request: a key is given more than once");
    }
    Ok(envelope)
}
