//! OpenAI Responses (`POST /v1/responses`, <https://platform.openai.com/docs/api-reference/responses>):
//! flat tools `{type: "function", name, description, parameters, strict}`, structured output as
//! `text: {format: {type: "json_schema", ...}}`, replies as `output[]` items (`message` with
//! `output_text` or `refusal` parts, `function_call` with `call_id`, `name`, `arguments` as JSON
//! text, `reasoning`), results as one `function_call_output` item per call. Every output item
//! is kept in the next request's `input`, reasoning included. The schema lowering is OpenAI's
//! strict mode, as for Chat Completions.
//!
//! A conversation only appends: `tools` is written once, and a turn that offers fewer is a
//! flat `allowed_tools` `tool_choice` (`{"type": "allowed_tools", "mode", "tools"}`)
//! (<https://platform.openai.com/docs/guides/function-calling>); an instruction given later is a
//! `developer` item. Caching as for Chat Completions
//! (<https://platform.openai.com/docs/guides/prompt-caching>); the usage reads
//! `input_tokens_details.cached_tokens`, part of `input_tokens`.

use serde_json::{Value, json};

use super::error::clip;
use super::openai_chat::{check_limits, strict, text_of};
use super::stream::{self, Assemble, Delta, StreamEvent};
use super::turn::{halves, names, words};
use super::{
    CallArguments, ExportError, Exported, Finish, HttpRequest, Lowered, Message, Provider,
    ReadError, Reply, Request, RequestError, SentRequest, ToolAnswer, ToolCall, ToolChoice,
    ToolResult, Turn, str_at,
};
use crate::host::Content;
use crate::tool::Tool;

/// OpenAI Responses.
pub(super) struct OpenAiResponses;

