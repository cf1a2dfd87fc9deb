//! Typed results from model text, by the safe flow for structured output: check why the model
//! stopped, parse the JSON, validate it against the type's schema, check the business rules, and
//! on failure send back a repair message listing every problem — at most a few times.
//!
//! No HTTP client is built in: [`extract`] takes an async closure that sends the conversation to
//! whatever client you use (`reqwest`, `async-openai`, a provider's SDK) and returns the raw
//! JSON response. [`read_reply`] understands the responses of every [`Api`].
//!
//! ```
//! use serde_json::json;
//! use tool_runtime::Api;
//! use tool_runtime::structured::{self, Attempt};
//! use tool_runtime::{ToolArg, Violation};
//!
//! #[derive(ToolArg, serde::Deserialize, serde::Serialize, Debug)]
//! #[arg(validate = not_in_the_future)]
//! struct Paper {
//!     /// The paper's title
//!     title: String,
//!     /// Year published; null if the text does not say
//!     #[arg(range = 1900..=2100)]
//!     year: Option<u16>,
//! }
//!
//! fn not_in_the_future(p: &Paper) -> Vec<Violation> {
//!     match p.year {
//!         Some(y) if y > 2026 => vec![Violation::rule("year", "a year not after 2026", y)],
//!         _ => vec![],
//!     }
//! }
//!
//! // A stand-in for the model client: first a year in the future, then a fixed answer.
//! let replies = [r#"{"title": "Laskar", "year": 2031}"#, r#"{"title": "Laskar", "year": 2005}"#];
//! let send = |attempt: Attempt| {
//!     let text = replies[attempt.number - 1];
//!     async move { Ok::<_, String>(json!({"choices": [{"message": {"content": text}, "finish_reason": "stop"}]})) }
//! };
//! let got = pollster::block_on(structured::extract::<Paper, _, _, _>(Api::OPENAI_CHAT, 2, send)).unwrap();
//! assert_eq!(got.value.year, Some(2005));
//! assert_eq!(got.attempts.len(), 2);
//! ```

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::provider::{Api, Finish, ReadError, Reply};
use crate::validate::{Nulls, SchemaError, Validator, Violation, Violations};
use crate::wording::{Wording, fill};

/// Business rules of a type, checked after its schema holds: `#[arg(validate = path)]` on a
/// `#[derive(ToolArg)]` type implements this with `path(&value) -> Vec<Violation>`.
pub trait Rules {
    /// Every rule the value breaks (empty when it is acceptable).
    fn check(&self) -> Vec<Violation> {
        Vec::new()
    }
}

/// The canonical schema of a structured-output type `T`: what the model must produce, and what
/// serde will read into `T` (the schema of what `T` reads, where a tool's `output_schema` is the
/// schema of what it writes). [`export::structured_output`](crate::export::structured_output)
/// lowers it for each API.
pub fn schema<T: JsonSchema>() -> Value {
    crate::schema::input_schema_of::<T>()
}

/// Why one attempt did not give a value.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Failure {
    /// The response is not in the API's format.
    Unreadable(ReadError),
    /// The type's schema did not compile into a validator: nothing was asked of the model.
    Schema(SchemaError),
    /// The model refused: report it, do not retry.
    Refused {
        /// The refusal text, or the API's reason for blocking.
        message: String,
    },
    /// The output was cut off by the token limit.
    Truncated {
        /// The API's stop reason.
        reason: String,
    },
    /// The model stopped for another reason, without usable text.
    Stopped {
        /// The API's stop reason, or `no text`.
        reason: String,
    },
    /// The text is not JSON.
    NotJson {
        /// serde_json's error.
        error: String,
        /// The text as the model wrote it.
        text: String,
    },
    /// The JSON breaks the schema; every violation is listed.
    Invalid(Violations),
    /// The JSON has the right shape but breaks business rules.
    RuleBroken(Violations),
    /// The caller's client failed to get a response: the sending closure's error.
    Transport(Arc<dyn std::error::Error + Send + Sync>),
}

