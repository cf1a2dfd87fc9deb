//! One call of a remote tool: sent under its remote name, bounded by its time limit,
//! cancelled at the server when it is dropped, its result read back as the tool's value.

use std::sync::Arc;

use rmcp::RoleClient;
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelTaskParams,
    CancelledNotification, CancelledNotificationParam, ClientRequest, ContentBlock, GetTaskParams,
    InputResponses, ServerResult, Task, TaskPayload, UpdateTaskParams,
};
use rmcp::service::{Peer, PeerRequestOptions};
use serde_json::{Map, Value};
use tool_runtime::{BoxFuture, Context, Handler, Progress, ToolError};
use tracing::Instrument;

use super::connection::{Inner, Live};
use super::progress::Reports;

/// One remote tool: a call is sent to the server under its remote name.
pub(super) struct RemoteTool {
    pub(super) remote: Arc<Inner>,
    pub(super) name: String,
    /// The tool waits for a person's approval here before it runs: a remote task that asks
    /// for approval of the call is given that one (see [`follow_task`]).
    pub(super) approved_here: bool,
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
            let mut params =
                CallToolRequestParams::new(self.name.clone()).with_arguments(arguments);
            let span = client_span(&self.remote, &self.name);
            // The caller's trace goes on at the remote server, under this call's client span
            // (or, when the span was not made, as the propagator says: inside a trace not
            // kept, that trace marked not sampled).
            if let Some(propagator) = &self.remote.options.propagator
                && let Some(context) = propagator.inject(&span)
            {
                let mut meta = rmcp::model::RequestMetaObject::default();
                context.write_into(&mut meta.0.0);
                params.meta = Some(meta);
            }
            let timeout = self.remote.options.call_timeout;
            let metered = Metered::start(&self.name);
            let outcome = async {
                // Dropping the request (the time limit, or the caller's call dropped) sends
                // `notifications/cancelled` to the server.
                let progress = cx.get::<Progress>();
                let call = call_tool(&peer, params, progress, &reports, self.approved_here);
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
                        return Err(ToolError::failed(format!(
                            "the connection to the MCP server `{}` was lost during the call (the \
                                 server went away, or its answer was larger than the transport's \
                                 16 MiB limit); the next call connects again",
                            self.remote.label
                        )));
                    }
                    Ok(Err(e)) => {
                        let message = format!(
                            "the MCP server `{}` failed the call: {}",
                            self.remote.label,
                            said(&e)
                        );
                        return Err(ToolError::Failed {
                            message,
                            error: Some(Arc::new(e)),
                        });
                    }
                    Ok(Ok(result)) => result,
                };
                answer(result)
            }
            .instrument(span.clone())
            .await;
            let _entered = span.enter();
            if !span.is_disabled()
                && let Err(e) = &outcome
            {
                span.record("error.type", error_type(e));
                span.record("otel.status_code", "ERROR");
            }
            // Counted whether or not the span was made.
            metered.finish(&outcome);
            outcome
        })
    }
}

/// Sends a `tools/call` and waits for its result, passing the server's progress reports on
/// to `progress` meanwhile (rmcp gives every request a `progressToken`). Dropped before the
/// answer, it tells the server the call was cancelled. `approved`: a person approved this call
/// here.
pub(super) async fn call_tool(
    peer: &Peer<RoleClient>,
    params: CallToolRequestParams,
    progress: Option<&Progress>,
    reports: &Reports,
    approved: bool,
) -> Result<CallToolResult, rmcp::ServiceError> {
    let name = params.name.clone();
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = peer
        .send_request_with_option(request, PeerRequestOptions::no_options())
        .await?;
    // The id rmcp gave the request, on the client span the call runs in (the conventions
    // require it when the client sends a request).
    let span = tracing::Span::current();
    if !span.is_disabled() {
        span.record("jsonrpc.request.id", handle.id.to_string());
    }
    // Every call is registered, so reports of a call no one follows are dropped at once.
    let _following = reports.follow(handle.progress_token.clone(), progress.cloned());
    let mut abandoned = Abandoned::new(peer, handle.id.clone());
    let answer = handle.await_response().await;
    abandoned.answered();
    match answer? {
        ServerResult::CallToolResult(result) => Ok(result),
        // The server made a task of the call: followed here, so the call ends when it does.
        ServerResult::CreateTaskResult(created) => {
            let approved = approved.then_some(&*name);
            follow_task(peer, created.task, approved).await
        }
        // A result with nothing but `_meta`, or none at all: a call without content.
        ServerResult::EmptyResult(_) => Ok(CallToolResult::success(Vec::new())),
        ServerResult::CustomResult(custom) => {
            serde_json::from_value(custom.0).map_err(|_| rmcp::ServiceError::UnexpectedResponse)
        }
        _ => Err(rmcp::ServiceError::UnexpectedResponse),
    }
}

