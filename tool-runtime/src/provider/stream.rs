//! Streamed responses: each API's events assembled into the response the API returns whole,
//! with text, reasoning and complete tool calls handed out as they arrive.
//!
//! Every API's file has its own assembler ([`Assemble`]); what they share is here: the event,
//! what an event adds ([`Delta`]), the error naming the provider's event, and content blocks
//! addressed by index (Anthropic, Bedrock). The assembled response is read by the same code as
//! an unstreamed one, so the model's turn goes back into the conversation exactly as it would
//! have unstreamed (thinking with its signatures, reasoning items, thought signatures).

use std::fmt;

use serde_json::{Map, Value};

use super::error::clip;
use super::{Api, ReadError, ToolCall};

/// One event of a streamed response, as its API sent it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamEvent {
    /// The server-sent event's `event:` name (Anthropic, Responses), or the event type of a
    /// Bedrock event-stream message (`contentBlockDelta`, ...); `None` where the API names none
    /// (Chat Completions, Gemini).
    pub event: Option<String>,
    /// The event's data: JSON, or Chat Completions' closing `[DONE]`.
    pub data: String,
}

impl StreamEvent {
    /// An event with a name.
    pub fn named(event: impl Into<String>, data: impl Into<String>) -> Self {
        StreamEvent {
            event: Some(event.into()),
            data: data.into(),
        }
    }

    /// An event without a name (a `data:` line only).
    pub fn data(data: impl Into<String>) -> Self {
        StreamEvent {
            event: None,
            data: data.into(),
        }
    }
}

/// What one event added to the response.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Delta {
    /// Answer text.
    Text(String),
    /// Reasoning text: Anthropic thinking, Responses reasoning summaries, Gemini thought parts,
    /// Bedrock reasoning content.
    Thinking(String),
    /// A tool call whose arguments are complete: it can run now, before the response ends.
    Call(ToolCall),
}

/// Why a streamed response could not be assembled: the provider's event (its position and
/// name); what was wrong with it is the [`source`](std::error::Error::source).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamError {
    /// The API whose stream it is.
    pub api: Api,
    /// The event: `event 7 (content_block_delta)`, or `the end of the stream after 9 events`.
    pub event: String,
    /// What was wrong.
    pub error: ReadError,
}

impl fmt::Display for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} stream, {}", self.api, self.event)
    }
}

impl std::error::Error for StreamError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// One API's assembler of streamed events ([`Provider::assembler`](super::Provider::assembler)).
/// `event` reads one event; `finish` is called at the end of the stream and returns the whole
/// response as the API returns it unstreamed, so it is read by the same code as an unstreamed
/// one.
pub trait Assemble: Send {
    /// Reads one event (its name, if any, and data); what it adds goes to `out`.
    fn event(
        &mut self,
        name: Option<&str>,
        data: &str,
        out: &mut Vec<Delta>,
    ) -> Result<(), ReadError>;
    /// The stream ended: the whole response, and any calls it completed; `Err` when the stream
    /// ended before the API's last event.
    fn finish(&mut self, out: &mut Vec<Delta>) -> Result<Value, ReadError>;
}

/// A streamed response being assembled: push each event as it arrives, take what it adds,
/// and [`finish`](ResponseStream::finish) when the stream ends.
///
/// ```
/// use tool_runtime::provider::{Api, Delta, ResponseStream, StreamEvent};
///
/// let mut stream = ResponseStream::new(Api::OPENAI_CHAT);
/// let chunk = |delta: &str, finish: &str| StreamEvent::data(format!(
///     r#"{{"id":"c1","object":"chat.completion.chunk","choices":[{{"index":0,"delta":{delta},"finish_reason":{finish}}}]}}"#
/// ));
/// assert_eq!(stream.push(&chunk(r#"{"role":"assistant","content":"Hel"}"#, "null")).unwrap(),
///            [Delta::Text("Hel".into())]);
/// stream.push(&chunk(r#"{"content":"lo"}"#, r#""stop""#)).unwrap();
/// stream.push(&StreamEvent::data("[DONE]")).unwrap();
/// let (response, _) = stream.finish().unwrap();
/// assert_eq!(response["choices"][0]["message"]["content"], "Hello");
/// ```
pub struct ResponseStream {
    api: Api,
    assembler: Box<dyn Assemble>,
    events: usize,
    bytes: usize,
    max_bytes: usize,
    failed: Option<StreamError>,
}

