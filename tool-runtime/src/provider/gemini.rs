//! Google Gemini `generateContent` (<https://ai.google.dev/api/generate-content>): one tool
//! `{functionDeclarations: [{name, description, parametersJsonSchema}]}`, structured output as
//! `generationConfig: {responseMimeType, responseJsonSchema}`, replies as
//! `candidates[0].content.parts[]` (`text`, `functionCall` with `name`, `args` and an `id` where
//! the model numbers calls; thought parts and `thoughtSignature`s kept), results as one `user`
//! content of `functionResponse` parts. At most 128 declarations per request.
//!
//! A conversation only appends: the declarations are written once, and a turn that offers fewer
//! names them in `toolConfig.functionCallingConfig.allowedFunctionNames` with mode `VALIDATED`
//! (a call or an answer; `ANY` when a call is required), which "limits the functions the model
//! will call" without editing `tools`
//! (<https://ai.google.dev/api/caching#FunctionCallingConfig>). Caching is implicit, or an
//! explicit `cachedContent` that then holds the system text and tools
//! (<https://ai.google.dev/gemini-api/docs/caching>); the usage reads
//! `cachedContentTokenCount`, part of `promptTokenCount`. Whether a changed `toolConfig` keeps
//! the implicit cache hitting, the docs do not say.

use serde_json::{Map, Value, json};

use super::lower::{each_subschema, note, one_of_to_any_of, take};
use super::request::path_segment;
use super::stream::{self, Assemble, Delta, StreamEvent};
use super::turn::{names, words};
use super::{
    CallArguments, ExportError, Exported, Finish, HttpRequest, Lowered, Message, Provider,
    ReadError, Reply, Request, RequestError, RequestLimit, SentRequest, ToolAnswer, ToolCall,
    ToolChoice, ToolResult, Turn, str_at,
};
use crate::tool::Tool;

/// Gemini's limit of function declarations per request.
const GEMINI_MAX_DECLARATIONS: usize = 128;

/// Google Gemini (`parametersJsonSchema`, `responseJsonSchema`): `propertyOrdering` on every
/// object (declaration order), type arrays as `anyOf`, `oneOf` as `anyOf` (or `enum`), no
/// siblings next to `$ref`, and keywords outside Gemini's list moved into the description.
/// Gemini has no strict flag; `strict` is true when nothing had to move.
pub(super) fn lower(canonical: &Value) -> Lowered {
    let mut schema = canonical.clone();
    gemini_node(&mut schema);
    Lowered {
        schema,
        strict: true,
        reasons: Vec::new(),
    }
}

fn gemini_node(v: &mut Value) {
    let Value::Object(s) = v else { return };
    if s.contains_key("$ref") {
        s.retain(|k, _| k.starts_with('$'));
        return;
    }
    one_of_to_any_of(s);
    let moved = take(s, |k, _| {
        !matches!(
            k,
            "exclusiveMinimum"
                | "exclusiveMaximum"
                | "multipleOf"
                | "minLength"
                | "maxLength"
                | "pattern"
                | "default"
                | "examples"
                | "formatMinimum"
                | "formatMaximum"
        )
    });
    note(s, moved);
    if let Some(Value::Array(types)) = s.get("type").cloned() {
        // ["integer", "null"] as anyOf: the constraints stay with the non-null type.
        let mut alternatives = Vec::new();
        // Everything but the annotations moves into the typed alternative.
        let moved: Vec<(String, Value)> = take(s, |k, _| k == "description" || k == "title");
        let rest: Map<String, Value> = moved.into_iter().filter(|(k, _)| k != "type").collect();
        for t in types {
            if t == "null" {
                alternatives.push(json!({"type": "null"}));
            } else {
                let mut alt = rest.clone();
                alt.insert("type".into(), t);
                let mut alt = Value::Object(alt);
                gemini_node(&mut alt);
                alternatives.push(alt);
            }
        }
        s.insert("anyOf".into(), Value::Array(alternatives));
        return;
    }
    if let Some(Value::Object(props)) = s.get("properties") {
        let order: Vec<Value> = props.keys().map(|k| Value::from(k.as_str())).collect();
        s.insert("propertyOrdering".into(), Value::Array(order));
    }
    each_subschema(s, &mut |child| gemini_node(child));
}

/// Google Gemini `generateContent`.
pub(super) struct Gemini;

