//! MCP's Streamable HTTP transport (rmcp's, on axum and hyper), safe by default:
//!
//! - **Who**: with an [`Authenticate`] (the `oauth` feature's `ResourceServer`) every request
//!   needs valid credentials for this server (401/403 otherwise), and the principal reaches the
//!   host's context function; without one, [`HttpServer::bind`] serves loopback addresses only.
//! - **Where from**: the `Host` header must name this server and a browser `Origin` must be
//!   allowed (403 otherwise; DNS rebinding).
//! - **How much**: a cap on sessions (503 beyond it), idle sessions closed, a header-read
//!   timeout, a cap on connections, a body limit (413); nothing kept for a session once it ends.
//! - **How well**: malformed JSON is a 400 with JSON-RPC -32700; `TCP_NODELAY` on every
//!   connection (without it, each answer on a kept-alive connection waits 40 ms for the
//!   client's delayed ACK).
//!
//! ```no_run
//! # async fn run() -> std::io::Result<()> {
//! use tool_runtime_mcp::{McpServer, http::HttpServer};
//! use tool_runtime::ToolSet;
//! let mcp = McpServer::new(ToolSet::from_module(module_path!()).unwrap());
//! HttpServer::new(mcp).bind("127.0.0.1:8080".parse().unwrap()).await?.serve().await
//! # }
//! ```

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::middleware::{self, Next};
use axum::response::Response;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::caller::PeerAddr;
use crate::handler::Served;
use crate::server::McpServer;

mod body;
mod connections;
mod direct;
mod reply;
mod shares;

use connections::Connections;
use shares::Shares;

/// What checks a request's credentials before anything else reads it: the `oauth` feature's
/// [`ResourceServer`](crate::oauth::ResourceServer), or a host's own scheme. It runs as the
/// outermost layer of the MCP endpoint.
pub trait Authenticate: Send + Sync + 'static {
    /// The request with the caller's [`Principal`](crate::Principal) in its extensions (and its
    /// credentials removed), or the response that refuses it (401, 403). It may wait (to fetch
    /// an authorization server's keys, say).
    fn admit<'a>(
        &'a self,
        request: Request,
    ) -> tool_runtime::BoxFuture<'a, Result<Request, Box<Response>>>;

    /// Public routes to serve beside the endpoint, outside the check (the protected-resource
    /// metadata of RFC 9728, say).
    fn routes(&self) -> axum::Router {
        axum::Router::new()
    }

    /// A host name (`host` or `host:port`) requests may name besides
    /// [`HttpConfig::allowed_hosts`]: the host of the server's canonical URI.
    fn host(&self) -> Option<String> {
        None
    }
}

