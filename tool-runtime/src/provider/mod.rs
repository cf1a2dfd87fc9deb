//! The model APIs: requests written, responses read, streams assembled, one file each.
//!
//! Each built-in API is one file that owns everything about it: how the canonical schema is
//! lowered into its dialect, its tool entries and per-request limits, its request body and
//! path ([`Provider::request`]), how its responses and streamed events are read, how tool
//! results and the user's message are written, and, for the test kit, how it writes a response
//! and reads a request back. [`Api`] is a handle on one of them; nothing else matches on it.
//!
//! An API this crate does not ship is one file of yours: implement [`Provider`] for a type and
//! make an [`Api`] of it with [`Api::new`]. Most are a built-in API with a few quirks, so a
//! provider can hand everything else to the built-in one:
//!
//! ```
//! use serde_json::Value;
//! use tool_runtime::provider::{
//!     Api, Assemble, ExportError, Exported, HttpRequest, Lowered, Provider, ReadError, Reply,
//!     Request, RequestError, SentRequest, ToolAnswer, ToolCall, Turn,
//! };
//!
//! /// An OpenAI-compatible server that takes Chat Completions but no `strict` flag.
//! struct Local;
//!
//! impl Provider for Local {
//!     fn id(&self) -> &'static str { "local-chat" }
//!     fn name(&self) -> &'static str { "a local Chat Completions server" }
//!     fn lower(&self, canonical: &Value) -> Lowered { Api::OPENAI_CHAT.provider().lower(canonical) }
//!     fn tool(&self, name: &str, description: &str, input: &Value) -> Exported {
//!         let mut tool = Api::OPENAI_CHAT.provider().tool(name, description, input);
//!         tool.json["function"].as_object_mut().unwrap().remove("strict");
//!         tool
//!     }
//!     fn structured_output(&self, name: &str, canonical: &Value) -> Exported {
//!         Api::OPENAI_CHAT.provider().structured_output(name, canonical)
//!     }
//!     fn request(&self, request: &Request<'_>, messages: &[Value]) -> Result<HttpRequest, RequestError> {
//!         // The body as Chat Completions writes it, with this provider's tool entries.
//!         let mut chat = request.clone();
//!         chat.tools = None;
//!         let mut http = Api::OPENAI_CHAT.provider().request(&chat, messages)?;
//!         if let Some(tools) = request.tool_entries(self)? {
//!             http.body["tools"] = tools.into();
//!         }
//!         Ok(http)
//!     }
//!     fn user_message(&self, text: &str) -> Value { Api::OPENAI_CHAT.provider().user_message(text) }
//!     fn render(&self, answers: &[ToolAnswer]) -> Vec<Value> { Api::OPENAI_CHAT.provider().render(answers) }
//!     fn read_reply(&self, raw: &Value) -> Result<Reply, ReadError> { Api::OPENAI_CHAT.provider().read_reply(raw) }
//!     fn read_calls(&self, raw: &Value) -> Result<(Vec<ToolCall>, Vec<Value>), ReadError> {
//!         Api::OPENAI_CHAT.provider().read_calls(raw)
//!     }
//!     fn assembler(&self) -> Box<dyn Assemble> { Api::OPENAI_CHAT.provider().assembler() }
//! }
//!
//! static LOCAL: Local = Local;
//! const LOCAL_CHAT: Api = Api::new(&LOCAL);
//!
//! let tools = tool_runtime::ToolSet::new(Vec::<tool_runtime::ToolRef>::new()).unwrap();
//! let http = LOCAL_CHAT.provider().request(&Request::new("qwen").tools(&tools), &[]).unwrap();
//! assert_eq!(http.path, "/v1/chat/completions");
//! assert_eq!(LOCAL_CHAT.to_string(), "a local Chat Completions server");
//! ```

mod anthropic;
mod bedrock;
mod error;
mod framing;
mod gemini;
mod lower;
mod openai_chat;
mod openai_responses;
mod request;
mod schema;
mod stream;
mod turn;

