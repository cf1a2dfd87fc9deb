//! OpenAI Chat Completions (`POST /v1/chat/completions`,
//! <https://platform.openai.com/docs/api-reference/chat>): tools as
//! `{type: "function", function: {name, description, parameters, strict}}`, structured output as
//! `response_format: {type: "json_schema", json_schema}`, replies in `choices[0].message`
//! (`content`, `refusal`, `tool_calls[]` with `function.arguments` as JSON text), results as
//! one `{role: "tool", tool_call_id, content}` message per call. The strict-mode lowering here
//! is OpenAI's, shared with the Responses API.
//!
//! A conversation only appends: `tools` is written once, and a turn that offers fewer is a
//! `tool_choice` of type `allowed_tools` (`{"allowed_tools": {"mode", "tools"}}`), which
//! narrows without editing the list the cache holds
//! (<https://platform.openai.com/docs/guides/function-calling>). Caching is automatic for the
//! unchanged start; `prompt_cache_key` and `prompt_cache_retention` route and keep it
//! (<https://platform.openai.com/docs/guides/prompt-caching>); the usage reads
//! `prompt_tokens_details.cached_tokens`, part of `prompt_tokens`.

use serde_json::{Value, json};

use super::error::clip;
use super::lower::{OPEN_MAP, each_subschema, is_closed, note, one_of_to_any_of, take};
use super::stream::{self, Assemble, Delta, StreamEvent};
use super::turn::{halves, names, words};
use super::{
    CallArguments, ExportError, Exported, Finish, HttpRequest, Lowered, Message, Provider,
    ReadError, Reply, Request, RequestError, RequestLimit, SentRequest, ToolAnswer, ToolCall,
    ToolChoice, ToolResult, Turn, str_at,
};
use crate::tool::Tool;

/// Functions one OpenAI request may carry (Chat Completions' and Responses' `tools`: "A max of
/// 128 functions are supported").
pub(super) const OPENAI_MAX_TOOLS: usize = 128;

/// OpenAI's per-request limits on the tools sent (both APIs), named when one is broken.
pub(super) fn check_limits(
    provider: &'static str,
    entries: &[(&Tool, Exported)],
) -> Result<(), ExportError> {
    if entries.len() > OPENAI_MAX_TOOLS {
        return Err(ExportError::over(
            provider,
            RequestLimit::Tools,
            entries.len(),
            OPENAI_MAX_TOOLS,
            "OpenAI takes at most 128 functions; defer some (`ToolSet::defer`) or offer fewer",
        ));
    }
    Ok(())
}

/// Formats OpenAI's strict mode accepts.
const OPENAI_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];
/// OpenAI strict-mode limits (the current documented figures).
const OPENAI_MAX_PROPERTIES: usize = 5000;
const OPENAI_MAX_DEPTH: usize = 10;
const OPENAI_MAX_ENUM_VALUES: usize = 1000;
const OPENAI_MAX_CHARS: usize = 120_000;

/// OpenAI strict mode (Chat Completions and Responses tools, `json_schema` formats): every
/// object closed with every property required, `oneOf` as `anyOf` (or `enum`), `$ref` without
/// siblings, only listed formats, size limits checked. Properties the model could leave out
/// become required, taking `null` for "left out" (see [`null_for_absent`]); an `Option` stays
/// nullable. The runtime accepts everything strict output can contain, so nothing the model
/// sends is refused for being strict.
pub(super) fn strict(canonical: &Value) -> Lowered {
    let mut schema = canonical.clone();
    let mut reasons = Vec::new();
    let mut stats = Stats::default();
    openai_node(&mut schema, 1, &mut reasons, &mut stats);
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        reasons.push("the root is not an object".into());
    }
    if stats.properties > OPENAI_MAX_PROPERTIES {
        reasons.push(format!(
            "{} properties, over the limit of {OPENAI_MAX_PROPERTIES}",
            stats.properties
        ));
    }
    if stats.depth > OPENAI_MAX_DEPTH {
        reasons.push(format!(
            "nesting depth {}, over the limit of {OPENAI_MAX_DEPTH}",
            stats.depth
        ));
    }
    if stats.enum_values > OPENAI_MAX_ENUM_VALUES {
        reasons.push(format!(
            "{} enum values, over the limit of {OPENAI_MAX_ENUM_VALUES}",
            stats.enum_values
        ));
    }
    if stats.chars > OPENAI_MAX_CHARS {
        reasons.push(format!(
            "{} characters of names and values, over the limit of {OPENAI_MAX_CHARS}",
            stats.chars
        ));
    }
    Lowered {
        schema,
        strict: reasons.is_empty(),
        reasons,
    }
}