/// How often a task is polled: as the server asks, within 50 ms and 5 s (500 ms when it does
/// not say).
fn poll_every(task: &Task) -> Duration {
    Duration::from_millis(task.poll_interval_ms.unwrap_or(500).clamp(50, 5_000))
}

/// A task the server made of a call (the `io.modelcontextprotocol/tasks` extension, which this
/// client declares): polled with `tasks/get` until it ends, its result the call's, so a long
/// remote tool holds no request open. Dropped before (the call's time limit, or its caller
/// gone), the server is told to cancel it (`tasks/cancel`).
///
/// A task that waits for input: when it asks only for approval of the call (the question this
/// crate's servers ask, naming the tool, see `approval::asks_only_approval`) and a person
/// approved the call here (`approved`: the remote tool's name, when a person did; a remote tool
/// waits for approval here unless it says it only reads), that approval is handed through once
/// with `tasks/update`, and the task is followed on. Any other question, or the approval asked
/// again [`ASKED_AGAIN`] after it went, is cancelled and the call fails saying so: no one
/// answers a remote's own questions through this client.
async fn follow_task(
    peer: &Peer<RoleClient>,
    task: Task,
    approved: Option<&str>,
) -> Result<CallToolResult, rmcp::ServiceError> {
    let every = poll_every(&task);
    let mut abandoned = AbandonedTask::new(peer, task.task_id.clone());
    let mut handed_through: Option<std::time::Instant> = None;
    loop {
        tokio::time::sleep(every).await;
        let got = peer
            .get_task(GetTaskParams::new(task.task_id.clone()))
            .await?;
        let failed = |message: String| {
            rmcp::ServiceError::McpError(rmcp::model::ErrorData::new(
                rmcp::model::ErrorCode::INTERNAL_ERROR,
                message,
                None,
            ))
        };
        let outcome = match got.task.payload {
            TaskPayload::Working => continue,
            TaskPayload::Completed { result } => serde_json::from_value(Value::Object(result))
                .map_err(|_| rmcp::ServiceError::UnexpectedResponse),
            TaskPayload::Failed { error } => Err(
                match serde_json::from_value::<rmcp::model::ErrorData>(Value::Object(error)) {
                    Ok(data) => rmcp::ServiceError::McpError(data),
                    Err(_) => failed(
                        got.task
                            .task
                            .status_message
                            .unwrap_or_else(|| "the server's task failed".into()),
                    ),
                },
            ),
            TaskPayload::Cancelled => Err(failed("the server cancelled the task".into())),
            TaskPayload::InputRequired { input_requests }
                if approved.is_some_and(|tool| {
                    crate::approval::asks_only_approval(&input_requests, tool)
                }) =>
            {
                match handed_through {
                    None => {
                        let mut answers = InputResponses::new();
                        answers.insert(
                            crate::approval::APPROVAL.into(),
                            crate::approval::approving_answer(),
                        );
                        peer.update_task(UpdateTaskParams::new(task.task_id.clone(), answers))
                            .await?;
                        handed_through = Some(std::time::Instant::now());
                        continue;
                    }
                    // Still asking just after the answer went: the server has not taken it up.
                    Some(at) if at.elapsed() < ASKED_AGAIN => continue,
                    // Cancelled on return (the drop).
                    Some(_) => {
                        return Err(failed(
                            "the server's task asks for approval again after it was given; it was cancelled".into(),
                        ));
                    }
                }
            }
            // Waiting for input (or a status this client does not know): cancelled on drop.
            _ => {
                return Err(failed(
                    "the server's task waits for input no one answers through this client; it was cancelled".into(),
                ));
            }
        };
        abandoned.answered();
        return outcome;
    }
}

