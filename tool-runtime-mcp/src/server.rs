//! The MCP server: one tool set, the caller's context per request, paging, and `tools/call`
//! through the set (with the approval flows of [`approval`](crate::approval)).

use std::future::Future;
use std::sync::{Arc, Mutex, RwLock};

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CancelTaskParams, CustomRequest,
    CustomResult, ErrorCode, ErrorData, GetTaskParams, GetTaskResult, Implementation,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, RequestStateCodec, ResourceContents,
    ServerCapabilities, ServerConfig, SubscriptionFilter, UpdateTaskParams,
};
use rmcp::service::{Peer, RequestContext, SubscriptionContext};
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use tokio::sync::watch;
use tool_runtime::{BoxFuture, Context, Tasks, ToolSet};
use tracing::Instrument;

use crate::caller::{Caller, REFUSED, Refusal};
use crate::export;
use crate::incoming::Incoming;
use crate::limits::{Gates, Limits};
use crate::pace::Pace;
use crate::trace::Propagator;

/// Makes the [`Context`] of one request.
type ContextFn = dyn Fn(Caller) -> BoxFuture<'static, Result<Context, Refusal>> + Send + Sync;

/// A `requestState` key that cannot sign (shorter than 32 bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateKeyError {
    message: String,
}

impl std::fmt::Display for StateKeyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the requestState key cannot be used: {}", self.message)
    }
}

impl std::error::Error for StateKeyError {}

