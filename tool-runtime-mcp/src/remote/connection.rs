//! One connection to a remote server and its lifecycle: connecting (either protocol era, over
//! stdio or HTTP), following `tools/list_changed`, reconnecting after it went away, dropping a
//! connection whose server stopped answering.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::RoleClient;
use rmcp::model::{ClientConfig, ProtocolVersion, ServerNotification, SubscriptionFilter};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, NotificationContext, Peer, RunningService,
};
use tokio::sync::watch;
use tool_runtime::ToolError;

#[cfg(feature = "client-http")]
use super::credentials::ClientCredentials;
use super::options::{RemoteError, RemoteOptions};
use super::progress::{Reports, Routed};

/// How to reach the server (again, after it went away).
pub(super) enum Connect {
    Stdio(Box<dyn Fn() -> tokio::process::Command + Send + Sync>),
    #[cfg(feature = "client-http")]
    Http {
        url: String,
        authorization: Option<String>,
        /// With client credentials: the token they got last.
        credentials: Option<(ClientCredentials, Mutex<Option<String>>)>,
    },
}

pub(super) type Link = RunningService<RoleClient, Listener>;

pub(super) struct Inner {
    pub(super) label: String,
    pub(super) connect: Connect,
    pub(super) options: RemoteOptions,
    /// The live connection and its number (one more for each connection made); `None` when
    /// it is down. Held only to look or swap, never across an `.await`.
    pub(super) link: Mutex<Option<(Link, u64)>>,
    /// Held while connecting: one attempt at a time.
    pub(super) connecting: tokio::sync::Mutex<()>,
    pub(super) opened: std::sync::atomic::AtomicU64,
    /// When connecting last failed: the next attempt waits `retry_after`.
    pub(super) failed_at: Mutex<Option<Instant>>,
    pub(super) changed: watch::Sender<u64>,
}

/// The client side of the connection: follows `notifications/tools/list_changed`.
pub(super) struct Listener {
    pub(super) changed: watch::Sender<u64>,
    /// Where this connection's progress reports go (routed by [`Routed`] as they arrive).
    pub(super) progress: Reports,
}

impl rmcp::ClientHandler for Listener {
    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        // A server may make a call a task: the call follows it (`call.rs`).
        info.capabilities = rmcp::model::ClientCapabilities::builder()
            .enable_tasks()
            .build();
        info.client_info.name = "tool-runtime".into();
        info.client_info.version = env!("CARGO_PKG_VERSION").into();
        info
    }

    async fn on_tool_list_changed(&self, _: NotificationContext<RoleClient>) {
        self.changed.send_modify(|n| *n += 1);
    }
}

/// The handshake with an HTTP server, with `authorization` as the `Authorization` header.
#[cfg(feature = "client-http")]
pub(super) async fn http_handshake(
    url: &str,
    authorization: Option<&str>,
    listener: Listener,
    lifecycle: ClientLifecycleMode,
) -> Result<Link, rmcp::service::ClientInitializeError> {
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let mut config = StreamableHttpClientTransportConfig::with_uri(url);
    if let Some(a) = authorization {
        config = config.auth_header(a.strip_prefix("Bearer ").unwrap_or(a));
    }
    let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    let transport = Routed::new(transport, &listener.progress);
    listener.serve_with_lifecycle(transport, lifecycle).await
}

/// A live connection, as a call uses it.
pub(super) struct Live {
    pub(super) peer: Peer<RoleClient>,
    /// Its number: one more for each connection made.
    pub(super) n: u64,
    pub(super) reports: Reports,
}

impl Live {
    pub(super) fn of(link: &Link, n: u64) -> Live {
        Live {
            peer: link.peer().clone(),
            n,
            reports: link.service().progress.clone(),
        }
    }
}

/// Whether a connection still carries requests (its service loop has not ended).
pub(super) fn up(link: &Link) -> bool {
    !link.is_closed() && !link.peer().is_transport_closed()
}

