//! Tools of another MCP server, imported as tools of a [`ToolSet`](tool_runtime::ToolSet) (on
//! rmcp's client): every rule of the toolkit applies to them as to its own.
//!
//! - Arguments are validated here, against the remote's `inputSchema`, before anything is sent:
//!   a bad call never reaches the remote, and the model gets the toolkit's repair message.
//! - A remote `inputSchema` or `outputSchema` the validator cannot enforce exactly, a tool
//!   without a description, a duplicate name: that tool is refused at import, with the reason
//!   ([`Imported::refused`]); the others are imported.
//! - Results are checked against the remote's `outputSchema`; an `isError` result is a
//!   [`ToolError::Failed`] with the remote's text.
//! - A remote tool that does not say it is read-only (`readOnlyHint: true`) needs a person's
//!   approval by default, as MCP's defaults make it possibly destructive
//!   ([`RemoteOptions::approval`] changes that per tool).
//! - The host grants permissions per server and per tool ([`RemoteOptions::requires`],
//!   [`RemoteOptions::tool_requires`]); names can be prefixed per server.
//! - A call has a time limit; when it ends (or the call is dropped) the remote is sent
//!   `notifications/cancelled`. A caller that follows a call's progress (a
//!   [`Progress`] in its context: an MCP request with a
//!   `progressToken`, a streamed agent run) gets the remote's progress reports. A server that went away makes its tools answer a clear error,
//!   and the next call after a pause reconnects.
//! - `notifications/tools/list_changed` is followed (on a `subscriptions/listen` stream with a
//!   2026-07-28 server): [`Remote::changed`] ticks, and [`Remote::tools`] lists again.
//! - Both protocol eras: `server/discover` and stateless requests with a server that has
//!   2026-07-28, the `initialize` handshake and a session with an earlier one.
//! - The caller's identity is never forwarded: the remote sees only the credentials the host
//!   gave this connection.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::RoleClient;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientConfig, ClientRequest, ContentBlock,
    ProgressNotificationParam, ProgressToken, ProtocolVersion, ServerNotification, ServerResult,
    SubscriptionFilter,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, NotificationContext, Peer, PeerRequestOptions,
    RunningService,
};
use serde_json::{Map, Value};
use tokio::sync::watch;
use tool_runtime::{
    Annotations, BoxFuture, Context, DefineError, Handler, Progress, Tool, ToolError,
};

/// How the host imports one server's tools: names, permissions, approval, limits. Set the
/// fields it needs and take the rest from `..RemoteOptions::default()`.
#[derive(Clone, Debug)]
pub struct RemoteOptions {
    /// Put before every imported name as `{prefix}_{name}`, so two servers' tools cannot
    /// collide (and a name tells the model which server it belongs to).
    pub prefix: Option<String>,
    /// Permissions a caller needs for every tool of this server.
    pub requires: Vec<String>,
    /// Permissions a caller needs for one tool, by its remote name, on top of `requires`.
    pub tool_requires: HashMap<String, Vec<String>>,
    /// Whether a tool, by its remote name, needs approval, whatever its annotations say.
    pub approval: HashMap<String, bool>,
    /// How long one call may take (the server's own limit may be shorter).
    pub call_timeout: Duration,
    /// How long connecting (and the handshake) may take.
    pub connect_timeout: Duration,
    /// The most tools one server may list; a server that lists more is refused.
    pub max_tools: usize,
    /// How long after a failed connection the next call waits before trying again.
    pub retry_after: Duration,
}

impl Default for RemoteOptions {
    fn default() -> Self {
        RemoteOptions {
            prefix: None,
            requires: Vec::new(),
            tool_requires: HashMap::new(),
            approval: HashMap::new(),
            call_timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(10),
            max_tools: 1_000,
            retry_after: Duration::from_secs(1),
        }
    }
}

impl RemoteOptions {
    /// Options with this name prefix.
    pub fn prefixed(prefix: impl Into<String>) -> Self {
        RemoteOptions {
            prefix: Some(prefix.into()),
            ..RemoteOptions::default()
        }
    }
}

