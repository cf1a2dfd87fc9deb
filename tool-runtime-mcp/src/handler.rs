//! The server as rmcp's handler ([`Served`]): the protocol's methods answered from the
//! server's state, each request in its span: `tools/list` page by page, `tools/call` (see
//! [`call`](crate::call)), `resources/read` of kept results, the task methods, and
//! `subscriptions/listen` streams.

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CancelTaskParams, CustomRequest,
    CustomResult, ErrorCode, ErrorData, GetTaskParams, GetTaskResult, Implementation,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, ResourceContents, ServerCapabilities, ServerConfig,
    SubscriptionFilter, UpdateTaskParams,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{RoleServer, ServerHandler};
use tool_runtime::Context;
use tracing::Instrument;

use crate::export;
use crate::incoming::Incoming;
use crate::server::{McpServer, log_hidden};

impl McpServer {
    /// The span of one request, continuing the trace it carried.
    fn span_of(
        &self,
        method: &'static str,
        tool: Option<&str>,
        request: &Incoming,
    ) -> tracing::Span {
        let Some(propagator) = &self.propagator else {
            return crate::telemetry::request_span(method, tool, request);
        };
        // A request that carried no context is told so too (an empty `traceparent`): a backend
        // that samples when a trace starts decides before the span is built.
        let carried = request.trace_context();
        let none = crate::trace::TraceContext::new("");
        propagator.before_span(carried.as_ref().unwrap_or(&none));
        let span = crate::telemetry::request_span(method, tool, request);
        if let Some(carried) = &carried {
            propagator.extract(&span, carried);
        }
        span
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
        let started = (!span.is_disabled() || crate::telemetry::metrics_wanted())
            .then(std::time::Instant::now);
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
        let timed = (!span.is_disabled() || crate::telemetry::metrics_wanted())
            .then(|| (std::time::Instant::now(), params.name.clone()));
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