impl Provider for Gemini {
    fn id(&self) -> &'static str {
        "gemini"
    }

    fn name(&self) -> &'static str {
        "Gemini generateContent"
    }

    fn lower(&self, canonical: &Value) -> Lowered {
        lower(canonical)
    }

    fn tool(&self, name: &str, description: &str, input: &Value) -> Exported {
        let Lowered { schema, .. } = lower(input);
        let json =
            json!({ "name": name, "description": description, "parametersJsonSchema": schema });
        Exported {
            json,
            strict: false,
            reasons: vec!["Gemini has no strict flag".into()],
        }
    }

    fn tools(&self, entries: Vec<(&Tool, Exported)>) -> Result<Vec<Value>, ExportError> {
        check(self.name(), &entries)?;
        let declarations: Vec<Value> = entries.into_iter().map(|(_, e)| e.json).collect();
        Ok(vec![json!({ "functionDeclarations": declarations })])
    }

    fn structured_output(&self, _name: &str, canonical: &Value) -> Exported {
        let Lowered { schema, .. } = lower(canonical);
        let json = json!({ "responseMimeType": "application/json", "responseJsonSchema": schema });
        Exported {
            json,
            strict: true,
            reasons: Vec::new(),
        }
    }

    /// `POST /v1beta/models/{model}:generateContent` (streamed:
    /// `:streamGenerateContent?alt=sse`): the system text as `systemInstruction`, the tool
    /// choice as `toolConfig`, structured output and the token limit in `generationConfig`.
    fn request(
        &self,
        request: &Request<'_>,
        messages: &[Value],
    ) -> Result<HttpRequest, RequestError> {
        let mut body = json!({"contents": messages});
        // An explicit cache holds the system text, the tools and their config: the API refuses
        // them beside it.
        if let Some(cache) = &request.cache.cached_content {
            body["cachedContent"] = cache.as_str().into();
        } else {
            if let Some(system) = &request.system {
                body["systemInstruction"] = json!({"parts": [{"text": system}]});
            }
            if let Some(tools) = request.tool_entries(self)? {
                body["tools"] = tools.into();
            }
            // A turn that offers fewer tools than the list narrows the calls it may make
            // (`allowedFunctionNames`: with `VALIDATED` the model may still answer in text),
            // never the list.
            let calling = match (&request.tool_choice, request.narrowed_to()) {
                (ToolChoice::None, _) | (_, Some([])) => Some(json!({"mode": "NONE"})),
                (ToolChoice::Auto, None) => None,
                (ToolChoice::Auto, Some(names)) => {
                    Some(json!({"mode": "VALIDATED", "allowedFunctionNames": names}))
                }
                (ToolChoice::Required, None) => Some(json!({"mode": "ANY"})),
                (ToolChoice::Required, Some(names)) => {
                    Some(json!({"mode": "ANY", "allowedFunctionNames": names}))
                }
                (ToolChoice::Tool(name), _) => {
                    Some(json!({"mode": "ANY", "allowedFunctionNames": [name]}))
                }
            };
            if let Some(calling) = calling {
                body["toolConfig"] = json!({"functionCallingConfig": calling});
            }
        }
        let mut generation = request.output_field(self).unwrap_or_else(|| json!({}));
        if let Some(n) = request.max_tokens {
            generation["maxOutputTokens"] = n.into();
        }
        if generation.as_object().is_some_and(|g| !g.is_empty()) {
            body["generationConfig"] = generation;
        }
        let model = path_segment(request.model.trim_start_matches("models/"));
        let path = if request.stream {
            format!("/v1beta/models/{model}:streamGenerateContent?alt=sse")
        } else {
            format!("/v1beta/models/{model}:generateContent")
        };
        Ok(HttpRequest::post(
            path,
            request.finish_body(body),
            request.stream,
        ))
    }

    /// One user content of `functionResponse` parts; images are named in the text.
    fn render(&self, answers: &[ToolAnswer]) -> Vec<Value> {
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

    fn user_message(&self, text: &str) -> Value {
        json!({"role": "user", "parts": [{"text": text}]})
    }

    /// `promptTokenCount` holds the cached ones (`cachedContentTokenCount`); the thinking's
    /// tokens (`thoughtsTokenCount`, billed as output) are counted with the answer's.
    fn read_info(&self, raw: &Value) -> super::ResponseInfo {
        let mut info = super::ResponseInfo::read(
            raw,
            &["responseId"],
            &["modelVersion"],
            &["usageMetadata", "promptTokenCount"],
            &["usageMetadata", "candidatesTokenCount"],
        )
        .with_cache(
            raw,
            &["usageMetadata", "cachedContentTokenCount"],
            &[],
            false,
        );
        if let Some(thoughts) = raw["usageMetadata"]["thoughtsTokenCount"].as_u64() {
            info.output_tokens = Some(info.output_tokens.unwrap_or(0).saturating_add(thoughts));
        }
        info
    }

    /// Gemini's contents have no system role: an instruction given later is a user turn.
    fn instruction_message(&self, text: &str) -> Value {
        self.user_message(text)
    }

    fn prefix_members(&self) -> &'static [&'static str] {
        &["systemInstruction", "tools", "contents"]
    }

    fn conventions_name(&self) -> Option<&'static str> {
        Some("gcp.gemini")
    }

    fn read_reply(&self, raw: &Value) -> Result<Reply, ReadError> {
        if let Some(reason) = raw["promptFeedback"]["blockReason"].as_str() {
            return Ok(Reply {
                text: None,
                finish: Finish::Refused {
                    message: reason.into(),
                },
            });
        }
        let candidate = raw["candidates"]
            .get(0)
            .ok_or_else(|| ReadError::missing("`candidates[0]`", raw))?;
        // Parts marked `thought` are the model's thought summaries, not its answer.
        let text: String = candidate["content"]["parts"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["thought"] != true)
            .filter_map(|p| p["text"].as_str())
            .collect();
        let finish = match candidate["finishReason"].as_str() {
            Some("STOP") => Finish::Completed,
            Some("MAX_TOKENS") => Finish::Truncated {
                reason: "MAX_TOKENS".into(),
            },
            Some(
                r @ ("SAFETY"
                | "RECITATION"
                | "PROHIBITED_CONTENT"
                | "BLOCKLIST"
                | "SPII"
                | "IMAGE_SAFETY"
                | "IMAGE_PROHIBITED_CONTENT"
                | "IMAGE_RECITATION"),
            ) => Finish::Refused { message: r.into() },
            Some(other) => Finish::Other {
                reason: other.into(),
            },
            None => return Err(ReadError::missing("`finishReason` string", candidate)),
        };
        Ok(Reply::new(text, finish))
    }

    fn read_calls(&self, raw: &Value) -> Result<(Vec<ToolCall>, Vec<Value>), ReadError> {
        let content = raw["candidates"][0]["content"].clone();
        let calls = calls_in(&content)?;
        Ok((calls, vec![content]))
    }

    fn assembler(&self) -> Box<dyn Assemble> {
        Box::<GeminiStream>::default()
    }

    fn write_response(&self, turn: &Turn) -> Option<Value> {
        Some(response_of(turn, parts_of(turn), true))
    }

    /// The parts in order, a text in two chunks, a call whole in its own; the last chunk has
    /// the `finishReason`.
    fn write_stream(&self, turn: &Turn) -> Option<Vec<StreamEvent>> {
        let mut chunks: Vec<Vec<Value>> = Vec::new();
        for part in parts_of(turn) {
            match part["text"].as_str() {
                // A part with empty text (a thought the API keeps unsaid) streams whole.
                Some(text) if !text.is_empty() => {
                    for piece in words(text) {
                        let mut p = part.clone();
                        p["text"] = piece.into();
                        chunks.push(vec![p]);
                    }
                }
                _ => chunks.push(vec![part]),
            }
        }
        if chunks.is_empty() {
            chunks.push(Vec::new());
        }
        let last = chunks.len() - 1;
        Some(
            chunks
                .into_iter()
                .enumerate()
                .map(|(i, parts)| {
                    StreamEvent::data(response_of(turn, parts, i == last).to_string())
                })
                .collect(),
        )
    }

    fn read_request(&self, request: &HttpRequest) -> Result<SentRequest, ReadError> {
        let body = &request.body;
        let mut messages = Vec::new();
        for content in body["contents"]
            .as_array()
            .ok_or_else(|| ReadError::missing("`contents` array", body))?
        {
            let parts = content["parts"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or(&[]);
            let text: String = parts
                .iter()
                .filter(|p| p["thought"] != true)
                .filter_map(|p| p["text"].as_str())
                .collect();
            match content["role"].as_str() {
                Some("model") => messages.push(Message::Model {
                    text: (!text.is_empty()).then_some(text),
                    calls: calls_in(content)?,
                }),
                Some("user") => {
                    let results: Vec<ToolResult> = parts
                        .iter()
                        .filter_map(|p| p.get("functionResponse"))
                        .map(|r| {
                            let error = r["response"].get("error");
                            let said = error
                                .or(r["response"].get("output"))
                                .unwrap_or(&Value::Null);
                            ToolResult::new(
                                r["id"].as_str().map(str::to_owned),
                                r["name"].as_str().map(str::to_owned),
                                Some(error.is_some()),
                                said.as_str()
                                    .map_or_else(|| said.to_string(), str::to_owned),
                            )
                        })
                        .collect();
                    if results.is_empty() {
                        messages.push(Message::User(text));
                    } else {
                        messages.push(Message::Results(results));
                    }
                }
                _ => return Err(ReadError::missing("content `role` string", content)),
            }
        }
        let mut sent = SentRequest::new(messages);
        sent.model = request
            .path
            .split_once("/models/")
            .and_then(|(_, rest)| rest.split(':').next())
            .map(str::to_owned);
        sent.system = body["systemInstruction"]["parts"]
            .as_array()
            .map(|parts| parts.iter().filter_map(|p| p["text"].as_str()).collect());
        sent.tools = body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|t| names(t["functionDeclarations"].as_array(), |d| &d["name"]))
            .collect();
        sent.stream = request.path.contains(":streamGenerateContent");
        Ok(sent)
    }
}