/// Why a remote server's tools could not be listed.
#[derive(Debug)]
#[non_exhaustive]
pub enum RemoteError {
    /// The server could not be reached, or the handshake failed.
    Connect(String),
    /// `tools/list` failed.
    List(String),
    /// The server listed more tools than [`RemoteOptions::max_tools`].
    TooManyTools {
        /// How many it listed.
        listed: usize,
        /// The limit.
        max: usize,
    },
}

impl fmt::Display for RemoteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RemoteError::Connect(e) => write!(f, "cannot connect to the MCP server: {e}"),
            RemoteError::List(e) => write!(f, "the MCP server's tools/list failed: {e}"),
            RemoteError::TooManyTools { listed, max } => write!(
                f,
                "the MCP server lists {listed} tools, more than the {max} allowed (RemoteOptions::max_tools)"
            ),
        }
    }
}

impl std::error::Error for RemoteError {}

/// An OAuth client registered with the authorization server a remote server trusts (see
/// [`Remote::http_client_credentials`]).
#[cfg(feature = "client-http")]
#[derive(Clone)]
pub struct ClientCredentials {
    /// The client's id.
    pub client_id: String,
    /// The client's secret.
    pub client_secret: String,
    /// The scopes to ask for, space-separated (the server's `scopes_supported` otherwise).
    pub scope: Option<String>,
}

#[cfg(feature = "client-http")]
impl fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("client_id", &self.client_id)
            .field("client_secret", &"…")
            .field("scope", &self.scope)
            .finish()
    }
}

