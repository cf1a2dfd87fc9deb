//! Anthropic Messages (`POST /v1/messages`, <https://docs.anthropic.com/en/api/messages>):
//! tools as `{name, description, input_schema, strict}`, structured output as
//! `output_config: {format: {type: "json_schema", schema}}`, replies as `content[]` blocks
//! (`text`, `tool_use` with `id`, `name`, `input`; `thinking` and `redacted_thinking` kept with
//! their signatures), results as one `user` message of `tool_result` blocks (`is_error: true`
//! exactly on failures). Strict tool use has per-request limits (20 strict tools, 24 optional
//! and 16 union-typed parameters), checked here and by Bedrock for Claude.

use serde_json::{Value, json};

use super::lower::{
    OPEN_MAP, each_subschema, has_refs_into_defs, is_closed, note, one_of_to_any_of, take,
};
use super::stream::{self, Assemble, Blocks, Delta};
use super::{
    Api, CallArguments, Dialect, ExportError, Exported, Finish, Lowered, Reply, ToolAnswer,
    ToolCall, str_at,
};
use crate::host::Content;
use crate::schema::required_names;
use crate::tool::Tool;

/// Anthropic's per-request limits for strict tools.
const ANTHROPIC_MAX_STRICT_TOOLS: usize = 20;
const ANTHROPIC_MAX_OPTIONAL_PARAMS: usize = 24;
const ANTHROPIC_MAX_UNION_PARAMS: usize = 16;

/// Formats Anthropic's strict mode accepts.
const ANTHROPIC_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
];
/// Anthropic (tools with `strict`, and `output_config`): closed objects; numeric bounds,
/// lengths, patterns, defaults, examples, `minItems` over 1, `maxItems` and unlisted formats
/// moved into the description; `oneOf` as `anyOf` (or `enum`). Open maps and recursive schemas
/// are refused for strict mode rather than silently closed or unrolled.
pub(super) fn lower(canonical: &Value) -> Lowered {
    let mut schema = canonical.clone();
    let mut reasons = Vec::new();
    if canonical.get("$defs").is_some() && has_refs_into_defs(canonical) {
        reasons.push("the schema is recursive, which strict mode does not support".into());
    }
    anthropic_node(&mut schema, &mut reasons);
    Lowered {
        schema,
        strict: reasons.is_empty(),
        reasons,
    }
}

fn anthropic_node(v: &mut Value, reasons: &mut Vec<String>) {
    let Value::Object(s) = v else { return };
    if s.contains_key("$ref") {
        return;
    }
    one_of_to_any_of(s);
    let moved = take(s, |k, v| match k {
        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf"
        | "minLength" | "maxLength" | "pattern" | "default" | "examples" | "maxItems"
        | "formatMinimum" | "formatMaximum" => false,
        "minItems" => v.as_u64().is_some_and(|n| n <= 1),
        "format" => v.as_str().is_some_and(|f| ANTHROPIC_FORMATS.contains(&f)),
        _ => true,
    });
    note(s, moved);
    if s.contains_key("properties") && !is_closed(s) {
        reasons.push(OPEN_MAP.into());
    }
    each_subschema(s, &mut |child| anthropic_node(child, reasons));
}

/// Anthropic Messages.
pub(super) struct Anthropic;