/// The parts of a turn: its thought, its text, its function calls.
fn parts_of(turn: &Turn) -> Vec<Value> {
    let mut parts = Vec::new();
    if let Some(thinking) = &turn.thinking {
        parts.push(json!({"text": thinking, "thought": true}));
    }
    if let Some(text) = &turn.text {
        parts.push(json!({"text": text}));
    }
    for c in &turn.calls {
        let mut call = json!({"name": c.name, "args": c.arguments.as_value()});
        if let Some(id) = &c.id {
            call["id"] = id.as_str().into();
        }
        parts.push(json!({"functionCall": call}));
    }
    parts
}

/// A response (or a streamed chunk) holding `parts`; the last one says why the model stopped.
fn response_of(turn: &Turn, parts: Vec<Value>, last: bool) -> Value {
    let mut candidate = json!({"index": 0, "content": {"role": "model", "parts": parts}});
    if last {
        candidate["finishReason"] = match &turn.finish {
            Finish::Truncated { .. } => "MAX_TOKENS",
            Finish::Refused { .. } => "SAFETY",
            Finish::Other { reason } => reason.as_str(),
            _ => "STOP",
        }
        .into();
    }
    let mut response = json!({"candidates": [candidate], "modelVersion": "test"});
    if let (true, Some(usage)) = (last, turn.usage) {
        response["usageMetadata"] = json!({
            "promptTokenCount": usage.input_tokens,
            "cachedContentTokenCount": usage.cache_read_tokens,
            "candidatesTokenCount": usage.output_tokens,
            "totalTokenCount": usage.input_tokens.saturating_add(usage.output_tokens),
        });
    }
    response
}

