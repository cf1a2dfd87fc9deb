//! Serve a tool set over MCP with the official Rust SDK (`rmcp`), behind the `mcp` feature.
//!
//! `tools/list` shows the tools the caller may see (their MCP export: description with the
//! boundary sentence, `inputSchema`, `outputSchema`, annotations), page by page; `tools/call`
//! validates the arguments and answers with `structuredContent` plus the same JSON as text (or the
//! tool's `to_model` summary). Invalid arguments, tool failures and panics come back as
//! `isError: true` results with the message the model can act on (a protocol error would hide it
//! from the model); an unknown tool is a
//! JSON-RPC error. Who is calling comes from the host's [`Context`], never from the arguments.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! use tool_runtime::{Context, ToolSet, mcp::McpServer};
//! let tools = ToolSet::all()?;
//! McpServer::new(tools).with_context(Context::new).serve_stdio().await?;
//! # Ok(()) }
//! ```

use std::sync::Arc;

mod stdio;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    Implementation, InitializeResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::{ElicitationError, Peer, RequestContext};
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

use crate::Api;
use crate::host::{Content, PendingCall};
use crate::{CallOutput, Context, Tool, ToolError, ToolSet};

/// What a person answers when a tool needs approval (MCP elicitation).
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Approval {
    /// Run this action now?
    approve: bool,
}

rmcp::elicit_safe!(Approval);

/// Builds the host context for a request: the session, its grants, shared state.
type ContextFn = dyn Fn() -> Context + Send + Sync;

/// An MCP server for one tool set.
#[derive(Clone)]
pub struct McpServer {
    tools: Arc<std::sync::RwLock<Arc<ToolSet>>>,
    /// Connected clients, told when the tool set changes.
    peers: Arc<std::sync::Mutex<Vec<Peer<RoleServer>>>>,
    context: Arc<ContextFn>,
    page_size: usize,
    /// Requests read and not yet answered on stdio; beyond it the server stops reading.
    max_in_flight: usize,
    name: String,
    version: String,
}

impl McpServer {
    /// A server for `tools`, with an empty context and pages of 50 tools.
    pub fn new(tools: ToolSet) -> Self {
        McpServer {
            tools: Arc::new(std::sync::RwLock::new(Arc::new(tools))),
            peers: Arc::default(),
            context: Arc::new(Context::new),
            page_size: 50,
            max_in_flight: stdio::MAX_IN_FLIGHT,
            name: "tool-runtime".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }

    /// The tool set served right now.
    fn current(&self) -> Arc<ToolSet> {
        self.tools.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Replaces the tool set while serving and sends `notifications/tools/list_changed` to every
    /// connected client (clients that have gone away are forgotten).
    pub async fn replace_tools(&self, tools: ToolSet) {
        *self.tools.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(tools);
        let peers: Vec<Peer<RoleServer>> =
            self.peers.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let mut alive = Vec::new();
        for peer in peers {
            if peer.notify_tool_list_changed().await.is_ok() {
                alive.push(peer);
            }
        }
        *self.peers.lock().unwrap_or_else(|e| e.into_inner()) = alive;
    }

    /// How the host context of each request is made (for stdio: the configured session).
    pub fn with_context(mut self, make: impl Fn() -> Context + Send + Sync + 'static) -> Self {
        self.context = Arc::new(make);
        self
    }

    /// Tools per `tools/list` page (at least 1).
    pub fn with_page_size(mut self, page_size: usize) -> Self {
        self.page_size = page_size.max(1);
        self
    }

    /// How many requests may be read and not yet answered on stdio (at least 1; default 256).
    /// Beyond it the server stops reading until an answer is written, so a client that stops
    /// reading the answers stops being read from, and memory stays bounded.
    pub fn with_max_in_flight(mut self, max_in_flight: usize) -> Self {
        self.max_in_flight = max_in_flight.max(1);
        self
    }

    /// The name and version the server reports in `initialize`.
    pub fn with_server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.name = name.into();
        self.version = version.into();
        self
    }

    /// Serves on stdin/stdout until the client closes stdin. Nothing else is written to stdout,
    /// and every request line gets exactly one answer (see `mcp/stdio.rs`).
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
        let (transport, writer) = stdio::StdioTransport::new(input, output, self.max_in_flight);
        let served = match self.serve(transport).await {
            Ok(service) => service.waiting().await.map(drop).map_err(Into::into),
            Err(e) => Err(e.into()),
        };
        // The transport is closed by now: the writer finishes what is queued.
        writer.await??;
        served
    }

