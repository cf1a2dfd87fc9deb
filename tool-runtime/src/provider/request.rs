//! A request described once, in no API's format, and written by each API's provider: its path,
//! headers and body, ready for any HTTP client.

use std::fmt;

use schemars::JsonSchema;
use serde_json::{Map, Value};

use super::schema::{ExportError, Offer};
use super::turn::Message;
use super::{Api, Provider};
use crate::set::ToolSet;

/// Which tools the model may, or must, call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolChoice {
    /// The model decides (the APIs' default: nothing is written).
    #[default]
    Auto,
    /// No tool: the model answers in text.
    None,
    /// Some tool, the model picks which.
    Required,
    /// This tool.
    Tool(String),
}

/// Prompt caching: every provider caches the unchanged start of a conversation's request
/// (OpenAI and Gemini by themselves, Anthropic and Bedrock where the request marks it); a
/// conversation the agent loop writes only ever appends, so each request's start is the one
/// before it. The default marks the conversation for caching where the API asks for a mark,
/// with the providers' default lifetime (5 minutes).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Cache {
    /// Mark the conversation for caching where the API needs a mark: Anthropic's
    /// `cache_control` at the request's last block (its automatic caching), Bedrock's
    /// `cachePoint` after the system text, after the tools and at the end of the last message.
    /// On by default (a write costs more than an uncached read once, a hit a tenth).
    pub marks: bool,
    /// How long a mark keeps its entry.
    pub ttl: CacheTtl,
    /// OpenAI's `prompt_cache_key`: requests that share it (and their start) are routed to the
    /// same cache; a conversation's or a user's id.
    pub key: Option<String>,
    /// OpenAI's `prompt_cache_retention` (`in_memory` or `24h`).
    pub retention: Option<String>,
    /// Gemini's explicit cache (`cachedContents/{id}`, made with the API's `cachedContents`
    /// endpoint from this request's system text and tools): the request names it and leaves
    /// its system text, tools and tool config out, as the API requires.
    pub cached_content: Option<String>,
}

impl Default for Cache {
    fn default() -> Self {
        Cache {
            marks: true,
            ttl: CacheTtl::default(),
            key: None,
            retention: None,
            cached_content: None,
        }
    }
}

impl Cache {
    /// The marks kept this long.
    pub fn ttl(mut self, ttl: CacheTtl) -> Self {
        self.ttl = ttl;
        self
    }
    /// No marks (nothing is written to Anthropic's or Bedrock's cache).
    pub fn without_marks(mut self) -> Self {
        self.marks = false;
        self
    }
    /// OpenAI's `prompt_cache_key`.
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }
    /// OpenAI's `prompt_cache_retention` (`in_memory`, `24h`).
    pub fn retention(mut self, retention: impl Into<String>) -> Self {
        self.retention = Some(retention.into());
        self
    }
    /// Gemini's explicit cache, by name (`cachedContents/{id}`).
    pub fn cached_content(mut self, name: impl Into<String>) -> Self {
        self.cached_content = Some(name.into());
        self
    }
}

/// How long a cache mark keeps its entry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum CacheTtl {
    /// The providers' default, five minutes (renewed by each hit).
    #[default]
    FiveMinutes,
    /// An hour (Anthropic `"ttl": "1h"`, Bedrock `"ttl": "1h"`; written at a higher price).
    OneHour,
}

impl CacheTtl {
    /// The TTL as Anthropic and Bedrock write it, `None` for the default.
    pub(crate) fn written(self) -> Option<&'static str> {
        match self {
            CacheTtl::FiveMinutes => None,
            CacheTtl::OneHour => Some("1h"),
        }
    }
}

/// What Anthropic does with a thinking block sent back after the start of the conversation it
/// is bound to changed (its prefix check; `thinking.block_binding.prefix_mismatch_behavior`,
/// beta `thinking-binding-controls-2026-08-01`). A conversation the agent loop writes never
/// changes its start; this says what happens if a host's edits do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PrefixMismatch {
    /// A 400 naming the first block that no longer fits (the API's default on newer accounts).
    Error,
    /// The API drops such blocks (and every thinking block after them), and answers; the
    /// response's `input_transformations` say which.
    DropBlock,
}

