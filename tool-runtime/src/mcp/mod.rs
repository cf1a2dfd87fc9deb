//! Serve a tool set over MCP with the official Rust SDK (`rmcp`), behind the `mcp` feature
//! (stdio) and `mcp-http` (Streamable HTTP, [`http`]).
//!
//! `tools/list` shows the tools the caller may see (their MCP export: description with the
//! boundary sentence, `inputSchema`, `outputSchema`, annotations), page by page; `tools/call`
//! validates the arguments and answers with `structuredContent` plus the same JSON as text (or the
//! tool's `to_model` summary). Invalid arguments, tool failures and panics come back as
//! `isError: true` results with the message the model can act on (a protocol error would hide it
//! from the model); an unknown tool is a JSON-RPC error.
//!
//! Who is calling comes from the request, never from the arguments: each request's [`Context`]
//! is made by the host's function from the [`Caller`] (the authenticated principal and the HTTP
//! request on HTTP; nothing on stdio, where the process is started for one user).
//!
//! Work is bounded: at most [`Limits::concurrent_calls`] calls run at once, and
//! [`Limits::calls_per_caller`] for one caller; a call that outlives its time limit is stopped
//! with an error result; a cancelled request's tool is dropped; sync tools run on threads where
//! blocking is allowed, never on the async workers.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! use tool_runtime::{Context, Grants, ToolSet, mcp::McpServer};
//! let tools = ToolSet::all()?;
//! McpServer::new(tools)
//!     .with_context(|_caller| async { Ok(Context::new().with(Grants::new(["hr.cuti.baca"]))) })
//!     .serve_stdio()
//!     .await?;
//! # Ok(()) }
//! ```

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

mod approval;
#[cfg(feature = "mcp-http")]
pub mod http;
#[cfg(feature = "oauth")]
pub mod oauth;
mod stdio;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode, ErrorData,
    Implementation, InitializeResult, ListToolsResult, PaginatedRequestParams, RequestStateCodec,
    RequestStateError, ServerCapabilities, ServerConfig, SubscriptionFilter,
};
use rmcp::service::{Peer, RequestContext, SubscriptionContext};
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};

use crate::approvals::{ApprovalStore, MemoryApprovals};

use crate::host::Content;
use crate::tool::BoxFuture;
use crate::{Api, CallOutput, Context, Tool, ToolError, ToolSet};

/// Who is calling, as the transport knows it: what a host makes a call's [`Context`] from.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct Caller {
    /// The principal an access token named, when the HTTP server checks tokens.
    pub principal: Option<Principal>,
    /// On HTTP: the request's method, URI, headers and extensions.
    #[cfg(feature = "mcp-http")]
    pub http: Option<::http::request::Parts>,
    /// On HTTP: the address of the connection's peer.
    pub peer: Option<SocketAddr>,
}

impl Caller {
    /// What limits a caller's share of the server: the principal's subject, else the peer's
    /// address, else one shared key (stdio: the process serves one user).
    fn key(&self) -> String {
        match (&self.principal, &self.peer) {
            (Some(p), _) => format!("sub:{}", p.subject),
            (None, Some(addr)) => format!("ip:{}", addr.ip()),
            (None, None) => "local".into(),
        }
    }
}

/// An authenticated principal: who an access token was issued to, and what it allows.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Principal {
    /// The token's `sub`.
    pub subject: String,
    /// The token's scopes (`scope`, space-separated, or `scp`).
    pub scopes: Vec<String>,
    /// The token's issuer (`iss`).
    pub issuer: Option<String>,
    /// Every claim of the token, for what the host maps to its own session.
    pub claims: serde_json::Map<String, Value>,
}

impl Principal {
    /// A principal with this subject and these scopes (no issuer, no other claims): for tests,
    /// and for hosts that authenticate callers themselves.
    pub fn new(subject: impl Into<String>, scopes: impl IntoIterator<Item = String>) -> Self {
        Principal {
            subject: subject.into(),
            scopes: scopes.into_iter().collect(),
            ..Principal::default()
        }
    }
}

