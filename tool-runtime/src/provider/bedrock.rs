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
//! - A conversation only appends: the system text and `toolConfig.tools` are written once; a
//!   tool withdrawn or offered again is a `system`-role message of `toolRemoval` /
//!   `toolAddition` blocks (`ToolRemovalBlock`, `ToolAdditionBlock`, `ToolReference`:
//!   <https://docs.aws.amazon.com/sdk-for-python/v1/reference/clients/bedrock-runtime/structures/ToolAdditionBlock/>,
//!   `ConversationRole` `system`). Cache points (`CachePointBlock`,
//!   <https://docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html>) close the
//!   system text, the tools and the last message; the usage reads `cacheReadInputTokens` and
//!   `cacheWriteInputTokens` beside `inputTokens` (`TokenUsage`). Claude's prefix-check
//!   setting goes in `additionalModelRequestFields`
//!   (<https://docs.aws.amazon.com/bedrock/latest/userguide/claude-messages-thinking-block-binding.html>).

use serde_json::{Value, json};

use super::anthropic::{fit_strict_limits, lower};
use super::request::path_segment;
use super::stream::{self, Assemble, Blocks, Delta, StreamEvent};
use super::turn::{halves, names, words};
use super::{
    CallArguments, ExportError, Exported, Finish, Framing, HttpRequest, Lowered, Message, Provider,
    ReadError, Reply, Request, RequestError, SentRequest, ToolAnswer, ToolCall, ToolChoice,
    ToolResult, Turn, str_at,
};
use crate::tool::Tool;

/// Amazon Bedrock Converse.
pub(super) struct BedrockConverse;