impl PrefixMismatch {
    pub(crate) fn written(self) -> &'static str {
        match self {
            PrefixMismatch::Error => "error",
            PrefixMismatch::DropBlock => "drop_block",
        }
    }
}

/// A structured-output format: the name the API shows and the type's canonical schema.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputFormat {
    /// The format's name (OpenAI and Bedrock show it to the model).
    pub name: String,
    /// The canonical schema (JSON Schema 2020-12), lowered for each API when written.
    pub schema: Value,
}

/// One request to a model, described once for every API: the model, the system text, the
/// tools, the tool choice, a structured-output format, the output-token limit, whether it
/// streams, and members of your own. [`Conversation::request`](crate::agent::Conversation::request)
/// (or [`Provider::request`]) writes it in an API's format with the conversation so far.
///
/// ```
/// use tool_runtime::agent::Conversation;
/// use tool_runtime::provider::{Api, Request};
/// use tool_runtime::{ToolSet, tool};
///
/// #[tool(description = "Count the portions to order for a number of guests.")]
/// fn portions(#[arg(description = "Number of guests", range = 1..=500)] guests: u32) -> u32 { guests + 5 }
///
/// let tools = ToolSet::new([portions::tool()]).unwrap();
/// let request = Request::new("claude-sonnet-4-5").system("Answer in one sentence.").tools(&tools);
/// let mut conversation = Conversation::new(Api::ANTHROPIC);
/// conversation.push_user("Catering for 25 people?");
/// let http = conversation.request(&request).unwrap();
/// assert_eq!(http.path, "/v1/messages");
/// assert_eq!(http.body["system"], "Answer in one sentence.");
/// assert_eq!(http.body["tools"][0]["name"], "portions");
/// assert_eq!(http.body["max_tokens"], 4096); // Anthropic requires one: its default
///
/// // The same description, another API: Gemini names the model in the path.
/// let mut conversation = Conversation::new(Api::GEMINI);
/// conversation.push_user("Catering for 25 people?");
/// let http = conversation.request(&request.clone().model("gemini-2.5-flash").streamed()).unwrap();
/// assert_eq!(http.path, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
/// assert_eq!(http.body["systemInstruction"]["parts"][0]["text"], "Answer in one sentence.");
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Request<'a> {
    /// The model's id, as the provider names it.
    pub model: String,
    /// The system text (instructions), if any.
    pub system: Option<String>,
    /// The tools offered, exported in the API's format; none when `None` or empty.
    pub tools: Option<&'a ToolSet>,
    /// Which tools the model may or must call.
    pub tool_choice: ToolChoice,
    /// The format the answer must have, if any.
    pub output: Option<OutputFormat>,
    /// The most tokens the answer may take. Anthropic requires a limit: 4096 when this is
    /// `None`.
    pub max_tokens: Option<u32>,
    /// Whether the response is streamed.
    pub stream: bool,
    /// Members merged into the body last (objects member by member, anything else replaced):
    /// what this description has no word for (`temperature`, `reasoning`, `thinking`, ...).
    pub extra: Map<String, Value>,
    /// Prompt caching: marks, OpenAI's key and retention, Gemini's explicit cache.
    pub cache: Cache,
    /// Anthropic's (and Claude on Bedrock's) prefix check on thinking blocks, when the host
    /// asks for one behaviour; `None`: the API's default.
    pub prefix_mismatch: Option<PrefixMismatch>,
    /// Which of the set's tools this turn's request declares and offers: set from the
    /// conversation by [`Conversation::request`](crate::agent::Conversation::request).
    pub(crate) offer: Offer,
}

impl<'a> Request<'a> {
    /// A request to `model`: no system text, no tools, the provider's defaults.
    pub fn new(model: impl Into<String>) -> Self {
        Request {
            model: model.into(),
            system: None,
            tools: None,
            tool_choice: ToolChoice::Auto,
            output: None,
            max_tokens: None,
            stream: false,
            extra: Map::new(),
            cache: Cache::default(),
            prefix_mismatch: None,
            offer: Offer::default(),
        }
    }