/// The address of an HTTP connection's peer, as the HTTP server puts it in each request's
/// extensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerAddr(pub SocketAddr);

/// A request the host's context function refuses: answered with a JSON-RPC error carrying
/// `message`, and nothing runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// What the caller is told.
    pub message: String,
}

impl Refusal {
    /// A refusal with this message.
    pub fn new(message: impl Into<String>) -> Self {
        Refusal {
            message: message.into(),
        }
    }
}

/// The JSON-RPC error code of a refused request (implementation-defined range).
pub const REFUSED: i32 = -32001;

/// Makes the [`Context`] of one request.
type ContextFn = dyn Fn(Caller) -> BoxFuture<'static, Result<Context, Refusal>> + Send + Sync;

/// How much work the server takes on.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Limits {
    /// Calls running at once, over all callers.
    pub concurrent_calls: usize,
    /// Calls running at once for one caller (see [`Caller`]).
    pub calls_per_caller: usize,
    /// How long a call waits for its turn before it is refused as busy.
    pub queue_wait: Duration,
    /// How long a call may run when its tool sets no `timeout`.
    pub call_timeout: Duration,
    /// How long a person has to answer an approval question.
    pub approval_timeout: Duration,
    /// On stdio: requests read and not yet answered; beyond it the server stops reading.
    pub max_in_flight: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            concurrent_calls: 64,
            calls_per_caller: 8,
            queue_wait: Duration::from_secs(30),
            call_timeout: Duration::from_secs(60),
            approval_timeout: Duration::from_secs(600),
            max_in_flight: stdio::MAX_IN_FLIGHT,
        }
    }
}

/// The semaphores behind [`Limits`]: one for the server, one per caller key (dropped when idle).
struct Gates {
    server: Arc<Semaphore>,
    callers: Mutex<HashMap<String, Arc<Semaphore>>>,
}

/// A call's turn: held while it runs, on the async worker or on a blocking thread.
struct Turn {
    _server: OwnedSemaphorePermit,
    _caller: OwnedSemaphorePermit,
}

impl Gates {
    fn new(limits: &Limits) -> Self {
        Gates {
            server: Arc::new(Semaphore::new(limits.concurrent_calls.max(1))),
            callers: Mutex::new(HashMap::new()),
        }
    }

    async fn turn(&self, caller: &str, limits: &Limits) -> Option<Turn> {
        let per_caller = {
            let mut callers = self.callers.lock().unwrap_or_else(|e| e.into_inner());
            // Keys of callers with no call running are forgotten: the map stays small.
            if callers.len() > 1024 {
                callers.retain(|_, s| Arc::strong_count(s) > 1);
            }
            callers
                .entry(caller.to_owned())
                .or_insert_with(|| Arc::new(Semaphore::new(limits.calls_per_caller.max(1))))
                .clone()
        };
        let wait = async {
            let caller = per_caller.acquire_owned().await.ok()?;
            let server = self.server.clone().acquire_owned().await.ok()?;
            Some(Turn {
                _server: server,
                _caller: caller,
            })
        };
        tokio::time::timeout(limits.queue_wait, wait)
            .await
            .ok()
            .flatten()
    }
}

/// An MCP server for one tool set.
#[derive(Clone)]
pub struct McpServer {
    tools: Arc<RwLock<Arc<ToolSet>>>,
    /// Clients connected over sessions (stdio, and 2025-11-25 HTTP sessions), told when the
    /// tool set changes; a closed one is dropped at the next change or connection.
    peers: Arc<Mutex<Vec<Peer<RoleServer>>>>,
    context: Arc<ContextFn>,
    limits: Limits,
    gates: Arc<Gates>,
    page_size: usize,
    name: String,
    version: String,
    /// Where 2026-07-28 approvals wait between their two requests.
    approvals: Arc<dyn ApprovalStore>,
    /// Signs and checks `requestState`; `None` when no key could be made.
    state_codec: Option<Arc<RequestStateCodec>>,
    /// Bumped by `replace_tools`: what `subscriptions/listen` streams wait on.
    tool_changes: Arc<watch::Sender<u64>>,
    /// Set when the server shuts down: open `subscriptions/listen` streams end with their result.
    stopping: Arc<watch::Sender<bool>>,
}

