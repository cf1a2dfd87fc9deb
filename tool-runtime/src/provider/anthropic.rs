//! Anthropic Messages (`POST /v1/messages`, <https://docs.anthropic.com/en/api/messages>):
//! tools as `{name, description, input_schema, strict}`, structured output as
//! `output_config: {format: {type: "json_schema", schema}}`, replies as `content[]` blocks
//! (`text`, `tool_use` with `id`, `name`, `input`; `thinking` and `redacted_thinking` kept with
//! their signatures), results as one `user` message of `tool_result` blocks (`is_error: true`
//! exactly on failures). Strict tool use has per-request limits (20 strict tools, 24 optional
//! and 16 union-typed parameters): tools past them are sent non-strict, here and by Bedrock for
//! Claude.
//!
//! A conversation only appends (<https://platform.claude.com/docs/en/build-with-claude/preserved-thinking/prefix-checks>,
//! <https://platform.claude.com/docs/en/build-with-claude/preserved-thinking/change-tools-or-instructions>):
//! `system` and `tools` are written once; a tool withdrawn or offered again for a turn is a
//! mid-conversation `system` message of `tool_removal` / `tool_addition` blocks naming it by a
//! `tool_reference` (beta `mid-conversation-tool-changes-2026-07-01`,
//! <https://platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages>); a
//! deferred tool is sent with `defer_loading` beside `tool_search_tool_bm25`
//! (<https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-search-tool>). Prompt
//! caching is the automatic top-level `cache_control`
//! (<https://platform.claude.com/docs/en/build-with-claude/prompt-caching>); the usage reads
//! `cache_read_input_tokens` and `cache_creation_input_tokens` beside `input_tokens`; the
//! prefix check's behaviour is `thinking.block_binding.prefix_mismatch_behavior` (beta
//! `thinking-binding-controls-2026-08-01`), and `input_transformations` say which thinking
//! blocks the API dropped.

use serde_json::{Value, json};