use std::fmt;
use std::hash::{Hash, Hasher};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::tool::Tool;

pub use error::ReadError;
#[cfg(feature = "aws-event-stream")]
pub use framing::aws_events;
pub use framing::{EventStream, Framing, sse_events};
pub use request::{
    Cache, CacheTtl, HttpRequest, OutputFormat, PrefixMismatch, Request, RequestError, SentRequest,
    ToolChoice,
};
pub use schema::{ExportError, Exported, Lowered, RequestLimit};
pub use stream::{Assemble, Delta, MAX_RESPONSE_BYTES, ResponseStream, StreamError, StreamEvent};
pub use turn::{
    CallArguments, Finish, Message, Reply, ToolAnswer, ToolCall, ToolResult, Turn, TurnUsage,
};

/// A model API: a handle on its [`Provider`], cheap to copy, compared and saved by its
/// [`id`](Provider::id). The five this crate ships are constants; an API of yours is
/// [`Api::new`] over your provider.
///
/// Saved (in a paused conversation, say) an API is its id. The built-in ids are read back
/// anywhere; an id of yours is read back inside [`Api::reading`], which names the APIs the
/// program defines.
#[derive(Clone, Copy)]
pub struct Api(&'static dyn Provider);

impl Api {
    /// OpenAI Chat Completions: `tools[]` of `{type: "function", function: {...}}`; structured
    /// output as `response_format`; replies in `choices[0].message`.
    pub const OPENAI_CHAT: Api = Api(&openai_chat::OpenAiChat);
    /// OpenAI Responses: flat `tools[]`; structured output as `text.format`; replies as
    /// `output[]` items.
    pub const OPENAI_RESPONSES: Api = Api(&openai_responses::OpenAiResponses);
    /// Anthropic Messages: `tools[]` with `input_schema` and `strict`; structured output as
    /// `output_config.format`; replies as `content[]` blocks.
    pub const ANTHROPIC: Api = Api(&anthropic::Anthropic);
    /// Google Gemini `generateContent`: one `{functionDeclarations: [...]}` tool with
    /// `parametersJsonSchema`; structured output as `generationConfig`; replies as
    /// `candidates[0].content.parts[]`.
    pub const GEMINI: Api = Api(&gemini::Gemini);
    /// Amazon Bedrock Converse: `toolConfig.tools[]` of `{toolSpec: {name, description,
    /// inputSchema: {json}}}`; structured output as `outputConfig.textFormat`; replies as
    /// `output.message.content[]` blocks (`text`, `toolUse`, `reasoningContent`).
    pub const BEDROCK_CONVERSE: Api = Api(&bedrock::BedrockConverse);

    /// The APIs this crate ships, in a fixed order.
    pub const BUILT_IN: &'static [Api] = &[
        Api::OPENAI_CHAT,
        Api::OPENAI_RESPONSES,
        Api::ANTHROPIC,
        Api::GEMINI,
        Api::BEDROCK_CONVERSE,
    ];

    /// An API of your own: see the [module](self) for an example.
    pub const fn new(provider: &'static dyn Provider) -> Api {
        Api(provider)
    }

    /// What writes this API's requests and reads its responses.
    pub fn provider(self) -> &'static dyn Provider {
        self.0
    }

    /// The API's id, as it is saved ([`Provider::id`]).
    pub fn id(self) -> &'static str {
        self.0.id()
    }

    /// The canonical schema (JSON Schema 2020-12) rewritten into what this API accepts: what
    /// it cannot express moves into the description as readable text, and `strict` says
    /// whether the provider can enforce the rest.
    pub fn lower(self, canonical: &Value) -> Lowered {
        self.0.lower(canonical)
    }

    /// The built-in API with this id (ids saved by earlier versions included), or `None`.
    pub fn built_in(id: &str) -> Option<Api> {
        // Earlier versions saved the variant names of an enum, kebab-cased.
        let id = match id {
            "open-ai-chat" => "openai-chat",
            "open-ai-responses" => "openai-responses",
            other => other,
        };
        Api::BUILT_IN.iter().copied().find(|a| a.id() == id)
    }

    /// Runs `read` with `apis` known to [`Deserialize`] besides the built-in ones: how a saved
    /// conversation of an API of yours is read back.
    ///
    /// ```
    /// # use tool_runtime::provider::Api;
    /// # use tool_runtime::agent::Conversation;
    /// let saved = serde_json::to_string(&Conversation::new(Api::GEMINI)).unwrap();
    /// let read: Conversation = Api::reading(&[], || serde_json::from_str(&saved)).unwrap();
    /// assert_eq!(read.api, Api::GEMINI);
    /// ```
    pub fn reading<R>(apis: &[Api], read: impl FnOnce() -> R) -> R {
        struct Restore(Vec<Api>);
        impl Drop for Restore {
            fn drop(&mut self) {
                let before = std::mem::take(&mut self.0);
                KNOWN.with(|k| *k.borrow_mut() = before);
            }
        }
        let before = KNOWN.with(|k| std::mem::replace(&mut *k.borrow_mut(), apis.to_vec()));
        let _restore = Restore(before);
        read()
    }
}