impl McpServer {
    /// A server for `tools`, with an empty context for every request, [`Limits::default`] and
    /// pages of 50 tools.
    pub fn new(tools: ToolSet) -> Self {
        let limits = Limits::default();
        McpServer {
            tools: Arc::new(RwLock::new(Arc::new(tools))),
            peers: Arc::default(),
            context: Arc::new(|_| Box::pin(async { Ok(Context::new()) })),
            gates: Arc::new(Gates::new(&limits)),
            limits,
            page_size: 50,
            name: "tool-runtime".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            approvals: Arc::new(MemoryApprovals::new()),
            state_codec: random_key().map(|k| Arc::new(RequestStateCodec::new_unchecked(k))),
            tool_changes: Arc::new(watch::channel(0).0),
            stopping: Arc::new(watch::channel(false).0),
        }
    }

    /// Ends every open `subscriptions/listen` stream (each gets its final result), and any
    /// opened later: the server is shutting down.
    pub fn stop_listening(&self) {
        self.stopping.send_replace(true);
    }

    /// Where calls that need approval wait between the two requests of a 2026-07-28 approval
    /// (default: this process's memory). Replicas behind a balancer share one store (SQLite on
    /// one machine, PostgreSQL across machines), which hands each call out once.
    pub fn with_approvals(mut self, store: Arc<dyn ApprovalStore>) -> Self {
        self.approvals = store;
        self
    }

    /// The key that signs `requestState` (HMAC-SHA256), at least 32 bytes; every replica needs
    /// the same one. By default each process makes a random key, which is right for one server.
    pub fn with_state_key(mut self, key: &[u8]) -> Result<Self, RequestStateError> {
        self.state_codec = Some(Arc::new(RequestStateCodec::try_new(key.to_vec())?));
        Ok(self)
    }

    /// The tool set served right now.
    fn current(&self) -> Arc<ToolSet> {
        self.tools.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Replaces the tool set while serving and sends `notifications/tools/list_changed` to every
    /// connected client (clients that have gone away are forgotten) and every open
    /// `subscriptions/listen` stream that asked for `toolsListChanged`.
    pub async fn replace_tools(&self, tools: ToolSet) {
        *self.tools.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(tools);
        self.tool_changes.send_modify(|n| *n += 1);
        let peers: Vec<Peer<RoleServer>> = self.live_peers();
        for peer in peers {
            let _ = peer.notify_tool_list_changed().await;
        }
    }

    /// How many clients are connected right now (stdio, and HTTP sessions); one that has gone
    /// away is not counted, and nothing of it is kept.
    pub fn connected(&self) -> usize {
        self.live_peers().len()
    }

    /// The connected clients, the closed ones forgotten.
    fn live_peers(&self) -> Vec<Peer<RoleServer>> {
        let mut peers = self.peers.lock().unwrap_or_else(|e| e.into_inner());
        peers.retain(|p| !p.is_transport_closed());
        peers.clone()
    }

    /// How each request's [`Context`] is made: the session, its [`Grants`](crate::Grants),
    /// shared state, from the [`Caller`] (the principal an access token named, the HTTP
    /// request). It may look things up (`async`) and may refuse the request. Nothing of the
    /// caller's identity ever comes from tool arguments.
    pub fn with_context<F, Fut>(mut self, make: F) -> Self
    where
        F: Fn(Caller) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Context, Refusal>> + Send + 'static,
    {
        self.context = Arc::new(move |caller| Box::pin(make(caller)));
        self
    }

    /// How much work the server takes on (see [`Limits`]).
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.gates = Arc::new(Gates::new(&limits));
        self.limits = limits;
        self
    }

