//! What keeps one caller from harming another: each caller (the principal a token names, else
//! the peer's address) has a share of requests in progress (streams included) and of sessions,
//! sessions belong to the caller who opened them, a request's body must arrive in time and fit
//! the bytes all bodies in flight may take, and a body is checked (depth, number of values, a key
//! given twice, a request id still in flight in its session) before rmcp parses it; a caller's
//! large bodies are handled one at a time, and checked on at most half the cores. When a
//! share is full it is the caller's own oldest session that gives way, or its own new request
//! that is refused: never another caller's.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::Value;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use super::body::{self, Budget};
use super::connections::ConnectionOwner;
use super::direct;
use super::reply::{refuse, retry_later, too_large};
use super::{HttpConfig, holding};
use crate::arguments::RawArguments;
use crate::caller::{Admitted, Caller, OwnerKey, PeerAddr, Principal, REFUSED, owner_key};
use crate::server::McpServer;

/// The header that names a 2025-11-25 session.
const SESSION: &str = "mcp-session-id";

/// The shares of the HTTP server's callers.
pub(super) struct Shares {
    config: HttpConfig,
    sessions: Arc<LocalSessionManager>,
    state: Mutex<Ledger>,
    /// Bytes of request bodies being read or handled: over all callers, and each caller's.
    bodies: Arc<Budget>,
    /// The server, whose context function admits a caller before it gets a session (or, with
    /// none, a request served).
    mcp: McpServer,
    /// Each caller's turn to handle a large body, for the callers that have one waiting or in
    /// progress.
    large: Mutex<HashMap<String, Arc<Semaphore>>>,
    /// Large bodies being checked at once: half the cores.
    checking: Semaphore,
    /// The host names requests may name, for the requests answered directly.
    hosts: direct::Hosts,
    /// Cancelled when the server has shut down: requests answered directly end with it.
    shutdown: CancellationToken,
}

#[derive(Default)]
struct Ledger {
    /// Requests in progress, by caller.
    requests: HashMap<String, usize>,
    /// Who opened each session we know of, when it was last used, and its requests in
    /// progress.
    sessions: HashMap<String, Opened>,
    /// (session, request id) of the requests in progress in a session.
    ids: HashSet<(String, String)>,
}

struct Opened {
    owner: String,
    last_used: Instant,
    /// Requests in progress in it (an open event stream counts until it closes).
    busy: usize,
}

/// Why a new session could not be made room for.
pub(super) enum Full {
    /// Every session of this caller's share is in use.
    Caller,
    /// Every session the server allows is in use.
    Server,
}