impl PartialEq for Failure {
    /// Failures are equal when they are of one kind with equal data; two transport failures,
    /// when their errors read the same.
    fn eq(&self, other: &Failure) -> bool {
        use Failure::*;
        match (self, other) {
            (Unreadable(a), Unreadable(b)) => a == b,
            (Schema(a), Schema(b)) => a == b,
            (Refused { message: a }, Refused { message: b }) => a == b,
            (Truncated { reason: a }, Truncated { reason: b })
            | (Stopped { reason: a }, Stopped { reason: b }) => a == b,
            (NotJson { error: a, text: x }, NotJson { error: b, text: y }) => a == b && x == y,
            (Invalid(a), Invalid(b)) | (RuleBroken(a), RuleBroken(b)) => a == b,
            (Transport(a), Transport(b)) => a.to_string() == b.to_string(),
            _ => false,
        }
    }
}

impl Failure {
    /// The message to send back to the model, or `None` when repairing makes no sense
    /// (refusal, truncation, transport). English; [`Failure::repair_message_in`] for another
    /// wording.
    pub fn repair_message(&self) -> Option<String> {
        self.repair_message_in(&Wording::english())
    }

    /// [`Failure::repair_message`] in `wording`.
    pub fn repair_message_in(&self, wording: &Wording) -> Option<String> {
        match self {
            Failure::NotJson { error, .. } => {
                Some(fill(&wording.reply_not_json, &[("error", error)]))
            }
            Failure::Invalid(v) | Failure::RuleBroken(v) => {
                let mut s = format!("{}\n", wording.reply_invalid);
                for x in v.iter() {
                    let line = match wording.violation {
                        Some(render) => render(x),
                        None => x.to_string(),
                    };
                    s.push_str(&format!("- {line}\n"));
                }
                s.push_str(&wording.reply_fix);
                Some(s)
            }
            _ => None,
        }
    }

    /// Whether a retry can help: never for a refusal, a transport failure or an unreadable reply.
    pub fn retryable(&self) -> bool {
        matches!(
            self,
            Failure::NotJson { .. }
                | Failure::Invalid(_)
                | Failure::RuleBroken(_)
                | Failure::Truncated { .. }
        )
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Unreadable(_) => f.write_str("the response could not be read"),
            Failure::Schema(_) => f.write_str("the type's schema could not be compiled"),
            Failure::Refused { message } => write!(f, "the model refused: {message}"),
            Failure::Truncated { reason } => write!(f, "the output was cut off ({reason})"),
            Failure::Stopped { reason } => {
                write!(f, "the model stopped without an answer ({reason})")
            }
            Failure::NotJson { error, .. } => write!(f, "the answer is not JSON: {error}"),
            Failure::Invalid(v) => {
                write!(f, "the answer breaks the schema: {} violations", v.len())
            }
            Failure::RuleBroken(v) => write!(
                f,
                "the answer breaks business rules: {} violations",
                v.len()
            ),
            Failure::Transport(_) => f.write_str("the request failed"),
        }
    }
}

impl std::error::Error for Failure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Failure::Unreadable(e) => Some(e),
            Failure::Schema(e) => Some(e),
            Failure::Transport(e) => Some(&**e),
            _ => None,
        }
    }
}

/// Finds the answer text, the stop reason and any refusal in a raw API response. The text is
/// the answer alone: Gemini's thought parts (`thought: true`), Anthropic's `thinking` and
/// `redacted_thinking` blocks, Bedrock's `reasoningContent` and Responses' `reasoning` items are
/// left out. A refusal, a content filter or a safety block is [`Finish::Refused`] in every API,
/// and is never retried.
pub fn read_reply(api: Api, raw: &Value) -> Result<Reply, Failure> {
    api.provider().read_reply(raw).map_err(Failure::Unreadable)
}

/// One response turned into `T`, or the reason it could not be. Classifies the stop reason
/// before parsing anything.
pub fn parse<T>(api: Api, raw: &Value) -> Result<T, Failure>
where
    T: DeserializeOwned + JsonSchema + Rules,
{
    let validator = Validator::new(&schema::<T>()).map_err(Failure::Schema)?;
    parse_with(&validator, api, raw, &|_: &T| Vec::new())
}