impl Provider for OpenAiResponses {
    fn id(&self) -> &'static str {
        "openai-responses"
    }

    fn name(&self) -> &'static str {
        "OpenAI Responses"
    }

    fn lower(&self, canonical: &Value) -> Lowered {
        strict(canonical)
    }

    fn null_means_absent(&self) -> bool {
        true
    }

    fn tool(&self, name: &str, description: &str, input: &Value) -> Exported {
        strict(input).wrap(|schema, strict| {
            json!({ "type": "function", "name": name, "description": description, "parameters": schema, "strict": strict })
        })
    }

    fn tools(&self, entries: Vec<(&Tool, Exported)>) -> Result<Vec<Value>, ExportError> {
        check_limits(self.name(), &entries)?;
        Ok(entries.into_iter().map(|(_, e)| e.json).collect())
    }

    fn structured_output(&self, name: &str, canonical: &Value) -> Exported {
        strict(canonical).wrap(|schema, strict| {
            json!({ "format": { "type": "json_schema", "name": name, "schema": schema, "strict": strict } })
        })
    }

    /// `POST /v1/responses`: the system text as `instructions`, the conversation as `input`,
    /// structured output as `text`, the token limit as `max_output_tokens`.
    fn request(
        &self,
        request: &Request<'_>,
        messages: &[Value],
    ) -> Result<HttpRequest, RequestError> {
        let mut body = json!({"model": request.model, "input": messages});
        if let Some(system) = &request.system {
            body["instructions"] = system.as_str().into();
        }
        if let Some(tools) = request.tool_entries(self)? {
            body["tools"] = tools.into();
        }
        // A turn that offers fewer tools than the list narrows the choice, never the list.
        let allowed = |mode: &str, names: &[String]| {
            let tools: Vec<Value> = names
                .iter()
                .map(|n| json!({"type": "function", "name": n}))
                .collect();
            json!({"type": "allowed_tools", "mode": mode, "tools": tools})
        };
        match (&request.tool_choice, request.narrowed_to()) {
            (ToolChoice::None, _) | (_, Some([])) => body["tool_choice"] = "none".into(),
            (ToolChoice::Auto, None) => {}
            (ToolChoice::Auto, Some(names)) => body["tool_choice"] = allowed("auto", names),
            (ToolChoice::Required, None) => body["tool_choice"] = "required".into(),
            (ToolChoice::Required, Some(names)) => body["tool_choice"] = allowed("required", names),
            (ToolChoice::Tool(name), _) => {
                body["tool_choice"] = json!({"type": "function", "name": name});
            }
        }
        if let Some(format) = request.output_field(self) {
            body["text"] = format;
        }
        if let Some(n) = request.max_tokens {
            body["max_output_tokens"] = n.into();
        }
        super::openai_chat::cache_fields(&mut body, request);
        if request.stream {
            body["stream"] = true.into();
        }
        Ok(HttpRequest::post(
            "/v1/responses",
            request.finish_body(body),
            request.stream,
        ))
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

    /// `input_tokens` holds the cached ones (`input_tokens_details.cached_tokens`).
    fn read_info(&self, raw: &Value) -> super::ResponseInfo {
        super::ResponseInfo::read(
            raw,
            &["id"],
            &["model"],
            &["usage", "input_tokens"],
            &["usage", "output_tokens"],
        )
        .with_cache(
            raw,
            &["usage", "input_tokens_details", "cached_tokens"],
            &["usage", "input_tokens_details", "cache_write_tokens"],
            false,
        )
    }

    /// A `developer` message (an instruction input item), as the Responses API takes one
    /// between the others.
    fn instruction_message(&self, text: &str) -> Value {
        json!({"role": "developer", "content": text})
    }

    fn prefix_members(&self) -> &'static [&'static str] {
        &["instructions", "tools", "input"]
    }

    fn conventions_name(&self) -> Option<&'static str> {
        Some("openai")
    }

    fn read_reply(&self, raw: &Value) -> Result<Reply, ReadError> {
        let output = raw["output"]
            .as_array()
            .ok_or_else(|| ReadError::missing("`output` array", raw))?;
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
            None => return Err(ReadError::missing("`status` string", raw)),
        };
        Ok(Reply::new(text, finish))
    }

    fn read_calls(&self, raw: &Value) -> Result<(Vec<ToolCall>, Vec<Value>), ReadError> {
        let items = raw["output"].as_array().cloned().unwrap_or_default();
        let calls = items
            .iter()
            .filter(|i| i["type"] == "function_call")
            .map(call_of)
            .collect::<Result<_, _>>()?;
        Ok((calls, items))
    }

    fn assembler(&self) -> Box<dyn Assemble> {
        Box::<ResponsesStream>::default()
    }

    fn write_response(&self, turn: &Turn) -> Option<Value> {
        Some(response_of(turn, items_of(turn)))
    }

    /// `response.created`; each item added, its text or arguments in two deltas (a call's
    /// arguments then `.done`), and done; `response.completed` (or `.incomplete`) with the
    /// whole response.
    fn write_stream(&self, turn: &Turn) -> Option<Vec<StreamEvent>> {
        let mut events = Vec::new();
        let mut event = |mut v: Value| {
            v["sequence_number"] = events.len().into();
            events.push(StreamEvent::named(
                v["type"].as_str().unwrap_or_default(),
                v.to_string(),
            ));
        };
        let items = items_of(turn);
        let mut started = response_of(turn, Vec::new());
        started["status"] = "in_progress".into();
        event(json!({"type": "response.created", "response": started}));
        for (at, item) in items.iter().enumerate() {
            let mut head = item.clone();
            match item["type"].as_str() {
                Some("function_call") => head["arguments"] = "".into(),
                Some("message") => head["content"] = json!([]),
                _ => head["summary"] = json!([]),
            }
            event(json!({"type": "response.output_item.added", "output_index": at, "item": head}));
            match item["type"].as_str() {
                Some("function_call") => {
                    let arguments = item["arguments"].as_str().unwrap_or_default();
                    for piece in halves(arguments) {
                        event(json!({"type": "response.function_call_arguments.delta",
                            "output_index": at, "item_id": item["id"], "delta": piece}));
                    }
                    event(json!({"type": "response.function_call_arguments.done",
                        "output_index": at, "item_id": item["id"], "arguments": arguments}));
                }
                Some("message") => {
                    for part in item["content"].as_array().into_iter().flatten() {
                        for piece in words(part["text"].as_str().unwrap_or_default()) {
                            event(
                                json!({"type": "response.output_text.delta", "output_index": at,
                                "item_id": item["id"], "content_index": 0, "delta": piece}),
                            );
                        }
                    }
                }
                _ => {
                    for part in item["summary"].as_array().into_iter().flatten() {
                        for piece in words(part["text"].as_str().unwrap_or_default()) {
                            event(json!({"type": "response.reasoning_summary_text.delta",
                                "output_index": at, "item_id": item["id"], "summary_index": 0,
                                "delta": piece}));
                        }
                    }
                }
            }
            event(json!({"type": "response.output_item.done", "output_index": at, "item": item}));
        }
        let whole = response_of(turn, items);
        let end = if whole["status"] == "completed" {
            "response.completed"
        } else {
            "response.incomplete"
        };
        event(json!({"type": end, "response": whole}));
        Some(events)
    }

    fn read_request(&self, request: &HttpRequest) -> Result<SentRequest, ReadError> {
        let body = &request.body;
        let mut messages: Vec<Message> = Vec::new();
        for item in body["input"]
            .as_array()
            .ok_or_else(|| ReadError::missing("`input` array", body))?
        {
            let kind = item["type"].as_str().unwrap_or("message");
            match (kind, item["role"].as_str()) {
                ("message", Some("user")) => {
                    messages.push(Message::User(text_of(&item["content"])))
                }
                ("message", Some("developer" | "system")) => {
                    messages.push(Message::Instruction(text_of(&item["content"])))
                }
                ("message" | "function_call" | "reasoning", _) => {
                    if !matches!(messages.last(), Some(Message::Model { .. })) {
                        messages.push(Message::Model {
                            text: None,
                            calls: Vec::new(),
                        });
                    }
                    let Some(Message::Model { text, calls }) = messages.last_mut() else {
                        unreachable!("a model turn was pushed above")
                    };
                    match kind {
                        "function_call" => calls.push(call_of(item)?),
                        "message" => {
                            let more = text_of(&item["content"]);
                            text.get_or_insert_default().push_str(&more);
                        }
                        _ => {}
                    }
                }
                ("function_call_output", _) => {
                    let result = ToolResult::new(
                        item["call_id"].as_str().map(str::to_owned),
                        None,
                        None,
                        text_of(&item["output"]),
                    );
                    match messages.last_mut() {
                        Some(Message::Results(results)) => results.push(result),
                        _ => messages.push(Message::Results(vec![result])),
                    }
                }
                _ => {
                    return Err(ReadError::malformed(format!(
                        "an input item of type `{kind}`"
                    )));
                }
            }
        }
        let mut sent = SentRequest::new(messages);
        sent.model = body["model"].as_str().map(str::to_owned);
        sent.system = body["instructions"].as_str().map(str::to_owned);
        sent.tools = names(body["tools"].as_array(), |t| &t["name"]);
        sent.stream = body["stream"] == true;
        Ok(sent)
    }
}

