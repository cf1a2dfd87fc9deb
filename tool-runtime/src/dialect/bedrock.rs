//! Amazon Bedrock Converse (`POST /model/{modelId}/converse`,
//! <https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html>).
//!
//! - Tools go in `toolConfig.tools[]` as `{toolSpec: {name, description, inputSchema: {json},
//!   strict}}` (`ToolSpecification`); a strict schema follows the rules of Claude's strict tool
//!   use on Bedrock (every object closed; numeric bounds, lengths, `maxItems` and recursion
//!   unsupported), so the lowering and the per-request limits are Anthropic's.
//! - Structured output is `outputConfig: {textFormat: {type: "json_schema", structure:
//!   {jsonSchema: {schema, name}}}}`, the schema given as JSON *text* (`JsonSchemaDefinition`:
//!   "Type: String"); the answer comes back as a `text` block.
//! - A response's `output.message` holds `content[]` blocks, each an object with one key:
//!   `text`, `toolUse` (`toolUseId`, `name`, `input` as a value), `reasoningContent`
//!   (`reasoningText` with its `signature`, or `redactedContent`), which the next request must
//!   repeat unchanged; `stopReason` is `end_turn`, `tool_use`, `max_tokens`, `stop_sequence`,
//!   `guardrail_intervened`, `content_filtered` or `model_context_window_exceeded`.
//! - Results go back as one `user` message of `toolResult` blocks (`toolUseId`, `content` of
//!   `json` or `text` blocks, `status: "error"` on failures; `ToolResultBlock`); images are named
//!   in the text, as Converse's image blocks carry bytes, not URLs.

use serde_json::{Value, json};

use super::anthropic::{check_strict_limits, lower};
use super::{
    Api, CallArguments, Dialect, ExportError, Exported, Finish, Lowered, Reply, ToolAnswer,
    ToolCall, str_at,
};
use crate::tool::Tool;

/// Amazon Bedrock Converse.
pub(super) struct BedrockConverse;

impl Dialect for BedrockConverse {
    fn name(&self) -> &'static str {
        "Amazon Bedrock Converse"
    }

    fn lower(&self, canonical: &Value) -> Lowered {
        lower(canonical)
    }

    fn tool(&self, name: &str, description: &str, input: &Value) -> Exported {
        let Lowered {
            schema,
            strict,
            reasons,
        } = lower(input);
        let mut spec = serde_json::Map::new();
        spec.insert("name".into(), name.into());
        // `description` has a minimum length of 1: an empty one is left out.
        if !description.is_empty() {
            spec.insert("description".into(), description.into());
        }
        spec.insert("inputSchema".into(), json!({ "json": schema }));
        spec.insert("strict".into(), strict.into());
        Exported {
            json: json!({ "toolSpec": spec }),
            strict,
            reasons,
        }
    }

    fn tools(&self, entries: Vec<(&Tool, Exported)>) -> Result<Vec<Value>, ExportError> {
        check_strict_limits(Api::BedrockConverse, &entries)?;
        Ok(entries.into_iter().map(|(_, e)| e.json).collect())
    }

    fn structured_output(&self, name: &str, canonical: &Value) -> Exported {
        let Lowered {
            schema,
            strict,
            reasons,
        } = lower(canonical);
        let json = json!({ "textFormat": { "type": "json_schema", "structure": {
            "jsonSchema": { "schema": schema.to_string(), "name": name }
        } } });
        Exported {
            json,
            strict,
            reasons,
        }
    }

    fn read_reply(&self, raw: &Value) -> Result<Reply, String> {
        let blocks = raw["output"]["message"]["content"]
            .as_array()
            .ok_or("no `output.message.content` array")?;
        // Reasoning blocks are the model's thoughts, not its answer.
        let text: String = blocks.iter().filter_map(|b| b["text"].as_str()).collect();
        let finish = match raw["stopReason"].as_str() {
            Some("end_turn" | "stop_sequence") => Finish::Completed,
            Some(r @ ("max_tokens" | "model_context_window_exceeded")) => {
                Finish::Truncated { reason: r.into() }
            }
            Some(r @ ("guardrail_intervened" | "content_filtered")) => {
                Finish::Refused { message: r.into() }
            }
            Some(other) => Finish::Other {
                reason: other.into(),
            },
            None => return Err("no `stopReason`".into()),
        };
        Ok(Reply::new(text, finish))
    }

    fn read_calls(&self, raw: &Value) -> Result<(Vec<ToolCall>, Vec<Value>), String> {
        let message = &raw["output"]["message"];
        let mut calls = Vec::new();
        for block in message["content"].as_array().into_iter().flatten() {
            let Some(call) = block.get("toolUse") else {
                continue;
            };
            calls.push(ToolCall {
                id: Some(str_at(call, "toolUseId", "a toolUse block")?),
                name: str_at(call, "name", "a toolUse block")?,
                arguments: CallArguments::Value(match &call["input"] {
                    Value::Null => Value::Object(Default::default()),
                    input => input.clone(),
                }),
            });
        }
        Ok((calls, vec![message.clone()]))
    }

    /// One user message of `toolResult` blocks: an object output as a `json` block, anything
    /// else as text.
    fn render(&self, answers: &[ToolAnswer]) -> Vec<Value> {
        let blocks: Vec<Value> = answers
            .iter()
            .map(|a| {
                let content = match &a.value {
                    Some(v @ Value::Object(_)) if !a.is_error => json!([{ "json": v }]),
                    _ => json!([{ "text": a.text() }]),
                };
                let mut result = json!({ "toolUseId": a.id(), "content": content });
                if a.is_error {
                    result["status"] = "error".into();
                }
                json!({ "toolResult": result })
            })
            .collect();
        vec![json!({"role": "user", "content": blocks})]
    }

    fn user_message(&self, text: &str) -> Value {
        json!({"role": "user", "content": [{"text": text}]})
    }
}
