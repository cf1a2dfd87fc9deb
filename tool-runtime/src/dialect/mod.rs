//! The model APIs the toolkit writes requests for and reads responses from, one file each.
//!
//! Each file owns everything about its API: how the canonical schema is lowered into its
//! dialect, its tool entries and per-request limits, its structured-output request field, how
//! its responses are read (the answer text and stop reason, the tool calls, the model's turn to
//! keep), how tool results and the user's message are written. Nothing outside this module
//! matches on [`Api`]: [`Api::dialect`] is the one place that does, and adding an API is one
//! new file and one variant.

mod anthropic;
mod bedrock;
mod gemini;
mod lower;
mod openai_chat;
mod openai_responses;
mod stream;

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::arguments::{Arguments, Repr};
use crate::host::{Content, as_text};
use crate::output::CallOutput;
use crate::tool::Tool;
use stream::Assemble;
pub use stream::{Delta, MAX_RESPONSE_BYTES, ResponseStream, StreamError, StreamEvent};

/// A model API: tools are exported in its request format, structured output is asked for in
/// its format, and its responses are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Api {
    /// OpenAI Chat Completions: `tools[]` of `{type: "function", function: {...}}`; structured
    /// output as `response_format`; replies in `choices[0].message`.
    OpenAiChat,
    /// OpenAI Responses: flat `tools[]`; structured output as `text.format`; replies as
    /// `output[]` items.
    OpenAiResponses,
    /// Anthropic Messages: `tools[]` with `input_schema` and `strict`; structured output as
    /// `output_config.format`; replies as `content[]` blocks.
    Anthropic,
    /// Google Gemini `generateContent`: one `{functionDeclarations: [...]}` tool with
    /// `parametersJsonSchema`; structured output as `generationConfig`; replies as
    /// `candidates[0].content.parts[]`.
    Gemini,
    /// Amazon Bedrock Converse: `toolConfig.tools[]` of `{toolSpec: {name, description,
    /// inputSchema: {json}}}`; structured output as `outputConfig.textFormat`; replies as
    /// `output.message.content[]` blocks (`text`, `toolUse`, `reasoningContent`).
    BedrockConverse,
}

impl Api {
    /// Every model API, in a fixed order.
    pub const MODELS: &'static [Api] = &[
        Api::OpenAiChat,
        Api::OpenAiResponses,
        Api::Anthropic,
        Api::Gemini,
        Api::BedrockConverse,
    ];

    /// The one place an `Api` is matched: its dialect.
    pub(crate) fn dialect(self) -> &'static dyn Dialect {
        match self {
            Api::OpenAiChat => &openai_chat::OpenAiChat,
            Api::OpenAiResponses => &openai_responses::OpenAiResponses,
            Api::Anthropic => &anthropic::Anthropic,
            Api::Gemini => &gemini::Gemini,
            Api::BedrockConverse => &bedrock::BedrockConverse,
        }
    }

    /// The canonical schema (JSON Schema 2020-12) rewritten into what this API accepts: what
    /// it cannot express moves into the description as readable text, and `strict` says
    /// whether the provider can enforce the rest.
    pub fn lower(self, canonical: &Value) -> Lowered {
        self.dialect().lower(canonical)
    }
}

impl fmt::Display for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.dialect().name())
    }
}

/// What one API needs written and read. Implemented once per file of this module.
pub(crate) trait Dialect: Sync {
    /// The API's name, for messages.
    fn name(&self) -> &'static str;
    /// The canonical schema in this API's dialect.
    fn lower(&self, canonical: &Value) -> Lowered;
    /// One tool's entry in the request's tool list.
    fn tool(&self, name: &str, description: &str, input: &Value) -> Exported;
    /// The request's tool list from every tool's entry, with the API's per-request limits
    /// checked.
    fn tools(&self, entries: Vec<(&Tool, Exported)>) -> Result<Vec<Value>, ExportError>;
    /// The structured-output request field for a type with this canonical schema.
    fn structured_output(&self, name: &str, canonical: &Value) -> Exported;
    /// The answer text and why the model stopped; `Err` names what is missing.
    fn read_reply(&self, raw: &Value) -> Result<Reply, String>;
    /// The tool calls of a response, and the model's turn as the next request repeats it.
    fn read_calls(&self, raw: &Value) -> Result<(Vec<ToolCall>, Vec<Value>), String>;
    /// The answers to one turn's calls, as the messages (or items) that follow it.
    fn render(&self, answers: &[ToolAnswer]) -> Vec<Value>;
    /// What the user said, as a message.
    fn user_message(&self, text: &str) -> Value;
    /// An assembler for this API's streamed responses.
    fn stream(&self) -> Box<dyn Assemble>;
}

/// A lowered schema, whether it can be sent in the provider's strict mode, and why not.
#[derive(Clone, Debug, PartialEq)]
pub struct Lowered {
    /// The schema in the provider's dialect.
    pub schema: Value,
    /// Whether the schema can be sent in the provider's strict mode.
    pub strict: bool,
    /// Why `strict` is false: what the provider's strict mode cannot express without changing
    /// the schema's meaning.
    pub reasons: Vec<String>,
}