#[cfg(feature = "client-http")]
impl ClientCredentials {
    /// An access token for the server at `url`, which challenged with `challenge`: its
    /// protected-resource metadata (RFC 9728) names the resource and its authorization server,
    /// whose metadata (RFC 8414) names the token endpoint.
    async fn token(&self, url: &str, challenge: &str) -> Result<String, String> {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| e.to_string())?;
        let metadata_url = challenge
            .split("resource_metadata=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .map(str::to_owned)
            .unwrap_or_else(|| crate::uri::well_known(url, "oauth-protected-resource"));
        let resource = get_json(&client, &metadata_url).await?;
        let issuer = resource["authorization_servers"][0]
            .as_str()
            .ok_or_else(|| format!("{metadata_url} names no authorization server"))?;
        let server_metadata = get_json(
            &client,
            &crate::uri::well_known(issuer, "oauth-authorization-server"),
        )
        .await?;
        let token_endpoint = server_metadata["token_endpoint"]
            .as_str()
            .ok_or_else(|| format!("the authorization server {issuer} names no token_endpoint"))?;
        let mut form = vec![("grant_type", "client_credentials".to_owned())];
        if let Some(r) = resource["resource"].as_str() {
            form.push(("resource", r.to_owned()));
        }
        let scope = self.scope.clone().or_else(|| {
            resource["scopes_supported"].as_array().map(|s| {
                s.iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
        });
        if let Some(scope) = scope.filter(|s| !s.is_empty()) {
            form.push(("scope", scope));
        }
        let answer = client
            .post(token_endpoint)
            .basic_auth(&self.client_id, Some(&self.client_secret))
            .form(&form)
            .send()
            .await
            .map_err(|e| format!("token endpoint {token_endpoint}: {e}"))?;
        let status = answer.status();
        let body: Value = answer
            .json()
            .await
            .map_err(|e| format!("token endpoint {token_endpoint}: {e}"))?;
        if !status.is_success() {
            return Err(format!(
                "the authorization server refused the client credentials ({status}): {}",
                body["error_description"]
                    .as_str()
                    .or(body["error"].as_str())
                    .unwrap_or("")
            ));
        }
        body["access_token"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| format!("token endpoint {token_endpoint} gave no access_token"))
    }
}

/// A JSON document (at most 1 MiB).
#[cfg(feature = "client-http")]
async fn get_json(client: &reqwest::Client, url: &str) -> Result<Value, String> {
    let response = client
        .get(url)
        .send()
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    if !response.status().is_success() {
        return Err(format!("{url}: HTTP {}", response.status()));
    }
    if response.content_length().is_some_and(|n| n > 1 << 20) {
        return Err(format!("{url}: larger than 1 MiB"));
    }
    let bytes = response.bytes().await.map_err(|e| format!("{url}: {e}"))?;
    if bytes.len() > 1 << 20 {
        return Err(format!("{url}: larger than 1 MiB"));
    }
    serde_json::from_slice(&bytes).map_err(|e| format!("{url}: not JSON: {e}"))
}

/// What [`Remote::tools`] imported: the tools, and each tool refused with the reason.
#[derive(Debug)]
pub struct Imported {
    /// The remote's tools as the toolkit's, in the server's order.
    pub tools: Vec<Tool>,
    /// The tools that were not imported, and why.
    pub refused: Vec<DefineError>,
}

/// How to reach the server (again, after it went away).
enum Connect {
    Stdio(Box<dyn Fn() -> tokio::process::Command + Send + Sync>),
    #[cfg(feature = "client-http")]
    Http {
        url: String,
        authorization: Option<String>,
        /// With client credentials: the token they got last.
        credentials: Option<(ClientCredentials, Mutex<Option<String>>)>,
    },
}

type Link = RunningService<RoleClient, Listener>;

struct Inner {
    label: String,
    connect: Connect,
    options: RemoteOptions,
    /// The live connection and its number (one more for each connection made); `None` when
    /// it is down. Held only to look or swap, never across an `.await`.
    link: Mutex<Option<(Link, u64)>>,
    /// Held while connecting: one attempt at a time.
    connecting: tokio::sync::Mutex<()>,
    opened: std::sync::atomic::AtomicU64,
    /// When connecting last failed: the next attempt waits `retry_after`.
    failed_at: Mutex<Option<Instant>>,
    changed: watch::Sender<u64>,
}

/// One remote MCP server, connected: list its tools as the toolkit's with [`Remote::tools`].
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use tool_runtime::ToolSet;
/// use tool_runtime_mcp::remote::{Remote, RemoteOptions};
///
/// let hr = Remote::stdio("hr", || tokio::process::Command::new("hr-mcp"), RemoteOptions::prefixed("hr"))
///     .await?;
/// let imported = hr.tools().await?;
/// for refused in &imported.refused {
///     eprintln!("not imported: {refused}");
/// }
/// let tools = ToolSet::new(imported.tools)?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Remote {
    inner: Arc<Inner>,
}

impl fmt::Debug for Remote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Remote")
            .field("label", &self.inner.label)
            .finish_non_exhaustive()
    }
}

/// The client side of the connection: follows `notifications/tools/list_changed`.
struct Listener {
    changed: watch::Sender<u64>,
    /// Where this connection's progress reports go (routed by [`Routed`] as they arrive).
    progress: Reports,
}

impl rmcp::ClientHandler for Listener {
    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.client_info.name = "tool-runtime".into();
        info.client_info.version = env!("CARGO_PKG_VERSION").into();
        info
    }

    async fn on_tool_list_changed(&self, _: NotificationContext<RoleClient>) {
        self.changed.send_modify(|n| *n += 1);
    }
}

impl Remote {
    /// A server started as a child process (`command` is called again to restart it after it
    /// went away), spoken to over its stdin and stdout; its stderr is this process's. `label`
    /// names it in errors and logs.
    pub async fn stdio(
        label: impl Into<String>,
        command: impl Fn() -> tokio::process::Command + Send + Sync + 'static,
        options: RemoteOptions,
    ) -> Result<Remote, RemoteError> {
        Remote::start(label.into(), Connect::Stdio(Box::new(command)), options).await
    }

