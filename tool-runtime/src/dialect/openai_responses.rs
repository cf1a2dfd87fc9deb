//! OpenAI Responses (`POST /v1/responses`, <https://platform.openai.com/docs/api-reference/responses>):
//! flat tools `{type: "function", name, description, parameters, strict}`, structured output as
//! `text: {format: {type: "json_schema", ...}}`, replies as `output[]` items (`message` with
//! `output_text` or `refusal` parts, `function_call` with `call_id`, `name`, `arguments` as JSON
//! text, `reasoning`), results as one `function_call_output` item per call. Every output item
//! is kept in the next request's `input`, reasoning included. The schema lowering is OpenAI's
//! strict mode, as for Chat Completions.

use serde_json::{Value, json};

use super::openai_chat::strict;
use super::{
    CallArguments, Dialect, ExportError, Exported, Finish, Lowered, Reply, ToolAnswer, ToolCall,
    str_at,
};
use crate::host::Content;
use crate::tool::Tool;

/// OpenAI Responses.
pub(super) struct OpenAiResponses;

impl Dialect for OpenAiResponses {
    fn name(&self) -> &'static str {
        "OpenAI Responses"
    }

    fn lower(&self, canonical: &Value) -> Lowered {
        strict(canonical)
    }

    fn tool(&self, name: &str, description: &str, input: &Value) -> Exported {
        let Lowered {
            schema,
            strict,
            reasons,
        } = strict(input);
        let json = json!({ "type": "function", "name": name, "description": description, "parameters": schema, "strict": strict });
        Exported {
            json,
            strict,
            reasons,
        }
    }

    fn tools(&self, entries: Vec<(&Tool, Exported)>) -> Result<Vec<Value>, ExportError> {
        Ok(entries.into_iter().map(|(_, e)| e.json).collect())
    }

    fn structured_output(&self, name: &str, canonical: &Value) -> Exported {
        let Lowered {
            schema,
            strict,
            reasons,
        } = strict(canonical);
        let json = json!({ "format": { "type": "json_schema", "name": name, "schema": schema, "strict": strict } });
        Exported {
            json,
            strict,
            reasons,
        }
    }

    fn read_reply(&self, raw: &Value) -> Result<Reply, String> {
        let output = raw["output"].as_array().ok_or("no `output` array")?;
        let mut text = String::new();
        for item in output.iter().filter(|i| i["type"] == "message") {
            for part in item["content"].as_array().into_iter().flatten() {
                match part["type"].as_str() {
                    Some("refusal") => {
                        let message = part["refusal"].as_str().unwrap_or_default().into();
                        return Ok(Reply {
                            text: None,
                            finish: Finish::Refused { message },
                        });
                    }
                    Some("output_text") => text.push_str(part["text"].as_str().unwrap_or_default()),
                    _ => {}
                }
            }
        }
        let finish = match raw["status"].as_str() {
            Some("completed") => Finish::Completed,
            Some("incomplete") => {
                let reason = raw["incomplete_details"]["reason"]
                    .as_str()
                    .unwrap_or("incomplete");
                if reason == "content_filter" {
                    Finish::Refused {
                        message: "content_filter".into(),
                    }
                } else {
                    Finish::Truncated {
                        reason: reason.into(),
                    }
                }
            }
            Some(other) => Finish::Other {
                reason: other.into(),
            },
            None => return Err("no `status`".into()),
        };
        Ok(Reply::new(text, finish))
    }

    fn read_calls(&self, raw: &Value) -> Result<(Vec<ToolCall>, Vec<Value>), String> {
        let items = raw["output"].as_array().cloned().unwrap_or_default();
        let mut calls = Vec::new();
        for item in items.iter().filter(|i| i["type"] == "function_call") {
            calls.push(ToolCall {
                id: Some(str_at(item, "call_id", "a function_call item")?),
                name: str_at(item, "name", "a function_call item")?,
                arguments: CallArguments::Text(str_at(item, "arguments", "a function_call item")?),
            });
        }
        Ok((calls, items))
    }

    /// The output is text, or `input_text`/`input_image` parts when there are images.
    fn render(&self, answers: &[ToolAnswer]) -> Vec<Value> {
        answers
            .iter()
            .map(|a| {
                let output = if a.has_images() {
                    Value::Array(
                        a.content
                            .iter()
                            .map(|c| match c {
                                Content::ImageUrl { url } => {
                                    json!({"type": "input_image", "image_url": url})
                                }
                                Content::Text { text } => {
                                    json!({"type": "input_text", "text": text})
                                }
                            })
                            .collect(),
                    )
                } else {
                    Value::String(a.text())
                };
                json!({"type": "function_call_output", "call_id": a.id(), "output": output})
            })
            .collect()
    }

    fn user_message(&self, text: &str) -> Value {
        json!({"role": "user", "content": text})
    }
}