/// The output items of a turn: a reasoning item, a message, the function calls.
fn items_of(turn: &Turn) -> Vec<Value> {
    let mut items = Vec::new();
    if let Some(thinking) = &turn.thinking {
        items.push(json!({"type": "reasoning", "id": "rs_test",
            "summary": [{"type": "summary_text", "text": thinking}]}));
    }
    let part = match (&turn.finish, &turn.text) {
        (Finish::Refused { message }, _) => Some(json!({"type": "refusal", "refusal": message})),
        (_, Some(text)) => Some(json!({"type": "output_text", "text": text, "annotations": []})),
        _ => None,
    };
    if let Some(part) = part {
        items.push(
            json!({"type": "message", "id": "msg_test", "role": "assistant",
            "status": "completed", "content": [part]}),
        );
    }
    for c in &turn.calls {
        let id = c.id.as_deref().unwrap_or_default();
        items.push(
            json!({"type": "function_call", "id": format!("fc_{id}"), "call_id": id,
            "name": c.name, "arguments": c.arguments.as_text(), "status": "completed"}),
        );
    }
    items
}

/// The whole response of a turn with these output items.
fn response_of(turn: &Turn, output: Vec<Value>) -> Value {
    let mut response = json!({"id": "resp_test", "object": "response", "created_at": 0,
        "model": "test", "status": "completed", "output": output});
    if let Finish::Truncated { reason } = &turn.finish {
        response["status"] = "incomplete".into();
        let reason = if reason == "length" {
            "max_output_tokens"
        } else {
            reason
        };
        response["incomplete_details"] = json!({"reason": reason});
    }
    if let Some(usage) = turn.usage {
        response["usage"] = json!({
            "input_tokens": usage.input_tokens,
            "input_tokens_details": {"cached_tokens": usage.cache_read_tokens},
            "output_tokens": usage.output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage.input_tokens.saturating_add(usage.output_tokens),
        });
    }
    response
}