/// How the HTTP server behaves; [`Default`] is safe for a server on one machine.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HttpConfig {
    /// The path the MCP endpoint is served at.
    pub path: String,
    /// Host names (or `host:port`) the `Host` header may name; requests naming another are
    /// refused (DNS rebinding). Default: `localhost`, `127.0.0.1`, `::1`; with authorization,
    /// the host of the server's canonical URI too. Empty allows any host: only behind a proxy
    /// that checks it.
    pub allowed_hosts: Vec<String>,
    /// Browser origins allowed to call (`scheme://host:port`, `:*` for any port); a request
    /// whose `Origin` is not one of them gets 403. Requests without `Origin` (not from a
    /// browser) pass. Default: `http://localhost:*`, `http://127.0.0.1:*`, `http://[::1]:*`.
    pub allowed_origins: Vec<String>,
    /// Sessions open at once (2025-11-25 clients). When they are all open, a new one closes the
    /// oldest session of the caller holding the most.
    pub max_sessions: usize,
    /// Sessions one caller (a principal, else an address) may have open; its next one closes
    /// its own oldest.
    pub max_sessions_per_caller: usize,
    /// Requests one caller may have in progress at once, event streams included; beyond it, 429.
    pub requests_per_caller: usize,
    /// A session with no request for this long is closed.
    pub session_idle: Duration,
    /// A connection that has not sent a request's headers within this time is closed.
    pub header_read_timeout: Duration,
    /// Connections open at once. When all are taken, a new connection closes the oldest idle
    /// one (still sending its headers, or kept alive between requests), or else the oldest
    /// connection of the caller holding the most.
    pub max_connections: usize,
    /// The largest request body (413 beyond it).
    pub max_body_bytes: usize,
    /// The bytes of all request bodies being read or handled at once, counted as they arrive;
    /// a request whose next bytes would go beyond gets 503. The last
    /// [`max_body_bytes`](Self::max_body_bytes) of it are kept for callers holding no body
    /// bytes, so one caller's crowd cannot keep another's first body out.
    pub max_body_bytes_in_flight: usize,
    /// The bytes of one caller's request bodies being read or handled at once; its request
    /// whose next bytes would go beyond gets 429 (its own excess, never another caller's).
    pub max_body_bytes_per_caller: usize,
    /// How long a request body has before it must keep up with
    /// [`min_body_rate`](Self::min_body_rate): from then on, a sender whose bytes so far fall
    /// below that rate on average is cut (408, the connection closed), whatever length it
    /// announced.
    pub body_read_timeout: Duration,
    /// The slowest rate, in bytes per second, a body must keep up after
    /// [`body_read_timeout`](Self::body_read_timeout).
    pub min_body_rate: usize,
    /// JSON values (arrays, objects, members and items) a request may have: memory to parse a
    /// body grows with them, not with its bytes.
    pub max_json_values: usize,
    /// JSON values a request may have outside a `tools/call`'s arguments (which are read
    /// once, from their text, by the tool's decoder): what rmcp's reader parses, at about 150
    /// bytes a value, is bounded by it.
    pub max_envelope_values: usize,
    /// A request body at least this large is one of its caller's large requests, handled one
    /// at a time (from the start of its reading when its `Content-Length` says so, else from the
    /// end of it, until its response ends, waiting at most the
    /// server's [`Limits::queue_wait`](crate::Limits::queue_wait), then 429): checking and
    /// parsing a body costs CPU in proportion to its size, and a caller's crowd of large
    /// bodies at once would take the cores the other callers' requests need.
    pub large_body_bytes: usize,
    /// A request body with at least this many JSON values is handled as a large one, whatever
    /// its size: parsing costs CPU per value (a string of any length is one), so a body packed
    /// with values would otherwise escape its caller's turn (one employee's 61 KB bodies of
    /// 30,000 values, 32 at a time, took another's p50 from 1 to 14 ms, four employees' to 56
    /// ms; in a debug build, 2 KB bodies of 961 values took it to 25 ms). A tool call's usual
    /// arguments are a few dozen values.
    pub large_body_values: usize,
    /// How long a shutdown waits for requests in flight.
    pub shutdown_grace: Duration,
    /// Serve a non-loopback address without authorization. Off by default: anyone on the
    /// network could call the tools as whoever the context function makes them.
    pub allow_unauthenticated_remote: bool,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            path: "/mcp".into(),
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            allowed_origins: vec![
                "http://localhost:*".into(),
                "http://127.0.0.1:*".into(),
                "http://[::1]:*".into(),
            ],
            max_sessions: 1_000,
            max_sessions_per_caller: 16,
            requests_per_caller: 32,
            session_idle: Duration::from_secs(300),
            header_read_timeout: Duration::from_secs(10),
            max_connections: 512,
            max_body_bytes: 4 * 1024 * 1024,
            max_body_bytes_in_flight: 64 * 1024 * 1024,
            max_body_bytes_per_caller: 8 * 1024 * 1024,
            body_read_timeout: Duration::from_secs(10),
            min_body_rate: 32 * 1024,
            max_json_values: 100_000,
            max_envelope_values: 1_000,
            large_body_bytes: 64 * 1024,
            large_body_values: 100,
            shutdown_grace: Duration::from_secs(10),
            allow_unauthenticated_remote: false,
        }
    }
}

/// An MCP server on HTTP: the endpoint, the protected-resource metadata when authorization is
/// on, and the limits of [`HttpConfig`].
pub struct HttpServer {
    mcp: McpServer,
    config: HttpConfig,
    /// Cancelled when serving has stopped: ends the sessions and their event streams.
    shutdown: CancellationToken,
    auth: Option<Arc<dyn Authenticate>>,
}