/// How long a task may still show the approval question after the approval went.
const ASKED_AGAIN: Duration = Duration::from_secs(5);

/// A task left before it ended: the server is told to cancel it (on the runtime the call ran
/// on, wherever the drop happens).
struct AbandonedTask(Option<(Peer<RoleClient>, String, tokio::runtime::Handle)>);

impl AbandonedTask {
    fn new(peer: &Peer<RoleClient>, id: String) -> Self {
        AbandonedTask(
            tokio::runtime::Handle::try_current()
                .ok()
                .map(|runtime| (peer.clone(), id, runtime)),
        )
    }

    fn answered(&mut self) {
        self.0 = None;
    }
}

impl Drop for AbandonedTask {
    fn drop(&mut self) {
        let Some((peer, id, runtime)) = self.0.take() else {
            return;
        };
        // A server that answers pings but never this keeps no task here for ever.
        runtime.spawn(async move {
            let cancel = peer.cancel_task(CancelTaskParams::new(id));
            let _ = tokio::time::timeout(super::connection::PROBE_TIMEOUT, cancel).await;
        });
    }
}

/// A request dropped before its answer: the server is told it was cancelled (on the runtime
/// the request was sent from, wherever the drop happens).
pub(super) struct Abandoned(
    Option<(
        Peer<RoleClient>,
        rmcp::model::RequestId,
        tokio::runtime::Handle,
    )>,
);

impl Abandoned {
    pub(super) fn new(peer: &Peer<RoleClient>, id: rmcp::model::RequestId) -> Self {
        Abandoned(
            tokio::runtime::Handle::try_current()
                .ok()
                .map(|runtime| (peer.clone(), id, runtime)),
        )
    }

    pub(super) fn answered(&mut self) {
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

/// A remote result as the tool's value: its structured content, else its text (one block) or
/// its content blocks; an `isError` result is a tool error carrying its text.
pub(super) fn answer(result: CallToolResult) -> Result<Value, ToolError> {
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
        return Err(ToolError::failed(bounded(text())));
    }
    if let Some(structured) = result.structured_content {
        return Ok(structured);
    }
    match result.content.as_slice() {
        [ContentBlock::Text(t)] => Ok(Value::String(t.text.clone())),
        blocks => serde_json::to_value(blocks).map_err(|e| {
            ToolError::failed(format!("the MCP server's content could not be read: {e}"))
        }),
    }
}

/// The most characters of a remote's error text the model reads: a result's bound
/// ([`RemoteOptions::max_result_chars`](super::RemoteOptions::max_result_chars)) cuts what a
/// tool returns, never its error, so an error has its own.
pub(super) const MAX_ERROR_CHARS: usize = 4_000;

/// A remote's error text, cut to [`MAX_ERROR_CHARS`] (saying so).
fn bounded(text: String) -> String {
    match text.char_indices().nth(MAX_ERROR_CHARS) {
        None => text,
        Some((end, _)) => format!(
            "{}… (the server's error was cut: {} characters in all)",
            &text[..end],
            text.chars().count()
        ),
    }
}

/// What the model reads of a failed request: the server's own error message, or what happened,
/// in words (never a Rust type's name, which rmcp's errors carry).
fn said(e: &rmcp::ServiceError) -> String {
    match e {
        rmcp::ServiceError::McpError(data) => bounded(data.message.to_string()),
        rmcp::ServiceError::Timeout { timeout } => format!("no answer within {timeout:?}"),
        rmcp::ServiceError::Cancelled { .. } => "the request was cancelled".into(),
        rmcp::ServiceError::UnexpectedResponse => "its answer was not a tool result".into(),
        rmcp::ServiceError::TransportSend(_) | rmcp::ServiceError::TransportClosed => {
            "the connection was lost".into()
        }
        _ => "the request failed".into(),
    }
}

/// A remote call's duration as the MCP conventions' `mcp.client.operation.duration` histogram
/// (seconds): an `INFO` event of the target `tool_runtime_mcp::metrics` with the field
/// `histogram.mcp.client.operation.duration`, for `tool-runtime-otel`'s histogram layer;
/// `error.type` is `tool_error` for the server's own failure, else the error's kind.
struct Metered<'a> {
    tool: &'a str,
    started: Option<std::time::Instant>,
}