    /// The server's limits.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Tools per `tools/list` page (at least 1).
    pub fn with_page_size(mut self, page_size: usize) -> Self {
        self.page_size = page_size.max(1);
        self
    }

    /// The name and version the server reports in `initialize`.
    pub fn with_server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.name = name.into();
        self.version = version.into();
        self
    }

    /// Serves on stdin/stdout until the client closes stdin. Nothing else is written to stdout,
    /// every request line gets exactly one answer, and at most [`Limits::max_in_flight`]
    /// requests are read ahead of their answers (see `mcp/stdio.rs`).
    ///
    /// When both streams are pipes (as MCP clients start servers) they are read and written on
    /// Tokio's reactor, through rmcp's `stdio_pipes`, rather than a blocking thread per
    /// operation; this needs a runtime with IO enabled, as `#[tokio::main]` makes.
    pub async fn serve_stdio(self) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let (input, output) = rmcp::transport::stdio_pipes();
        self.serve_lines(input, output).await
    }

    /// Serves newline-delimited JSON-RPC from `input` to `output` (the stdio transport on any
    /// pair of streams).
    pub async fn serve_lines<I, O>(
        self,
        input: I,
        output: O,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>>
    where
        I: tokio::io::AsyncRead + Unpin + Send + 'static,
        O: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let (transport, writer) =
            stdio::StdioTransport::new(input, output, self.limits.max_in_flight);
        let served = match self.serve(transport).await {
            Ok(service) => service.waiting().await.map(drop).map_err(Into::into),
            Err(e) => Err(e.into()),
        };
        // The transport is closed by now: the writer finishes what is queued.
        writer.await??;
        served
    }

    /// The request's caller and its context, or the refusal to answer it with.
    async fn context_for(
        &self,
        request: &RequestContext<RoleServer>,
    ) -> Result<(Caller, Context), ErrorData> {
        let caller = caller_of(request);
        match (self.context)(caller.clone()).await {
            Ok(cx) => Ok((caller, cx)),
            Err(refusal) => Err(ErrorData::new(ErrorCode(REFUSED), refusal.message, None)),
        }
    }

    fn page(&self, cursor: Option<&str>, cx: &Context) -> Result<ListToolsResult, ErrorData> {
        let visible = self.current().visible_to(cx);
        let start = match cursor {
            None => 0,
            Some(c) => decode_cursor(c)
                .filter(|&i| i <= visible.len())
                .ok_or_else(|| ErrorData::invalid_params(format!("invalid cursor: {c:?}"), None))?,
        };
        let end = (start + self.page_size).min(visible.len());
        let tools = visible
            .iter()
            .skip(start)
            .take(end - start)
            .map(|t| serde_json::from_value(visible.export_tool(t, Api::Mcp).json))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| ErrorData::internal_error(format!("tool export: {e}"), None))?;
        let mut result = ListToolsResult::with_all_items(tools);
        if end < visible.len() {
            result.next_cursor = Some(encode_cursor(end));
        }
        Ok(result)
    }

    /// The parts a 2026-07-28 approval needs, or `None` without a signing key.
    fn mrtr(&self) -> Option<approval::Mrtr<'_>> {
        Some(approval::Mrtr {
            store: &*self.approvals,
            codec: self.state_codec.as_deref()?,
            limits: &self.limits,
        })
    }

    async fn call(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let (caller, cx) = self.context_for(&context).await?;
        // 2026-07-28 requests carry their version; they have no session to wait on.
        let stateless = context
            .protocol_version()
            .is_some_and(|v| !v.has_initialize());
        let tools = self.current();
        let name = request.name.as_ref();
        let tool = match tools.get(name) {
            Some(t) if t.permits(&cx) => t,
            // A tool this caller may not see is as unknown as one that does not exist.
            _ => {
                return Err(ErrorData::invalid_params(
                    format!("Unknown tool: {name}"),
                    None,
                ));
            }
        };
        let refuse = |e: ToolError| Ok(error_result(tools.model_message(&e)).into());
        let Some(turn) = self.gates.turn(&caller.key(), &self.limits).await else {
            return refuse(ToolError::Busy);
        };
        let timeout = tool.timeout().unwrap_or(self.limits.call_timeout);
        if stateless && request.request_state.is_some() {
            let Some(mrtr) = self.mrtr() else {
                return Err(ErrorData::invalid_params(
                    "invalid or expired requestState",
                    None,
                ));
            };
            let finish = approval::finish(&tools, tool, &cx, &caller, &request, mrtr);
            let outcome = tokio::time::timeout(timeout, finish).await;
            drop(turn);
            return outcome.unwrap_or_else(|_| {
                refuse(ToolError::TimedOut {
                    seconds: timeout.as_secs_f64(),
                })
            });
        }
        // A 2026-07-28 approval binds its state to the arguments as sent: only then are they kept.
        let arguments = if stateless && tool.needs_approval() {
            request.arguments.clone()
        } else {
            request.arguments.take()
        };
        let arguments = arguments.map_or_else(|| json!({}), Value::Object);
        let cx = Arc::new(cx);
        let run = run(tool, cx.clone(), arguments, turn);
        let outcome = tokio::select! {
            r = tokio::time::timeout(timeout, run) => r,
            // The client cancelled: the tool's future is dropped here; rmcp sends no answer.
            () = context.ct.cancelled() => {
                return Err(ErrorData::new(ErrorCode(-32800), "request cancelled", None));
            }
        };
        match outcome {
            Err(_) => refuse(ToolError::TimedOut {
                seconds: timeout.as_secs_f64(),
            }),
            Ok(Ok(out)) => Ok(success(tool, out).into()),
            Ok(Err(ToolError::ApprovalRequired(pending))) if stateless => {
                let can_elicit = context
                    .client_capabilities()
                    .is_some_and(|c| c.elicitation.is_some());
                match self.mrtr() {
                    Some(mrtr) => {
                        approval::hold(&tools, pending, &caller, &request, can_elicit, mrtr).await
                    }
                    None => {
                        tools.reject(pending);
                        refuse(ToolError::Failed {
                            message: "no key to sign the approval request".into(),
                        })
                    }
                }
            }
            Ok(Err(ToolError::ApprovalRequired(pending))) => {
                let asked = approval::ask(&tools, tool, pending, &cx, &context.peer, &self.limits);
                Ok(Box::pin(asked).await.into())
            }
            Ok(Err(e @ ToolError::UnknownTool { .. })) => {
                Err(ErrorData::invalid_params(e.to_string(), None))
            }
            Ok(Err(e)) => refuse(e),
        }
    }
}