impl Provider for BedrockConverse {
    fn id(&self) -> &'static str {
        "bedrock-converse"
    }

    fn name(&self) -> &'static str {
        "Amazon Bedrock Converse"
    }

    fn lower(&self, canonical: &Value) -> Lowered {
        lower(canonical)
    }

    fn tool(&self, name: &str, description: &str, input: &Value) -> Exported {
        lower(input).wrap(|schema, strict| {
            let mut spec = serde_json::Map::new();
            spec.insert("name".into(), name.into());
            // `description` has a minimum length of 1: an empty one is left out.
            if !description.is_empty() {
                spec.insert("description".into(), description.into());
            }
            spec.insert("inputSchema".into(), json!({ "json": schema }));
            spec.insert("strict".into(), strict.into());
            json!({ "toolSpec": spec })
        })
    }

    fn tools(&self, mut entries: Vec<(&Tool, Exported)>) -> Result<Vec<Value>, ExportError> {
        fit_strict_limits(&mut entries);
        Ok(entries.into_iter().map(|(_, e)| e.json).collect())
    }

    fn structured_output(&self, name: &str, canonical: &Value) -> Exported {
        lower(canonical).wrap(|schema, _| {
            json!({ "textFormat": { "type": "json_schema", "structure": {
                "jsonSchema": { "schema": schema.to_string(), "name": name }
            } } })
        })
    }

    /// `POST /model/{modelId}/converse` (streamed: `/converse-stream`, an AWS event stream):
    /// the system text as `system`, tools and the tool choice in `toolConfig`, the token limit
    /// in `inferenceConfig`, structured output as `outputConfig`. Converse has no tool choice
    /// "none".
    fn request(
        &self,
        request: &Request<'_>,
        messages: &[Value],
    ) -> Result<HttpRequest, RequestError> {
        // Cache points (Bedrock caches only where one stands, at most 4 a request): after the
        // system text, after the tools, and at the end of the last message, so that each
        // request reads what the one before it wrote.
        let point = request.cache.marks.then(|| {
            let mut point = json!({"type": "default"});
            if let Some(ttl) = request.cache.ttl.written() {
                point["ttl"] = ttl.into();
            }
            json!({"cachePoint": point})
        });
        let mut body = json!({"messages": messages});
        if let (Some(point), Some(last)) = (
            &point,
            body["messages"]
                .as_array_mut()
                .and_then(|m| m.iter_mut().rev().find(|m| m["role"] != "system")),
        ) && let Some(content) = last["content"].as_array_mut()
        {
            content.push(point.clone());
        }
        if let Some(system) = &request.system {
            body["system"] = json!([{"text": system}]);
            if let (Some(point), Some(system)) = (&point, body["system"].as_array_mut()) {
                system.push(point.clone());
            }
        }
        if let Some(mut tools) = request.tool_entries(self)? {
            if let Some(point) = &point {
                tools.push(point.clone());
            }
            body["toolConfig"] = json!({"tools": tools});
        }
        // Claude on Bedrock takes Anthropic's prefix-check setting as a model field (the AWS
        // guide's "preserved thinking": `thinking.block_binding` and the beta, passed through
        // `additionalModelRequestFields`).
        if let Some(mismatch) = request.prefix_mismatch {
            body["additionalModelRequestFields"] = json!({
                "anthropic_beta": [super::anthropic::THINKING_BINDING_BETA],
                "thinking": {"block_binding": {"prefix_mismatch_behavior": mismatch.written()}}
            });
        }
        let choice = match &request.tool_choice {
            ToolChoice::Auto => None,
            ToolChoice::None => {
                return Err(RequestError::Unsupported {
                    provider: self.name(),
                    what: "tool choice `none` (leave the tools out instead)".into(),
                });
            }
            ToolChoice::Required => Some(json!({"any": {}})),
            ToolChoice::Tool(name) => Some(json!({"tool": {"name": name}})),
        };
        if let Some(choice) = choice {
            body["toolConfig"]["toolChoice"] = choice;
        }
        if let Some(n) = request.max_tokens {
            body["inferenceConfig"] = json!({"maxTokens": n});
        }
        if let Some(format) = request.output_field(self) {
            body["outputConfig"] = format;
        }
        let model = path_segment(&request.model);
        let path = if request.stream {
            format!("/model/{model}/converse-stream")
        } else {
            format!("/model/{model}/converse")
        };
        let http = HttpRequest::post(path, request.finish_body(body), false);
        Ok(if request.stream {
            http.header("accept", "application/vnd.amazon.eventstream")
        } else {
            http
        })
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

    /// `inputTokens` leaves out the tokens read from and written to the cache
    /// (`cacheReadInputTokens`, `cacheWriteInputTokens`): they are added to it.
    fn read_info(&self, raw: &Value) -> super::ResponseInfo {
        super::ResponseInfo::read(
            raw,
            &[],
            &[],
            &["usage", "inputTokens"],
            &["usage", "outputTokens"],
        )
        .with_cache(
            raw,
            &["usage", "cacheReadInputTokens"],
            &["usage", "cacheWriteInputTokens"],
            true,
        )
    }

    /// A `system` message of `toolRemoval` and `toolAddition` blocks, each naming a tool
    /// declared in `toolConfig.tools` (Converse's `ToolRemovalBlock`/`ToolAdditionBlock`, "used
    /// within a system role message"; the AWS references give the members `tool.name` and
    /// `tool.serverName` (for MCP tools), and no values for `tool.type`, which is left out).
    fn tool_change(&self, added: &[String], removed: &[String]) -> Option<Value> {
        let removals = removed
            .iter()
            .map(|n| json!({"toolRemoval": {"tool": {"name": n}}}));
        let additions = added
            .iter()
            .map(|n| json!({"toolAddition": {"tool": {"name": n}}}));
        let content: Vec<Value> = removals.chain(additions).collect();
        Some(json!({"role": "system", "content": content}))
    }

    /// A `system` message (Converse's `ConversationRole` has `system`).
    fn instruction_message(&self, text: &str) -> Value {
        json!({"role": "system", "content": [{"text": text}]})
    }

    fn prefix_members(&self) -> &'static [&'static str] {
        &["system", "toolConfig.tools", "messages"]
    }

    fn conventions_name(&self) -> Option<&'static str> {
        Some("aws.bedrock")
    }

    fn read_reply(&self, raw: &Value) -> Result<Reply, ReadError> {
        let blocks = raw["output"]["message"]["content"]
            .as_array()
            .ok_or_else(|| ReadError::missing("`output.message.content` array", raw))?;
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
            None => return Err(ReadError::missing("`stopReason` string", raw)),
        };
        Ok(Reply::new(text, finish))
    }

    fn read_calls(&self, raw: &Value) -> Result<(Vec<ToolCall>, Vec<Value>), ReadError> {
        let message = &raw["output"]["message"];
        Ok((calls_in(&message["content"])?, vec![message.clone()]))
    }

    fn framing(&self) -> Framing {
        Framing::AwsEventStream
    }

    fn assembler(&self) -> Box<dyn Assemble> {
        Box::<BedrockStream>::default()
    }

    fn write_response(&self, turn: &Turn) -> Option<Value> {
        Some(json!({
            "output": {"message": {"role": "assistant", "content": blocks_of(turn)}},
            "stopReason": stop_reason(turn),
            "usage": usage_of(turn),
            "metrics": {"latencyMs": 0},
        }))
    }

    /// `messageStart`; per block a `contentBlockStart` (tool uses only), deltas in two pieces
    /// and `contentBlockStop`; `messageStop` with the stop reason; `metadata`.
    fn write_stream(&self, turn: &Turn) -> Option<Vec<StreamEvent>> {
        let event = |name: &str, v: Value| StreamEvent::named(name, v.to_string());
        let mut events = vec![event("messageStart", json!({"role": "assistant"}))];
        for (index, block) in blocks_of(turn).into_iter().enumerate() {
            let delta = |d: Value| {
                event(
                    "contentBlockDelta",
                    json!({"contentBlockIndex": index, "delta": d}),
                )
            };
            if let Some(tool) = block.get("toolUse") {
                events.push(event(
                    "contentBlockStart",
                    json!({"contentBlockIndex": index,
                    "start": {"toolUse": {"toolUseId": tool["toolUseId"], "name": tool["name"]}}}),
                ));
                for piece in halves(&tool["input"].to_string()) {
                    events.push(delta(json!({"toolUse": {"input": piece}})));
                }
            } else if let Some(reasoning) = block.get("reasoningContent") {
                let text = &reasoning["reasoningText"];
                for piece in words(text["text"].as_str().unwrap_or_default()) {
                    events.push(delta(json!({"reasoningContent": {"text": piece}})));
                }
                events.push(delta(
                    json!({"reasoningContent": {"signature": text["signature"]}}),
                ));
            } else {
                for piece in words(block["text"].as_str().unwrap_or_default()) {
                    events.push(delta(json!({"text": piece})));
                }
            }
            events.push(event(
                "contentBlockStop",
                json!({"contentBlockIndex": index}),
            ));
        }
        events.push(event(
            "messageStop",
            json!({"stopReason": stop_reason(turn)}),
        ));
        events.push(event(
            "metadata",
            json!({
            "usage": usage_of(turn),
            "metrics": {"latencyMs": 0}}),
        ));
        Some(events)
    }

    fn read_request(&self, request: &HttpRequest) -> Result<SentRequest, ReadError> {
        let body = &request.body;
        let mut messages = Vec::new();
        for m in body["messages"]
            .as_array()
            .ok_or_else(|| ReadError::missing("`messages` array", body))?
        {
            let blocks = m["content"].as_array().map(Vec::as_slice).unwrap_or(&[]);
            let text: String = blocks.iter().filter_map(|b| b["text"].as_str()).collect();
            match m["role"].as_str() {
                Some("assistant") => messages.push(Message::Model {
                    text: (!text.is_empty()).then_some(text),
                    calls: calls_in(&m["content"])?,
                }),
                Some("user") => {
                    let results: Vec<ToolResult> = blocks
                        .iter()
                        .filter_map(|b| b.get("toolResult"))
                        .map(|r| {
                            let said: String = r["content"]
                                .as_array()
                                .into_iter()
                                .flatten()
                                .map(|c| match (&c["text"], &c["json"]) {
                                    (Value::String(t), _) => t.clone(),
                                    (_, json) => json.to_string(),
                                })
                                .collect();
                            ToolResult::new(
                                r["toolUseId"].as_str().map(str::to_owned),
                                None,
                                Some(r["status"] == "error"),
                                said,
                            )
                        })
                        .collect();
                    if results.is_empty() {
                        messages.push(Message::User(text));
                    } else {
                        messages.push(Message::Results(results));
                    }
                }
                Some("system") => {
                    let named = |kind: &str| -> Vec<String> {
                        blocks
                            .iter()
                            .filter_map(|b| b[kind]["tool"]["name"].as_str())
                            .map(str::to_owned)
                            .collect()
                    };
                    let (added, removed) = (named("toolAddition"), named("toolRemoval"));
                    if !added.is_empty() || !removed.is_empty() {
                        messages.push(Message::Offered { added, removed });
                    }
                    if !text.is_empty() {
                        messages.push(Message::Instruction(text));
                    }
                }
                _ => return Err(ReadError::missing("message `role` string", m)),
            }
        }
        let mut sent = SentRequest::new(messages);
        sent.model = request
            .path
            .strip_prefix("/model/")
            .and_then(|rest| rest.split('/').next())
            .map(str::to_owned);
        sent.system = body["system"]
            .as_array()
            .map(|parts| parts.iter().filter_map(|p| p["text"].as_str()).collect());
        sent.tools = names(
            body["toolConfig"]["tools"].as_array(),
            |t| &t["toolSpec"]["name"],
        );
        sent.stream = request.path.ends_with("/converse-stream");
        Ok(sent)
    }
}