    /// A server over MCP's Streamable HTTP at `url`, with `authorization` sent as the
    /// `Authorization` header's value (`"Bearer …"`) when given: the host's credentials for
    /// this server, never a caller's.
    #[cfg(feature = "client-http")]
    pub async fn http(
        label: impl Into<String>,
        url: impl Into<String>,
        authorization: Option<String>,
        options: RemoteOptions,
    ) -> Result<Remote, RemoteError> {
        let connect = Connect::Http {
            url: url.into(),
            authorization,
            credentials: None,
        };
        Remote::start(label.into(), connect, options).await
    }

    /// A server over Streamable HTTP that asks for an OAuth access token (a 401 with
    /// `WWW-Authenticate: Bearer resource_metadata=…`): the token comes from the authorization
    /// server its metadata names, with the client-credentials grant (RFC 6749 §4.4, the client
    /// authenticated with HTTP Basic, `resource` per RFC 8707); it is asked for again when the
    /// server refuses it (expired).
    #[cfg(feature = "client-http")]
    pub async fn http_client_credentials(
        label: impl Into<String>,
        url: impl Into<String>,
        credentials: ClientCredentials,
        options: RemoteOptions,
    ) -> Result<Remote, RemoteError> {
        let connect = Connect::Http {
            url: url.into(),
            authorization: None,
            credentials: Some((credentials, Mutex::new(None))),
        };
        Remote::start(label.into(), connect, options).await
    }

    async fn start(
        label: String,
        connect: Connect,
        options: RemoteOptions,
    ) -> Result<Remote, RemoteError> {
        let inner = Arc::new(Inner {
            label,
            connect,
            options,
            link: Mutex::new(None),
            connecting: tokio::sync::Mutex::new(()),
            opened: std::sync::atomic::AtomicU64::new(0),
            failed_at: Mutex::new(None),
            changed: watch::Sender::new(0),
        });
        let link = inner.open().await?;
        *inner.link() = Some((link, 0));
        Ok(Remote { inner })
    }

    /// The label given when connecting.
    pub fn label(&self) -> &str {
        &self.inner.label
    }

    /// Ticks each time the server says its tool list changed: list again with
    /// [`Remote::tools`] and give the new set to the server or agent that uses it.
    pub fn changed(&self) -> watch::Receiver<u64> {
        self.inner.changed.subscribe()
    }

    /// The protocol version the connection speaks (`2026-07-28` when the server has it, else
    /// what the `initialize` handshake agreed); `None` while it is down.
    pub async fn protocol_version(&self) -> Option<String> {
        let link = self.inner.link();
        let (l, _) = link.as_ref()?;
        Some(l.peer().peer_info()?.protocol_version.to_string())
    }

    /// Whether the connection is up right now (a call reconnects when it is not).
    pub async fn is_connected(&self) -> bool {
        self.inner.link().as_ref().is_some_and(|(l, _)| up(l))
    }

    /// Lists the server's tools (every page) and makes each one a tool of the toolkit.
    pub async fn tools(&self) -> Result<Imported, RemoteError> {
        let Live { peer, .. } = self
            .inner
            .peer()
            .await
            .map_err(|e| RemoteError::Connect(e.to_string()))?;
        let max = self.inner.options.max_tools;
        let listed = list_all(&peer, max)
            .await
            .map_err(|e| RemoteError::List(e.to_string()))?;
        if listed.len() > max {
            return Err(RemoteError::TooManyTools {
                listed: listed.len(),
                max,
            });
        }
        let mut count: BTreeMap<&str, usize> = BTreeMap::new();
        for t in &listed {
            *count.entry(&t.name).or_default() += 1;
        }
        let mut imported = Imported {
            tools: Vec::new(),
            refused: Vec::new(),
        };
        for t in &listed {
            if count[&*t.name] > 1 {
                imported.refused.push(DefineError {
                    tool: t.name.to_string(),
                    problems: vec![tool_runtime::DefineProblem::Name(format!(
                        "the server lists {} tools of this name; none of them is imported",
                        count[&*t.name]
                    ))],
                });
                continue;
            }
            match self.import(t) {
                Ok(tool) => imported.tools.push(tool),
                Err(e) => imported.refused.push(e),
            }
        }
        Ok(imported)
    }

