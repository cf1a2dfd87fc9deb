//! Running one turn's calls: concurrently up to a limit, each the way every call runs.

use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::read::ToolCall;
use super::write::ToolAnswer;
use crate::approvals::{ApprovalStore, StoreError};
use crate::{Context, ToolError, ToolSet};

/// A call that waits for a person: held in the approval store under `ticket`. It is plain data:
/// keep it with the conversation, show `tool` and `arguments` to the person, resume it in any
/// process that reaches the same store.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Deferred {
    /// The call as the model made it (its id is what the result must carry).
    pub call: ToolCall,
    /// The store's key for the held call.
    pub ticket: String,
    /// The tool that will run.
    pub tool: String,
    /// The arguments as validated, with defaults filled in (for the person to read; the store's
    /// copy is what runs).
    pub arguments: Value,
}

/// What became of one call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The call's answer for the model: the tool's output, or the error (an unknown tool,
    /// invalid arguments, a failure).
    Answered(ToolAnswer),
    /// The call needs a person's approval and is held in the approval store.
    Waiting(Deferred),
}

/// Runs `calls` with `cx`, at most `concurrency` at once, and returns one outcome per call, in
/// the calls' order. Every call goes through the tool set (permissions, validation, approval,
/// hooks); one the model got wrong (an unknown tool, invalid arguments, a tool this caller may
/// not use) is answered with the repair message as an error. A call that needs approval is
/// held in `approvals`.
///
/// An async tool runs concurrently with the others; a sync tool runs when its turn is polled,
/// on the thread that polls.
pub async fn run_calls(
    tools: &ToolSet,
    cx: &Context,
    calls: &[ToolCall],
    concurrency: usize,
    approvals: &dyn ApprovalStore,
) -> Result<Vec<Outcome>, StoreError> {
    let runs = calls.iter().map(|call| async move {
        let outcome = tools.call(cx, &call.name, &call.arguments).await;
        (call, outcome)
    });
    let finished: Vec<_> = futures_util::stream::iter(runs)
        .buffered(concurrency.max(1))
        .collect()
        .await;
    let mut outcomes = Vec::with_capacity(finished.len());
    for (call, outcome) in finished {
        outcomes.push(match outcome {
            Ok(out) => {
                Outcome::Answered(ToolAnswer::output(call.id.clone(), call.name.clone(), &out))
            }
            Err(ToolError::ApprovalRequired(pending)) => {
                let held = tools.hold(pending, approvals).await?;
                Outcome::Waiting(Deferred {
                    call: call.clone(),
                    ticket: held.ticket,
                    tool: held.tool,
                    arguments: held.arguments,
                })
            }
            Err(e) => Outcome::Answered(ToolAnswer::error(
                call.id.clone(),
                call.name.clone(),
                tools.model_message(&e),
            )),
        });
    }
    Ok(outcomes)
}