impl Shares {
    pub(super) fn new(
        config: &HttpConfig,
        sessions: Arc<LocalSessionManager>,
        mcp: McpServer,
        allowed_hosts: &[String],
        shutdown: CancellationToken,
    ) -> Self {
        Shares {
            config: config.clone(),
            sessions,
            state: Mutex::default(),
            bodies: Arc::new(Budget::new(config)),
            mcp,
            large: Mutex::default(),
            checking: Semaphore::new(
                std::thread::available_parallelism().map_or(1, |n| (n.get() / 2).max(1)),
            ),
            hosts: direct::Hosts::new(allowed_hosts),
            shutdown,
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
            session: None,
        })
    }

    /// `owner`'s turn to handle a large body, once its large request before ends (waiting at
    /// most the server's `queue_wait`); `None` when it did not come in time.
    async fn large_turn(self: &Arc<Self>, owner: &str) -> Option<LargeTurn> {
        let lane = self
            .large
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(owner.to_owned())
            .or_insert_with(|| Arc::new(Semaphore::new(1)))
            .clone();
        // Dropped without a permit when the wait ends unanswered (or the request is dropped):
        // the lane is removed when no one else holds it.
        let mut turn = LargeTurn {
            shares: self.clone(),
            owner: owner.to_owned(),
            lane: lane.clone(),
            permit: None,
        };
        let wait = self.mcp.limits().queue_wait;
        match tokio::time::timeout(wait, lane.acquire_owned()).await {
            Ok(Ok(permit)) => {
                turn.permit = Some(permit);
                Some(turn)
            }
            _ => None,
        }
    }

    /// Whether `session` was opened by a caller other than `owner`.
    fn owned_by_other(&self, session: &str, owner: &str) -> bool {
        self.lock()
            .sessions
            .get(session)
            .is_some_and(|o| o.owner != owner)
    }

    /// Whether `session` is one this server opened and has not closed: one that ended is
    /// unknown, as a session that never existed.
    fn known(&self, session: &str) -> bool {
        self.lock().sessions.contains_key(session)
    }

    /// `request` is in `session`: it is used now, and busy until the request ends.
    fn using(&self, request: &mut InProgress, session: &str) {
        let mut state = self.lock();
        if let Some(opened) = state.sessions.get_mut(session) {
            opened.last_used = Instant::now();
            opened.busy += 1;
            request.session = Some(session.to_owned());
        }
    }

    /// Makes room for a new session of `owner`. When it has its share open, its own longest
    /// idle session closes; when the server has as many as it allows, the longest idle session
    /// of the caller holding the most does. A session with a request in progress is never
    /// closed: when every candidate is busy, the newcomer is refused instead.
    async fn make_room(&self, owner: &str) -> Result<(), Full> {
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
            let idlest = |state: &Ledger, who: &str| {
                state
                    .sessions
                    .iter()
                    .filter(|(_, o)| o.owner == who && o.busy == 0)
                    .min_by_key(|(_, o)| o.last_used)
                    .map(|(id, _)| id.clone())
            };
            let mut per: HashMap<&str, usize> = HashMap::new();
            for o in state.sessions.values() {
                *per.entry(&o.owner).or_default() += 1;
            }
            if per.get(owner).copied().unwrap_or(0) >= self.config.max_sessions_per_caller {
                Some(idlest(&state, owner).ok_or(Full::Caller)?)
            } else if live.len() >= self.config.max_sessions {
                // The caller holding the most that has an idle session gives it way.
                let mut callers: Vec<(&str, usize)> = per.into_iter().collect();
                callers.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
                let id = callers
                    .iter()
                    .find_map(|(who, _)| idlest(&state, who))
                    .ok_or(Full::Server)?;
                Some(id)
            } else {
                None
            }
        };
        if let Some(id) = close {
            self.lock().sessions.remove(&id);
            let _ = self.sessions.close_session(&Arc::from(id.as_str())).await;
        }
        Ok(())
    }

    /// Records who opened `session`.
    fn opened(&self, session: &str, owner: &str) {
        self.lock().sessions.insert(
            session.to_owned(),
            Opened {
                owner: owner.to_owned(),
                last_used: Instant::now(),
                busy: 0,
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
    /// The session it keeps busy.
    session: Option<String>,
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
        if let Some(session) = self.session.take()
            && let Some(opened) = state.sessions.get_mut(&session)
        {
            opened.busy -= 1;
            opened.last_used = Instant::now();
        }
    }
}

/// A caller's turn to handle a large body (at least [`HttpConfig::large_body_bytes`]), held
/// from the end of its reading until its response ends: reading it costs CPU in proportion to
/// its size, so a caller's large bodies are handled one at a time, and a crowd of them cannot
/// take the cores every other caller's requests need.
struct LargeTurn {
    shares: Arc<Shares>,
    owner: String,
    lane: Arc<Semaphore>,
    permit: Option<OwnedSemaphorePermit>,
}

impl Drop for LargeTurn {
    fn drop(&mut self) {
        drop(self.permit.take());
        let mut large = self.shares.large.lock().unwrap_or_else(|e| e.into_inner());
        // The map's and this turn's: no other request of this caller holds or waits for it.
        if Arc::strong_count(&self.lane) == 2 {
            large.remove(&self.owner);
        }
    }
}

/// A large body whose caller's turn for large bodies did not come in time.
fn busy_large() -> Response {
    retry_later(
        http::StatusCode::TOO_MANY_REQUESTS,
        "this caller's large requests are handled one at a time, and its earlier one has not ended",
        Value::Null,
    )
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
        return retry_later(
            http::StatusCode::TOO_MANY_REQUESTS,
            "this caller has as many requests in progress as it may; try again when one ends",
            Value::Null,
        );
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
    if let Some(s) = &session {
        // A session that ended is unknown: a second DELETE of it is 404, as for any other.
        if method == http::Method::DELETE && !shares.known(s) {
            return refuse(
                http::StatusCode::NOT_FOUND,
                -32001,
                "session not found",
                Value::Null,
            );
        }
        shares.using(&mut turn, s);
    }
    let mut body_bytes = None;
    let mut large = None;
    let mut opens_session = false;
    let request = if method == http::Method::POST {
        let (mut parts, body) = request.into_parts();
        let declared = parts
            .headers
            .get(http::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<usize>().ok());
        if declared.is_some_and(|n| n > shares.config.max_body_bytes) {
            return too_large(shares.config.max_body_bytes);
        }
        // A large body waits for its caller's turn before it is read (its sender waits in TCP's
        // flow control meanwhile); one that did not say its length, once it has been read.
        let is_large = |n: usize| n >= shares.config.large_body_bytes;
        if declared.is_some_and(is_large) {
            let Some(t) = shares.large_turn(&owner).await else {
                return busy_large();
            };
            large = Some(t);
        }
        let mut claim = shares.bodies.claim(&owner);
        let bytes = match body::read(body, &mut claim, &shares.config).await {
            Ok(b) => b,
            Err(response) => return *response,
        };
        body_bytes = Some(claim);
        // One scan counts its values (without parsing them): a body dense with values is large
        // too, whatever its size.
        let shape = tool_runtime::json::shape(&bytes);
        if large.is_none()
            && (is_large(bytes.len()) || shape.values >= shares.config.large_body_values)
        {
            let Some(t) = shares.large_turn(&owner).await else {
                return busy_large();
            };
            large = Some(t);
        }
        // Large bodies are checked a few at a time over all callers (each caller's one at a time
        // in turn): the cores they leave free keep answering everyone's small requests.
        let _checking = match large {
            Some(_) => Some(shares.checking.acquire().await),
            None => None,
        };
        let checked = match body::check(bytes, shape, &shares.config) {
            Ok(c) => c,
            Err(response) => return *response,
        };
        drop(_checking);
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
        // A request that opens a session, or needs none, is the application's to admit: a
        // valid token of someone it does not know opens nothing and runs nothing.
        if session.is_none() && envelope.method.is_some() {
            let caller = Caller {
                principal: parts.extensions.get::<Principal>().cloned(),
                peer: parts.extensions.get::<PeerAddr>().map(|a| a.0),
                http: Some(Arc::new(parts.clone())),
            };
            match shares.mcp.admit(caller.clone()).await {
                Ok(cx) => {
                    parts.extensions.insert(Admitted { caller, cx });
                }
                Err(refusal) => {
                    return refuse(
                        http::StatusCode::FORBIDDEN,
                        i64::from(REFUSED),
                        &refusal.message,
                        envelope.id.clone().unwrap_or(Value::Null),
                    );
                }
            }
        }
        if opens_session {
            match shares.make_room(&owner).await {
                Ok(()) => {}
                Err(Full::Caller) => {
                    return retry_later(
                        http::StatusCode::TOO_MANY_REQUESTS,
                        "this caller has as many sessions open as it may, each with a request in progress",
                        envelope.id.clone().unwrap_or(Value::Null),
                    );
                }
                Err(Full::Server) => {
                    return retry_later(
                        http::StatusCode::SERVICE_UNAVAILABLE,
                        "the server has as many sessions open as it may, each with a request in progress",
                        envelope.id.clone().unwrap_or(Value::Null),
                    );
                }
            }
        }
        // fastmcp-tasks 4.1.4, the tasks extension's Python client, sends `tasks/*` without the
        // `Mcp-Name` the extension asks for, and rmcp refuses a missing one. The header is there
        // so an intermediary can route by task id without reading the body; a request without
        // it routes anywhere, and any replica of this server answers it. So a missing one is
        // taken from the body (a task id of plain characters); one given must match the body.
        if matches!(
            envelope.method.as_deref(),
            Some("tasks/get" | "tasks/update" | "tasks/cancel")
        ) && !parts.headers.contains_key(MCP_NAME)
            && let Some(id) = task_id_of(&checked.body)
            && let Ok(value) = http::HeaderValue::from_str(&id)
        {
            parts.headers.insert(MCP_NAME, value);
        }
        // A plain stateless request is answered here; any other goes on to rmcp.
        // (Only the two methods it answers are read again: an `initialize` or a `ping` is not.)
        let direct = match (&session, envelope.method.as_deref()) {
            (None, Some("tools/call" | "tools/list")) => {
                direct::plan(&parts, &checked.body, &shares.config.path, &shares.hosts)
            }
            _ => None,
        };
        if let Some(arguments) = checked.arguments {
            parts.extensions.insert(RawArguments(arguments));
        }
        if let Some(plan) = direct {
            let response = direct::answer(&shares.mcp, plan, parts, &shares.shutdown).await;
            return holding(response, (turn, body_bytes, large));
        }
        // A session's read of a kept result is answered as JSON, whatever its size.
        if let (Some(s), Some("resources/read")) = (&session, envelope.method.as_deref())
            && shares.known(s)
            && let Some(plan) =
                direct::session_read(&parts, &checked.body, &shares.config.path, &shares.hosts)
        {
            let response = direct::read(&shares.mcp, plan, parts).await;
            return holding(response, (turn, body_bytes, large));
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
    // The request keeps its share (and its body's bytes; a large body, its caller's turn for
    // large bodies) until its response body is finished or dropped.
    holding(response, (turn, body_bytes, large))
}

/// The `Mcp-Name` header.
const MCP_NAME: &str = "mcp-name";

/// A `tasks/*` request's `params.taskId`, when it is made of plain characters (what this
/// server's ids are, and what a header carries unencoded).
fn task_id_of(body: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Request {
        params: Params,
    }
    #[derive(serde::Deserialize)]
    struct Params {
        #[serde(rename = "taskId")]
        task_id: String,
    }
    let id = serde_json::from_slice::<Request>(body).ok()?.params.task_id;
    let plain = !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    plain.then_some(id)
}
