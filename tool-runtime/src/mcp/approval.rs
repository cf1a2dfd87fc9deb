//! Asking the person at the client to approve a held call (MCP elicitation). Only an answer of
//! exactly `{"approve": true}` approves; anything else (another shape, another type, an extra
//! field, no answer in time) is a decline, and the held call is dropped.

use rmcp::RoleServer;
use rmcp::model::{ContentBlock, ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::Peer;
use serde_json::Value;

use super::{Limits, error_result, success};
use crate::wording::fill;
use crate::{Context, PendingCall, Tool, ToolSet};

/// The form the person fills in.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Approval {
    /// Run this action now?
    #[allow(dead_code)] // read through `approves`, which is stricter than serde
    approve: bool,
}

rmcp::elicit_safe!(Approval);

/// Whether an elicitation answer approves: an object with one member, `approve`, that is `true`.
/// (A key given twice never reaches here: the stdio transport refuses such a line.)
pub(crate) fn approves(content: Option<&Value>) -> bool {
    matches!(content, Some(Value::Object(m)) if m.len() == 1 && m.get("approve") == Some(&Value::Bool(true)))
}

/// Asks, and runs the call once when approved; otherwise drops it. Always answers.
pub(super) async fn ask(
    tools: &ToolSet,
    tool: &'static Tool,
    pending: PendingCall,
    cx: &Context,
    peer: &Peer<RoleServer>,
    limits: &Limits,
) -> rmcp::model::CallToolResult {
    let wording = tools.wording();
    let can_ask = peer
        .peer_info()
        .is_some_and(|i| i.capabilities.elicitation.is_some());
    if !can_ask {
        // Nobody can be asked: the held call is dropped, and the model is told so.
        tools.reject(pending);
        return error_result(wording.approval_unavailable.to_string());
    }
    let schema = match ElicitationSchema::from_type::<Approval>() {
        Ok(s) => s,
        Err(e) => {
            tools.reject(pending);
            return error_result(fill(
                &wording.approval_failed,
                &[("reason", &e.to_string())],
            ));
        }
    };
    let question = format!("Approve `{}` with {}?", pending.tool, pending.arguments);
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: question,
        requested_schema: schema,
    };
    let answer = peer
        .create_elicitation_with_timeout(params, Some(limits.approval_timeout))
        .await;
    match answer {
        Ok(r) if r.action == ElicitationAction::Accept && approves(r.content.as_ref()) => {
            match tools.resume(cx, pending).await {
                Ok(out) => success(tool, out),
                Err(e) => error_result(tools.model_message(&e)),
            }
        }
        Ok(_) => {
            tools.reject(pending);
            error_result(wording.approval_declined.to_string())
        }
        Err(e) => {
            tools.reject(pending);
            let reason = e.to_string();
            rmcp::model::CallToolResult::error(vec![ContentBlock::text(fill(
                &wording.approval_failed,
                &[("reason", &reason)],
            ))])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::approves;
    use serde_json::json;

    #[test]
    fn only_exactly_approve_true_approves() {
        assert!(approves(Some(&json!({"approve": true}))));
        for no in [
            json!({"approve": false}),
            json!({"approve": "true"}),
            json!({"approve": 1}),
            json!([true]),
            json!({"approve": true, "also": 1}),
            json!({}),
            json!(true),
        ] {
            assert!(!approves(Some(&no)), "{no}");
        }
        assert!(!approves(None));
    }
}