/// A `function_call` item as a call.
fn call_of(item: &Value) -> Result<ToolCall, ReadError> {
    Ok(ToolCall {
        // Strict mode made every optional property nullable: a null there means left out.
        null_means_absent: true,
        id: Some(str_at(item, "call_id", "a function_call item")?),
        name: str_at(item, "name", "a function_call item")?,
        arguments: CallArguments::Text(str_at(item, "arguments", "a function_call item")?),
    })
}

/// Responses streamed (`stream: true`,
/// <https://platform.openai.com/docs/api-reference/responses-streaming>): typed events;
/// `response.output_item.added` opens an item, `response.function_call_arguments.delta` adds to
/// a call's arguments, `.done` and `response.output_item.done` close it (the call is complete
/// there), text arrives as `response.output_text.delta`, and `response.completed` (or
/// `response.incomplete`) carries the whole response, which must agree with the calls handed
/// out. Other events (content parts, hosted tools' progress, keep-alives, types added later)
/// add nothing the closing response does not repeat whole, and are passed over.
#[derive(Default)]
pub(super) struct ResponsesStream {
    /// Function-call items by `output_index`: the item and whether it was handed out.
    calls: Vec<(u64, Value, bool)>,
    response: Option<Value>,
}

impl ResponsesStream {
    fn call(&mut self, event: &Value) -> Result<&mut (u64, Value, bool), ReadError> {
        let at = event["output_index"]
            .as_u64()
            .ok_or_else(|| ReadError::missing("`output_index` number", event))?;
        self.calls.iter_mut().find(|c| c.0 == at).ok_or_else(|| {
            ReadError::malformed(format!(
                "output item {at} is not a function call that was added"
            ))
        })
    }
}

/// A function call's arguments, once it is done, are one complete JSON value (or empty, for a
/// call without arguments), as the other APIs' streams require: a call cut short ends the run
/// with the event named, never reaches a tool.
fn complete(at: u64, item: &Value) -> Result<(), ReadError> {
    let arguments = item["arguments"].as_str().unwrap_or_default();
    stream::parse_input(
        arguments,
        &format!("output item {at} (call {})", item["call_id"]),
    )
    .map(drop)
}