/// The content blocks of a turn: reasoning (with a stand-in signature), text, tool uses.
fn blocks_of(turn: &Turn) -> Vec<Value> {
    let mut blocks = Vec::new();
    if let Some(thinking) = &turn.thinking {
        blocks.push(json!({"reasoningContent": {"reasoningText": {"text": thinking, "signature": "sig-test"}}}));
    }
    if let Some(text) = &turn.text {
        blocks.push(json!({"text": text}));
    }
    for c in &turn.calls {
        blocks.push(json!({"toolUse": {"toolUseId": c.id, "name": c.name, "input": c.arguments.as_value()}}));
    }
    blocks
}

/// A turn's usage as Bedrock reports it: the input tokens apart from those read from the cache
/// and written to it.
fn usage_of(turn: &Turn) -> Value {
    let usage = turn.usage.unwrap_or_default();
    let mut out = json!({
        "inputTokens": usage.uncached_input_tokens(),
        "outputTokens": usage.output_tokens,
        "totalTokens": usage.input_tokens.saturating_add(usage.output_tokens),
    });
    if turn.usage.is_some() {
        out["cacheReadInputTokens"] = usage.cache_read_tokens.into();
        out["cacheWriteInputTokens"] = usage.cache_write_tokens.into();
    }
    out
}