/// Runs one call holding its turn: an async tool on this task, a sync tool on a blocking thread
/// (which keeps the turn until it returns, so a tool stopped by its time limit still counts
/// while its thread runs).
async fn run(
    tool: &'static Tool,
    cx: Arc<Context>,
    arguments: Value,
    turn: Turn,
) -> Result<CallOutput, ToolError> {
    if tool.is_async() {
        let out = tool.call(&cx, arguments).await;
        drop(turn);
        return out;
    }
    let blocking = tokio::task::spawn_blocking(move || {
        let out = tool.call(&cx, arguments).blocking();
        drop(turn);
        out
    });
    blocking.await.unwrap_or_else(|e| {
        Err(ToolError::Panicked {
            message: e.to_string(),
            to_model: false,
        })
    })
}

/// The caller of a request: the principal and HTTP parts the HTTP server put in the request's
/// extensions (none on stdio).
fn caller_of(request: &RequestContext<RoleServer>) -> Caller {
    #[cfg(feature = "mcp-http")]
    {
        let parts = request.extensions.get::<::http::request::Parts>();
        Caller {
            principal: parts.and_then(|p| p.extensions.get::<Principal>().cloned()),
            peer: parts.and_then(|p| p.extensions.get::<PeerAddr>().map(|a| a.0)),
            http: parts.cloned(),
        }
    }
    #[cfg(not(feature = "mcp-http"))]
    {
        let _ = request;
        Caller::default()
    }
}