    fn import(&self, t: &rmcp::model::Tool) -> Result<Tool, DefineError> {
        let options = &self.inner.options;
        let name = match &options.prefix {
            Some(p) => format!("{p}_{}", t.name),
            None => t.name.to_string(),
        };
        let hints = t.annotations.clone().unwrap_or_default();
        let read_only = hints.read_only_hint == Some(true);
        let needs_approval = options
            .approval
            .get(&*t.name)
            .copied()
            .unwrap_or(!read_only);
        let mut requires = options.requires.clone();
        requires.extend(
            options
                .tool_requires
                .get(&*t.name)
                .into_iter()
                .flatten()
                .cloned(),
        );
        let mut def = Tool::define(
            name,
            t.description.as_deref().unwrap_or(""),
            Value::Object((*t.input_schema).clone()),
        )
        .requires(requires)
        .needs_approval(needs_approval)
        .timeout(options.call_timeout)
        .annotations(Annotations {
            title: t.title.clone().or(hints.title).map(Into::into),
            read_only: hints.read_only_hint,
            destructive: hints.destructive_hint,
            idempotent: hints.idempotent_hint,
            open_world: hints.open_world_hint,
        });
        if let Some(output) = &t.output_schema {
            def = def.output_schema(Value::Object((**output).clone()));
        }
        def.build(RemoteTool {
            remote: self.inner.clone(),
            name: t.name.to_string(),
        })
    }
}