fn parse_with<T: DeserializeOwned + Rules>(
    validator: &Validator,
    api: Api,
    raw: &Value,
    rules: &dyn Fn(&T) -> Vec<Violation>,
) -> Result<T, Failure> {
    let reply = read_reply(api, raw)?;
    match reply.finish {
        Finish::Completed => {}
        Finish::Truncated { reason } => return Err(Failure::Truncated { reason }),
        Finish::Refused { message } => return Err(Failure::Refused { message }),
        Finish::Other { reason } => return Err(Failure::Stopped { reason }),
    }
    let text = reply.text.ok_or_else(|| Failure::Stopped {
        reason: "no text".into(),
    })?;
    let json = strip_fence(&text);
    if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(json) {
        return Err(Failure::NotJson {
            error: e.to_string(),
            text: text.clone(),
        });
    }
    let nulls = if api.provider().null_means_absent() {
        Nulls::Absent
    } else {
        Nulls::Refused
    };
    let value = validator
        .validate_text(json, nulls)
        .map_err(Failure::Invalid)?;
    let typed: T = serde_json::from_value(value).map_err(|e| Failure::NotJson {
        error: e.to_string(),
        text: text.clone(),
    })?;
    let mut broken = typed.check();
    broken.extend(rules(&typed));
    if !broken.is_empty() {
        return Err(Failure::RuleBroken(Violations(broken)));
    }
    Ok(typed)
}

/// Models sometimes wrap JSON in a Markdown fence even when asked not to.
fn strip_fence(text: &str) -> &str {
    let t = text.trim();
    t.strip_prefix("```json")
        .or_else(|| t.strip_prefix("```"))
        .and_then(|s| s.strip_suffix("```"))
        .map(str::trim)
        .unwrap_or(t)
}

/// What the closure is asked to send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    /// 1 for the first request, then 2, 3, ...
    pub number: usize,
    /// The repair message to append to the conversation (as a user message), if this is a repair.
    pub repair: Option<String>,
    /// The previous output was cut off: ask for a larger output budget (or a smaller task).
    pub larger_budget: bool,
}

/// One request and how it ended.
#[derive(Clone, Debug, PartialEq)]
pub struct AttemptRecord {
    /// What was asked.
    pub attempt: Attempt,
    /// Why it gave no value; `None` for the attempt that succeeded.
    pub failure: Option<Failure>,
}

/// A value and the attempts it took.
#[derive(Debug)]
pub struct Extracted<T> {
    /// The value, valid against the schema and the rules.
    pub value: T,
    /// Every attempt, the successful last one included.
    pub attempts: Vec<AttemptRecord>,
}

/// No value: the last failure and every attempt.
#[derive(Debug)]
pub struct Failed {
    /// Why the last attempt failed.
    pub last: Failure,
    /// Every attempt, in order; empty when the type's schema did not compile.
    pub attempts: Vec<AttemptRecord>,
}

impl fmt::Display for Failed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (after {} attempts)", self.last, self.attempts.len())
    }
}

impl std::error::Error for Failed {}

/// Runs the whole flow: sends, classifies, parses, validates, checks rules, and retries with
/// the repair message at most `max_retries` times (2 is enough: a model that fails twice on the
/// same input rarely succeeds on a third try). A refusal, a transport failure or an unreadable
/// response ends it at once. [`Extractor`] does the same with more settings.
pub async fn extract<T, F, Fut, E>(
    api: Api,
    max_retries: usize,
    send: F,
) -> Result<Extracted<T>, Failed>
where
    T: DeserializeOwned + JsonSchema + Rules,
    F: FnMut(Attempt) -> Fut,
    Fut: Future<Output = Result<Value, E>>,
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    Extractor::new(api).max_retries(max_retries).run(send).await
}