thread_local! {
    /// The APIs of the program that [`Api::reading`] names for the read it wraps.
    static KNOWN: std::cell::RefCell<Vec<Api>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl PartialEq for Api {
    fn eq(&self, other: &Api) -> bool {
        self.id() == other.id()
    }
}

impl Eq for Api {}

impl Hash for Api {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.id().hash(state);
    }
}

impl fmt::Debug for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Api({})", self.id())
    }
}

impl fmt::Display for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name())
    }
}

impl Serialize for Api {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.id())
    }
}

impl<'de> Deserialize<'de> for Api {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Api, D::Error> {
        let id = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        if let Some(api) = Api::built_in(&id) {
            return Ok(api);
        }
        KNOWN
            .with(|k| k.borrow().iter().copied().find(|a| a.id() == id))
            .ok_or_else(|| {
                serde::de::Error::custom(format_args!(
                    "unknown model API `{id}`: the built-in ones are {}; an API of the program's own is read inside Api::reading",
                    Api::BUILT_IN
                        .iter()
                        .map(|a| format!("`{}`", a.id()))
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })
    }
}

/// What a response says about itself: OpenTelemetry's `gen_ai.response.id`,
/// `gen_ai.response.model` and `gen_ai.usage.*`, each when the response has it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResponseInfo {
    /// The response's id.
    pub id: Option<String>,
    /// The model that answered.
    pub model: Option<String>,
    /// The tokens of the prompt, all of them: those read from the provider's cache and those
    /// written to it included (as OpenTelemetry's `gen_ai.usage.input_tokens` counts them;
    /// Anthropic and Bedrock report the three apart, and they are added up here).
    pub input_tokens: Option<u64>,
    /// The tokens the model wrote.
    pub output_tokens: Option<u64>,
    /// The prompt's tokens read from the provider's cache (OpenAI `cached_tokens`, Anthropic
    /// `cache_read_input_tokens`, Gemini `cachedContentTokenCount`, Bedrock
    /// `cacheReadInputTokens`).
    pub cache_read_tokens: Option<u64>,
    /// The prompt's tokens written to the provider's cache (Anthropic
    /// `cache_creation_input_tokens`, Bedrock `cacheWriteInputTokens`, OpenAI's
    /// `cache_write_tokens` where reported).
    pub cache_write_tokens: Option<u64>,
    /// Thinking blocks the API dropped from the request rather than refuse it (Anthropic's
    /// `input_transformations` of type `thinking_dropped`): the conversation's start changed
    /// under them, or another model wrote them.
    pub thinking_dropped: usize,
}

impl ResponseInfo {
    /// Read from a response: the string at `id` and `model`, the numbers at `input` and
    /// `output` (each a path of object keys, e.g. `["usage", "prompt_tokens"]`).
    pub fn read(raw: &Value, id: &[&str], model: &[&str], input: &[&str], output: &[&str]) -> Self {
        ResponseInfo {
            id: at(raw, id).and_then(Value::as_str).map(str::to_owned),
            model: at(raw, model).and_then(Value::as_str).map(str::to_owned),
            input_tokens: at(raw, input).and_then(Value::as_u64),
            output_tokens: at(raw, output).and_then(Value::as_u64),
            ..ResponseInfo::default()
        }
    }