impl Assemble for ResponsesStream {
    fn event(
        &mut self,
        name: Option<&str>,
        data: &str,
        out: &mut Vec<Delta>,
    ) -> Result<(), ReadError> {
        if self.response.is_some() {
            return Err(ReadError::malformed(
                "an event after the response completed",
            ));
        }
        let event = stream::json(data)?;
        let kind = stream::typed(name, &event)?;
        match kind {
            "response.created" | "response.in_progress" | "response.queued" => {}
            "response.output_item.added" => {
                let item = &event["item"];
                if item["type"] == "function_call" {
                    let at = stream::index(&event, "output_index")? as u64;
                    let mut item = item.clone();
                    item["arguments"] = json!(item["arguments"].as_str().unwrap_or(""));
                    // (`item["type"]` is a string only in an object, so these writes cannot fail.)
                    self.calls.push((at, item, false));
                }
            }
            "response.function_call_arguments.delta" => {
                let (at, item, handed) = self.call(&event)?;
                if *handed {
                    return Err(ReadError::malformed(format!(
                        "arguments for output item {at} after it was complete"
                    )));
                }
                let more = event["delta"]
                    .as_str()
                    .ok_or_else(|| ReadError::missing("`delta` string", &event))?;
                stream::append(item, "arguments", more)?;
            }
            "response.function_call_arguments.done" => {
                let (at, item, _) = self.call(&event)?;
                let done = event["arguments"]
                    .as_str()
                    .ok_or_else(|| ReadError::missing("`arguments` string", &event))?;
                if item["arguments"] != done {
                    return Err(ReadError::malformed(format!(
                        "output item {at}'s arguments are {} but the deltas made {}",
                        clip(done),
                        clip(item["arguments"].as_str().unwrap_or_default())
                    )));
                }
                complete(*at, item)?;
            }
            "response.output_item.done" => {
                let item = &event["item"];
                if item["type"] == "function_call" {
                    let (at, streamed, handed) = self.call(&event)?;
                    if *handed {
                        return Err(ReadError::malformed(format!(
                            "output item {at} was done twice"
                        )));
                    }
                    if item["status"] == "incomplete" {
                        return Err(ReadError::malformed(format!(
                            "output item {at} (call {}) was cut off before its arguments were complete",
                            item["call_id"]
                        )));
                    }
                    if streamed["arguments"] != item["arguments"] {
                        return Err(ReadError::malformed(format!(
                            "output item {at}'s arguments are {} but the deltas made {}",
                            item["arguments"], streamed["arguments"]
                        )));
                    }
                    complete(*at, item)?;
                    *streamed = item.clone();
                    *handed = true;
                    out.push(Delta::Call(call_of(item)?));
                }
            }
            "response.output_text.delta" => {
                out.push(Delta::Text(
                    event["delta"]
                        .as_str()
                        .ok_or_else(|| ReadError::missing("`delta` string", &event))?
                        .into(),
                ));
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                out.push(Delta::Thinking(
                    event["delta"]
                        .as_str()
                        .ok_or_else(|| ReadError::missing("`delta` string", &event))?
                        .into(),
                ));
            }
            "response.completed" | "response.incomplete" => {
                let response = event["response"].clone();
                let output = response["output"]
                    .as_array()
                    .ok_or_else(|| ReadError::missing("`response.output` array", &event))?;
                let finals: Vec<&Value> = output
                    .iter()
                    .filter(|i| i["type"] == "function_call")
                    .collect();
                for (at, item, handed) in &mut self.calls {
                    let Some(last) = finals.iter().find(|f| f["call_id"] == item["call_id"]) else {
                        return Err(ReadError::malformed(format!(
                            "output item {at} is missing from the response"
                        )));
                    };
                    if !*handed {
                        if kind == "response.incomplete" || last["status"] == "incomplete" {
                            return Err(ReadError::malformed(format!(
                                "the response was cut off ({}) before call {} was complete",
                                response["incomplete_details"]["reason"], item["call_id"]
                            )));
                        }
                        complete(*at, last)?;
                        *item = (*last).clone();
                        *handed = true;
                        out.push(Delta::Call(call_of(item)?));
                    } else if item["arguments"] != last["arguments"] || item["name"] != last["name"]
                    {
                        return Err(ReadError::malformed(format!(
                            "the response's call {} differs from the one streamed",
                            item["call_id"]
                        )));
                    }
                }
                if finals.len() != self.calls.len() {
                    return Err(ReadError::malformed(
                        "the response has function calls that were never streamed",
                    ));
                }
                self.response = Some(response);
            }
            "response.failed" => {
                return Err(ReadError::malformed(format!(
                    "the response failed: {}",
                    event["response"]["error"]
                )));
            }
            "error" => {
                return Err(ReadError::malformed(format!(
                    "the provider sent an error: {} {}",
                    event["code"], event["message"]
                )));
            }
            _ => {}
        }
        Ok(())
    }

    fn finish(&mut self, _out: &mut Vec<Delta>) -> Result<Value, ReadError> {
        self.response
            .take()
            .ok_or_else(|| ReadError::malformed("the stream ended before `response.completed`"))
    }
}