/// The handshake with an HTTP server, with `authorization` as the `Authorization` header.
#[cfg(feature = "client-http")]
async fn http_handshake(
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
struct Live {
    peer: Peer<RoleClient>,
    /// Its number: one more for each connection made.
    n: u64,
    reports: Reports,
}

impl Live {
    fn of(link: &Link, n: u64) -> Live {
        Live {
            peer: link.peer().clone(),
            n,
            reports: link.service().progress.clone(),
        }
    }
}

/// Whether a connection still carries requests (its service loop has not ended).
fn up(link: &Link) -> bool {
    !link.is_closed() && !link.peer().is_transport_closed()
}

/// Every page of `tools/list`, stopping once more than `max` tools have come.
async fn list_all(
    peer: &Peer<RoleClient>,
    max: usize,
) -> Result<Vec<rmcp::model::Tool>, rmcp::ServiceError> {
    let mut tools = Vec::new();
    let mut cursor = None;
    loop {
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
}

impl Inner {
    async fn open(&self) -> Result<Link, RemoteError> {
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
    fn listener(&self) -> Listener {
        Listener {
            changed: self.changed.clone(),
            progress: Reports::default(),
        }
    }

    /// Connects: `server/discover` for a 2026-07-28 server (stateless requests), else the
    /// `initialize` handshake of the earlier era.
    async fn handshake(&self) -> Result<Link, RemoteError> {
        let listener = self.listener();
        let lifecycle = ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
        };
        let connecting = async {
            match &self.connect {
                Connect::Stdio(command) => {
                    let transport = rmcp::transport::TokioChildProcess::new(command())
                        .map_err(|e| RemoteError::Connect(e.to_string()))?;
                    let transport = Routed::new(transport, &listener.progress);
                    listener
                        .serve_with_lifecycle(transport, lifecycle)
                        .await
                        .map_err(|e| RemoteError::Connect(e.to_string()))
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
                            .map_err(|e| RemoteError::Connect(e.to_string()));
                    };
                    let current = token.lock().unwrap_or_else(|e| e.into_inner()).clone();
                    let bearer = current.as_ref().map(|t| format!("Bearer {t}"));
                    match http_handshake(url, bearer.as_deref(), listener, lifecycle.clone()).await
                    {
                        Err(e) if e.auth_challenge().is_some() => {
                            let challenge = e.auth_challenge().unwrap_or_default().to_owned();
                            let fresh = credentials
                                .token(url, &challenge)
                                .await
                                .map_err(RemoteError::Connect)?;
                            let bearer = format!("Bearer {fresh}");
                            *token.lock().unwrap_or_else(|e| e.into_inner()) = Some(fresh);
                            let listener = self.listener();
                            http_handshake(url, Some(&bearer), listener, lifecycle)
                                .await
                                .map_err(|e| RemoteError::Connect(e.to_string()))
                        }
                        other => other.map_err(|e| RemoteError::Connect(e.to_string())),
                    }
                }
            }
        };
        match tokio::time::timeout(self.options.connect_timeout, connecting).await {
            Ok(link) => link,
            Err(_) => Err(RemoteError::Connect(format!(
                "no answer within {:?}",
                self.options.connect_timeout
            ))),
        }
    }

    fn link(&self) -> std::sync::MutexGuard<'_, Option<(Link, u64)>> {
        self.link.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The live connection's peer, number and progress routes, if it is up.
    fn live(&self) -> Option<Live> {
        match self.link().as_ref() {
            Some((l, n)) if up(l) => Some(Live::of(l, *n)),
            _ => None,
        }
    }

    /// The live connection's peer and number, reconnecting when it is down (one attempt at a
    /// time, at most once per `retry_after`).
    async fn peer(&self) -> Result<Live, ToolError> {
        if let Some(live) = self.live() {
            return Ok(live);
        }
        let _one = self.connecting.lock().await;
        // Another call may have connected while this one waited.
        if let Some(live) = self.live() {
            return Ok(live);
        }
        let unreachable = |why: &str| ToolError::Failed {
            message: format!("the MCP server `{}` is unreachable: {why}", self.label),
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
                Err(unreachable(&e.to_string()))
            }
        }
    }

    /// Drops connection `n` (if it is still the live one): the next call connects again.
    fn forget(&self, n: u64) {
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
    /// for). One that does not is dropped.
    async fn probe(self: Arc<Self>, peer: Peer<RoleClient>, n: u64) {
        let ping = rmcp::model::ClientRequest::PingRequest(Default::default());
        let answered = tokio::time::timeout(PROBE_TIMEOUT, peer.send_request(ping)).await;
        if !matches!(answered, Ok(Ok(_))) {
            self.forget(n);
        }
    }
}

/// How long a server has to answer the ping after a call ran out of time.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// One remote tool: a call is sent to the server under its remote name.
struct RemoteTool {
    remote: Arc<Inner>,
    name: String,
}

impl Handler for RemoteTool {
    fn call<'a>(
        &'a self,
        cx: &'a Context,
        arguments: Value,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(async move {
            let Live {
                peer,
                n: connection,
                reports,
            } = self.remote.peer().await?;
            let arguments = match arguments {
                Value::Object(map) => map,
                _ => Map::new(),
            };
            let params = CallToolRequestParams::new(self.name.clone()).with_arguments(arguments);
            let timeout = self.remote.options.call_timeout;
            // Dropping the request (the time limit, or the caller's call dropped) sends
            // `notifications/cancelled` to the server.
            let call = call_tool(&peer, params, cx.get::<Progress>(), &reports);
            let result = match tokio::time::timeout(timeout, call).await {
                Err(_) => {
                    tokio::spawn(self.remote.clone().probe(peer, connection));
                    return Err(ToolError::TimedOut {
                        seconds: timeout.as_secs_f64(),
                    });
                }
                Ok(Err(
                    rmcp::ServiceError::TransportSend(_) | rmcp::ServiceError::TransportClosed,
                )) => {
                    self.remote.forget(connection);
                    return Err(ToolError::Failed {
                        message: format!(
                            "the connection to the MCP server `{}` was lost during the call (the \
                             server went away, or its answer was larger than the transport's \
                             16 MiB limit); the next call connects again",
                            self.remote.label
                        ),
                    });
                }
                Ok(Err(e)) => {
                    return Err(ToolError::Failed {
                        message: format!(
                            "the MCP server `{}` failed the call: {e}",
                            self.remote.label
                        ),
                    });
                }
                Ok(Ok(result)) => result,
            };
            answer(result)
        })
    }
}