    /// The request to another model.
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = model.into();
        self
    }

    /// The request with this system text.
    pub fn system(mut self, system: impl Into<String>) -> Self {
        self.system = Some(system.into());
        self
    }

    /// The request offering these tools.
    pub fn tools(mut self, tools: &'a ToolSet) -> Self {
        self.tools = Some(tools);
        self
    }

    /// The request with this tool choice.
    pub fn tool_choice(mut self, choice: ToolChoice) -> Self {
        self.tool_choice = choice;
        self
    }

    /// The request asking for an answer of type `T`, named `name`.
    pub fn output<T: JsonSchema>(self, name: &str) -> Self {
        self.output_schema(name, crate::schema::input_schema_of::<T>())
    }

    /// The request asking for an answer with this canonical schema, named `name`.
    pub fn output_schema(mut self, name: &str, schema: Value) -> Self {
        self.output = Some(OutputFormat {
            name: name.to_owned(),
            schema,
        });
        self
    }

    /// The request with at most `max_tokens` tokens of answer.
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// The request for a streamed response.
    pub fn streamed(mut self) -> Self {
        self.stream = true;
        self
    }

    /// The request with `key: value` merged into the body last.
    pub fn extra(mut self, key: &str, value: Value) -> Self {
        self.extra.insert(key.to_owned(), value);
        self
    }

    /// The request with this prompt caching.
    pub fn cache(mut self, cache: Cache) -> Self {
        self.cache = cache;
        self
    }

    /// The request routed to OpenAI's cache under `key` (`prompt_cache_key`): a conversation's
    /// or a user's id.
    pub fn cache_key(mut self, key: impl Into<String>) -> Self {
        self.cache.key = Some(key.into());
        self
    }

    /// The request asking Anthropic (and Claude on Bedrock) for this prefix-check behaviour on
    /// thinking blocks sent back.
    pub fn prefix_mismatch(mut self, behaviour: PrefixMismatch) -> Self {
        self.prefix_mismatch = Some(behaviour);
        self
    }

    /// The tool list as `provider` writes it, `None` when the request offers no tools: the
    /// tools its conversation declared, or the set's own list. A set with
    /// [deferred](ToolSet::defer) tools lists its search tool and
    /// [`CALL_TOOL`](crate::defer::CALL_TOOL), through which the model calls what it found
    /// (the list never grows); an API that searches itself ([`Provider::tool_search`]) gets
    /// every deferred tool marked as such and its own search tool instead.
    pub fn tool_entries(&self, provider: &dyn Provider) -> Result<Option<Vec<Value>>, ExportError> {
        match self.tools {
            Some(tools) if !tools.is_empty() => {
                let entries = tools.export_offered(provider, &self.offer)?;
                Ok((!entries.is_empty()).then_some(entries))
            }
            _ => Ok(None),
        }
    }

    /// The tools this request's turn offers, when fewer than its tool list: what an API that
    /// narrows one request (OpenAI's `allowed_tools`, Gemini's `allowedFunctionNames`) writes.
    pub fn narrowed_to(&self) -> Option<&[String]> {
        self.offer.narrow.as_deref()
    }

    /// The request as `conversation` writes it: its declared tools, and the turn's.
    pub(crate) fn offering(
        &self,
        declared: Option<&[String]>,
        narrow: Option<&[String]>,
    ) -> Request<'a> {
        let mut request = self.clone();
        request.offer = Offer {
            declared: declared.map(<[String]>::to_vec),
            narrow: narrow.map(<[String]>::to_vec),
        };
        request
    }

    /// The structured-output field as `provider` writes it, if the request has a format.
    pub fn output_field(&self, provider: &dyn Provider) -> Option<Value> {
        self.output
            .as_ref()
            .map(|o| provider.structured_output(&o.name, &o.schema).json)
    }

    /// `body` with [`extra`](Request::extra) merged in, as every provider ends its body.
    pub fn finish_body(&self, mut body: Value) -> Value {
        for (key, value) in &self.extra {
            merge(&mut body[key.as_str()], value);
        }
        body
    }
}