/// An MCP server for one tool set.
#[derive(Clone)]
pub struct McpServer {
    tools: Arc<RwLock<Arc<ToolSet>>>,
    /// Clients connected over sessions (stdio, and 2025-11-25 HTTP sessions), told when the
    /// tool set changes; a closed one is dropped at the next change or connection.
    peers: Arc<Mutex<Vec<Peer<RoleServer>>>>,
    context: Arc<ContextFn>,
    pub(crate) limits: Limits,
    pub(crate) gates: Arc<Gates>,
    /// Where sync tools' calls run.
    pub(crate) pace: Arc<Pace>,
    page_size: usize,
    name: String,
    version: String,
    /// Signs and checks `requestState`; `None` when no key could be made.
    state_codec: Option<Arc<RequestStateCodec>>,
    /// Bumped by `replace_tools`: what `subscriptions/listen` streams wait on.
    tool_changes: Arc<watch::Sender<u64>>,
    /// Set when the server shuts down: open `subscriptions/listen` streams end with their result.
    stopping: Arc<watch::Sender<bool>>,
    /// Makes the trace context a request carried its span's parent.
    propagator: Option<Arc<dyn Propagator>>,
    /// Where tasks are kept, and their rules (this process's memory unless told otherwise).
    pub(crate) tasks: Tasks,
    /// The tasks running in this process.
    pub(crate) running: Arc<crate::task::Running>,
    /// Tools whose calls someone other than the caller approves, with the approvers' grant.
    pub(crate) approvers: Arc<crate::desk::Approvers>,
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
            pace: Arc::new(Pace::new(&limits)),
            limits,
            page_size: 50,
            name: "tool-runtime".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            state_codec: random_key().map(|k| Arc::new(RequestStateCodec::new_unchecked(k))),
            tool_changes: Arc::new(watch::channel(0).0),
            stopping: Arc::new(watch::channel(false).0),
            propagator: None,
            tasks: Tasks::default(),
            running: Arc::default(),
            approvers: Arc::default(),
        }
    }

    /// Where calls that run as tasks are kept ([`tool_runtime::task`]): give every replica a
    /// [`Tasks`] over the same store (`tool-runtime-sqlite`, `tool-runtime-postgres`), so a task
    /// made on one is polled, answered and cancelled on another. By default each server keeps
    /// its tasks in its own memory, for an hour, at most 32 per caller. A call runs as a task
    /// when its tool allows it (`#[tool(task = "optional")]`) and the caller declared the
    /// `io.modelcontextprotocol/tasks` extension.
    pub fn with_tasks(mut self, tasks: Tasks) -> Self {
        self.tasks = tasks;
        self
    }

    /// Ends every open `subscriptions/listen` stream (each gets its final result), and any
    /// opened later: the server is shutting down.
    pub fn stop_listening(&self) {
        self.stopping.send_replace(true);
    }

    /// The key that signs `requestState` (HMAC-SHA256), at least 32 bytes; every replica needs
    /// the same one. By default each process makes a random key, which is right for one server.
    /// Calls waiting for approval are held in the tool set's approval store
    /// ([`ToolSet::with_approvals`]): replicas share one (`tool-runtime-postgres` across machines,
    /// `tool-runtime-sqlite` on one), which hands each call out once.
    pub fn with_state_key(mut self, key: &[u8]) -> Result<Self, StateKeyError> {
        let codec = RequestStateCodec::try_new(key.to_vec()).map_err(|e| StateKeyError {
            message: e.to_string(),
        })?;
        self.state_codec = Some(Arc::new(codec));
        Ok(self)
    }

    /// The tool set served right now.
    pub(crate) fn current(&self) -> Arc<ToolSet> {
        self.tools.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Replaces the tool set while serving and sends `notifications/tools/list_changed` to every
    /// connected client (clients that have gone away are forgotten) and every open
    /// `subscriptions/listen` stream that asked for `toolsListChanged`. Calls held for approval
    /// stay in the old set's store: give the new set the same store.
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

    /// How each request's [`Context`] is made: the session, its [`Grants`](tool_runtime::Grants),
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

    /// Continues the caller's trace: the W3C trace context a request carries (in `params._meta`,
    /// or on HTTP its headers) becomes its server span's parent through `propagator` (see
    /// [`trace`](crate::trace)).
    pub fn with_propagator(mut self, propagator: impl Propagator) -> Self {
        self.propagator = Some(Arc::new(propagator));
        self
    }

    /// The span of one request, continuing the trace it carried.
    fn span_of(
        &self,
        method: &'static str,
        tool: Option<&str>,
        request: &Incoming,
    ) -> tracing::Span {
        let span = crate::telemetry::request_span(method, tool, request);
        if let Some(propagator) = &self.propagator
            && !span.is_disabled()
            && let Some(carried) = request.trace_context()
        {
            propagator.extract(&span, &carried);
        }
        span
    }

    /// How much work the server takes on (see [`Limits`]).
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.gates = Arc::new(Gates::new(&limits));
        self.pace = Arc::new(Pace::new(&limits));
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
    /// requests are read ahead of their answers (see `stdio/`).
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
        let (lane, session) = crate::stdio::Lane::new(self.clone());
        let (transport, writer) =
            crate::stdio::StdioTransport::new(input, output, self.limits.max_in_flight, lane);
        let served = match Served(self).serve(transport).await {
            Ok(service) => {
                // From now on the transport runs plain calls of a session opened with
                // `initialize` itself (`stdio/direct.rs`); a session that began without one
                // (2026-07-28) keeps every request on rmcp, which checks its `_meta`.
                if service.peer().peer_info().is_some() {
                    let _ = session.set(service.peer().clone());
                }
                service.waiting().await.map(drop).map_err(Into::into)
            }
            Err(e) => Err(e.into()),
        };
        // The transport is closed by now: the writer finishes what is queued.
        writer.await??;
        served
    }

    /// The request's caller and its context, or the refusal to answer it with.
    pub(crate) async fn context_for(
        &self,
        request: &Incoming,
    ) -> Result<(Caller, Context), ErrorData> {
        // On HTTP the admission layer ran the context function already.
        #[cfg(feature = "http")]
        if let Some(admitted) = request
            .parts()
            .and_then(|p| p.extensions.get::<crate::caller::Admitted>())
        {
            return Ok((admitted.caller.clone(), admitted.cx.clone()));
        }
        let caller = caller_of(request);
        match self.admit(caller.clone()).await {
            Ok(cx) => Ok((caller, cx)),
            Err(refusal) => Err(ErrorData::new(ErrorCode(REFUSED), refusal.message, None)),
        }
    }

    /// The application's answer for `caller`: the context of its request, or its refusal.
    pub(crate) async fn admit(&self, caller: Caller) -> Result<Context, Refusal> {
        (self.context)(caller).await
    }

    fn page(&self, cursor: Option<&str>, cx: &Context) -> Result<ListToolsResult, ErrorData> {
        let entries = export::listed(&self.current().visible_to(cx));
        let count = entries.len();
        let start = match cursor {
            None => 0,
            Some(c) => decode_cursor(c)
                .filter(|&i| i <= count)
                .ok_or_else(|| ErrorData::invalid_params(format!("invalid cursor: {c:?}"), None))?,
        };
        let end = (start + self.page_size).min(count);
        let tools = entries
            .into_iter()
            .skip(start)
            .take(end - start)
            .map(serde_json::from_value)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| ErrorData::internal_error(format!("tool export: {e}"), None))?;
        let mut result = ListToolsResult::with_all_items(tools);
        if end < count {
            result.next_cursor = Some(encode_cursor(end));
        }
        Ok(result)
    }

    /// `tools/list`: the page at `cursor` of the tools this caller may see, in the request's
    /// span.
    pub(crate) async fn list_tools(
        &self,
        cursor: Option<&str>,
        request: &Incoming,
    ) -> Result<ListToolsResult, ErrorData> {
        let span = self.span_of("tools/list", None, request);
        let started = (!span.is_disabled()).then(std::time::Instant::now);
        let listed = async {
            let (caller, cx) = self.context_for(request).await?;
            if tracing::enabled!(tracing::Level::DEBUG) {
                let key = caller.key();
                for tool in self.current().iter().filter(|t| !t.permits(&cx)) {
                    log_hidden(tool, &cx, &key);
                }
            }
            self.page(cursor, &cx)
        }
        .instrument(span.clone())
        .await;
        crate::telemetry::record_outcome(&span, listed.as_ref().err(), false);
        if let Some(started) = started {
            let _entered = span.enter();
            crate::telemetry::record_duration(
                started,
                "tools/list",
                None,
                listed.as_ref().err(),
                false,
            );
        }
        listed
    }

    /// `tools/call`, in the request's span.
    pub(crate) async fn call_tool(
        &self,
        params: CallToolRequestParams,
        request: Incoming,
    ) -> Result<CallToolResponse, ErrorData> {
        let span = self.span_of("tools/call", Some(&params.name), &request);
        let timed = (!span.is_disabled()).then(|| (std::time::Instant::now(), params.name.clone()));
        // rmcp moves each request's future into a task: boxing keeps that future a few words
        // instead of the whole call (and the approval round-trip) copied on every request.
        let answer = Box::pin(self.call(params, request))
            .instrument(span.clone())
            .await;
        let failed =
            matches!(&answer, Ok(CallToolResponse::Complete(r)) if r.is_error == Some(true));
        crate::telemetry::record_outcome(&span, answer.as_ref().err(), failed);
        if let Some((started, name)) = timed {
            let _entered = span.enter();
            crate::telemetry::record_duration(
                started,
                "tools/call",
                Some(&name),
                answer.as_ref().err(),
                failed,
            );
        }
        answer
    }

    /// Puts in `cx` what keeps the whole result of a call of a bounded tool of `tools` when it is
    /// cut, for the caller `key`.
    pub(crate) fn with_keeper(&self, cx: &mut Context, key: &str, tools: &ToolSet) {
        cx.insert(crate::kept::Keeper {
            tasks: self.tasks.clone(),
            owner: key.to_owned(),
            wording: tools.wording().clone(),
        });
    }

    /// `resources/read` of a result kept whole when its call's was cut: only by its caller.
    pub(crate) async fn read_kept(
        &self,
        uri: &str,
        request: &Incoming,
    ) -> Result<ReadResourceResult, ErrorData> {
        let (caller, _) = self.context_for(request).await?;
        let not_found = || {
            ErrorData::resource_not_found(
                format!("no result is kept as {uri} for this caller (results are kept an hour)"),
                None,
            )
        };
        let Some(id) = crate::kept::id_of(uri) else {
            return Err(not_found());
        };
        let text = match self.tasks.kept_result(id, &caller.key()).await {
            Ok(Some(text)) => text,
            Ok(None) => return Err(not_found()),
            Err(e) => {
                tracing::warn!(error = %e, "the task store failed");
                return Err(ErrorData::internal_error(
                    "the result store failed; try again",
                    None,
                ));
            }
        };
        Ok(
            ReadResourceResult::new(vec![ResourceContents::text(text, uri)])
                .with_cache_scope(CacheScope::Private),
        )
    }

    /// Whether any tool's results may be cut, and so kept as resources.
    fn keeps_results(&self) -> bool {
        self.current()
            .iter()
            .any(|t| t.max_result_chars().is_some())
    }

    /// The parts a 2026-07-28 approval needs, or `None` without a signing key.
    pub(crate) fn mrtr(&self) -> Option<crate::approval::Mrtr<'_>> {
        Some(crate::approval::Mrtr {
            codec: self.state_codec.as_deref()?,
            limits: &self.limits,
        })
    }
}