/// Every page of `tools/list`, stopping once more than `max` tools have come. A server is not
/// trusted to end its list: the whole listing has `within` (each page's wait included), and
/// at most `max` pages (a page of no tools that names another page counts too).
pub(super) async fn list_all(
    peer: &Peer<RoleClient>,
    max: usize,
    within: Duration,
) -> Result<Vec<rmcp::model::Tool>, Box<dyn std::error::Error + Send + Sync>> {
    let listing = async {
        let mut tools = Vec::new();
        let mut cursor = None;
        for _ in 0..=max {
            let page = peer
                .list_tools(Some(
                    rmcp::model::PaginatedRequestParams::default().with_cursor(cursor),
                ))
                .await?;
            tools.extend(page.tools);
            cursor = page.next_cursor;
            if cursor.is_none() || tools.len() > max {
                return Ok(tools);
            }
        }
        Err(format!("its list of tools goes on past {max} pages").into())
    };
    tokio::time::timeout(within, listing)
        .await
        .unwrap_or_else(|_| Err(format!("its list of tools took longer than {within:?}").into()))
}

impl Inner {
    pub(super) async fn open(&self) -> Result<Link, RemoteError> {
        let link = self.handshake().await?;
        // A 2026-07-28 server tells of changes on a `subscriptions/listen` stream; an earlier
        // one sends them to `Listener` (which sees no notification this stream takes).
        let modern = link
            .peer()
            .peer_info()
            .is_some_and(|i| !i.protocol_version.has_initialize());
        if modern {
            // Listening from before the connection is handed out: no change is missed.
            let filter = SubscriptionFilter::builder().tools_list_changed().build();
            let listening =
                tokio::time::timeout(self.options.connect_timeout, link.peer().listen(filter));
            match listening.await {
                Ok(Ok(mut stream)) => {
                    let changed = self.changed.clone();
                    tokio::spawn(async move {
                        while let Ok(Some(note)) = stream.next().await {
                            if matches!(note, ServerNotification::ToolListChangedNotification(_)) {
                                changed.send_modify(|n| *n += 1);
                            }
                        }
                    });
                }
                // A server without the subscription: its list is read again on reconnection.
                _ => tracing::debug!(server = %self.label, "no tools/list_changed subscription"),
            }
        }
        Ok(link)
    }

    /// A new connection's handler, with its own progress routes (rmcp numbers each
    /// connection's `progressToken`s from the start again).
    pub(super) fn listener(&self) -> Listener {
        Listener {
            changed: self.changed.clone(),
            progress: Reports::default(),
        }
    }