/// The `functionCall` parts of a content as calls.
fn calls_in(content: &Value) -> Result<Vec<ToolCall>, ReadError> {
    content["parts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p.get("functionCall"))
        .map(call_of)
        .collect()
}

fn check(provider: &'static str, entries: &[(&Tool, Exported)]) -> Result<(), ExportError> {
    if entries.len() > GEMINI_MAX_DECLARATIONS {
        return Err(ExportError::over(
            provider,
            RequestLimit::Tools,
            entries.len(),
            GEMINI_MAX_DECLARATIONS,
            "Gemini takes at most 128 function declarations; defer some (`ToolSet::defer`) or offer fewer",
        ));
    }
    // Gemini's parameter names: a letter or `_`, then letters, digits or `_`, at most 64.
    for (t, _) in entries {
        for name in t.input_schema()["properties"]
            .as_object()
            .into_iter()
            .flat_map(|m| m.keys())
        {
            let mut chars = name.chars();
            let ok = chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
                && name.len() <= 64;
            if !ok {
                return Err(ExportError::Name {
                    provider,
                    message: format!(
                        "tool `{}`: parameter name `{name}` is not accepted (letters, digits, `_`; starting with a letter or `_`; at most 64)",
                        t.name()
                    ),
                });
            }
        }
    }
    Ok(())
}

/// A part's `functionCall` as a call.
fn call_of(call: &Value) -> Result<ToolCall, ReadError> {
    Ok(ToolCall {
        null_means_absent: false,
        id: call["id"].as_str().map(str::to_owned),
        name: str_at(call, "name", "a functionCall part")?,
        arguments: CallArguments::Value(match &call["args"] {
            Value::Null => Value::Object(Default::default()),
            args => args.clone(),
        }),
    })
}

/// `streamGenerateContent?alt=sse`
/// (<https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent>): every
/// data event is a whole `GenerateContentResponse` holding the next parts of
/// `candidates[0].content`. Text parts continue the previous text part of the same kind
/// (answer or `thought`) until a part carries a `thoughtSignature`; a `functionCall` part
/// arrives whole and is complete at once. The last chunk has the `finishReason`; there is no
/// closing event.
#[derive(Default)]
pub(super) struct GeminiStream {
    parts: Vec<Value>,
    last: Option<Value>,
    candidate: Map<String, Value>,
    /// The prompt's block, from whichever chunk said it (a later usage chunk says nothing).
    prompt_feedback: Option<Value>,
    finished: bool,
}

impl Assemble for GeminiStream {
    fn event(
        &mut self,
        _name: Option<&str>,
        data: &str,
        out: &mut Vec<Delta>,
    ) -> Result<(), ReadError> {
        let chunk = stream::object(&stream::json(data)?, "the chunk")?;
        if let Some(error) = chunk.get("error") {
            return Err(ReadError::provider(error));
        }
        let candidate = chunk["candidates"].get(0).cloned().unwrap_or_default();
        let parts = candidate["content"]["parts"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if self.finished && !parts.is_empty() {
            return Err(ReadError::malformed(
                "parts after the chunk with `finishReason`",
            ));
        }
        for part in parts {
            if let Some(call) = part.get("functionCall") {
                out.push(Delta::Call(call_of(call)?));
                self.parts.push(part);
                continue;
            }
            if let Some(text) = part["text"].as_str() {
                if !text.is_empty() {
                    out.push(if part["thought"] == true {
                        Delta::Thinking(text.into())
                    } else {
                        Delta::Text(text.into())
                    });
                }
                if let Some(last) = self.parts.last_mut()
                    && last["text"].is_string()
                    && last["thought"] == part["thought"]
                    && last.get("thoughtSignature").is_none()
                    && part.as_object().is_some_and(|p| {
                        p.keys()
                            .all(|k| matches!(k.as_str(), "text" | "thought" | "thoughtSignature"))
                    })
                {
                    stream::append(last, "text", text)?;
                    if let Some(signature) = part.get("thoughtSignature") {
                        last["thoughtSignature"] = signature.clone();
                    }
                    continue;
                }
            }
            self.parts.push(part);
        }
        if let Some(fields) = candidate.as_object() {
            for (key, value) in fields.iter().filter(|(k, _)| *k != "content") {
                self.candidate.insert(key.clone(), value.clone());
            }
        }
        if !chunk["promptFeedback"]["blockReason"].is_null() {
            self.prompt_feedback = Some(chunk["promptFeedback"].clone());
        }
        if !candidate["finishReason"].is_null() || self.prompt_feedback.is_some() {
            self.finished = true;
        }
        self.last = Some(chunk);
        Ok(())
    }

    fn finish(&mut self, _out: &mut Vec<Delta>) -> Result<Value, ReadError> {
        if !self.finished {
            return Err(ReadError::malformed(
                "the stream ended before a chunk with `finishReason`",
            ));
        }
        let mut response = self.last.take().unwrap_or_default();
        if let Some(feedback) = self.prompt_feedback.take() {
            response["promptFeedback"] = feedback;
        }
        let mut candidate = std::mem::take(&mut self.candidate);
        candidate.insert(
            "content".into(),
            json!({"role": "model", "parts": std::mem::take(&mut self.parts)}),
        );
        response["candidates"] = json!([candidate]);
        Ok(response)
    }
}