use super::lower::{
    OPEN_MAP, each_subschema, has_refs_into_defs, is_closed, note, one_of_to_any_of, take,
};
use super::openai_chat::text_of;
use super::stream::{self, Assemble, Blocks, Delta, StreamEvent};
use super::turn::{halves, names, words};
use super::{
    CallArguments, ExportError, Exported, Finish, HttpRequest, Lowered, Message, Provider,
    ReadError, Reply, Request, RequestError, SentRequest, ToolAnswer, ToolCall, ToolChoice,
    ToolResult, Turn, str_at,
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

/// The API version every request names (`anthropic-version`).
const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The server tool that searches deferred tools by BM25, and the beta that enables it.
const TOOL_SEARCH_TYPE: &str = "tool_search_tool_bm25_20251119";
const TOOL_SEARCH_BETA: &str = "advanced-tool-use-2025-11-20";
/// The beta of `tool_addition`/`tool_removal` blocks naming declared tools in a
/// mid-conversation `system` message (build-with-claude/mid-conversation-system-messages).
const TOOL_CHANGES_BETA: &str = "mid-conversation-tool-changes-2026-07-01";
/// The beta of `thinking.block_binding` and the responses' `input_transformations`
/// (build-with-claude/preserved-thinking).
pub(super) const THINKING_BINDING_BETA: &str = "thinking-binding-controls-2026-08-01";
/// The output-token limit of a request that names none: Anthropic requires one.
const DEFAULT_MAX_TOKENS: u32 = 4096;

impl Provider for Anthropic {
    fn id(&self) -> &'static str {
        "anthropic"
    }

    fn name(&self) -> &'static str {
        "Anthropic Messages"
    }

    fn lower(&self, canonical: &Value) -> Lowered {
        lower(canonical)
    }

    fn tool(&self, name: &str, description: &str, input: &Value) -> Exported {
        lower(input).wrap(|schema, strict| {
            json!({ "name": name, "description": description, "input_schema": schema, "strict": strict })
        })
    }

    fn tools(&self, mut entries: Vec<(&Tool, Exported)>) -> Result<Vec<Value>, ExportError> {
        fit_strict_limits(&mut entries);
        Ok(entries.into_iter().map(|(_, e)| e.json).collect())
    }

    /// The BM25 tool search tool (`tool_search_tool_bm25_20251119`): deferred tools are sent
    /// with `defer_loading` and Claude finds them itself.
    fn tool_search(&self) -> Option<Value> {
        Some(json!({"type": TOOL_SEARCH_TYPE, "name": "tool_search_tool_bm25"}))
    }

    fn structured_output(&self, _name: &str, canonical: &Value) -> Exported {
        lower(canonical)
            .wrap(|schema, _| json!({ "format": { "type": "json_schema", "schema": schema } }))
    }

    /// `POST /v1/messages` with `anthropic-version`; `max_tokens` is required (4096 when the
    /// request names no limit); structured output as `output_config`.
    fn request(
        &self,
        request: &Request<'_>,
        messages: &[Value],
    ) -> Result<HttpRequest, RequestError> {
        let max_tokens = request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
        let mut body =
            json!({"model": request.model, "max_tokens": max_tokens, "messages": messages});
        if let Some(system) = &request.system {
            body["system"] = system.as_str().into();
        }
        let mut betas = Vec::new();
        if let Some(tools) = request.tool_entries(self)? {
            if tools.iter().any(|t| t["type"] == TOOL_SEARCH_TYPE) {
                betas.push(TOOL_SEARCH_BETA);
            }
            body["tools"] = tools.into();
        }
        // The conversation changed its tools with a mid-conversation `system` message: every
        // request that carries one needs the beta.
        let changes_tools = messages.iter().any(|m| {
            m["role"] == "system"
                && m["content"].as_array().is_some_and(|blocks| {
                    blocks.iter().any(|b| {
                        matches!(b["type"].as_str(), Some("tool_addition" | "tool_removal"))
                    })
                })
        });
        if changes_tools {
            betas.push(TOOL_CHANGES_BETA);
        }
        // Automatic caching: the mark goes on the request's last cacheable block, and each
        // request reads what the one before it wrote (the prefix check ignores the marks).
        if request.cache.marks {
            let mut mark = json!({"type": "ephemeral"});
            if let Some(ttl) = request.cache.ttl.written() {
                mark["ttl"] = ttl.into();
            }
            body["cache_control"] = mark;
        }
        if let Some(mismatch) = request.prefix_mismatch {
            body["thinking"]["block_binding"] =
                json!({"prefix_mismatch_behavior": mismatch.written()});
            betas.push(THINKING_BINDING_BETA);
        }
        body["tool_choice"] = match &request.tool_choice {
            ToolChoice::Auto => Value::Null,
            ToolChoice::None => json!({"type": "none"}),
            ToolChoice::Required => json!({"type": "any"}),
            ToolChoice::Tool(name) => json!({"type": "tool", "name": name}),
        };
        if body["tool_choice"].is_null() {
            body.as_object_mut().map(|b| b.remove("tool_choice"));
        }
        if let Some(format) = request.output_field(self) {
            body["output_config"] = format;
        }
        if request.stream {
            body["stream"] = true.into();
        }
        let http = HttpRequest::post("/v1/messages", request.finish_body(body), request.stream)
            .header("anthropic-version", ANTHROPIC_VERSION);
        Ok(if betas.is_empty() {
            http
        } else {
            http.header("anthropic-beta", betas.join(","))
        })
    }

    /// A mid-conversation `system` message of `tool_removal` and `tool_addition` blocks, each
    /// naming a tool declared in `tools` (beta `mid-conversation-tool-changes-2026-07-01`,
    /// which `request` adds while the conversation carries such a message). It follows a user
    /// turn (the question, or the tool results), as the API requires.
    fn tool_change(&self, added: &[String], removed: &[String]) -> Option<Value> {
        let block = |kind: &str, name: &String| json!({"type": kind, "tool": {"type": "tool_reference", "name": name}});
        let content: Vec<Value> = removed
            .iter()
            .map(|n| block("tool_removal", n))
            .chain(added.iter().map(|n| block("tool_addition", n)))
            .collect();
        Some(json!({"role": "system", "content": content}))
    }

    /// A mid-conversation `system` message.
    fn instruction_message(&self, text: &str) -> Value {
        json!({"role": "system", "content": text})
    }

    fn prefix_members(&self) -> &'static [&'static str] {
        &["system", "tools", "messages"]
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

    /// `input_tokens` leaves out the tokens read from and written to the cache
    /// (`cache_read_input_tokens`, `cache_creation_input_tokens`): they are added to it. Thinking
    /// blocks dropped by the prefix or model check are counted from `input_transformations`.
    fn read_info(&self, raw: &Value) -> super::ResponseInfo {
        let mut info = super::ResponseInfo::read(
            raw,
            &["id"],
            &["model"],
            &["usage", "input_tokens"],
            &["usage", "output_tokens"],
        )
        .with_cache(
            raw,
            &["usage", "cache_read_input_tokens"],
            &["usage", "cache_creation_input_tokens"],
            true,
        );
        info.thinking_dropped = raw["input_transformations"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|t| t["type"] == "thinking_dropped")
            .count();
        info
    }

    fn conventions_name(&self) -> Option<&'static str> {
        Some("anthropic")
    }

    fn read_reply(&self, raw: &Value) -> Result<Reply, ReadError> {
        let blocks = raw["content"]
            .as_array()
            .ok_or_else(|| ReadError::missing("`content` array", raw))?;
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
            None => return Err(ReadError::missing("`stop_reason` string", raw)),
        };
        Ok(Reply::new(text, finish))
    }

    fn read_calls(&self, raw: &Value) -> Result<(Vec<ToolCall>, Vec<Value>), ReadError> {
        let content = raw["content"].clone();
        let calls = calls_in(&content)?;
        Ok((
            calls,
            vec![json!({"role": "assistant", "content": content})],
        ))
    }

    fn assembler(&self) -> Box<dyn Assemble> {
        Box::<AnthropicStream>::default()
    }

    fn write_response(&self, turn: &Turn) -> Option<Value> {
        Some(json!({
            "id": "msg_test", "type": "message", "role": "assistant", "model": "test",
            "content": blocks_of(turn), "stop_reason": stop_reason(turn), "stop_sequence": null,
            "usage": usage_of(turn, true),
        }))
    }

    /// `message_start`, each block opened, filled in two deltas and stopped, `message_delta`
    /// with the stop reason, `message_stop`.
    fn write_stream(&self, turn: &Turn) -> Option<Vec<StreamEvent>> {
        let event =
            |v: Value| StreamEvent::named(v["type"].as_str().unwrap_or_default(), v.to_string());
        let mut events = vec![event(json!({"type": "message_start", "message": {
            "id": "msg_test", "type": "message", "role": "assistant", "model": "test",
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": usage_of(turn, false)}}))];
        for (index, block) in blocks_of(turn).into_iter().enumerate() {
            let (start, deltas) = match block["type"].as_str() {
                Some("thinking") => (
                    json!({"type": "thinking", "thinking": "", "signature": ""}),
                    words(block["thinking"].as_str().unwrap_or_default())
                        .into_iter()
                        .map(|p| json!({"type": "thinking_delta", "thinking": p}))
                        .chain([
                            json!({"type": "signature_delta", "signature": block["signature"]}),
                        ])
                        .collect::<Vec<_>>(),
                ),
                Some("tool_use") => {
                    let input = block["input"].to_string();
                    let mut head = block.clone();
                    head["input"] = json!({});
                    (
                        head,
                        halves(&input)
                            .into_iter()
                            .map(|p| json!({"type": "input_json_delta", "partial_json": p}))
                            .collect(),
                    )
                }
                _ => (
                    json!({"type": "text", "text": ""}),
                    words(block["text"].as_str().unwrap_or_default())
                        .into_iter()
                        .map(|p| json!({"type": "text_delta", "text": p}))
                        .collect(),
                ),
            };
            events.push(event(
                json!({"type": "content_block_start", "index": index, "content_block": start}),
            ));
            for delta in deltas {
                events.push(event(
                    json!({"type": "content_block_delta", "index": index, "delta": delta}),
                ));
            }
            events.push(event(json!({"type": "content_block_stop", "index": index})));
        }
        events.push(event(json!({"type": "message_delta",
            "delta": {"stop_reason": stop_reason(turn), "stop_sequence": null},
            "usage": {"output_tokens": turn.usage.unwrap_or_default().output_tokens}})));
        events.push(event(json!({"type": "message_stop"})));
        Some(events)
    }

    fn read_request(&self, request: &HttpRequest) -> Result<SentRequest, ReadError> {
        read_messages_request(&request.body, "messages", |t| &t["name"])
    }
}

/// The content blocks of a turn: its thinking (with a stand-in signature), its text, its
/// `tool_use` blocks (shared with Bedrock's shape of the same turn).
fn blocks_of(turn: &Turn) -> Vec<Value> {
    let mut blocks = Vec::new();
    if let Some(thinking) = &turn.thinking {
        blocks.push(json!({"type": "thinking", "thinking": thinking, "signature": "sig-test"}));
    }
    let text = match &turn.finish {
        Finish::Refused { message } => Some(message),
        _ => turn.text.as_ref(),
    };
    if let Some(text) = text {
        blocks.push(json!({"type": "text", "text": text}));
    }
    for c in &turn.calls {
        blocks.push(json!({"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments.as_value()}));
    }
    blocks
}

/// A turn's usage as Anthropic reports it: the input tokens apart from those read from the
/// cache and written to it; the output only when `whole` (a stream reports it at the end).
fn usage_of(turn: &Turn, whole: bool) -> Value {
    let usage = turn.usage.unwrap_or_default();
    let mut out = json!({
        "input_tokens": usage.uncached_input_tokens(),
        "output_tokens": if whole { usage.output_tokens } else { 0 },
    });
    if turn.usage.is_some() {
        out["cache_read_input_tokens"] = usage.cache_read_tokens.into();
        out["cache_creation_input_tokens"] = usage.cache_write_tokens.into();
    }
    out
}

/// A turn's `stop_reason`.
fn stop_reason(turn: &Turn) -> &str {
    match &turn.finish {
        Finish::Refused { .. } => "refusal",
        Finish::Truncated { reason } if reason == "model_context_window_exceeded" => reason,
        Finish::Truncated { .. } => "max_tokens",
        Finish::Other { reason } => reason,
        _ if !turn.calls.is_empty() => "tool_use",
        _ => "end_turn",
    }
}

/// The `tool_use` blocks of a content array as calls.
fn calls_in(content: &Value) -> Result<Vec<ToolCall>, ReadError> {
    content
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["type"] == "tool_use")
        .map(call_of)
        .collect()
}

/// A Messages-shaped request read back (Anthropic's): `system`, and `messages` of `user` and
/// `assistant` turns whose content is text or blocks (`text`, `tool_use`, `tool_result`).
/// A mid-conversation `system` message read back: its tool changes, its instruction.
fn system_message(content: &Value) -> Vec<Message> {
    let named = |kind: &str| -> Vec<String> {
        content
            .as_array()
            .into_iter()
            .flatten()
            .filter(|b| b["type"] == kind)
            .filter_map(|b| b["tool"]["name"].as_str().map(str::to_owned))
            .collect()
    };
    let (added, removed) = (named("tool_addition"), named("tool_removal"));
    let mut out = Vec::new();
    if !added.is_empty() || !removed.is_empty() {
        out.push(Message::Offered { added, removed });
    }
    let text = text_of(content);
    if !text.is_empty() {
        out.push(Message::Instruction(text));
    }
    out
}

fn read_messages_request(
    body: &Value,
    key: &str,
    tool_name: impl Fn(&Value) -> &Value,
) -> Result<SentRequest, ReadError> {
    let mut messages = Vec::new();
    for m in body[key]
        .as_array()
        .ok_or_else(|| ReadError::missing(format!("`{key}` array"), body))?
    {
        let content = &m["content"];
        let text = text_of(content);
        match m["role"].as_str() {
            Some("assistant") => messages.push(Message::Model {
                text: (!text.is_empty()).then_some(text),
                calls: calls_in(content)?,
            }),
            Some("user") => {
                let results: Vec<ToolResult> = content
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|b| b["type"] == "tool_result")
                    .map(|b| {
                        ToolResult::new(
                            b["tool_use_id"].as_str().map(str::to_owned),
                            None,
                            Some(b["is_error"] == true),
                            text_of(&b["content"]),
                        )
                    })
                    .collect();
                if results.is_empty() {
                    messages.push(Message::User(text));
                } else {
                    messages.push(Message::Results(results));
                }
            }
            Some("system") => messages.extend(system_message(content)),
            _ => return Err(ReadError::missing("message `role` string", m)),
        }
    }
    let mut sent = SentRequest::new(messages);
    sent.model = body["model"].as_str().map(str::to_owned);
    sent.system = match &body["system"] {
        Value::Null => None,
        system => Some(text_of(system)),
    };
    sent.tools = names(body["tools"].as_array(), tool_name);
    sent.stream = body["stream"] == true;
    Ok(sent)
}

/// Anthropic's per-request limits of strict tools (also Claude's on Bedrock): tools stay strict
/// in the set's order while the request stays within all three (20 strict tools, 24 optional
/// and 16 union-typed parameters across them); a tool past them is sent without `strict`, so
/// no request the API would take is refused (every call of it is still validated against its
/// schema by the tool set, and a wrong one answered with what to fix). The same set gets the
/// same tools strict in every request, so a conversation's tools never change.
pub(super) fn fit_strict_limits(entries: &mut [(&Tool, Exported)]) {
    let (mut tools, mut optional, mut unions) = (0, 0, 0);
    for (tool, entry) in entries.iter_mut().filter(|(_, e)| e.strict) {
        let (mut o, mut u) = (0, 0);
        count_params(tool.input_schema(), &mut o, &mut u);
        let over = if tools + 1 > ANTHROPIC_MAX_STRICT_TOOLS {
            Some(format!("{ANTHROPIC_MAX_STRICT_TOOLS} strict tools"))
        } else if optional + o > ANTHROPIC_MAX_OPTIONAL_PARAMS {
            Some(format!(
                "{ANTHROPIC_MAX_OPTIONAL_PARAMS} optional parameters across strict tools"
            ))
        } else if unions + u > ANTHROPIC_MAX_UNION_PARAMS {
            Some(format!(
                "{ANTHROPIC_MAX_UNION_PARAMS} union-typed parameters across strict tools"
            ))
        } else {
            None
        };
        match over {
            None => (tools, optional, unions) = (tools + 1, optional + o, unions + u),
            Some(limit) => {
                entry.strict = false;
                entry.reasons.push(format!(
                    "the request's earlier tools reach Anthropic's limit of {limit} a request"
                ));
                // Anthropic's `strict` is on the entry; Bedrock's in its `toolSpec`.
                let fields = match entry.json.get_mut("toolSpec") {
                    Some(spec) => spec,
                    None => &mut entry.json,
                };
                if let Some(strict) = fields.get_mut("strict") {
                    *strict = false.into();
                }
            }
        }
    }
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
fn call_of(block: &Value) -> Result<ToolCall, ReadError> {
    Ok(ToolCall {
        null_means_absent: false,
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
    ) -> Result<(), ReadError> {
        let event = stream::json(data)?;
        let kind = stream::typed(name, &event)?;
        if self.stopped {
            return Err(ReadError::malformed("an event after `message_stop`"));
        }
        if self.message.is_none() && !matches!(kind, "message_start" | "ping" | "error") {
            return Err(ReadError::malformed("an event before `message_start`"));
        }
        match kind {
            "ping" => {}
            "error" => {
                return Err(ReadError::provider(format!(
                    "{}: {}",
                    event["error"]["type"], event["error"]["message"]
                )));
            }
            "message_start" => {
                if self.message.is_some() {
                    return Err(ReadError::malformed("a second `message_start`"));
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
                    delta[key].as_str().map(str::to_owned).ok_or_else(|| {
                        ReadError::malformed(format!(
                            "a `{}` without a `{key}` string",
                            delta["type"]
                        ))
                    })
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
                    other => {
                        return Err(ReadError::malformed(format!(
                            "unknown delta type {}",
                            json!(other)
                        )));
                    }
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
                let message = self.message.as_mut().ok_or(ReadError::malformed(
                    "a `message_delta` before `message_start`",
                ))?;
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

    fn finish(&mut self, _out: &mut Vec<Delta>) -> Result<Value, ReadError> {
        if !self.stopped {
            return Err(ReadError::malformed(
                "the stream ended before `message_stop`",
            ));
        }
        let mut message = self.message.take().unwrap_or_default();
        message["content"] = Value::Array(self.blocks.take_closed()?);
        Ok(message)
    }
}