/// An [`HttpServer`] bound to its address, ready to serve.
pub struct Bound {
    server: HttpServer,
    listener: TcpListener,
}

impl HttpServer {
    /// `mcp` on Streamable HTTP with the safe defaults of [`HttpConfig::default`] and no
    /// authorization (so it binds to loopback only).
    pub fn new(mcp: McpServer) -> Self {
        HttpServer {
            mcp,
            config: HttpConfig::default(),
            shutdown: CancellationToken::new(),
            auth: None,
        }
    }

    /// Replaces the whole configuration.
    pub fn with_config(mut self, config: HttpConfig) -> Self {
        self.config = config;
        self
    }

    /// Adjusts the configuration in place.
    pub fn configure(mut self, f: impl FnOnce(&mut HttpConfig)) -> Self {
        f(&mut self.config);
        self
    }

    /// Requires credentials on every request: an OAuth 2.1 resource server (the `oauth`
    /// feature's [`ResourceServer`](crate::oauth::ResourceServer)) or another [`Authenticate`].
    pub fn with_auth(mut self, auth: impl Authenticate) -> Self {
        self.auth = Some(Arc::new(auth));
        self
    }

    /// The settings it will serve with.
    pub fn config(&self) -> &HttpConfig {
        &self.config
    }

    fn authenticated(&self) -> bool {
        self.auth.is_some()
    }

    /// Binds `addr`. A non-loopback address is refused unless requests are authenticated (or
    /// [`HttpConfig::allow_unauthenticated_remote`] says otherwise).
    pub async fn bind(self, addr: SocketAddr) -> std::io::Result<Bound> {
        if !addr.ip().is_loopback()
            && !self.authenticated()
            && !self.config.allow_unauthenticated_remote
        {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!(
                    "refusing to serve {addr} without authorization: anyone who can reach it could call the tools. Add an oauth::ResourceServer (HttpServer::with_auth), bind a loopback address, or set HttpConfig::allow_unauthenticated_remote"
                ),
            ));
        }
        let listener = TcpListener::bind(addr).await?;
        Ok(Bound {
            server: self,
            listener,
        })
    }

    /// The endpoint and the metadata routes as an axum router, to mount in a host's own
    /// server. Set `TCP_NODELAY` on the connections that router serves (with `axum::serve`:
    /// `listener.tap_io(|s| { let _ = s.set_nodelay(true); })`): without it each answer on a
    /// kept-alive connection waits for the client's delayed ACK. The connection limits of
    /// [`HttpConfig`] apply only when [`Bound::serve`] accepts the connections.
    pub fn router(&self) -> axum::Router {
        let sessions = Arc::new(LocalSessionManager::default());
        let mut session_config = sessions.session_config.clone();
        session_config.keep_alive = Some(self.config.session_idle);
        let sessions = Arc::new({
            let mut m = LocalSessionManager::default();
            m.session_config = session_config;
            m
        });
        let mut allowed_hosts = self.config.allowed_hosts.clone();
        // A server with a canonical URI answers to its host name.
        if let Some(host) = self.auth.as_ref().and_then(|a| a.host())
            && !allowed_hosts.is_empty()
        {
            allowed_hosts.push(host);
        }
        let shares = Arc::new(Shares::new(
            &self.config,
            sessions.clone(),
            self.mcp.clone(),
            &allowed_hosts,
            self.shutdown.child_token(),
        ));
        let rmcp_config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(allowed_hosts)
            .with_allowed_origins(self.config.allowed_origins.clone())
            .enforce_origin_validation()
            .with_max_request_body_bytes(self.config.max_body_bytes)
            // A stateless answer that is one message goes back as plain JSON rather than an
            // event stream (rmcp falls back to the stream when the tool sends progress first).
            .with_json_response(true)
            .with_cancellation_token(self.shutdown.child_token());
        let mcp = self.mcp.clone();
        let service =
            axum::routing::any(endpoint).with_state(Arc::new(StreamableHttpService::new(
                move || Ok(Served(mcp.clone())),
                sessions.clone(),
                rmcp_config,
            )));
        // The checks are layers around the endpoint, outermost first: credentials, then each
        // caller's share and the body. The metadata routes stand outside them: they are public.
        let mut endpoint = axum::Router::new()
            .nest_service(&self.config.path, service)
            .layer(middleware::from_fn_with_state(shares, shares::admit));
        let mut router = axum::Router::new();
        if let Some(auth) = &self.auth {
            endpoint = endpoint.layer(middleware::from_fn_with_state(auth.clone(), authorize));
            router = router.merge(auth.routes());
        }
        router.merge(endpoint)
    }
}