#[derive(Default)]
struct Stats {
    properties: usize,
    depth: usize,
    enum_values: usize,
    chars: usize,
}

fn openai_node(v: &mut Value, depth: usize, reasons: &mut Vec<String>, stats: &mut Stats) {
    let Value::Object(s) = v else { return };
    stats.depth = stats.depth.max(depth);
    if s.contains_key("$ref") {
        // No siblings next to `$ref`.
        s.retain(|k, _| k == "$ref");
        return;
    }
    one_of_to_any_of(s);
    if let Some(f) = s.get("format").and_then(Value::as_str)
        && !OPENAI_FORMATS.contains(&f)
    {
        let moved = take(s, |k, _| k != "format");
        note(s, moved);
    }
    let moved = take(s, |k, v| {
        let moved = matches!(k, "examples" | "formatMinimum" | "formatMaximum");
        !(moved || k == "default" && v.is_null())
    });
    note(s, moved);
    if let Some(Value::Array(values)) = s.get("enum") {
        stats.enum_values += values.len();
        stats.chars += values.iter().map(|v| v.to_string().len()).sum::<usize>();
    }
    // Properties the model may leave out, which strict mode makes required.
    let mut optional = Vec::new();
    if let Some(Value::Object(props)) = s.get("properties") {
        stats.properties += props.len();
        stats.chars += props.keys().map(String::len).sum::<usize>();
        let required = s.get("required").and_then(Value::as_array);
        let is_required = |k: &str| required.is_some_and(|r| r.iter().any(|n| n == k));
        optional = props.keys().filter(|k| !is_required(k)).cloned().collect();
        let keys: Vec<Value> = props.keys().map(|k| Value::from(k.as_str())).collect();
        s.insert("required".into(), Value::Array(keys));
        if !is_closed(s) {
            reasons.push(OPEN_MAP.into());
        }
        s.insert("additionalProperties".into(), false.into());
    }
    let nested = if s.contains_key("properties") {
        depth + 1
    } else {
        depth
    };
    each_subschema(s, &mut |child| openai_node(child, nested, reasons, stats));
    if let Some(Value::Object(props)) = s.get_mut("properties") {
        for name in optional {
            if let Some(p) = props.get_mut(&name) {
                null_for_absent(p);
            }
        }
    }
}

/// An optional property, which strict mode makes required, also takes `null`, and its
/// description says that null stands for its default: the runtime reads a `null` there as the
/// property left out. Without this the model would have to invent a value, and the default would
/// never apply.
fn null_for_absent(p: &mut Value) {
    let Value::Object(s) = p else { return };
    let meaning = match s.get("default") {
        Some(Value::String(d)) => format!("null for the default ({d})"),
        Some(d) => format!("null for the default ({d})"),
        None => "null to leave it out".to_owned(),
    };
    if s.contains_key("$ref") {
        // `$ref` takes no siblings: the alternatives go around it.
        let reference = std::mem::take(s);
        s.insert(
            "anyOf".into(),
            json!([Value::Object(reference), {"type": "null"}]),
        );
        s.insert("description".into(), said_with("", &meaning).into());
        return;
    }
    let null = Value::Null;
    let takes_null = s.get("type").is_some_and(|t| {
        *t == "null" || t.as_array().is_some_and(|a| a.iter().any(|t| t == "null"))
    }) || s
        .get("anyOf")
        .and_then(Value::as_array)
        .is_some_and(|a| a.iter().any(|b| b.get("type").is_some_and(|t| t == "null")))
        || s.get("enum")
            .and_then(Value::as_array)
            .is_some_and(|a| a.contains(&null))
        || s.get("const").is_some_and(Value::is_null)
        || !["type", "anyOf", "enum", "const"]
            .iter()
            .any(|k| s.contains_key(*k));
    if takes_null {
        return;
    }
    if let Some(c) = s.remove("const") {
        s.insert("enum".into(), json!([c]));
    }
    match s.get_mut("type") {
        Some(Value::Array(types)) => types.push("null".into()),
        Some(t) => *t = json!([t.take(), "null"]),
        None => {}
    }
    if let Some(Value::Array(values)) = s.get_mut("enum") {
        values.push(Value::Null);
    }
    if let Some(Value::Array(alternatives)) = s.get_mut("anyOf") {
        alternatives.push(json!({"type": "null"}));
    }
    let description = s.get("description").and_then(Value::as_str).unwrap_or("");
    let description = said_with(description, &meaning);
    s.insert("description".into(), description.into());
}