fn error_result(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

/// A finished call as MCP content: the output as `structuredContent` (wrapped like the
/// `outputSchema` when it is not an object), and as content blocks the tool's `to_model`
/// summary, or else the same JSON as text.
fn success(tool: &Tool, out: CallOutput) -> CallToolResult {
    let wrapped = crate::lower::mcp_output_is_wrapped(tool.output_schema());
    let content = match out.summary() {
        Some(m) if !m.0.is_empty() => m.0.iter().map(content_block).collect(),
        // The text block is the structured content's JSON, written from the output's own text.
        _ if wrapped => vec![ContentBlock::text(format!("{{\"result\":{}}}", out.json()))],
        _ => vec![ContentBlock::text(out.json().to_owned())],
    };
    let value = out.into_value();
    let mut result = CallToolResult::success(content);
    result.structured_content = Some(if wrapped {
        json!({ "result": value })
    } else {
        value
    });
    result
}

fn content_block(c: &Content) -> ContentBlock {
    match c {
        Content::Text { text } => ContentBlock::text(text.clone()),
        // MCP images carry data; a URL is a link to a resource.
        Content::ImageUrl { url } => serde_json::from_value(json!({
            "type": "resource_link", "uri": url, "name": url.rsplit('/').next().unwrap_or(url), "mimeType": "image/*"
        }))
        .unwrap_or_else(|_| ContentBlock::text(url.clone())),
    }
}

/// A fresh 32-byte key from the operating system.
fn random_key() -> Option<Vec<u8>> {
    let mut key = vec![0u8; 32];
    getrandom::fill(&mut key).ok()?;
    Some(key)
}

/// Cursors are opaque to clients: an offset behind a fixed prefix.
fn encode_cursor(offset: usize) -> String {
    format!("o{offset:x}")
}

fn decode_cursor(cursor: &str) -> Option<usize> {
    usize::from_str_radix(cursor.strip_prefix('o')?, 16).ok()
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        InitializeResult::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new(self.name.clone(), self.version.clone()))
    }

    async fn on_initialized(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        let mut peers = self.peers.lock().unwrap_or_else(|e| e.into_inner());
        peers.retain(|p| !p.is_transport_closed());
        peers.push(context.peer);
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let (_, cx) = self.context_for(&context).await?;
        self.page(request.as_ref().and_then(|r| r.cursor.as_deref()), &cx)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // rmcp moves each request's future into a task: boxing keeps that future a few words
        // instead of the whole call (and the approval round-trip) copied on every request.
        Box::pin(self.call(request, context)).await
    }

    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // rmcp intersects this with what the client asked for and what the server advertises.
        Some(SubscriptionFilter::builder().tools_list_changed().build())
    }

    /// A 2026-07-28 `subscriptions/listen` stream: rmcp has sent the acknowledgement; each
    /// change of the tool set becomes one `notifications/tools/list_changed` (changes in a burst
    /// are coalesced), until the client closes the stream.
    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), ErrorData> {
        let mut changes = self.tool_changes.subscribe();
        changes.mark_unchanged();
        let mut stopping = self.stopping.subscribe();
        let stopped = async move {
            let _ = stopping.wait_for(|stop| *stop).await.map(|_| ());
        };
        let mut stopped = std::pin::pin!(stopped);
        loop {
            tokio::select! {
                () = subscription.cancelled() => return Ok(()),
                () = &mut stopped => return Ok(()),
                changed = changes.changed() => {
                    if changed.is_err() {
                        return Ok(());
                    }
                    if subscription.accepted().tools_list_changed != Some(true) {
                        continue;
                    }
                    if subscription.sink().notify_tool_list_changed().await.is_err() {
                        return Ok(());
                    }
                }
            }
        }
    }
}
