//! Tool results, written in each API's format, ready to append to the conversation.

use serde_json::Value;

use crate::provider::{Api, ToolAnswer};

/// The answers as the messages (Chat: one `tool` message per call; Anthropic, Gemini, Bedrock:
/// one user message with a block or part per call) or input items (Responses: one
/// `function_call_output` per call) that follow the model's turn, in the calls' order.
///
/// Images go where the format takes them in a tool result (Anthropic `image` blocks, Responses
/// `input_image`); elsewhere (Chat, Gemini, Bedrock) they are named in the text.
pub fn render(api: Api, answers: &[ToolAnswer]) -> Vec<Value> {
    if answers.is_empty() {
        return Vec::new();
    }
    api.provider().render(answers)
}