/// `value` merged into `slot`: objects member by member, anything else replaced.
fn merge(slot: &mut Value, value: &Value) {
    match (slot, value) {
        (Value::Object(into), Value::Object(from)) => {
            for (k, v) in from {
                merge(into.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (slot, value) => *slot = value.clone(),
    }
}

/// A request written in one API's format: `POST` it to [`url`](HttpRequest::url) with its
/// headers and JSON body, and add the provider's authentication (an API key header, a bearer
/// token, AWS's signature), which this crate leaves to you.
#[derive(Clone, Debug, PartialEq)]
pub struct HttpRequest {
    /// The path under the API's base URL, with its query: `/v1/chat/completions`,
    /// `/v1beta/models/gemini-2.5-flash:generateContent`.
    pub path: String,
    /// The headers the API requires besides authentication (`content-type`, Anthropic's
    /// `anthropic-version`, `accept` for a stream).
    pub headers: Vec<(String, String)>,
    /// The JSON body.
    pub body: Value,
}

impl HttpRequest {
    /// A `POST` of `body` to `path`, as JSON; `accept: text/event-stream` when `stream`.
    pub fn post(path: impl Into<String>, body: Value, stream: bool) -> Self {
        let mut headers = vec![("content-type".to_owned(), "application/json".to_owned())];
        if stream {
            headers.push(("accept".to_owned(), "text/event-stream".to_owned()));
        }
        HttpRequest {
            path: path.into(),
            headers,
            body,
        }
    }

    /// The request with one more header.
    pub fn header(mut self, name: &str, value: impl Into<String>) -> Self {
        self.headers.push((name.to_owned(), value.into()));
        self
    }

    /// The URL at `base`: its scheme, host and any prefix, without a trailing `/`
    /// (`https://api.openai.com`, `http://127.0.0.1:8080`).
    pub fn url(&self, base: &str) -> String {
        format!("{}{}", base.trim_end_matches('/'), self.path)
    }
}

/// Why a request could not be written.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RequestError {
    /// The tools could not be exported for the API (a per-request limit, a name it refuses):
    /// the [`ExportError`] is the source.
    Tools(ExportError),
    /// The API has no way to say what the request asks.
    Unsupported {
        /// The provider ([`Provider::name`]).
        provider: &'static str,
        /// What it cannot say.
        what: String,
    },
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestError::Tools(_) => f.write_str("the request's tools could not be written"),
            RequestError::Unsupported { provider, what } => {
                write!(f, "{provider} has no way to say {what}")
            }
        }
    }
}

impl std::error::Error for RequestError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RequestError::Tools(e) => Some(e),
            RequestError::Unsupported { .. } => None,
        }
    }
}

impl From<ExportError> for RequestError {
    fn from(e: ExportError) -> Self {
        RequestError::Tools(e)
    }
}

/// A request read back by the provider that wrote it: what a stand-in model sees.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SentRequest {
    /// The API it was written for.
    pub api: Option<Api>,
    /// The model named, where the body or path names one.
    pub model: Option<String>,
    /// The system text, if any.
    pub system: Option<String>,
    /// The conversation.
    pub messages: Vec<Message>,
    /// The names of the tools offered, in order.
    pub tools: Vec<String>,
    /// Whether it asks for a streamed response.
    pub stream: bool,
}

impl SentRequest {
    /// A request of these messages; the other fields empty, to be filled in.
    pub fn new(messages: Vec<Message>) -> Self {
        SentRequest {
            api: None,
            model: None,
            system: None,
            messages,
            tools: Vec::new(),
            stream: false,
        }
    }

    /// The last thing the user said, if anything.
    pub fn last_user_text(&self) -> Option<&str> {
        self.messages.iter().rev().find_map(|m| match m {
            Message::User(text) => Some(text.as_str()),
            _ => None,
        })
    }
}

/// `model` as one path segment: anything but unreserved characters percent-encoded (a Bedrock
/// model id has `:`; an inference profile's ARN has `/`).
pub(super) fn path_segment(model: &str) -> String {
    let mut out = String::with_capacity(model.len());
    for b in model.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