/// The most event data one response may carry by default (64 MiB): a model's turn is far
/// smaller; a provider (or something posing as one) that sends more is cut off.
pub const MAX_RESPONSE_BYTES: usize = 64 << 20;

impl fmt::Debug for ResponseStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseStream")
            .field("api", &self.api)
            .field("events", &self.events)
            .finish_non_exhaustive()
    }
}

impl ResponseStream {
    /// A stream of `api`'s events.
    pub fn new(api: Api) -> Self {
        ResponseStream {
            api,
            assembler: api.provider().assembler(),
            events: 0,
            bytes: 0,
            max_bytes: MAX_RESPONSE_BYTES,
            failed: None,
        }
    }

    /// The most event data the response may carry ([`MAX_RESPONSE_BYTES`] by default).
    pub fn max_bytes(mut self, max_bytes: usize) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    /// Reads one event and returns what it added. After an error every push returns it again.
    pub fn push(&mut self, event: &StreamEvent) -> Result<Vec<Delta>, StreamError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        self.events += 1;
        self.bytes = self.bytes.saturating_add(event.data.len());
        let mut out = Vec::new();
        let read = if self.bytes > self.max_bytes {
            Err(ReadError::malformed(format!(
                "the response's events exceed {} bytes",
                self.max_bytes
            )))
        } else {
            self.assembler
                .event(event.event.as_deref(), &event.data, &mut out)
        };
        read.map_err(|error| {
            let e = StreamError {
                api: self.api,
                event: format!("event {} ({})", self.events, event_name(event)),
                error,
            };
            self.failed = Some(e.clone());
            e
        })?;
        Ok(out)
    }

    /// The stream ended: the whole response as the API returns it unstreamed, and the calls
    /// only the end completed. `Err` when the stream was cut short (no closing event) or failed.
    pub fn finish(mut self) -> Result<(Value, Vec<Delta>), StreamError> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        let mut out = Vec::new();
        let response = self
            .assembler
            .finish(&mut out)
            .map_err(|error| StreamError {
                api: self.api,
                event: format!("the end of the stream after {} events", self.events),
                error,
            })?;
        Ok((response, out))
    }
}

/// The event's name for messages: its `event:` name, or its data's `type` or `object`.
fn event_name(event: &StreamEvent) -> String {
    if let Some(name) = &event.event {
        return name.clone();
    }
    let data: Option<Value> = serde_json::from_str(&event.data).ok();
    match data
        .as_ref()
        .and_then(|d| d.get("type").or(d.get("object")))
    {
        Some(Value::String(s)) => s.clone(),
        _ if event.data.trim() == "[DONE]" => "[DONE]".into(),
        _ => "data".into(),
    }
}

/// An event's data as JSON, or why not.
pub(super) fn json(data: &str) -> Result<Value, ReadError> {
    serde_json::from_str(data).map_err(|e| ReadError::not_json(&e, data))
}

/// The event's `type` (Anthropic, Responses), which must agree with its SSE name, if any.
pub(super) fn typed<'e>(name: Option<&str>, event: &'e Value) -> Result<&'e str, ReadError> {
    let kind = event["type"]
        .as_str()
        .ok_or_else(|| ReadError::missing("`type` string", event))?;
    match name {
        Some(name) if name != kind => Err(ReadError::malformed(format!(
            "the event is named `{name}` but its type is `{kind}`"
        ))),
        _ => Ok(kind),
    }
}

/// Whether `text` is one complete JSON value.
pub(super) fn complete_json(text: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
}

