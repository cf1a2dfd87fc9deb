//! `tools/call`: the caller's context, the tool's visibility, a turn within the limits, the call
//! through the tool set with its time limit and cancellation, and the approval flows.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{CallToolRequestParams, CallToolResponse, ErrorCode, ErrorData};
use rmcp::service::RequestContext;
use serde_json::{Value, json};
use tool_runtime::{CallOutput, Context, Holder, ToolError, ToolRef, ToolSet};

use crate::approval;
use crate::export::{error_result, success};
use crate::limits::Turn;
use crate::server::McpServer;

/// The answer to a call of a tool this caller cannot see: the did-you-mean comes from the
/// tools it may see, and why a tool is hidden is logged for the host, never told the caller.
#[cold]
fn unknown_tool(tools: &ToolSet, name: &str, cx: &Context, caller: &str) -> ErrorData {
    if let Some(hidden) = tools.get(name) {
        crate::server::log_hidden(hidden, cx, caller);
    }
    let unknown = ToolError::UnknownTool {
        name: name.to_owned(),
        did_you_mean: tools.visible_to(cx).closest(name).map(str::to_owned),
    };
    ErrorData::invalid_params(tools.model_message(&unknown), None)
}

impl McpServer {
    pub(crate) async fn call(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let (caller, mut cx) = self.context_for(&context).await?;
        let key = caller.key();
        // Calls held for approval are the caller's, and wait as long as an approval may take
        // (unless the host's context says otherwise).
        if cx.get::<Holder>().is_none() {
            cx.insert(Holder {
                owner: key.clone(),
                ttl: Some(self.limits.approval_timeout),
            });
        }
        // 2026-07-28 requests carry their version; they have no session to wait on.
        let stateless = context
            .protocol_version()
            .is_some_and(|v| !v.has_initialize());
        let tools = self.current();
        let name = request.name.as_ref();
        // A tool this caller may not see is as unknown as one that does not exist.
        let Some(tool) = tools.get(name).filter(|t| t.permits(&cx)) else {
            return Err(unknown_tool(&tools, name, &cx, &key));
        };
        let refuse = |e: ToolError| Ok(error_result(tools.model_message(&e)).into());
        let Some(turn) = self.gates.turn(&key, &self.limits).await else {
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
        let run = run(tools.clone(), tool.clone(), cx.clone(), arguments, turn);
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
                        approval::hold(&tools, *pending, &caller, &request, can_elicit, mrtr).await
                    }
                    None => {
                        let _ = tools.reject(&pending.ticket).await;
                        refuse(ToolError::Failed {
                            message: "no key to sign the approval request".into(),
                        })
                    }
                }
            }
            Ok(Err(ToolError::ApprovalRequired(pending))) => {
                let asked = approval::ask(&tools, tool, *pending, &cx, &context.peer, &self.limits);
                Ok(Box::pin(asked).await.into())
            }
            Ok(Err(e)) => refuse(e),
        }
    }
}

/// Runs one call holding its turn: an async tool, or a sync one that does not block, on this
/// task; a blocking tool on a blocking thread (which keeps the turn until it returns, so a tool
/// stopped by its time limit still counts while its thread runs).
async fn run(
    tools: Arc<ToolSet>,
    tool: ToolRef,
    cx: Arc<Context>,
    arguments: Value,
    turn: Turn,
) -> Result<CallOutput, ToolError> {
    if !tool.blocks() {
        let out = tools.call(&cx, tool.name(), arguments).await;
        drop(turn);
        return out;
    }
    let blocking = tokio::task::spawn_blocking(move || {
        let out = tools.call(&cx, tool.name(), arguments).blocking();
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