/// Sends a `tools/call` and waits for its result, passing the server's progress reports on
/// to `progress` meanwhile (rmcp gives every request a `progressToken`). Dropped before the
/// answer, it tells the server the call was cancelled.
async fn call_tool(
    peer: &Peer<RoleClient>,
    params: CallToolRequestParams,
    progress: Option<&Progress>,
    reports: &Reports,
) -> Result<CallToolResult, rmcp::ServiceError> {
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = peer
        .send_request_with_option(request, PeerRequestOptions::no_options())
        .await?;
    // Every call is registered, so reports of a call no one follows are dropped at once.
    let _following = reports.follow(handle.progress_token.clone(), progress.cloned());
    let mut abandoned = Abandoned::new(peer, handle.id.clone());
    let answer = handle.await_response().await;
    abandoned.answered();
    match answer? {
        ServerResult::CallToolResult(result) => Ok(result),
        // A result with nothing but `_meta`, or none at all: a call without content.
        ServerResult::EmptyResult(_) => Ok(CallToolResult::success(Vec::new())),
        ServerResult::CustomResult(custom) => {
            serde_json::from_value(custom.0).map_err(|_| rmcp::ServiceError::UnexpectedResponse)
        }
        _ => Err(rmcp::ServiceError::UnexpectedResponse),
    }
}

/// A request dropped before its answer: the server is told it was cancelled (on the runtime
/// the request was sent from, wherever the drop happens).
struct Abandoned(
    Option<(
        Peer<RoleClient>,
        rmcp::model::RequestId,
        tokio::runtime::Handle,
    )>,
);

impl Abandoned {
    fn new(peer: &Peer<RoleClient>, id: rmcp::model::RequestId) -> Self {
        Abandoned(
            tokio::runtime::Handle::try_current()
                .ok()
                .map(|runtime| (peer.clone(), id, runtime)),
        )
    }

    fn answered(&mut self) {
        self.0 = None;
    }
}

impl Drop for Abandoned {
    fn drop(&mut self) {
        let Some((peer, id, runtime)) = self.0.take() else {
            return;
        };
        let cancelled = CancelledNotification::new(CancelledNotificationParam::new(
            Some(id),
            Some("the caller dropped the call".into()),
        ));
        runtime.spawn(async move { peer.send_notification(cancelled.into()).await });
    }
}

/// The progress reports of one connection's calls, passed on to the callers that follow
/// them, in the order the server sent them: [`Routed`] routes each as the transport receives
/// it, before the call's answer (which comes after it) reaches the call. A report can come
/// before its call is registered (the request goes out before its token is known here): the
/// last [`EARLY_REPORTS`] reports of tokens not registered yet wait for it.
#[derive(Clone, Default)]
struct Reports(Arc<Mutex<Routes>>);

#[derive(Default)]
struct Routes {
    /// The calls in flight: where their reports go (`None`: no one follows it).
    calls: HashMap<ProgressToken, Option<Progress>>,
    early: std::collections::VecDeque<ProgressNotificationParam>,
}

/// Reports kept for calls not registered yet.
const EARLY_REPORTS: usize = 64;

impl Reports {
    fn routes(&self) -> std::sync::MutexGuard<'_, Routes> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Passes a report on to its call's caller, or keeps it until the call is registered.
    fn route(&self, report: ProgressNotificationParam) {
        let mut routes = self.routes();
        let progress = match routes.calls.get(&report.progress_token) {
            Some(Some(progress)) => progress.clone(),
            Some(None) => return,
            None => {
                if routes.early.len() == EARLY_REPORTS {
                    routes.early.pop_front();
                }
                routes.early.push_back(report);
                return;
            }
        };
        drop(routes);
        pass_on(&progress, &report);
    }