    /// The info with the cache figures at `read` and `write` (paths as in [`read`](Self::read)),
    /// counted into the input tokens too when `separate` (the API reports the input tokens
    /// without them, as Anthropic and Bedrock do).
    pub fn with_cache(
        mut self,
        raw: &Value,
        read: &[&str],
        write: &[&str],
        separate: bool,
    ) -> Self {
        self.cache_read_tokens = at(raw, read).and_then(Value::as_u64);
        self.cache_write_tokens = at(raw, write).and_then(Value::as_u64);
        if separate && let Some(input) = &mut self.input_tokens {
            // The provider's figures are untrusted: a sum past `u64::MAX` stays at it.
            *input = input
                .saturating_add(self.cache_read_tokens.unwrap_or(0))
                .saturating_add(self.cache_write_tokens.unwrap_or(0));
        }
        self
    }
}

/// The value at `path` (object keys) in `raw`, `None` for an empty path.
fn at<'v>(raw: &'v Value, path: &[&str]) -> Option<&'v Value> {
    (!path.is_empty())
        .then(|| path.iter().try_fold(raw, |v, k| v.get(*k)))
        .flatten()
}

/// What one model API needs written and read: implemented once per file of this module, and
/// by a program for an API of its own ([`Api::new`]). A provider is shared by every thread and
/// survives a panic in one ([`RefUnwindSafe`](std::panic::RefUnwindSafe)): keep it stateless,
/// or its state behind a lock.
///
/// The methods that write a response and read a request back are the test kit's
/// ([`testing`](crate::testing), feature `testing`): a provider that leaves them out works
/// everywhere else.
pub trait Provider: Send + Sync + std::panic::RefUnwindSafe {
    /// A short, stable id, written when a conversation is saved: `openai-chat`.
    fn id(&self) -> &'static str;
    /// The API's name, for messages: `OpenAI Chat Completions`.
    fn name(&self) -> &'static str;

