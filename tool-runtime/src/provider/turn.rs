//! What a model's turn holds, in no API's format: its text and stop reason, its tool calls, the
//! answers to them; and, for the test kit, a turn to write and a conversation read back.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::arguments::{Arguments, Repr};
use crate::host::{Content, as_text};
use crate::output::CallOutput;
use crate::wording::Wording;

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
    pub(crate) fn new(text: String, finish: Finish) -> Reply {
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
    /// The API showed the model schemas in which every optional property takes `null` for
    /// "left out" ([`Provider::null_means_absent`](super::Provider::null_means_absent)): such
    /// a `null` is read so ([`Arguments::null_means_absent`]). Set by the provider that reads
    /// the call.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub null_means_absent: bool,
}

impl ToolCall {
    /// A call of `name` with `arguments` and the provider's `id`, read by JSON Schema's rules.
    pub fn new(id: Option<String>, name: impl Into<String>, arguments: CallArguments) -> ToolCall {
        ToolCall {
            id,
            name: name.into(),
            arguments,
            null_means_absent: false,
        }
    }

    /// The arguments as a call takes them, `null` read as the API's schemas asked.
    pub fn call_arguments(&self) -> Arguments<'_> {
        let arguments = Arguments::from(&self.arguments);
        if self.null_means_absent {
            arguments.null_means_absent()
        } else {
            arguments
        }
    }
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

impl CallArguments {
    /// The arguments as JSON text (a value written as JSON; a call that is not a function's,
    /// its whole JSON).
    pub(crate) fn as_text(&self) -> String {
        match self {
            CallArguments::Text(t) => t.clone(),
            CallArguments::Value(v) | CallArguments::NotAFunction(v) => v.to_string(),
        }
    }

    /// The arguments as a JSON value (text that is not JSON, as a string).
    pub(crate) fn as_value(&self) -> Value {
        match self {
            CallArguments::Text(t) => {
                serde_json::from_str(t).unwrap_or_else(|_| Value::String(t.clone()))
            }
            CallArguments::Value(v) | CallArguments::NotAFunction(v) => v.clone(),
        }
    }
}

/// `text` word by word (each with the space after it): how a written stream sends text, as a
/// model writes it.
pub(crate) fn words(text: &str) -> Vec<&str> {
    text.split_inclusive(' ').collect()
}

/// `text` in two pieces, cut at a character boundary near its middle, leaving out empty ones:
/// how a written stream sends a call's arguments, so that assembling them is exercised.
pub(crate) fn halves(text: &str) -> Vec<&str> {
    let mut middle = text.len() / 2;
    while !text.is_char_boundary(middle) {
        middle += 1;
    }
    let (a, b) = text.split_at(middle);
    [a, b].into_iter().filter(|p| !p.is_empty()).collect()
}

/// The names in a list of tool entries, read by `name`.
pub(crate) fn names(entries: Option<&Vec<Value>>, name: impl Fn(&Value) -> &Value) -> Vec<String> {
    entries
        .into_iter()
        .flatten()
        .filter_map(|e| name(e).as_str().map(str::to_owned))
        .collect()
}