    /// Registers the call of `token`: its reports go to `progress` (those already come first)
    /// until the returned guard is dropped.
    fn follow(&self, token: ProgressToken, progress: Option<Progress>) -> Following {
        let mut routes = self.routes();
        let mut early = Vec::new();
        routes.early.retain(|r| {
            let mine = r.progress_token == token;
            if mine {
                early.push(r.clone());
            }
            !mine
        });
        routes.calls.insert(token.clone(), progress.clone());
        drop(routes);
        if let Some(progress) = &progress {
            for report in &early {
                pass_on(progress, report);
            }
        }
        Following {
            reports: self.clone(),
            token,
        }
    }
}

fn pass_on(progress: &Progress, report: &ProgressNotificationParam) {
    progress.report(report.progress, report.total, report.message.as_deref());
}

/// A call in flight; its token is forgotten once dropped.
struct Following {
    reports: Reports,
    token: ProgressToken,
}

impl Drop for Following {
    fn drop(&mut self) {
        self.reports.routes().calls.remove(&self.token);
    }
}

/// A client transport that routes the server's progress reports as it receives them, in the
/// server's order (rmcp hands each notification to a task of its own, which may run after
/// the answer that followed it on the wire).
struct Routed<T> {
    inner: T,
    reports: Reports,
}

impl<T> Routed<T> {
    fn new(inner: T, reports: &Reports) -> Self {
        Routed {
            inner,
            reports: reports.clone(),
        }
    }
}

impl<T: rmcp::transport::Transport<RoleClient>> rmcp::transport::Transport<RoleClient>
    for Routed<T>
{
    type Error = T::Error;

    fn send(
        &mut self,
        item: rmcp::service::TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<rmcp::service::RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
        if let rmcp::model::JsonRpcMessage::Notification(n) = &message
            && let ServerNotification::ProgressNotification(p) = &n.notification
        {
            self.reports.route(p.params.clone());
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// A remote result as the tool's value: its structured content, else its text (one block) or
/// its content blocks; an `isError` result is a tool error carrying its text.
fn answer(result: CallToolResult) -> Result<Value, ToolError> {
    let text = || {
        result
            .content
            .iter()
            .filter_map(|c| match c {
                ContentBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    if result.is_error == Some(true) {
        return Err(ToolError::Failed { message: text() });
    }
    if let Some(structured) = result.structured_content {
        return Ok(structured);
    }
    match result.content.as_slice() {
        [ContentBlock::Text(t)] => Ok(Value::String(t.text.clone())),
        blocks => serde_json::to_value(blocks).map_err(|e| ToolError::Failed {
            message: format!("the MCP server's content could not be read: {e}"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(token: i64, progress: f64) -> ProgressNotificationParam {
        ProgressNotificationParam::new(
            ProgressToken(rmcp::model::NumberOrString::Number(token)),
            progress,
        )
    }

    #[test]
    fn a_report_that_comes_before_its_call_is_followed_is_passed_on_first() {
        let reports = Reports::default();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let progress = Progress::new(move |r| sink.lock().unwrap().push(r.progress));
        reports.route(report(7, 1.0));
        reports.route(report(8, 5.0)); // another call's
        let following = reports.follow(report(7, 0.0).progress_token, Some(progress));
        reports.route(report(7, 2.0));
        drop(following);
        reports.route(report(7, 3.0)); // no longer followed
        assert_eq!(*seen.lock().unwrap(), [1.0, 2.0]);
        assert_eq!(reports.routes().early.len(), 2, "8's and the late one wait");
        // A call no one follows: its reports are dropped, not kept.
        let _unfollowed = reports.follow(report(9, 0.0).progress_token, None);
        reports.route(report(9, 1.0));
        assert_eq!(reports.routes().early.len(), 2);
        for n in 0..100 {
            reports.route(report(100 + n, 1.0));
        }
        assert_eq!(reports.routes().early.len(), EARLY_REPORTS);
    }
}
