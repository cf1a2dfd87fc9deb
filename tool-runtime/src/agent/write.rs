//! Tool results, written in each API's format, ready to append to the conversation.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::{Api, CallOutput, Content};

/// One call's answer, in no API's format yet.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolAnswer {
    /// The id of the call it answers.
    pub call_id: Option<String>,
    /// The tool's name as the model wrote it (Gemini matches results by name).
    pub name: String,
    /// The call failed: invalid arguments, an unknown or forbidden tool, the tool's own error.
    pub is_error: bool,
    /// What the model reads: the tool's `to_model` summary or its output as JSON, or the
    /// error's repair message.
    pub content: Vec<Content>,
    /// The output as JSON when the tool gave no summary (Gemini's `functionResponse` carries
    /// an object).
    pub value: Option<Value>,
}

impl ToolAnswer {
    /// The answer of a call that ran.
    pub fn output(call_id: Option<String>, name: String, out: &CallOutput) -> Self {
        let value = out.summary().is_none().then(|| out.value().clone());
        ToolAnswer {
            call_id,
            name,
            is_error: false,
            content: out.model().0,
            value,
        }
    }

    /// The answer of a call that failed or did not run.
    pub fn error(call_id: Option<String>, name: String, message: String) -> Self {
        ToolAnswer {
            call_id,
            name,
            is_error: true,
            content: vec![Content::Text { text: message }],
            value: None,
        }
    }

    /// The content as text, images named by their URL (for formats that carry no images).
    pub fn text(&self) -> String {
        crate::host::as_text(&self.content)
    }

    fn has_images(&self) -> bool {
        self.content
            .iter()
            .any(|c| matches!(c, Content::ImageUrl { .. }))
    }
}

/// The answers as the messages (Chat: one `tool` message per call; Anthropic and Gemini: one
/// user message with a block or part per call) or input items (Responses: one
/// `function_call_output` per call) that follow the model's turn, in the calls' order.
///
/// Images go where the format takes them in a tool result (Anthropic `image` blocks, Responses
/// `input_image`); elsewhere (Chat, Gemini) they are named in the text.
pub fn render(api: Api, answers: &[ToolAnswer]) -> Vec<Value> {
    if answers.is_empty() {
        return Vec::new();
    }
    let id = |a: &ToolAnswer| a.call_id.clone().unwrap_or_default();
    match api {
        Api::OpenAiChat => answers
            .iter()
            .map(|a| json!({"role": "tool", "tool_call_id": id(a), "content": a.text()}))
            .collect(),
        Api::OpenAiResponses => answers
            .iter()
            .map(|a| {
                let output = if a.has_images() {
                    Value::Array(
                        a.content
                            .iter()
                            .map(|c| match c {
                                Content::Text { text } => {
                                    json!({"type": "input_text", "text": text})
                                }
                                Content::ImageUrl { url } => {
                                    json!({"type": "input_image", "image_url": url})
                                }
                            })
                            .collect(),
                    )
                } else {
                    Value::String(a.text())
                };
                json!({"type": "function_call_output", "call_id": id(a), "output": output})
            })
            .collect(),
        Api::Anthropic => {
            let blocks: Vec<Value> = answers
                .iter()
                .map(|a| {
                    let content: Vec<Value> = a
                        .content
                        .iter()
                        .map(|c| match c {
                            Content::Text { text } => json!({"type": "text", "text": text}),
                            Content::ImageUrl { url } => {
                                json!({"type": "image", "source": {"type": "url", "url": url}})
                            }
                        })
                        .collect();
                    let mut block =
                        json!({"type": "tool_result", "tool_use_id": id(a), "content": content});
                    if a.is_error {
                        block["is_error"] = Value::Bool(true);
                    }
                    block
                })
                .collect();
            vec![json!({"role": "user", "content": blocks})]
        }
        Api::Gemini => {
            let parts: Vec<Value> = answers
                .iter()
                .map(|a| {
                    let response = if a.is_error {
                        json!({"error": a.text()})
                    } else {
                        match &a.value {
                            Some(v) => json!({"output": v}),
                            None => json!({"output": a.text()}),
                        }
                    };
                    let mut call = json!({"name": a.name, "response": response});
                    if let Some(id) = &a.call_id {
                        call["id"] = Value::String(id.clone());
                    }
                    json!({"functionResponse": call})
                })
                .collect();
            vec![json!({"role": "user", "parts": parts})]
        }
        Api::Mcp => Vec::new(),
    }
}