impl<'a> From<&'a CallArguments> for Arguments<'a> {
    fn from(a: &'a CallArguments) -> Self {
        match a {
            CallArguments::Text(t) => Arguments::text(t.as_str()),
            CallArguments::Value(v) => Arguments::value(v.clone()),
            CallArguments::NotAFunction(call) => {
                Arguments::of(Repr::NotAFunction(Box::new(call.clone())))
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

    /// The answer with its text cut to `max_chars` characters and `wording`'s notice after them
    /// ([`Wording::cut_result`]), when it is longer; the JSON value is then left out (only its
    /// start reaches the model, as text).
    pub fn cut(mut self, max_chars: usize, wording: &Wording) -> Self {
        if let Some(cut) = wording.cut_result(&self.text(), max_chars) {
            self.content = vec![Content::Text { text: cut }];
            self.value = None;
        }
        self
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

    pub(crate) fn has_images(&self) -> bool {
        self.content
            .iter()
            .any(|c| matches!(c, Content::ImageUrl { .. }))
    }

    /// The id of the call it answers, or `""` where the provider gave none.
    pub(crate) fn id(&self) -> String {
        self.call_id.clone().unwrap_or_default()
    }
}

/// One turn of a model, in no API's format: what a stand-in model says
/// ([`testing`](crate::testing)), written in an API's format by
/// [`Provider::write_response`](super::Provider::write_response) and
/// [`write_stream`](super::Provider::write_stream).
///
/// ```
/// use serde_json::json;
/// use tool_runtime::provider::Turn;
///
/// let turn = Turn::call("add", json!({"a": 2, "b": 3})).and_call("add", json!({"a": 1, "b": 1}));
/// assert_eq!(turn.calls.len(), 2);
/// let answer = Turn::text("The sum is 5.");
/// assert_eq!(answer.text.as_deref(), Some("The sum is 5."));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Turn {
    /// The answer text, if any.
    pub text: Option<String>,
    /// The model's reasoning, if any (written where the API has a place for it).
    pub thinking: Option<String>,
    /// The tool calls, in order. A call without an id gets one when the turn is written by a
    /// test model (`call_1`, `call_2`, ...).
    pub calls: Vec<ToolCall>,
    /// Why the model stopped: [`Finish::Completed`] for an answer or a turn of calls (written
    /// as the API's tool-use stop reason when there are calls).
    pub finish: Finish,
    /// The tokens the response reports, written in the API's usage fields; `None`: the writer
    /// reports none (a [`TestModel`](crate::testing::TestModel) estimates them).
    pub usage: Option<TurnUsage>,
}

/// The tokens a response reports it used, as [`ResponseInfo`](super::ResponseInfo) reads them
/// back: `input_tokens` is the whole prompt, the cache's share included (each API's writer
/// splits it as that API reports it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TurnUsage {
    /// The prompt's tokens, all of them.
    pub input_tokens: u64,
    /// The tokens the model wrote.
    pub output_tokens: u64,
    /// The prompt's tokens read from the cache.
    pub cache_read_tokens: u64,
    /// The prompt's tokens written to the cache.
    pub cache_write_tokens: u64,
}

impl TurnUsage {
    /// A prompt of `input` tokens (none of them cached) and `output` tokens written.
    pub fn new(input: u64, output: u64) -> Self {
        TurnUsage {
            input_tokens: input,
            output_tokens: output,
            ..TurnUsage::default()
        }
    }

    /// The usage with `read` of the prompt's tokens read from the cache and `write` written to
    /// it (the prompt grows to hold them, if it is shorter).
    pub fn cached(mut self, read: u64, write: u64) -> Self {
        self.cache_read_tokens = read;
        self.cache_write_tokens = write;
        self.input_tokens = self.input_tokens.max(read.saturating_add(write));
        self
    }

    /// The prompt's tokens neither read from the cache nor written to it (what Anthropic and
    /// Bedrock report as their input tokens).
    pub fn uncached_input_tokens(&self) -> u64 {
        self.input_tokens.saturating_sub(
            self.cache_read_tokens
                .saturating_add(self.cache_write_tokens),
        )
    }
}

impl Turn {
    /// A final answer.
    pub fn text(text: impl Into<String>) -> Turn {
        Turn {
            text: Some(text.into()),
            thinking: None,
            calls: Vec::new(),
            finish: Finish::Completed,
            usage: None,
        }
    }

    /// A turn of one tool call.
    pub fn call(name: impl Into<String>, arguments: Value) -> Turn {
        Turn {
            text: None,
            thinking: None,
            calls: Vec::new(),
            finish: Finish::Completed,
            usage: None,
        }
        .and_call(name, arguments)
    }

    /// A turn of these calls, exactly as given (ids included).
    pub fn calls(calls: impl IntoIterator<Item = ToolCall>) -> Turn {
        Turn {
            text: None,
            thinking: None,
            calls: calls.into_iter().collect(),
            finish: Finish::Completed,
            usage: None,
        }
    }

    /// The turn with one more tool call.
    pub fn and_call(mut self, name: impl Into<String>, arguments: Value) -> Turn {
        self.calls
            .push(ToolCall::new(None, name, CallArguments::Value(arguments)));
        self
    }

    /// The turn with this call, its id and arguments exactly as given (arguments as JSON text
    /// the model may have got wrong, say).
    pub fn and_raw_call(mut self, call: ToolCall) -> Turn {
        self.calls.push(call);
        self
    }

    /// The turn with this text (before its calls, if it has any).
    pub fn with_text(mut self, text: impl Into<String>) -> Turn {
        self.text = Some(text.into());
        self
    }

    /// The turn with this reasoning before its text and calls.
    pub fn thinking(mut self, thinking: impl Into<String>) -> Turn {
        self.thinking = Some(thinking.into());
        self
    }

    /// The turn ending as `finish` says (cut off by the token limit, a refusal).
    pub fn finish(mut self, finish: Finish) -> Turn {
        self.finish = finish;
        self
    }

    /// The turn's response reporting these tokens.
    pub fn with_usage(mut self, usage: TurnUsage) -> Turn {
        self.usage = Some(usage);
        self
    }
}

/// One message of a conversation, read back from its API's format
/// ([`Provider::read_request`](super::Provider::read_request)): what a stand-in model reads.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Message {
    /// What the user said.
    User(String),
    /// A turn of the model: its text and its calls.
    Model {
        /// The answer text, if any.
        text: Option<String>,
        /// The calls it made.
        calls: Vec<ToolCall>,
    },
    /// The answers to the calls of the model's turn before, in order.
    Results(Vec<ToolResult>),
    /// An instruction given after the conversation started
    /// ([`Conversation::push_instruction`](crate::agent::Conversation::push_instruction)).
    Instruction(String),
    /// A change of the tools offered from here on, where the API says it in a message
    /// ([`Conversation::offer`](crate::agent::Conversation::offer)): declared tools offered
    /// again, and withdrawn.
    Offered {
        /// Offered again.
        added: Vec<String>,
        /// Withdrawn.
        removed: Vec<String>,
    },
}

/// One tool result as a conversation carries it, read back.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ToolResult {
    /// The id of the call it answers (`None` where the API gave the call none).
    pub call_id: Option<String>,
    /// The tool's name, where the API repeats it (Gemini).
    pub name: Option<String>,
    /// Whether it reports a failure, where the API says (Chat Completions does not).
    pub is_error: Option<bool>,
    /// What the model reads, as text (a JSON value as its text).
    pub text: String,
}

impl ToolResult {
    /// A result answering `call_id`, as a provider reads it back.
    pub fn new(
        call_id: Option<String>,
        name: Option<String>,
        is_error: Option<bool>,
        text: impl Into<String>,
    ) -> ToolResult {
        ToolResult {
            call_id,
            name,
            is_error,
            text: text.into(),
        }
    }
}