impl<'a> Metered<'a> {
    fn start(tool: &'a str) -> Self {
        let wanted = crate::telemetry::metrics_wanted();
        Metered {
            tool,
            started: wanted.then(std::time::Instant::now),
        }
    }

    fn finish(&self, answer: &Result<Value, ToolError>) {
        let Some(started) = self.started else {
            return;
        };
        tracing::event!(
            target: "tool_runtime_mcp::metrics",
            tracing::Level::INFO,
            histogram.mcp.client.operation.duration = started.elapsed().as_secs_f64(),
            mcp.method.name = "tools/call",
            gen_ai.tool.name = self.tool,
            error.r#type = answer.as_ref().err().map(error_type),
        );
    }
}

/// `error.type` of a failed remote call: `tool_error` for the server's own failure (or a lost
/// connection), else the error's kind.
fn error_type(e: &ToolError) -> &'static str {
    match e {
        ToolError::Failed { .. } => "tool_error",
        other => other.kind(),
    }
}

/// The client span of one remote `tools/call` by OpenTelemetry's MCP conventions
/// (semantic-conventions-genai, Development): `tools/call {tool}`, kind client, with
/// `mcp.method.name`, `jsonrpc.request.id` (the id rmcp gives the request), `gen_ai.tool.name`,
/// `gen_ai.operation.name`, `network.transport` (`pipe`
/// for a child process, `tcp` for HTTP), `server.address` and `server.port` (HTTP: the URL's)
/// and, when it fails, `error.type` and `otel.status_code`. It runs inside the caller's
/// `execute_tool` span; a [`Propagator`](crate::trace::Propagator) makes it the remote server
/// span's parent.
fn client_span(remote: &Inner, tool: &str) -> tracing::Span {
    let transport = match &remote.connect {
        super::connection::Connect::Stdio(_) => "pipe",
        #[cfg(feature = "client-http")]
        super::connection::Connect::Http { .. } => "tcp",
    };
    let span = tracing::info_span!(
        "mcp.client",
        otel.name = tracing::field::Empty,
        otel.kind = "client",
        otel.status_code = tracing::field::Empty,
        mcp.method.name = "tools/call",
        jsonrpc.request.id = tracing::field::Empty,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = tool,
        network.transport = transport,
        server.address = tracing::field::Empty,
        server.port = tracing::field::Empty,
        error.r#type = tracing::field::Empty,
    );
    #[cfg(feature = "client-http")]
    if let super::connection::Connect::Http { url, .. } = &remote.connect
        && !span.is_disabled()
        && let Ok(url) = reqwest::Url::parse(url)
    {
        if let Some(host) = url.host_str() {
            span.record("server.address", host);
        }
        if let Some(port) = url.port_or_known_default() {
            // An `int` as OpenTelemetry has it (`tracing-opentelemetry` exports a `u16` as text).
            span.record("server.port", i64::from(port));
        }
    }
    if !span.is_disabled() {
        span.record("otel.name", format!("tools/call {tool}"));
    }
    span
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A remote's error text reaches the model cut to its bound, saying so: a result's bound
    /// cuts what a tool returns, never its error.
    #[test]
    fn a_remote_error_reaches_the_model_cut_to_its_bound() {
        let long = "é".repeat(MAX_ERROR_CHARS * 3);
        let Err(e) = answer(CallToolResult::error(vec![ContentBlock::text(long)])) else {
            panic!("an isError result is an error")
        };
        let said = e.to_string();
        assert!(
            said.chars().count() < MAX_ERROR_CHARS + 200,
            "{}",
            said.len()
        );
        assert!(said.contains("12000 characters in all"), "{said}");
        let short = answer(CallToolResult::error(vec![ContentBlock::text(
            "no such order",
        )]));
        assert!(
            matches!(&short, Err(e) if e.to_string().contains("no such order") && !e.to_string().contains("cut")),
            "{short:?}"
        );
    }
}