/// Arguments streamed as JSON text fragments, parsed when the call ends: `""` is `{}` (a call
/// without arguments), anything else must be complete.
pub(super) fn parse_input(partial: &str, what: &str) -> Result<Value, ReadError> {
    if partial.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    serde_json::from_str(partial).map_err(|e| {
        ReadError::malformed(format!(
            "{what} ended with incomplete JSON ({e}): {}",
            clip(partial)
        ))
    })
}

/// `v[key]` as an index.
pub(super) fn index(v: &Value, key: &str) -> Result<usize, ReadError> {
    v[key]
        .as_u64()
        .map(|i| i as usize)
        .ok_or_else(|| ReadError::missing(format!("`{key}` number"), v))
}

/// Appends `more` to the string at `v[key]` (created empty); `v` must be an object.
pub(super) fn append(v: &mut Value, key: &str, more: &str) -> Result<(), ReadError> {
    let Value::Object(fields) = v else {
        return Err(ReadError::malformed(format!(
            "`{key}` text for a value that is not an object: {}",
            clip(&v.to_string())
        )));
    };
    match fields.entry(key).or_insert(Value::Null) {
        Value::String(s) => s.push_str(more),
        slot => *slot = Value::String(more.to_owned()),
    }
    Ok(())
}

/// `v` itself when it is an object: what the provider sent that the assembly will add to.
pub(super) fn object(v: &Value, what: &str) -> Result<Value, ReadError> {
    if v.is_object() {
        Ok(v.clone())
    } else {
        Err(ReadError::malformed(format!(
            "{what} is not an object: {}",
            clip(&v.to_string())
        )))
    }
}

/// Content blocks addressed by index (Anthropic, Bedrock): opened in order, filled by deltas,
/// closed once; input JSON fragments kept beside each until it closes.
#[derive(Default)]
pub(super) struct Blocks {
    blocks: Vec<Block>,
}

struct Block {
    json: Value,
    partial: String,
    open: bool,
}

impl Blocks {
    /// Opens block `index`, which must be the next one and an object.
    pub(super) fn open(&mut self, index: usize, json: Value) -> Result<(), ReadError> {
        let json = object(&json, &format!("block {index}"))?;
        if index != self.blocks.len() {
            return Err(ReadError::malformed(format!(
                "block {index} started out of order (expected block {})",
                self.blocks.len()
            )));
        }
        self.blocks.push(Block {
            json,
            partial: String::new(),
            open: true,
        });
        Ok(())
    }

    /// Whether block `index` was opened.
    pub(super) fn has(&self, index: usize) -> bool {
        index < self.blocks.len()
    }

    /// The open block `index`, and its input fragments so far.
    pub(super) fn get(&mut self, index: usize) -> Result<(&mut Value, &mut String), ReadError> {
        match self.blocks.get_mut(index) {
            Some(b) if b.open => Ok((&mut b.json, &mut b.partial)),
            Some(_) => Err(ReadError::malformed(format!(
                "a delta for block {index} after it stopped"
            ))),
            None => Err(ReadError::malformed(format!(
                "a delta for block {index}, which never started"
            ))),
        }
    }

    /// Closes block `index`: its JSON and its input fragments.
    pub(super) fn close(&mut self, index: usize) -> Result<(&mut Value, String), ReadError> {
        match self.blocks.get_mut(index) {
            Some(b) if b.open => {
                b.open = false;
                Ok((&mut b.json, std::mem::take(&mut b.partial)))
            }
            Some(_) => Err(ReadError::malformed(format!("block {index} stopped twice"))),
            None => Err(ReadError::malformed(format!(
                "block {index} stopped but never started"
            ))),
        }
    }

    /// Every block, when all are closed.
    pub(super) fn into_closed(self) -> Result<Vec<Value>, ReadError> {
        if let Some(i) = self.blocks.iter().position(|b| b.open) {
            return Err(ReadError::malformed(format!("block {i} never stopped")));
        }
        Ok(self.blocks.into_iter().map(|b| b.json).collect())
    }

    /// Every block, taken out (for `finish`), when all are closed.
    pub(super) fn take_closed(&mut self) -> Result<Vec<Value>, ReadError> {
        std::mem::take(self).into_closed()
    }
}
