//! Tool calls, read from a model's raw response in its API's format.

use serde_json::Value;

use crate::provider::{Api, Finish, ReadError, Reply, ToolCall};

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
/// an id) makes the whole response unreadable: answering it would break the conversation. So
/// does a response cut off by the output token limit that holds tool calls
/// ([`ReadError::Malformed`]): its last call may have lost arguments, and APIs that send them
/// parsed (Anthropic, Gemini, Bedrock) give no sign of which, so none runs. (A streamed
/// response tells: each call's end is an event, and the agent runs a call once it ended, never
/// one the cut left open.)
pub fn read_turn(api: Api, raw: &Value) -> Result<ModelTurn, ReadError> {
    let turn = read_parts(api, raw)?;
    if let (Finish::Truncated { reason }, false) = (&turn.reply.finish, turn.calls.is_empty()) {
        return Err(ReadError::Malformed {
            message: format!(
                "the response was cut off by the output token limit (`{reason}`) with {} tool \
                 call(s), the last of which may be incomplete: none runs; raise the limit \
                 (`Request::max_tokens`) or ask for less",
                turn.calls.len()
            ),
        });
    }
    Ok(turn)
}

/// [`read_turn`] without its rule on cut-off responses: a streamed response's whole, once its
/// calls, each checked complete as it ended, were run.
pub(crate) fn read_parts(api: Api, raw: &Value) -> Result<ModelTurn, ReadError> {
    let provider = api.provider();
    let reply = provider.read_reply(raw)?;
    let (calls, append) = provider.read_calls(raw)?;
    Ok(ModelTurn {
        calls,
        reply,
        append,
    })
}
