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
use super::stream::{self, Assemble, Blocks, Delta};
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
        let calls = message["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|b| b.get("toolUse"))
            .map(call_of)
            .collect::<Result<_, _>>()?;
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

    fn stream(&self) -> Box<dyn Assemble> {
        Box::<BedrockStream>::default()
    }
}

/// A block's `toolUse` as a call.
fn call_of(call: &Value) -> Result<ToolCall, String> {
    Ok(ToolCall {
        id: Some(str_at(call, "toolUseId", "a toolUse block")?),
        name: str_at(call, "name", "a toolUse block")?,
        arguments: CallArguments::Value(match &call["input"] {
            Value::Null => Value::Object(Default::default()),
            input => input.clone(),
        }),
    })
}

/// `ConverseStream`
/// (<https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html>):
/// an AWS event stream, whose binary framing [`aws_events`](crate::agent::aws_events) (feature
/// `aws-event-stream`) or the AWS SDK decodes; each event is given here by its type and JSON (`{"contentBlockDelta": {...}}` as one object is read too). `messageStart`,
/// then per block an optional `contentBlockStart` (a `toolUse` with its id and name),
/// `contentBlockDelta`s (`text`, `toolUse.input` fragments, `reasoningContent` text, signature
/// or redacted content) and `contentBlockStop` (a `toolUse` is complete there), then
/// `messageStop` with the stop reason and `metadata` with the usage. Exceptions arrive as
/// events named `...Exception`. Unknown event types are passed over; an unknown delta ends the
/// turn (skipping it would lose part of a block).
#[derive(Default)]
pub(super) struct BedrockStream {
    started: bool,
    blocks: Blocks,
    stop: Option<Value>,
    metadata: Option<Value>,
}

impl Assemble for BedrockStream {
    fn event(
        &mut self,
        name: Option<&str>,
        data: &str,
        out: &mut Vec<Delta>,
    ) -> Result<(), String> {
        let mut event = stream::json(data)?;
        let kind = match name {
            Some(name) => name.to_owned(),
            None => match event.as_object_mut() {
                Some(one) if one.len() == 1 => {
                    let (kind, inner) = one.iter_mut().next().ok_or("an empty event")?;
                    let kind = kind.clone();
                    event = inner.take();
                    kind
                }
                _ => return Err("an event without a type".into()),
            },
        };
        if kind.ends_with("Exception") {
            return Err(format!("the provider sent {kind}: {}", event["message"]));
        }
        if self.stop.is_some() && kind != "metadata" {
            return Err("an event after `messageStop`".into());
        }
        if !self.started && kind != "messageStart" {
            return Err("an event before `messageStart`".into());
        }
        match kind.as_str() {
            "messageStart" => {
                if self.started {
                    return Err("a second `messageStart`".into());
                }
                self.started = true;
            }
            "contentBlockStart" => {
                let index = stream::index(&event, "contentBlockIndex")?;
                let tool = &event["start"]["toolUse"];
                if tool.is_null() {
                    return Err(format!("an unknown block start: {}", event["start"]));
                }
                let mut block = json!({"toolUse": stream::object(tool, "the toolUse")?});
                block["toolUse"]["input"] = json!({});
                self.blocks.open(index, block)?;
            }
            "contentBlockDelta" => {
                let index = stream::index(&event, "contentBlockIndex")?;
                let delta = &event["delta"];
                if !self.blocks.has(index) {
                    // Text and reasoning blocks start with their first delta.
                    let block = if delta.get("text").is_some() {
                        json!({"text": ""})
                    } else if delta.get("reasoningContent").is_some() {
                        json!({"reasoningContent": {}})
                    } else {
                        return Err(format!("a delta for block {index}, which never started"));
                    };
                    self.blocks.open(index, block)?;
                }
                let (block, partial) = self.blocks.get(index)?;
                if let Some(text) = delta["text"].as_str() {
                    stream::append(block, "text", text)?;
                    out.push(Delta::Text(text.into()));
                } else if let Some(more) = delta["toolUse"]["input"].as_str() {
                    if block.get("toolUse").is_none() {
                        return Err(format!(
                            "tool input for block {index}, which is not a toolUse"
                        ));
                    }
                    partial.push_str(more);
                } else if let Some(reasoning) = delta.get("reasoningContent") {
                    if !block["reasoningContent"].is_object() {
                        return Err(format!(
                            "reasoning for block {index}, which is not reasoning"
                        ));
                    }
                    let content = &mut block["reasoningContent"];
                    if let Some(text) = reasoning["text"].as_str() {
                        if content["reasoningText"].is_null() {
                            content["reasoningText"] = json!({});
                        }
                        stream::append(&mut content["reasoningText"], "text", text)?;
                        out.push(Delta::Thinking(text.into()));
                    } else if let Some(signature) = reasoning.get("signature") {
                        if !content["reasoningText"].is_object() {
                            content["reasoningText"] = json!({});
                        }
                        content["reasoningText"]["signature"] = signature.clone();
                    } else if let Some(redacted) = reasoning.get("redactedContent") {
                        content["redactedContent"] = redacted.clone();
                    } else {
                        return Err(format!("an unknown reasoning delta: {reasoning}"));
                    }
                } else {
                    return Err(format!("an unknown delta: {delta}"));
                }
            }
            "contentBlockStop" => {
                let index = stream::index(&event, "contentBlockIndex")?;
                let (block, partial) = self.blocks.close(index)?;
                if let Some(tool) = block.get_mut("toolUse") {
                    let what = format!("the input of toolUse {}", tool["name"]);
                    tool["input"] = stream::parse_input(&partial, &what)?;
                    out.push(Delta::Call(call_of(tool)?));
                }
            }
            "messageStop" => self.stop = Some(event),
            "metadata" => self.metadata = Some(event),
            // Event types added later carry nothing of the blocks read here.
            _ => {}
        }
        Ok(())
    }

    fn finish(&mut self, _out: &mut Vec<Delta>) -> Result<Value, String> {
        let Some(stop) = self.stop.take() else {
            return Err("the stream ended before `messageStop`".into());
        };
        let content = self.blocks.take_closed()?;
        let mut response = json!({
            "output": {"message": {"role": "assistant", "content": content}},
            "stopReason": stop["stopReason"],
        });
        if let Some(fields) = stop.get("additionalModelResponseFields") {
            response["additionalModelResponseFields"] = fields.clone();
        }
        if let Some(metadata) = self.metadata.take() {
            for key in ["usage", "metrics"] {
                if let Some(v) = metadata.get(key) {
                    response[key] = v.clone();
                }
            }
        }
        Ok(response)
    }
}
