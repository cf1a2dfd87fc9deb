//! What keeps one caller from harming another: each caller (the principal a token names, else
//! the peer's address) has a share of requests in progress (streams included) and of sessions,
//! sessions belong to the caller who opened them, a request's body must arrive in time and fit
//! the bytes all bodies in flight may take, and a body is checked (depth, number of values, a key
//! given twice, a request id still in flight in its session) before rmcp parses it. When a
//! share is full it is the caller's own oldest session that gives way, or its own new request
//! that is refused: never another caller's.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::{Value, json};

use super::body::{self, Budget};
use super::connections::ConnectionOwner;
use super::{HttpConfig, holding};
use crate::caller::{OwnerKey, PeerAddr, Principal, RawArguments, owner_key};

/// The header that names a 2025-11-25 session.
const SESSION: &str = "mcp-session-id";

/// The shares of the HTTP server's callers.
pub(super) struct Shares {
    config: HttpConfig,
    sessions: Arc<LocalSessionManager>,
    state: Mutex<Ledger>,
    /// Bytes of request bodies being read or handled: over all callers, and each caller's.
    bodies: Arc<Budget>,
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
        Shares {
            config: config.clone(),
            sessions,
            state: Mutex::default(),
            bodies: Arc::new(Budget::new(config)),
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

pub(super) fn refuse(status: http::StatusCode, code: i64, message: &str, id: Value) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    (status, axum::Json(body)).into_response()
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
    let mut body_bytes = None;
    let mut opens_session = false;
    let request = if method == http::Method::POST {
        let (mut parts, body) = request.into_parts();
        let declared = parts
            .headers
            .get(http::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<usize>().ok());
        if declared.is_some_and(|n| n > shares.config.max_body_bytes) {
            return body::too_large(shares.config.max_body_bytes);
        }
        let mut claim = shares.bodies.claim(&owner);
        let bytes = match body::read(body, &mut claim, &shares.config).await {
            Ok(b) => b,
            Err(response) => return *response,
        };
        body_bytes = Some(claim);
        let checked = match body::check(bytes, &shares.config) {
            Ok(c) => c,
            Err(response) => return *response,
        };
        let envelope = checked.envelope;
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
        if let Some(arguments) = checked.arguments {
            parts.extensions.insert(RawArguments(arguments));
        }
        Request::from_parts(parts, Body::from(checked.body))
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
    holding(response, (turn, body_bytes))
}