    /// Connects: `server/discover` for a 2026-07-28 server (stateless requests), else the
    /// `initialize` handshake of the earlier era.
    pub(super) async fn handshake(&self) -> Result<Link, RemoteError> {
        let listener = self.listener();
        let connect = |e: Box<dyn std::error::Error + Send + Sync>| RemoteError::Connect {
            server: self.label.clone(),
            source: e,
        };
        let lifecycle = ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
        };
        let connecting = async {
            match &self.connect {
                Connect::Stdio(command) => {
                    let transport =
                        super::stdio::spawn(command()).map_err(|e| connect(Box::new(e)))?;
                    let transport = Routed::new(transport, &listener.progress);
                    listener
                        .serve_with_lifecycle(transport, lifecycle)
                        .await
                        .map_err(|e| connect(Box::new(e)))
                }
                #[cfg(feature = "client-http")]
                Connect::Http {
                    url,
                    authorization,
                    credentials,
                } => {
                    let Some((credentials, token)) = credentials else {
                        return http_handshake(url, authorization.as_deref(), listener, lifecycle)
                            .await
                            .map_err(|e| connect(Box::new(e)));
                    };
                    let current = token.lock().unwrap_or_else(|e| e.into_inner()).clone();
                    let bearer = current.as_ref().map(|t| format!("Bearer {t}"));
                    match http_handshake(url, bearer.as_deref(), listener, lifecycle.clone()).await
                    {
                        Err(e) if e.auth_challenge().is_some() => {
                            let challenge = e.auth_challenge().unwrap_or_default().to_owned();
                            let fresh =
                                credentials
                                    .token(url, &challenge)
                                    .await
                                    .map_err(|problem| RemoteError::Credentials {
                                        server: self.label.clone(),
                                        problem,
                                    })?;
                            let bearer = format!("Bearer {fresh}");
                            *token.lock().unwrap_or_else(|e| e.into_inner()) = Some(fresh);
                            let listener = self.listener();
                            http_handshake(url, Some(&bearer), listener, lifecycle)
                                .await
                                .map_err(|e| connect(Box::new(e)))
                        }
                        other => other.map_err(|e| connect(Box::new(e))),
                    }
                }
            }
        };
        match tokio::time::timeout(self.options.connect_timeout, connecting).await {
            Ok(link) => link,
            Err(_) => Err(RemoteError::ConnectTimeout {
                server: self.label.clone(),
                after: self.options.connect_timeout,
            }),
        }
    }

    pub(super) fn link(&self) -> std::sync::MutexGuard<'_, Option<(Link, u64)>> {
        self.link.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The live connection's peer, number and progress routes, if it is up.
    pub(super) fn live(&self) -> Option<Live> {
        match self.link().as_ref() {
            Some((l, n)) if up(l) => Some(Live::of(l, *n)),
            _ => None,
        }
    }

    /// The live connection's peer and number, reconnecting when it is down (one attempt at a
    /// time, at most once per `retry_after`).
    pub(super) async fn peer(&self) -> Result<Live, ToolError> {
        if let Some(live) = self.live() {
            return Ok(live);
        }
        let _one = self.connecting.lock().await;
        // Another call may have connected while this one waited.
        if let Some(live) = self.live() {
            return Ok(live);
        }
        let unreachable = |why: &str| {
            ToolError::failed(format!(
                "the MCP server `{}` is unreachable: {why}",
                self.label
            ))
        };
        let waited = self
            .failed_at
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_none_or(|at| at.elapsed() >= self.options.retry_after);
        if !waited {
            return Err(unreachable("it failed a moment ago; try again shortly"));
        }
        match self.open().await {
            Ok(l) => {
                let n = self
                    .opened
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                    + 1;
                let live = Live::of(&l, n);
                // The old connection (if any) is dropped outside the lock's scope below.
                let old = self.link().replace((l, n));
                drop(old);
                *self.failed_at.lock().unwrap_or_else(|e| e.into_inner()) = None;
                tracing::info!(server = %self.label, "reconnected to the MCP server");
                // Its tools may have changed while it was away.
                self.changed.send_modify(|n| *n += 1);
                Ok(live)
            }
            Err(e) => {
                let old = self.link().take();
                drop(old);
                *self.failed_at.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
                // The model reads the first line; the causes go to the log.
                tracing::warn!(server = %self.label, error = %report(&e), "cannot connect");
                Err(unreachable(&e.to_string()))
            }
        }
    }

    /// Drops connection `n` (if it is still the live one): the next call connects again.
    pub(super) fn forget(&self, n: u64) {
        let mut link = self.link();
        if link.as_ref().is_some_and(|(_, live)| *live == n) {
            tracing::info!(server = %self.label, "the connection to the MCP server is lost");
            let old = link.take();
            drop(link);
            drop(old);
        }
    }

    /// After a call ran out of time: whether the server still answers on this connection (a
    /// server that restarted has forgotten its session, and answers nothing a request waits
    /// for). One that does not is dropped. Any answer counts, an error too: a server of the
    /// 2026-07-28 revision, which removed `ping`, answers it "method not found", and dropping
    /// its connection then would also lose what the call left to send (a `tasks/cancel`).
    pub(super) async fn probe(self: Arc<Self>, peer: Peer<RoleClient>, n: u64) {
        let ping = rmcp::model::ClientRequest::PingRequest(Default::default());
        let answered = tokio::time::timeout(PROBE_TIMEOUT, peer.send_request(ping)).await;
        if !matches!(answered, Ok(Ok(_) | Err(rmcp::ServiceError::McpError(_)))) {
            self.forget(n);
        }
    }
}

/// How long a server has to answer the ping after a call ran out of time.
pub(super) const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// An error and its causes on one line, for the log: `what: why: ...`.
fn report(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(&format!(": {c}"));
        cause = c.source();
    }
    text
}
