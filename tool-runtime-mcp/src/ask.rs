//! A running tool's own questions ([`Unanswered`]) as MCP asks them: elicitation forms, by
//! the question's key. Where they are asked (a session's open request, a 2026-07-28 result, a
//! task's `input_required`) the call runs again with the answers ([`tool_runtime::Answers`]).

use rmcp::model::InputRequests;
use serde_json::{Value, json};
use tool_runtime::Unanswered;

/// The questions as `inputRequests`; a question whose form MCP cannot carry (not an object of
/// primitive properties) is an error naming it.
pub(crate) fn requests(asked: &Unanswered) -> Result<InputRequests, String> {
    let mut requests = InputRequests::new();
    for q in &asked.questions {
        let request = json!({
            "method": "elicitation/create",
            "params": {"mode": "form", "message": q.message, "requestedSchema": q.form},
        });
        let request = serde_json::from_value(request).map_err(|e| {
            format!(
                "the tool's question `{}` is not an elicitation form: {e}",
                q.key
            )
        })?;
        requests.insert(q.key.clone(), request);
    }
    Ok(requests)
}

/// The `inputRequests` as JSON, for a task record.
pub(crate) fn requests_value(asked: &Unanswered) -> Result<Value, String> {
    requests(asked).and_then(|r| serde_json::to_value(r).map_err(|e| e.to_string()))
}