impl Dialect for Anthropic {
    fn name(&self) -> &'static str {
        "Anthropic Messages"
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
        let json = json!({ "name": name, "description": description, "input_schema": schema, "strict": strict });
        Exported {
            json,
            strict,
            reasons,
        }
    }

    fn tools(&self, entries: Vec<(&Tool, Exported)>) -> Result<Vec<Value>, ExportError> {
        check_strict_limits(Api::Anthropic, &entries)?;
        Ok(entries.into_iter().map(|(_, e)| e.json).collect())
    }

    fn structured_output(&self, _name: &str, canonical: &Value) -> Exported {
        let Lowered {
            schema,
            strict,
            reasons,
        } = lower(canonical);
        let json = json!({ "format": { "type": "json_schema", "schema": schema } });
        Exported {
            json,
            strict,
            reasons,
        }
    }

    fn read_reply(&self, raw: &Value) -> Result<Reply, String> {
        let blocks = raw["content"].as_array().ok_or("no `content` array")?;
        let text: String = blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect();
        let finish = match raw["stop_reason"].as_str() {
            Some("end_turn") | Some("stop_sequence") => Finish::Completed,
            Some(r @ ("max_tokens" | "model_context_window_exceeded")) => {
                Finish::Truncated { reason: r.into() }
            }
            Some("refusal") => Finish::Refused {
                message: text.clone(),
            },
            Some(other) => Finish::Other {
                reason: other.into(),
            },
            None => return Err("no `stop_reason`".into()),
        };
        Ok(Reply::new(text, finish))
    }

    fn read_calls(&self, raw: &Value) -> Result<(Vec<ToolCall>, Vec<Value>), String> {
        let content = raw["content"].clone();
        let calls = content
            .as_array()
            .into_iter()
            .flatten()
            .filter(|b| b["type"] == "tool_use")
            .map(call_of)
            .collect::<Result<_, _>>()?;
        Ok((
            calls,
            vec![json!({"role": "assistant", "content": content})],
        ))
    }

    /// One user message of `tool_result` blocks, with `text` and `image` blocks.
    fn render(&self, answers: &[ToolAnswer]) -> Vec<Value> {
        let blocks: Vec<Value> = answers
            .iter()
            .map(|a| {
                let content: Vec<Value> = a
                    .content
                    .iter()
                    .map(|c| match c {
                        Content::ImageUrl { url } => {
                            json!({"type": "image", "source": {"type": "url", "url": url}})
                        }
                        Content::Text { text } => json!({"type": "text", "text": text}),
                    })
                    .collect();
                let mut block =
                    json!({"type": "tool_result", "tool_use_id": a.id(), "content": content});
                if a.is_error {
                    block["is_error"] = Value::Bool(true);
                }
                block
            })
            .collect();
        vec![json!({"role": "user", "content": blocks})]
    }

    fn user_message(&self, text: &str) -> Value {
        json!({"role": "user", "content": text})
    }

    fn stream(&self) -> Box<dyn Assemble> {
        Box::<AnthropicStream>::default()
    }
}

/// Anthropic's per-request limits of strict tools (also Claude's on Bedrock), over the tools sent
/// as strict.
pub(super) fn check_strict_limits(
    api: Api,
    entries: &[(&Tool, Exported)],
) -> Result<(), ExportError> {
    let limit = |message: String| ExportError::Limit { api, message };
    let strict: Vec<&Tool> = entries
        .iter()
        .filter(|(_, e)| e.strict)
        .map(|(t, _)| *t)
        .collect();
    if strict.len() > ANTHROPIC_MAX_STRICT_TOOLS {
        return Err(limit(format!(
            "{} strict tools in one request, over the limit of {ANTHROPIC_MAX_STRICT_TOOLS}: give the agent fewer tools",
            strict.len()
        )));
    }
    let (mut optional, mut unions) = (0, 0);
    for t in &strict {
        count_params(t.input_schema(), &mut optional, &mut unions);
    }
    if optional > ANTHROPIC_MAX_OPTIONAL_PARAMS {
        return Err(limit(format!(
            "{optional} optional parameters across strict tools, over the limit of {ANTHROPIC_MAX_OPTIONAL_PARAMS}"
        )));
    }
    if unions > ANTHROPIC_MAX_UNION_PARAMS {
        return Err(limit(format!(
            "{unions} union-typed parameters across strict tools, over the limit of {ANTHROPIC_MAX_UNION_PARAMS}"
        )));
    }
    Ok(())
}

/// Optional and union-typed (nullable or `anyOf`/`oneOf`) parameters of a schema, all levels.
fn count_params(schema: &Value, optional: &mut usize, unions: &mut usize) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    let required = required_names(schema);
    for (name, p) in props {
        if !required.contains(&name.as_str()) {
            *optional += 1;
        }
        let union = matches!(p.get("type"), Some(Value::Array(_))) || p.get("anyOf").is_some() || {
            p.get("oneOf").is_some()
                && p.get("oneOf")
                    .and_then(Value::as_array)
                    .is_some_and(|a| a.iter().any(|x| x.get("const").is_none()))
        };
        if union {
            *unions += 1;
        }
        count_params(p, optional, unions);
        if let Some(items) = p.get("items") {
            count_params(items, optional, unions);
        }
    }
}

/// A `tool_use` block as a call.
fn call_of(block: &Value) -> Result<ToolCall, String> {
    Ok(ToolCall {
        id: Some(str_at(block, "id", "a tool_use block")?),
        name: str_at(block, "name", "a tool_use block")?,
        arguments: CallArguments::Value(block["input"].clone()),
    })
}