/// `description` followed by `meaning` as its own clause.
fn said_with(description: &str, meaning: &str) -> String {
    let d = description.trim_end();
    if d.is_empty() {
        let mut m = meaning.chars();
        return m
            .next()
            .map_or_else(String::new, |c| c.to_uppercase().chain(m).collect());
    }
    if let Some(sentence) = d.strip_suffix('.') {
        return format!("{sentence}. {}.", said_with("", meaning));
    }
    format!("{d}; {meaning}")
}

/// OpenAI's prompt caching members (Chat and Responses): `prompt_cache_key` and
/// `prompt_cache_retention`, when the request sets them. The cache itself needs nothing.
pub(super) fn cache_fields(body: &mut Value, request: &Request<'_>) {
    if let Some(key) = &request.cache.key {
        body["prompt_cache_key"] = key.as_str().into();
    }
    if let Some(retention) = &request.cache.retention {
        body["prompt_cache_retention"] = retention.as_str().into();
    }
}

/// OpenAI Chat Completions.
pub(super) struct OpenAiChat;

impl Provider for OpenAiChat {
    fn id(&self) -> &'static str {
        "openai-chat"
    }

    fn name(&self) -> &'static str {
        "OpenAI Chat Completions"
    }

    fn lower(&self, canonical: &Value) -> Lowered {
        strict(canonical)
    }

    fn null_means_absent(&self) -> bool {
        true
    }

    fn tool(&self, name: &str, description: &str, input: &Value) -> Exported {
        strict(input).wrap(|schema, strict| {
            json!({
                "type": "function",
                "function": { "name": name, "description": description, "parameters": schema, "strict": strict }
            })
        })
    }

    fn tools(&self, entries: Vec<(&Tool, Exported)>) -> Result<Vec<Value>, ExportError> {
        check_limits(self.name(), &entries)?;
        Ok(entries.into_iter().map(|(_, e)| e.json).collect())
    }

    fn structured_output(&self, name: &str, canonical: &Value) -> Exported {
        strict(canonical).wrap(|schema, strict| {
            json!({ "type": "json_schema", "json_schema": { "name": name, "schema": schema, "strict": strict } })
        })
    }

    /// `POST /v1/chat/completions`: the system text as the first message, the token limit as
    /// `max_completion_tokens`; a stream asks for its usage too.
    fn request(
        &self,
        request: &Request<'_>,
        messages: &[Value],
    ) -> Result<HttpRequest, RequestError> {
        let mut all = Vec::with_capacity(messages.len() + 1);
        if let Some(system) = &request.system {
            all.push(json!({"role": "system", "content": system}));
        }
        all.extend(messages.iter().cloned());
        let mut body = json!({"model": request.model, "messages": all});
        if let Some(tools) = request.tool_entries(self)? {
            body["tools"] = tools.into();
        }
        // A turn that offers fewer tools than the list narrows the choice, never the list:
        // `allowed_tools`, which leaves the cached start of the conversation as it was.
        let allowed = |mode: &str, names: &[String]| {
            let tools: Vec<Value> = names
                .iter()
                .map(|n| json!({"type": "function", "function": {"name": n}}))
                .collect();
            json!({"type": "allowed_tools", "allowed_tools": {"mode": mode, "tools": tools}})
        };
        match (&request.tool_choice, request.narrowed_to()) {
            (ToolChoice::None, _) | (_, Some([])) => body["tool_choice"] = "none".into(),
            (ToolChoice::Auto, None) => {}
            (ToolChoice::Auto, Some(names)) => body["tool_choice"] = allowed("auto", names),
            (ToolChoice::Required, None) => body["tool_choice"] = "required".into(),
            (ToolChoice::Required, Some(names)) => body["tool_choice"] = allowed("required", names),
            (ToolChoice::Tool(name), _) => {
                body["tool_choice"] = json!({"type": "function", "function": {"name": name}});
            }
        }
        if let Some(format) = request.output_field(self) {
            body["response_format"] = format;
        }
        if let Some(n) = request.max_tokens {
            body["max_completion_tokens"] = n.into();
        }
        cache_fields(&mut body, request);
        if request.stream {
            body["stream"] = true.into();
            body["stream_options"] = json!({"include_usage": true});
        }
        Ok(HttpRequest::post(
            "/v1/chat/completions",
            request.finish_body(body),
            request.stream,
        ))
    }

    /// Tool messages carry text only: images are named in the text.
    fn render(&self, answers: &[ToolAnswer]) -> Vec<Value> {
        answers
            .iter()
            .map(|a| json!({"role": "tool", "tool_call_id": a.id(), "content": a.text()}))
            .collect()
    }

    fn user_message(&self, text: &str) -> Value {
        json!({"role": "user", "content": text})
    }

    /// `prompt_tokens` holds the cached ones (`prompt_tokens_details.cached_tokens`).
    fn read_info(&self, raw: &Value) -> super::ResponseInfo {
        super::ResponseInfo::read(
            raw,
            &["id"],
            &["model"],
            &["usage", "prompt_tokens"],
            &["usage", "completion_tokens"],
        )
        .with_cache(
            raw,
            &["usage", "prompt_tokens_details", "cached_tokens"],
            &["usage", "prompt_tokens_details", "cache_write_tokens"],
            false,
        )
    }

    /// A `system` message: Chat takes one at any point of the conversation.
    fn instruction_message(&self, text: &str) -> Value {
        json!({"role": "system", "content": text})
    }

    fn conventions_name(&self) -> Option<&'static str> {
        Some("openai")
    }

    fn read_reply(&self, raw: &Value) -> Result<Reply, ReadError> {
        let choice = raw["choices"]
            .get(0)
            .ok_or_else(|| ReadError::missing("`choices[0]`", raw))?;
        let message = &choice["message"];
        if let Some(r) = message["refusal"].as_str() {
            return Ok(Reply {
                text: None,
                finish: Finish::Refused { message: r.into() },
            });
        }
        // A streamed turn's content starts as "" (the role chunk's): no text is no text.
        let text = message["content"]
            .as_str()
            .filter(|t| !t.is_empty())
            .map(str::to_owned);
        let finish = match choice["finish_reason"].as_str() {
            Some("stop") => Finish::Completed,
            Some("content_filter") => Finish::Refused {
                message: "content_filter".into(),
            },
            Some("length") => Finish::Truncated {
                reason: "length".into(),
            },
            Some(other) => Finish::Other {
                reason: other.into(),
            },
            None => return Err(ReadError::missing("`finish_reason` string", choice)),
        };
        Ok(Reply { text, finish })
    }

    fn read_calls(&self, raw: &Value) -> Result<(Vec<ToolCall>, Vec<Value>), ReadError> {
        let message = &raw["choices"][0]["message"];
        let calls = message["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
            .map(call_of)
            .collect::<Result<_, _>>()?;
        Ok((calls, vec![message.clone()]))
    }

    fn assembler(&self) -> Box<dyn Assemble> {
        Box::<ChatStream>::default()
    }

    fn write_response(&self, turn: &Turn) -> Option<Value> {
        let (message, finish) = message_of(turn);
        let mut response = json!({
            "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "test",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        });
        if let Some(usage) = usage_of(turn) {
            response["usage"] = usage;
        }
        Some(response)
    }

    /// A role chunk, the text in two pieces, each call's head and then its arguments in two
    /// pieces, the chunk with `finish_reason`, `[DONE]`.
    fn write_stream(&self, turn: &Turn) -> Option<Vec<StreamEvent>> {
        let chunk = |delta: Value, finish: Value| {
            StreamEvent::data(
                json!({"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 0,
                    "model": "test", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
                .to_string(),
            )
        };
        // The first chunk opens the text with `""`, or, for a turn of calls alone, says there
        // is none (`null`), as OpenAI streams them.
        let opening = if turn.text.is_some() {
            json!("")
        } else {
            Value::Null
        };
        let mut events = vec![chunk(
            json!({"role": "assistant", "content": opening}),
            Value::Null,
        )];
        if let Some(text) = &turn.text {
            for piece in words(text) {
                events.push(chunk(json!({"content": piece}), Value::Null));
            }
        }
        if let Finish::Refused { message } = &turn.finish {
            events.push(chunk(json!({"refusal": message}), Value::Null));
        }
        for (index, call) in turn.calls.iter().enumerate() {
            events.push(chunk(
                json!({"tool_calls": [{"index": index, "id": call.id, "type": "function",
                    "function": {"name": call.name, "arguments": ""}}]}),
                Value::Null,
            ));
            for piece in halves(&call.arguments.as_text()) {
                events.push(chunk(
                    json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                    Value::Null,
                ));
            }
        }
        let (_, finish) = message_of(turn);
        events.push(chunk(json!({}), finish.into()));
        // (The chunk a stream asked for its usage with, `stream_options.include_usage`.)
        if let Some(usage) = usage_of(turn) {
            events.push(StreamEvent::data(
                json!({"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 0,
                    "model": "test", "choices": [], "usage": usage})
                .to_string(),
            ));
        }
        events.push(StreamEvent::data("[DONE]"));
        Some(events)
    }

    fn read_request(&self, request: &HttpRequest) -> Result<SentRequest, ReadError> {
        let body = &request.body;
        let mut system = None;
        let mut messages = Vec::new();
        for m in body["messages"]
            .as_array()
            .ok_or_else(|| ReadError::missing("`messages` array", body))?
        {
            match m["role"].as_str() {
                // The request's system text opens the list; later ones are instructions.
                Some("system" | "developer") if messages.is_empty() && system.is_none() => {
                    system = Some(text_of(&m["content"]))
                }
                Some("system" | "developer") => {
                    messages.push(Message::Instruction(text_of(&m["content"])))
                }
                Some("user") => messages.push(Message::User(text_of(&m["content"]))),
                Some("assistant") => messages.push(Message::Model {
                    text: m["content"].as_str().map(str::to_owned),
                    calls: m["tool_calls"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(call_of)
                        .collect::<Result<_, _>>()?,
                }),
                Some("tool") => {
                    let result = ToolResult::new(
                        m["tool_call_id"].as_str().map(str::to_owned),
                        None,
                        None,
                        text_of(&m["content"]),
                    );
                    match messages.last_mut() {
                        Some(Message::Results(results)) => results.push(result),
                        _ => messages.push(Message::Results(vec![result])),
                    }
                }
                _ => return Err(ReadError::missing("message `role` string", m)),
            }
        }
        let mut sent = SentRequest::new(messages);
        sent.model = body["model"].as_str().map(str::to_owned);
        sent.system = system;
        sent.tools = names(body["tools"].as_array(), |t| &t["function"]["name"]);
        sent.stream = body["stream"] == true;
        Ok(sent)
    }
}

/// A turn's usage as Chat reports it (the prompt's tokens with the cached ones among them).
fn usage_of(turn: &Turn) -> Option<Value> {
    let usage = turn.usage?;
    Some(json!({
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens.saturating_add(usage.output_tokens),
        "prompt_tokens_details": {"cached_tokens": usage.cache_read_tokens},
    }))
}

/// The assistant message of a turn and its `finish_reason`.
fn message_of(turn: &Turn) -> (Value, &'static str) {
    let mut message = json!({"role": "assistant", "content": turn.text});
    if !turn.calls.is_empty() {
        message["tool_calls"] = turn
            .calls
            .iter()
            .map(|c| match &c.arguments {
                CallArguments::NotAFunction(raw) => raw.clone(),
                arguments => json!({"id": c.id, "type": "function",
                    "function": {"name": c.name, "arguments": arguments.as_text()}}),
            })
            .collect();
    }
    let finish = match &turn.finish {
        Finish::Refused { message: text } => {
            message["refusal"] = text.as_str().into();
            "stop"
        }
        Finish::Truncated { .. } => "length",
        Finish::Other { reason } if reason == "content_filter" => "content_filter",
        _ if !turn.calls.is_empty() => "tool_calls",
        _ => "stop",
    };
    (message, finish)
}

/// The text of a message's `content`: a string, or its text parts joined.
pub(super) fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        _ => String::new(),
    }
}

/// One entry of `message.tool_calls` as a call.
fn call_of(c: &Value) -> Result<ToolCall, ReadError> {
    let id = Some(str_at(c, "id", "a tool call")?);
    if c["type"] != "function" {
        // A `custom` call (free-form input) or one without a type: no tool here takes it, yet
        // its id must be answered or the next request is refused.
        let name = [&c["custom"]["name"], &c["function"]["name"]]
            .into_iter()
            .find_map(Value::as_str)
            .unwrap_or_default();
        return Ok(ToolCall {
            // Strict mode made every optional property nullable: a null there means left out.
            null_means_absent: true,
            id,
            name: name.to_owned(),
            arguments: CallArguments::NotAFunction(c.clone()),
        });
    }
    let function = &c["function"];
    let arguments = match &function["arguments"] {
        Value::String(text) => CallArguments::Text(text.clone()),
        // Some OpenAI-compatible servers send the object itself; none at all is `{}`.
        Value::Null => CallArguments::Text(String::new()),
        other => CallArguments::Value(other.clone()),
    };
    Ok(ToolCall {
        // Strict mode made every optional property nullable: a null there means left out.
        null_means_absent: true,
        id,
        name: str_at(function, "name", "a tool call")?,
        arguments,
    })
}

/// Chat Completions streamed (`stream: true`,
/// <https://platform.openai.com/docs/api-reference/chat-streaming>): `chat.completion.chunk`
/// data events whose `choices[0].delta` carries `content`, `refusal` and `tool_calls[]`
/// fragments addressed by `index` (the first with `id`, `type` and `function.name`, then
/// `function.arguments` pieces), then a chunk with `finish_reason`, an optional usage chunk and
/// `[DONE]`. Arguments have no end event: a call is complete when its JSON is and a later call
/// has started, or at `finish_reason`.
#[derive(Default)]
pub(super) struct ChatStream {
    head: Option<Value>,
    content: Option<String>,
    refusal: Option<String>,
    calls: Vec<StreamedCall>,
    finish: Option<String>,
    usage: Option<Value>,
    done: bool,
}

struct StreamedCall {
    index: u64,
    json: Value,
    ready: bool,
    /// Changed since its arguments were last checked for completeness.
    dirty: bool,
}

impl ChatStream {
    fn fragment(&mut self, tc: &Value) -> Result<(), ReadError> {
        let index = tc["index"].as_u64().ok_or_else(|| {
            ReadError::malformed(format!("a tool_calls fragment without an `index`: {tc}"))
        })?;
        let at = match self.calls.iter().position(|c| c.index == index) {
            Some(at) => at,
            None => {
                // A later call started: the earlier ones may now be complete.
                for earlier in &mut self.calls {
                    earlier.dirty = true;
                }
                self.calls.push(StreamedCall {
                    index,
                    json: json!({"function": {"arguments": ""}}),
                    ready: false,
                    dirty: true,
                });
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[at];
        if call.ready {
            return Err(ReadError::malformed(format!(
                "a fragment for tool call {index} after its arguments were complete and it started"
            )));
        }
        for (key, value) in [("id", &tc["id"]), ("type", &tc["type"])] {
            set_once(&mut call.json[key], value, index, key)?;
        }
        set_once(
            &mut call.json["function"]["name"],
            &tc["function"]["name"],
            index,
            "function.name",
        )?;
        match &tc["function"]["arguments"] {
            Value::Null => {}
            Value::String(more) => {
                stream::append(&mut call.json["function"], "arguments", more)?;
                call.dirty = true;
            }
            // Some OpenAI-compatible servers send the arguments as the object itself, as they
            // do unstreamed: its JSON text, when it is the call's first arguments fragment.
            object @ Value::Object(_)
                if call.json["function"]["arguments"]
                    .as_str()
                    .is_none_or(str::is_empty) =>
            {
                call.json["function"]["arguments"] = Value::String(object.to_string());
                call.dirty = true;
            }
            other => {
                return Err(ReadError::malformed(format!(
                    "tool call {index} sent arguments that are neither text nor one object: {}",
                    clip(&other.to_string())
                )));
            }
        }
        Ok(())
    }

    /// Hands out the calls that are complete: those whose JSON is complete and which a later
    /// call follows, and at the end all of them (unless the response was cut off: a call not
    /// complete by then is an error, never run).
    fn ready(&mut self, end: Option<&str>, out: &mut Vec<Delta>) -> Result<(), ReadError> {
        let started = self.calls.len();
        for (at, call) in self.calls.iter_mut().enumerate() {
            // Only a call that changed is parsed again: no re-reading of long arguments.
            if call.ready || !(call.dirty || end.is_some()) {
                continue;
            }
            call.dirty = false;
            let arguments = call.json["function"]["arguments"].as_str().unwrap_or("");
            let followed = at + 1 < started;
            if end.is_none() && !followed {
                continue;
            }
            let complete = stream::complete_json(arguments);
            if let Some(reason) = end {
                if reason == "length" && !complete {
                    return Err(ReadError::malformed(format!(
                        "the response was cut off (`finish_reason` length) before tool call {} \
                         was complete: {}",
                        call.index,
                        clip(arguments)
                    )));
                }
                if !complete && !arguments.trim().is_empty() {
                    return Err(ReadError::malformed(format!(
                        "tool call {} ended with incomplete JSON arguments: {}",
                        call.index,
                        clip(arguments)
                    )));
                }
            } else if !complete {
                continue;
            }
            call.ready = true;
            out.push(Delta::Call(call_of(&call.json)?));
        }
        Ok(())
    }
}

/// Sets `slot` to `value` the first time; a later different value is an error.
fn set_once(slot: &mut Value, value: &Value, index: u64, key: &str) -> Result<(), ReadError> {
    match (&*slot, value) {
        (_, Value::Null) => Ok(()),
        (Value::Null, v) => {
            *slot = v.clone();
            Ok(())
        }
        (old, new) if old == new => Ok(()),
        (old, new) => Err(ReadError::malformed(format!(
            "tool call {index} changed its `{key}` from {old} to {new}"
        ))),
    }
}

/// A chunk of the shape Chat Completions documents: an object whose `choices` (when present)
/// are objects with a numeric `index`, a `delta` object whose `content` and `refusal` are text,
/// `tool_calls` a list, and a text `finish_reason` (each may be absent or `null`). A chunk of
/// another shape is an error, never passed over: a stream of them would assemble into an empty
/// answer.
fn well_formed(chunk: &Value) -> Result<(), ReadError> {
    let wrong = |what: &str| {
        Err(ReadError::malformed(format!(
            "a chunk whose {what}: {}",
            clip(&chunk.to_string())
        )))
    };
    let Some(fields) = chunk.as_object() else {
        return wrong("data is not an object");
    };
    let kind = |v: Option<&Value>, ok: fn(&Value) -> bool| v.is_none_or(|v| v.is_null() || ok(v));
    if !kind(fields.get("usage"), Value::is_object) {
        return wrong("`usage` is not an object");
    }
    let choices = match fields.get("choices") {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Array(choices)) => choices,
        Some(_) => return wrong("`choices` is not a list"),
    };
    for choice in choices {
        let Some(choice) = choice.as_object() else {
            return wrong("choice is not an object");
        };
        if !kind(choice.get("index"), Value::is_u64) {
            return wrong("choice's `index` is not a number");
        }
        if !kind(choice.get("finish_reason"), Value::is_string) {
            return wrong("`finish_reason` is not text");
        }
        let delta = match choice.get("delta") {
            None | Some(Value::Null) => continue,
            Some(Value::Object(delta)) => delta,
            Some(_) => return wrong("`delta` is not an object"),
        };
        if !kind(delta.get("content"), Value::is_string)
            || !kind(delta.get("refusal"), Value::is_string)
        {
            return wrong("`delta.content` or `delta.refusal` is not text");
        }
        if !kind(delta.get("tool_calls"), Value::is_array) {
            return wrong("`delta.tool_calls` is not a list");
        }
    }
    Ok(())
}

impl Assemble for ChatStream {
    fn event(
        &mut self,
        _name: Option<&str>,
        data: &str,
        out: &mut Vec<Delta>,
    ) -> Result<(), ReadError> {
        if data.trim() == "[DONE]" {
            if self.finish.is_none() {
                return Err(ReadError::malformed("`[DONE]` before any `finish_reason`"));
            }
            self.done = true;
            return Ok(());
        }
        if self.done {
            return Err(ReadError::malformed("an event after `[DONE]`"));
        }
        let chunk = stream::json(data)?;
        if let Some(error) = chunk.get("error") {
            return Err(ReadError::provider(error));
        }
        well_formed(&chunk)?;
        // Compatible servers send other chunks too (Azure's first one has `object: ""` and its
        // prompt filter results): what matters is `choices`.
        if self.head.is_none() {
            self.head = Some(chunk.clone());
        }
        if !chunk["usage"].is_null() {
            self.usage = Some(chunk["usage"].clone());
        }
        let choices = chunk["choices"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        for choice in choices
            .iter()
            .filter(|c| c["index"].as_u64().unwrap_or(0) == 0)
        {
            let delta = &choice["delta"];
            let has_delta = delta.as_object().is_some_and(|d| {
                d.iter()
                    .any(|(k, v)| !v.is_null() && k != "role" && v != &json!([]))
            });
            if self.finish.is_some() && has_delta {
                return Err(ReadError::malformed("a delta after `finish_reason`"));
            }
            if let Some(text) = delta["content"].as_str() {
                self.content.get_or_insert_default().push_str(text);
                if !text.is_empty() {
                    out.push(Delta::Text(text.to_owned()));
                }
            }
            if let Some(text) = delta["refusal"].as_str() {
                self.refusal.get_or_insert_default().push_str(text);
            }
            for tc in delta["tool_calls"].as_array().into_iter().flatten() {
                self.fragment(tc)?;
            }
            if let Some(reason) = choice["finish_reason"].as_str() {
                self.finish = Some(reason.to_owned());
            }
            let finish = self.finish.clone();
            self.ready(finish.as_deref(), out)?;
        }
        Ok(())
    }

    fn finish(&mut self, _out: &mut Vec<Delta>) -> Result<Value, ReadError> {
        let Some(finish) = self.finish.take() else {
            return Err(ReadError::malformed(
                "the stream ended before a chunk with `finish_reason`",
            ));
        };
        let head = self.head.take().unwrap_or_default();
        let mut message = json!({
            "role": "assistant",
            "content": self.content.take(),
            "refusal": self.refusal.take(),
        });
        if !self.calls.is_empty() {
            message["tool_calls"] = Value::Array(self.calls.drain(..).map(|c| c.json).collect());
        }
        let mut response = json!({
            "id": head["id"],
            "object": "chat.completion",
            "created": head["created"],
            "model": head["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        });
        if let Some(usage) = self.usage.take() {
            response["usage"] = usage;
        }
        Ok(response)
    }
}