/// A tool, or a structured-output format, written for one API: the JSON to put in the request,
/// whether it is sent as strict, and why not.
#[derive(Clone, Debug, PartialEq)]
pub struct Exported {
    /// The JSON for the request (a tool-list entry, or the structured-output field).
    pub json: Value,
    /// Whether the provider enforces the schema (`strict: true`).
    pub strict: bool,
    /// Why `strict` is off, one reason per feature the API cannot enforce.
    pub reasons: Vec<String>,
}

/// Why a tool set could not be exported for an API.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExportError {
    /// The set breaks a per-request limit of the provider.
    Limit {
        /// The provider whose limit it is.
        api: Api,
        /// What the set has too many of, how many, and the limit.
        message: String,
    },
    /// A name the provider does not accept.
    Name {
        /// The provider that refuses the name.
        api: Api,
        /// Which tool and name, and the rule the name breaks.
        message: String,
    },
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExportError::Limit { api, message } | ExportError::Name { api, message } => {
                write!(f, "{api}: {message}")
            }
        }
    }
}

impl std::error::Error for ExportError {}

/// Why the model stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Finish {
    /// The model finished its answer.
    Completed,
    /// Out of output tokens: the JSON is cut off. Retry with a larger budget, or a smaller task.
    Truncated {
        /// The API's stop reason (`length`, `max_tokens`, `MAX_TOKENS`, ...).
        reason: String,
    },
    /// The model declined. Never retried or "repaired".
    Refused {
        /// The refusal text, or the API's reason for blocking (`content_filter`, `SAFETY`, ...).
        message: String,
    },
    /// Any other stop reason (a tool call, a pause the API asks the caller to continue).
    Other {
        /// The API's stop reason, as it wrote it.
        reason: String,
    },
}

/// The text of a response and why the model stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    /// The answer text, without reasoning or thought parts; `None` when there is none.
    pub text: Option<String>,
    /// Why the model stopped.
    pub finish: Finish,
}

impl Reply {
    fn new(text: String, finish: Finish) -> Reply {
        Reply {
            text: (!text.is_empty()).then_some(text),
            finish,
        }
    }
}

/// One tool call the model asked for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id of the call, which its result must carry back: Chat
    /// `tool_calls[].id`, Responses `call_id`, Anthropic `tool_use.id`, Gemini
    /// `functionCall.id`, Bedrock `toolUse.toolUseId`. `None` only where the provider gave none
    /// (Gemini models that do not number calls match results by order).
    pub id: Option<String>,
    /// The tool's name as the model wrote it.
    pub name: String,
    /// The arguments as the model sent them.
    pub arguments: CallArguments,
}

/// Arguments as they arrive: JSON text (OpenAI), read exactly as written, or a JSON value
/// (Anthropic, Gemini, Bedrock).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallArguments {
    /// JSON text, as OpenAI's APIs send it.
    Text(String),
    /// A JSON value, as Anthropic, Gemini and Bedrock send it.
    Value(Value),
    /// A call that is not a function call (a Chat `custom` tool call, or one without a `type`),
    /// as the model sent it. No tool takes it: calling a tool with it is an
    /// [`InvalidArguments`](crate::ToolError::InvalidArguments) error, so its id is still
    /// answered.
    NotAFunction(Value),
}

impl<'a> From<&'a CallArguments> for Arguments<'a> {
    fn from(a: &'a CallArguments) -> Self {
        match a {
            CallArguments::Text(t) => Arguments::text(t.as_str()),
            CallArguments::Value(v) => Arguments::value(v.clone()),
            CallArguments::NotAFunction(call) => {
                Arguments(Repr::NotAFunction(Box::new(call.clone())))
            }
        }
    }
}

/// One call's answer, in no API's format yet.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolAnswer {
    /// The id of the call it answers.
    pub call_id: Option<String>,
    /// The tool's name as the model wrote it (Gemini matches results by name).
    pub name: String,
    /// The call failed: invalid arguments, an unknown or forbidden tool, the tool's own error.
    pub is_error: bool,
    /// What the model reads: the tool's `to_model` summary or its output as JSON, or the
    /// error's repair message.
    pub content: Vec<Content>,
    /// The output as JSON when the tool gave no summary (Gemini's `functionResponse` and
    /// Bedrock's `json` block carry it as a value).
    pub value: Option<Value>,
}

impl ToolAnswer {
    /// The answer of a call that ran.
    pub fn output(call_id: Option<String>, name: String, out: &CallOutput) -> Self {
        let value = out.summary().is_none().then(|| out.value().clone());
        ToolAnswer {
            call_id,
            name,
            is_error: false,
            content: out.model().0,
            value,
        }
    }

    /// The answer of a call that failed or did not run.
    pub fn error(call_id: Option<String>, name: String, message: String) -> Self {
        ToolAnswer {
            call_id,
            name,
            is_error: true,
            content: vec![Content::Text { text: message }],
            value: None,
        }
    }

    /// The content as text, images named by their URL (for formats that carry no images).
    pub fn text(&self) -> String {
        as_text(&self.content)
    }

    fn has_images(&self) -> bool {
        self.content
            .iter()
            .any(|c| matches!(c, Content::ImageUrl { .. }))
    }

    /// The id of the call it answers, or `""` where the provider gave none.
    fn id(&self) -> String {
        self.call_id.clone().unwrap_or_default()
    }
}

/// The string at `v[key]`, or why `what` is unreadable.
fn str_at(v: &Value, key: &str, what: &str) -> Result<String, String> {
    v[key]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("{what} without a `{key}` string: {v}"))
}