/// The caller of a request: the principal and HTTP parts the HTTP server put in the request's
/// extensions (none on stdio).
fn caller_of(request: &Incoming) -> Caller {
    #[cfg(feature = "http")]
    {
        let parts = request.parts();
        Caller {
            principal: parts.and_then(|p| p.extensions.get::<crate::Principal>().cloned()),
            peer: parts.and_then(|p| p.extensions.get::<crate::PeerAddr>().map(|a| a.0)),
            http: parts.cloned().map(std::sync::Arc::new),
        }
    }
    #[cfg(not(feature = "http"))]
    {
        let _ = request;
        Caller::default()
    }
}

/// A fresh 32-byte key from the operating system.
fn random_key() -> Option<Vec<u8>> {
    let mut key = vec![0u8; 32];
    getrandom::fill(&mut key).ok()?;
    Some(key)
}

/// The methods of a tools server whose params have a shape to get wrong.
const TOOL_METHODS: &[&str] = &["tools/list", "tools/call"];

/// rmcp reads a tools method whose params do not fit its shape as a custom request: that
/// method exists and its params are wrong. Any other method is not one this server serves
/// (2026-07-28 clients are told so for the methods that era removed, such as `initialize`).
fn unknown_request(method: &str) -> ErrorData {
    if !TOOL_METHODS.contains(&method) {
        return ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("method not found: `{method}` is not an MCP method this server serves"),
            None,
        );
    }
    let shape = match method {
        "tools/call" => ": `name` must be a string and `arguments`, if given, an object",
        _ => ": `params`, if given, must be an object with an optional `cursor` string",
    };
    ErrorData::invalid_params(format!("invalid params for `{method}`{shape}"), None)
}

