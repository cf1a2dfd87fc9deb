//! Tool calls, read from a model's raw response in its API's format.

use serde_json::Value;

use crate::provider::{Api, ReadError, Reply, ToolCall};

/// What one response holds: the tool calls (in the order the model wrote them), the text and
/// stop reason, and what to append to the conversation for this turn.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelTurn {
    /// The tool calls, in the order the model wrote them; empty when it answered in text.
    pub calls: Vec<ToolCall>,
    /// The response's text and why the model stopped.
    pub reply: Reply,
    /// The assistant's message (Chat, Anthropic, Gemini, Bedrock) or output items (Responses),
    /// as the next request must repeat them.
    pub append: Vec<Value>,
}

/// Reads a raw response of `api`: its tool calls, its text and stop reason, and the turn to
/// append to the conversation. A call without a name (or, where the API numbers calls, without
/// an id) makes the whole response unreadable: answering it would break the conversation.
pub fn read_turn(api: Api, raw: &Value) -> Result<ModelTurn, ReadError> {
    let provider = api.provider();
    let reply = provider.read_reply(raw)?;
    let (calls, append) = provider.read_calls(raw)?;
    Ok(ModelTurn {
        calls,
        reply,
        append,
    })
}