/// Messages streamed (`stream: true`,
/// <https://docs.anthropic.com/en/docs/build-with-claude/streaming>): `message_start` with the
/// message, then per block `content_block_start`, `content_block_delta`s (`text_delta`,
/// `input_json_delta` fragments of a `tool_use` input, `thinking_delta`, `signature_delta`,
/// `citations_delta`) and `content_block_stop` (a `tool_use` is complete there), then
/// `message_delta` with the stop reason and `message_stop`; `ping`s between, `error` on failure.
/// Event types added later are passed over, as Anthropic asks; an unknown delta ends the turn.
#[derive(Default)]
pub(super) struct AnthropicStream {
    message: Option<Value>,
    blocks: Blocks,
    stopped: bool,
}

impl Assemble for AnthropicStream {
    fn event(
        &mut self,
        name: Option<&str>,
        data: &str,
        out: &mut Vec<Delta>,
    ) -> Result<(), String> {
        let event = stream::json(data)?;
        let kind = stream::typed(name, &event)?;
        if self.stopped {
            return Err("an event after `message_stop`".into());
        }
        if self.message.is_none() && !matches!(kind, "message_start" | "ping" | "error") {
            return Err("an event before `message_start`".into());
        }
        match kind {
            "ping" => {}
            "error" => {
                return Err(format!(
                    "the provider sent an error: {}: {}",
                    event["error"]["type"], event["error"]["message"]
                ));
            }
            "message_start" => {
                if self.message.is_some() {
                    return Err("a second `message_start`".into());
                }
                self.message = Some(stream::object(&event["message"], "the message")?);
            }
            "content_block_start" => {
                let index = stream::index(&event, "index")?;
                self.blocks.open(index, event["content_block"].clone())?;
            }
            "content_block_delta" => {
                let index = stream::index(&event, "index")?;
                let (block, partial) = self.blocks.get(index)?;
                let delta = &event["delta"];
                let text = |key: &str| {
                    delta[key]
                        .as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| format!("a `{}` without a `{key}` string", delta["type"]))
                };
                match delta["type"].as_str() {
                    Some("text_delta") => {
                        let more = text("text")?;
                        stream::append(block, "text", &more)?;
                        out.push(Delta::Text(more));
                    }
                    Some("input_json_delta") => partial.push_str(&text("partial_json")?),
                    Some("thinking_delta") => {
                        let more = text("thinking")?;
                        stream::append(block, "thinking", &more)?;
                        out.push(Delta::Thinking(more));
                    }
                    Some("signature_delta") => block["signature"] = json!(text("signature")?),
                    Some("citations_delta") => match &mut block["citations"] {
                        Value::Array(all) => all.push(delta["citation"].clone()),
                        slot => *slot = json!([delta["citation"]]),
                    },
                    // Skipping a delta would lose part of the block: the turn ends.
                    other => return Err(format!("unknown delta type {}", json!(other))),
                }
            }
            "content_block_stop" => {
                let index = stream::index(&event, "index")?;
                let (block, partial) = self.blocks.close(index)?;
                if !partial.is_empty() {
                    let what = format!("the input of block {index} ({})", block["type"]);
                    block["input"] = stream::parse_input(&partial, &what)?;
                }
                if block["type"] == "tool_use" {
                    out.push(Delta::Call(call_of(block)?));
                }
            }
            "message_delta" => {
                let message = self.message.as_mut().ok_or("no message")?;
                for (key, value) in event["delta"].as_object().into_iter().flatten() {
                    message[key] = value.clone();
                }
                if let Some(usage) = event["usage"].as_object() {
                    if !message["usage"].is_object() {
                        message["usage"] = json!({});
                    }
                    for (key, value) in usage {
                        message["usage"][key] = value.clone();
                    }
                }
            }
            "message_stop" => self.stopped = true,
            // "We may occasionally add new event types, and your code should handle unknown
            // event types gracefully" (the streaming guide): they are passed over.
            _ => {}
        }
        Ok(())
    }

    fn finish(&mut self, _out: &mut Vec<Delta>) -> Result<Value, String> {
        if !self.stopped {
            return Err("the stream ended before `message_stop`".into());
        }
        let mut message = self.message.take().unwrap_or_default();
        message["content"] = Value::Array(self.blocks.take_closed()?);
        Ok(message)
    }
}