/// Logs, for the host, why `tool` is hidden from `caller`: the grants it needs that the
/// caller's context lacks.
pub(crate) fn log_hidden(tool: &tool_runtime::Tool, cx: &Context, caller: &str) {
    let missing = match cx.get::<tool_runtime::Grants>() {
        Some(grants) => grants.missing(&tool.requires()),
        None => tool.requires().iter().map(|p| (*p).to_owned()).collect(),
    };
    tracing::debug!(
        tool = tool.name(),
        requires = ?tool.requires(),
        missing = ?missing,
        caller,
        "tool hidden from this caller: it lacks a grant the tool requires"
    );
}

/// Cursors are opaque to clients: an offset behind a fixed prefix.
fn encode_cursor(offset: usize) -> String {
    format!("o{offset:x}")
}

fn decode_cursor(cursor: &str) -> Option<usize> {
    usize::from_str_radix(cursor.strip_prefix('o')?, 16).ok()
}

/// The server as rmcp's handler: private, so that only this crate's transports (with their
/// limits and checks) serve it.
#[derive(Clone)]
pub(crate) struct Served(pub(crate) McpServer);

impl std::ops::Deref for Served {
    type Target = McpServer;

    fn deref(&self) -> &McpServer {
        &self.0
    }
}

impl ServerHandler for Served {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_tasks()
            .build();
        // The whole of a cut result is read as a resource.
        if self.keeps_results() {
            capabilities.resources = Some(Default::default());
        }
        InitializeResult::new(capabilities)
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
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        self.0.list_tools(cursor, &context.into()).await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.0.call_tool(request, context.into()).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let read = self.0.read_kept(&request.uri, &context.into()).await;
        read.map(Into::into)
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.0.get_task(request, context.into()).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.0.update_task(request, context.into()).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.0.cancel_task(request, context.into()).await
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Err(unknown_request(&request.method))
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