/// A turn's `stopReason`.
fn stop_reason(turn: &Turn) -> &str {
    match &turn.finish {
        Finish::Refused { .. } => "content_filtered",
        Finish::Truncated { reason } if reason == "model_context_window_exceeded" => reason,
        Finish::Truncated { .. } => "max_tokens",
        Finish::Other { reason } => reason,
        _ if !turn.calls.is_empty() => "tool_use",
        _ => "end_turn",
    }
}

/// The `toolUse` blocks of a content array as calls.
fn calls_in(content: &Value) -> Result<Vec<ToolCall>, ReadError> {
    content
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b.get("toolUse"))
        .map(call_of)
        .collect()
}

/// A block's `toolUse` as a call.
fn call_of(call: &Value) -> Result<ToolCall, ReadError> {
    Ok(ToolCall {
        null_means_absent: false,
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
/// an AWS event stream, whose binary framing [`aws_events`](super::aws_events) (feature
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
    ) -> Result<(), ReadError> {
        let mut event = stream::json(data)?;
        let kind = match name {
            Some(name) => name.to_owned(),
            None => match event.as_object_mut() {
                Some(one) if one.len() == 1 => {
                    let (kind, inner) = one
                        .iter_mut()
                        .next()
                        .ok_or(ReadError::malformed("an empty event"))?;
                    let kind = kind.clone();
                    event = inner.take();
                    kind
                }
                _ => return Err(ReadError::malformed("an event without a type")),
            },
        };
        if kind.ends_with("Exception") {
            return Err(ReadError::provider(format!("{kind}: {}", event["message"])));
        }
        if self.stop.is_some() && kind != "metadata" {
            return Err(ReadError::malformed("an event after `messageStop`"));
        }
        if !self.started && kind != "messageStart" {
            return Err(ReadError::malformed("an event before `messageStart`"));
        }
        match kind.as_str() {
            "messageStart" => {
                if self.started {
                    return Err(ReadError::malformed("a second `messageStart`"));
                }
                self.started = true;
            }
            "contentBlockStart" => {
                let index = stream::index(&event, "contentBlockIndex")?;
                let tool = &event["start"]["toolUse"];
                if tool.is_null() {
                    return Err(ReadError::malformed(format!(
                        "an unknown block start: {}",
                        event["start"]
                    )));
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
                        return Err(ReadError::malformed(format!(
                            "a delta for block {index}, which never started"
                        )));
                    };
                    self.blocks.open(index, block)?;
                }
                let (block, partial) = self.blocks.get(index)?;
                if let Some(text) = delta["text"].as_str() {
                    stream::append(block, "text", text)?;
                    out.push(Delta::Text(text.into()));
                } else if let Some(more) = delta["toolUse"]["input"].as_str() {
                    if block.get("toolUse").is_none() {
                        return Err(ReadError::malformed(format!(
                            "tool input for block {index}, which is not a toolUse"
                        )));
                    }
                    partial.push_str(more);
                } else if let Some(reasoning) = delta.get("reasoningContent") {
                    if !block["reasoningContent"].is_object() {
                        return Err(ReadError::malformed(format!(
                            "reasoning for block {index}, which is not reasoning"
                        )));
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
                        return Err(ReadError::malformed(format!(
                            "an unknown reasoning delta: {reasoning}"
                        )));
                    }
                } else {
                    return Err(ReadError::malformed(format!("an unknown delta: {delta}")));
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
                // A reasoning block whose text was empty streams its signature alone; the
                // block the API returned whole has `"text": ""`, and goes back so.
                if let Some(text) = block
                    .get_mut("reasoningContent")
                    .and_then(|r| r.get_mut("reasoningText"))
                    .and_then(Value::as_object_mut)
                {
                    text.entry("text").or_insert_with(|| json!(""));
                }
            }
            "messageStop" => self.stop = Some(event),
            "metadata" => self.metadata = Some(event),
            // Event types added later carry nothing of the blocks read here.
            _ => {}
        }
        Ok(())
    }

    fn finish(&mut self, _out: &mut Vec<Delta>) -> Result<Value, ReadError> {
        let Some(stop) = self.stop.take() else {
            return Err(ReadError::malformed(
                "the stream ended before `messageStop`",
            ));
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