    /// The canonical schema in this API's dialect.
    fn lower(&self, canonical: &Value) -> Lowered;
    /// One tool's entry in the request's tool list.
    fn tool(&self, name: &str, description: &str, input: &Value) -> Exported;
    /// The request's tool list from every tool's entry, with the API's per-request limits
    /// checked. By default, the entries as they are.
    fn tools(&self, entries: Vec<(&Tool, Exported)>) -> Result<Vec<Value>, ExportError> {
        Ok(entries.into_iter().map(|(_, e)| e.json).collect())
    }
    /// The structured-output request field for a type with this canonical schema.
    fn structured_output(&self, name: &str, canonical: &Value) -> Exported;
    /// Whether this API's schemas ([`Provider::lower`]) make every optional property required
    /// and nullable, asking the model to send `null` for one it leaves out (OpenAI's strict
    /// mode): its calls and structured output then read such a `null` as the property left out
    /// ([`Arguments::null_means_absent`](crate::Arguments::null_means_absent)). Everywhere
    /// else `null` is accepted only where the canonical schema takes it. By default `false`; a
    /// provider whose `lower` hands off to OpenAI's must say `true` here too.
    fn null_means_absent(&self) -> bool {
        false
    }
    /// The entry of the API's own tool search, where it has one: a set's
    /// [deferred](crate::ToolSet::defer) tools are then sent marked `defer_loading` beside
    /// it, and the API finds them itself. By default none: the set's own search tool is sent,
    /// with [`CALL_TOOL`](crate::CALL_TOOL), through which the model calls what it found.
    fn tool_search(&self) -> Option<Value> {
        None
    }
    /// The message that changes which of the conversation's declared tools the model is offered
    /// from here on (`offer` names them all; `added` are offered again, `removed` withdrawn),
    /// where the API takes such a message (Anthropic's `tool_addition`/`tool_removal` blocks,
    /// Bedrock's `toolAddition`/`toolRemoval`): appended to the conversation, it changes
    /// nothing before it. `None` (the default) where the API narrows each request instead:
    /// [`Request::narrowed_to`] then says what the request offers.
    fn tool_change(&self, added: &[String], removed: &[String]) -> Option<Value> {
        let _ = (added, removed);
        None
    }
    /// An instruction given after the conversation started, as a message appended to it (the
    /// system text stays as it was, so nothing before the message changes): Anthropic's and
    /// Bedrock's mid-conversation `system` message, OpenAI's `developer` message. By default a
    /// user message.
    fn instruction_message(&self, text: &str) -> Value {
        self.user_message(text)
    }
    /// The members of a request's body that the API binds to the conversation's start (its
    /// cache keeps them; Anthropic's prefix check compares them), in the order the API reads
    /// them, as paths of object keys (`toolConfig.tools`): every one but the last is written
    /// once per conversation, the last is the list each request only appends to. By default
    /// OpenAI Chat's: `tools`, then `messages`.
    fn prefix_members(&self) -> &'static [&'static str] {
        &["tools", "messages"]
    }

    /// The request that sends `messages` (the conversation, in this API's format) as
    /// `request` describes: its path, headers and JSON body.
    fn request(
        &self,
        request: &Request<'_>,
        messages: &[Value],
    ) -> Result<HttpRequest, RequestError>;
    /// What the user said, as a message.
    fn user_message(&self, text: &str) -> Value;
    /// The answers to one turn's calls, as the messages (or items) that follow it.
    fn render(&self, answers: &[ToolAnswer]) -> Vec<Value>;

    /// The answer text and why the model stopped.
    fn read_reply(&self, raw: &Value) -> Result<Reply, ReadError>;
    /// What a response says about itself (its id, model and the tokens it used), for the agent
    /// loop's spans. By default nothing.
    fn read_info(&self, raw: &Value) -> ResponseInfo {
        let _ = raw;
        ResponseInfo::default()
    }
    /// The provider's name in OpenTelemetry's GenAI conventions (`gen_ai.provider.name`):
    /// `openai`, `anthropic`, `gcp.gemini`, `aws.bedrock`. By default none.
    fn conventions_name(&self) -> Option<&'static str> {
        None
    }
    /// The tool calls of a response, and the model's turn as the next request repeats it.
    fn read_calls(&self, raw: &Value) -> Result<(Vec<ToolCall>, Vec<Value>), ReadError>;
    /// How a streamed response's body is framed into events. Server-sent events by default.
    fn framing(&self) -> Framing {
        Framing::ServerSentEvents
    }
    /// An assembler for this API's streamed events.
    fn assembler(&self) -> Box<dyn Assemble>;

    /// The response holding `turn`, as the API writes it (the test kit's models). `None` when
    /// this provider does not write responses.
    fn write_response(&self, turn: &Turn) -> Option<Value> {
        let _ = turn;
        None
    }
    /// The events of the streamed response holding `turn`, in order. `None` when this
    /// provider does not write streamed responses.
    fn write_stream(&self, turn: &Turn) -> Option<Vec<StreamEvent>> {
        let _ = turn;
        None
    }
    /// A request this provider wrote, read back: the conversation, the tools offered, whether
    /// it streams (what a stand-in model sees).
    fn read_request(&self, request: &HttpRequest) -> Result<SentRequest, ReadError> {
        let _ = request;
        Err(ReadError::Unsupported {
            what: "reading requests back",
        })
    }
}

/// The string at `v[key]`, or a [`ReadError::Missing`] naming it in `what`.
fn str_at(v: &Value, key: &str, what: &str) -> Result<String, ReadError> {
    v[key]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| ReadError::missing(format!("{what}'s `{key}` string"), v))
}