    /// Serves MCP's Streamable HTTP transport at `http://{addr}/mcp` (rmcp's transport on axum)
    /// until the process ends. Requests must come with a `Host` of `localhost`, `127.0.0.1` or
    /// `::1` (rmcp's DNS-rebinding protection); use [`McpServer::http_service`] to mount it
    /// elsewhere with other settings.
    pub async fn serve_http(self, addr: std::net::SocketAddr) -> std::io::Result<()> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        self.serve_http_on(listener).await
    }

    /// [`McpServer::serve_http`] on a listener the caller bound (port 0 for tests).
    pub async fn serve_http_on(self, listener: tokio::net::TcpListener) -> std::io::Result<()> {
        let router =
            axum::Router::new().nest_service("/mcp", self.http_service(Default::default()));
        axum::serve(listener, router).await
    }

    /// The Streamable HTTP transport as a tower service, to mount in a host's own axum router.
    pub fn http_service(
        self,
        config: rmcp::transport::streamable_http_server::StreamableHttpServerConfig,
    ) -> rmcp::transport::streamable_http_server::StreamableHttpService<
        McpServer,
        rmcp::transport::streamable_http_server::session::local::LocalSessionManager,
    > {
        rmcp::transport::streamable_http_server::StreamableHttpService::new(
            move || Ok(self.clone()),
            Default::default(),
            config,
        )
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

    async fn call(
        &self,
        name: &str,
        arguments: Option<Value>,
        peer: &Peer<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let cx = (self.context)();
        let tools = self.current();
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
        let arguments = arguments.unwrap_or_else(|| json!({}));
        match tool.call(&cx, arguments).await {
            Ok(out) => Ok(success(tool, out)),
            Err(ToolError::ApprovalRequired(pending)) => {
                Ok(Box::pin(approve(&tools, tool, pending, &cx, peer)).await)
            }
            Err(ToolError::UnknownTool { .. }) => Err(ErrorData::invalid_params(
                format!("Unknown tool: {name}"),
                None,
            )),
            Err(e) => Ok(CallToolResult::error(vec![ContentBlock::text(
                tools.model_message(&e),
            )])),
        }
    }
}

/// Asks the person at the client to approve a held call (MCP elicitation). A client without
/// elicitation gets a clear "approval required" tool error and nothing runs.
async fn approve(
    tools: &ToolSet,
    tool: &Tool,
    pending: PendingCall,
    cx: &Context,
    peer: &Peer<RoleServer>,
) -> CallToolResult {
    let can_ask = peer
        .peer_info()
        .is_some_and(|i| i.capabilities.elicitation.is_some());
    let wording = tools.wording();
    let refusal = |text: String| CallToolResult::error(vec![ContentBlock::text(text)]);
    if !can_ask {
        // Nobody can be asked: the held call is dropped, and the model is told so.
        tools.reject(pending);
        return refusal(wording.approval_unavailable.to_string());
    }
    let question = format!("Approve `{}` with {}?", pending.tool, pending.arguments);
    match peer.elicit::<Approval>(question).await {
        Ok(Some(Approval { approve: true })) => match tools.resume(cx, pending).await {
            Ok(out) => success(tool, out),
            Err(e) => refusal(tools.model_message(&e)),
        },
        Ok(_) | Err(ElicitationError::UserDeclined) | Err(ElicitationError::UserCancelled) => {
            tools.reject(pending);
            refusal(wording.approval_declined.to_string())
        }
        Err(e) => {
            tools.reject(pending);
            let reason = e.to_string();
            refusal(crate::wording::fill(
                &wording.approval_failed,
                &[("reason", &reason)],
            ))
        }
    }
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
        self.peers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(context.peer);
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let cx = (self.context)();
        self.page(request.as_ref().and_then(|r| r.cursor.as_deref()), &cx)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.map(Value::Object);
        // rmcp moves each request's future into a task: boxing keeps that future a few words
        // instead of the whole call (and the approval round-trip) copied on every request.
        Box::pin(self.call(&request.name, arguments, &context.peer))
            .await
            .map(Into::into)
    }
}