/// [`extract`] with settings: the retry budget, business rules that need the caller's context
/// (today's date, the user's limits), and the wording of the repair messages.
///
/// ```
/// # use serde_json::json;
/// # use tool_runtime::{Api, ToolArg, Violation, structured::{Attempt, Extractor}};
/// #[derive(ToolArg, serde::Deserialize, serde::Serialize)]
/// struct Paper {
///     /// Year published
///     #[arg(range = 1900..=2100)]
///     year: u16,
/// }
/// let this_year = 2026;
/// let send = |a: Attempt| {
///     let text = if a.number == 1 { r#"{"year": 2031}"# } else { r#"{"year": 2005}"# };
///     async move { Ok::<_, String>(json!({"choices": [{"message": {"content": text}, "finish_reason": "stop"}]})) }
/// };
/// let got = pollster::block_on(
///     Extractor::<Paper>::new(Api::OPENAI_CHAT)
///         .rules(|p: &Paper| match p.year {
///             y if y > this_year => vec![Violation::rule("year", "a year not after this one", y)],
///             _ => vec![],
///         })
///         .run(send),
/// )
/// .unwrap();
/// assert_eq!(got.value.year, 2005);
/// ```
pub struct Extractor<'a, T> {
    api: Api,
    max_retries: usize,
    rules: RulesFn<'a, T>,
    wording: Wording,
}

/// Business rules given to an [`Extractor`].
type RulesFn<'a, T> = Box<dyn Fn(&T) -> Vec<Violation> + 'a>;

impl<'a, T> Extractor<'a, T>
where
    T: DeserializeOwned + JsonSchema + Rules,
{
    /// Replies from `api`, 2 retries, the type's own rules only, English repair messages.
    pub fn new(api: Api) -> Self {
        Extractor {
            api,
            max_retries: 2,
            rules: Box::new(|_| Vec::new()),
            wording: Wording::english(),
        }
    }

    /// At most this many repair requests after the first.
    pub fn max_retries(mut self, max_retries: usize) -> Self {
        self.max_retries = max_retries;
        self
    }

    /// Rules checked after the schema and the type's own `#[arg(validate = ..)]` rules hold; their
    /// violations go into the same repair message.
    pub fn rules(mut self, rules: impl Fn(&T) -> Vec<Violation> + 'a) -> Self {
        self.rules = Box::new(rules);
        self
    }

    /// The wording of the repair messages.
    pub fn wording(mut self, wording: Wording) -> Self {
        self.wording = wording;
        self
    }

    /// One reply turned into `T` with these rules, or the reason it could not be (what
    /// [`parse`] does, plus the rules).
    pub fn parse(&self, raw: &Value) -> Result<T, Failure> {
        let validator = Validator::new(&schema::<T>()).map_err(Failure::Schema)?;
        parse_with(&validator, self.api, raw, &*self.rules)
    }

    /// Sends, classifies, parses, validates, checks rules, and retries as configured.
    pub async fn run<F, Fut, E>(self, mut send: F) -> Result<Extracted<T>, Failed>
    where
        F: FnMut(Attempt) -> Fut,
        Fut: Future<Output = Result<Value, E>>,
        E: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let Extractor {
            api,
            max_retries,
            rules,
            wording,
        } = self;
        let validator = match Validator::new(&schema::<T>()) {
            Ok(v) => v,
            Err(e) => {
                return Err(Failed {
                    last: Failure::Schema(e),
                    attempts: Vec::new(),
                });
            }
        };
        let mut attempts = Vec::new();
        let mut attempt = Attempt {
            number: 1,
            repair: None,
            larger_budget: false,
        };
        loop {
            let outcome = match send(attempt.clone()).await {
                Ok(raw) => parse_with::<T>(&validator, api, &raw, &*rules),
                Err(e) => Err(Failure::Transport(Arc::from(e.into()))),
            };
            match outcome {
                Ok(value) => {
                    attempts.push(AttemptRecord {
                        attempt,
                        failure: None,
                    });
                    return Ok(Extracted { value, attempts });
                }
                Err(failure) => {
                    attempts.push(AttemptRecord {
                        attempt: attempt.clone(),
                        failure: Some(failure.clone()),
                    });
                    if !failure.retryable() || attempts.len() > max_retries {
                        return Err(Failed {
                            last: failure,
                            attempts,
                        });
                    }
                    attempt = Attempt {
                        number: attempt.number + 1,
                        larger_budget: matches!(failure, Failure::Truncated { .. }),
                        repair: failure.repair_message_in(&wording),
                    };
                }
            }
        }
    }
}