/// rmcp's endpoint, shared. axum's router and each `from_fn` layer clone the service they wrap
/// for every request, and rmcp's clone copies its whole configuration (the allowed hosts and
/// origins, a `String` each): about 12,000 instructions per request, for eight clones. Behind
/// an `Arc` in a handler's state, a clone is a count.
type Endpoint = Arc<StreamableHttpService<Served, LocalSessionManager>>;

async fn endpoint(State(endpoint): State<Endpoint>, request: Request) -> Response {
    endpoint.handle(request).await.map(Body::new)
}

impl Bound {
    /// The address the server listens on.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves until the process ends.
    pub async fn serve(self) -> std::io::Result<()> {
        self.serve_until(std::future::pending()).await
    }

    /// Serves until `shutdown` completes; then stops accepting, lets every request in flight
    /// finish (up to [`HttpConfig::shutdown_grace`]) and returns.
    pub async fn serve_until(self, shutdown: impl Future<Output = ()>) -> std::io::Result<()> {
        let Bound { server, listener } = self;
        let router = server.router();
        let config = server.config.clone();
        let connections = Connections::new(config.max_connections);
        let stop = CancellationToken::new();
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            let (stream, peer) = tokio::select! {
                a = listener.accept() => match a {
                    Ok(a) => a,
                    // A connection that failed while being accepted (reset, out of file
                    // descriptors) is not the server's end.
                    Err(_) => {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    }
                },
                () = &mut shutdown => break,
            };
            let place = tokio::select! {
                p = connections.place() => p,
                () = &mut shutdown => break,
            };
            let _ = stream.set_nodelay(true);
            let service = router
                .clone()
                .layer(middleware::from_fn({
                    let (requests, owner) = (place.requests.clone(), place.owner.clone());
                    move |request, next| {
                        connections::track(requests.clone(), owner.clone(), request, next)
                    }
                }))
                .layer(axum::Extension(PeerAddr(peer)));
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(config.header_read_timeout)
                .keep_alive(true);
            let connection =
                builder.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service));
            let stopping = stop.clone();
            tokio::spawn(async move {
                let mut connection = std::pin::pin!(connection);
                tokio::select! {
                    _ = connection.as_mut() => {}
                    // Closed to make room for a newer connection: it was idle.
                    () = place.evicted.cancelled() => {}
                    () = stopping.cancelled() => {
                        connection.as_mut().graceful_shutdown();
                        let _ = connection.await;
                    }
                }
                drop(place);
            });
        }
        // Every connection finishes its request in flight, within the grace period; then the
        // sessions end (with them any event stream still open). Subscription streams end now.
        server.mcp.stop_listening();
        stop.cancel();
        connections.drained(config.shutdown_grace).await;
        server.shutdown.cancel();
        Ok(())
    }
}

/// The credentials layer: the request goes on with its principal, or is refused.
async fn authorize(
    State(auth): State<Arc<dyn Authenticate>>,
    request: Request,
    next: Next,
) -> Response {
    match auth.admit(request).await {
        Ok(request) => next.run(request).await,
        Err(refused) => *refused,
    }
}

/// `response` with `guard` kept alive until its body is finished or dropped: what a layer holds
/// for a request (its place on the connection, its caller's share) lasts as long as the answer.
fn holding<G: Send + Unpin + 'static>(response: Response, guard: G) -> Response {
    response.map(|inner| {
        axum::body::Body::new(Holding {
            inner,
            _guard: guard,
        })
    })
}

struct Holding<G> {
    inner: Body,
    _guard: G,
}

impl<G: Unpin> http_body::Body for Holding<G> {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}
