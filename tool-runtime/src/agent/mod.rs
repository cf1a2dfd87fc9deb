//! The agent loop: a model's tool calls read from its response, run, and answered in its
//! format, turn after turn (OpenAI Chat Completions, OpenAI Responses, Anthropic Messages,
//! Gemini `generateContent`).
//!
//! No HTTP client is built in: [`Agent::run`] takes a closure that sends the conversation
//! with whatever client you use and returns the raw response. The loop reads the calls
//! ([`read_turn`]), runs them ([`run_calls`]: concurrently, each through the tool set's
//! permissions, validation, approval and hooks), appends the results ([`render`]: the right
//! ids, `is_error` exactly for failures, one result per call in the calls' order), and sends
//! again, until the model answers in text, a call waits for approval, or the turn limit is
//! reached. Everything it keeps is plain serde data: a [`Paused`] conversation can be stored
//! and resumed in another process.
//!
//! ```
//! use serde_json::{Value, json};
//! use tool_runtime::agent::{Agent, Conversation, Finished};
//! use tool_runtime::{Api, Context, ToolSet, tool};
//!
//! #[tool(description = "Add two whole numbers and return the sum.")]
//! fn add(
//!     #[arg(description = "The first number", range = -1000..=1000)] a: i32,
//!     #[arg(description = "The second number", range = -1000..=1000)] b: i32,
//! ) -> i32 {
//!     a + b
//! }
//!
//! // A stand-in for the model: first a tool call, then an answer that uses its result.
//! let send = |c: &Conversation| {
//!     let reply = match c.messages.last() {
//!         Some(m) if m["role"] == "tool" => json!({"choices": [{"finish_reason": "stop",
//!             "message": {"role": "assistant", "content": format!("The sum is {}.", m["content"])}}]}),
//!         _ => json!({"choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant",
//!             "content": null, "tool_calls": [{"id": "call_1", "type": "function",
//!             "function": {"name": "add", "arguments": "{\"a\": 2, \"b\": 3}"}}]}}]}),
//!     };
//!     async move { Ok::<Value, String>(reply) }
//! };
//! let tools = ToolSet::new([add::tool()]).unwrap();
//! let mut conversation = Conversation::new(Api::OPENAI_CHAT);
//! conversation.push_user("What is 2 + 3?");
//! let finished = pollster::block_on(Agent::new(&tools).run(&Context::new(), conversation, send));
//! let Ok(Finished::Answered { reply, conversation, .. }) = finished else { panic!() };
//! assert_eq!(reply.text.as_deref(), Some("The sum is \"5\"."));
//! assert_eq!(conversation.messages[2]["tool_call_id"], "call_1");
//! ```

mod budget;
mod read;
mod run;
mod spans;
mod stream;
mod write;

use std::error::Error;
use std::fmt;
use std::future::Future;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tracing::Instrument as _;

pub use budget::{Budget, Limit, Prices, Stopped, Usage};
pub use read::{ModelTurn, read_turn};
pub use run::{Job, Outcome, run_calls};
use run::{resume_one, run_all};
pub use stream::{AgentEvent, AgentStream};
pub use write::render;

use crate::approval::PendingCall;
use crate::context::Context;
use crate::defer::{Loading, found_in};
use crate::provider::{
    Api, HttpRequest, ReadError, Reply, Request, RequestError, StreamError, ToolAnswer,
};
use crate::set::ToolSet;

/// A conversation in one API's format: the messages (Chat, Anthropic), input items (Responses)
/// or contents (Gemini) of the next request. The system prompt, the tools and the model are the
/// request's other fields, which the sending closure adds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Conversation {
    /// The API whose format the messages are in.
    pub api: Api,
    /// The messages (or input items, or contents) so far, as JSON in the API's format.
    pub messages: Vec<Value>,
    /// The deferred tools ([`ToolSet::defer`], feature `search`) the model found with the
    /// set's search tool, oldest first, at most 32 (the oldest give way): a record for the
    /// host (which tools this conversation reached), kept when a run pauses. The tool list is
    /// never edited for them: the model calls a found tool through
    /// [`CALL_TOOL`](crate::CALL_TOOL), or, in Anthropic's API, by its name (the API loads a
    /// `defer_loading` tool its own search found). The agent loop adds them when it runs a
    /// search.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub found: Vec<String>,
    /// The tools this turn may call, when not every tool the conversation declared: those the
    /// agent's hook chose ([`Agent::prepare_tools`]), never one the caller may not call. The
    /// agent loop sets it before each request ([`Conversation::offer`]), and clears it when the
    /// run ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_tools: Option<Vec<String>>,
    /// The tool list this conversation's first request wrote, which every later request
    /// writes again unchanged, and what the model is offered of it now ([`Declared`]). The
    /// agent loop sets it before the first request; `None`: each request lists the set's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared: Option<Declared>,
}

/// The tools a conversation declared in its first request. The providers cache the unchanged
/// start of a conversation (and Anthropic binds thinking to it), so the list is written once:
/// a turn that offers fewer tools says so by the API's own means, never by editing the list
/// (OpenAI's `allowed_tools` and Gemini's `allowedFunctionNames` on that request; a message
/// of `tool_removal`/`tool_addition` blocks appended to the conversation for Anthropic and
/// Bedrock, which [`offered`](Declared::offered) then follows), and a deferred tool the model
/// finds is called through [`CALL_TOOL`](crate::CALL_TOOL) where the API cannot add it itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Declared {
    /// The names in the first request's tool list, in its order (the set's search tool and
    /// `call_tool` among them when the set defers tools).
    pub tools: Vec<String>,
    /// What the model is offered now, where messages in the conversation changed it: the
    /// declared tools less those withdrawn. `None`: all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offered: Option<Vec<String>>,
}

impl Conversation {
    /// An empty conversation in `api`'s format.
    pub fn new(api: Api) -> Self {
        Conversation {
            api,
            messages: Vec::new(),
            found: Vec::new(),
            turn_tools: None,
            declared: None,
        }
    }

    /// Appends what the user said, in the API's format.
    pub fn push_user(&mut self, text: &str) {
        self.messages.push(self.api.provider().user_message(text));
    }

    /// Appends an instruction given after the conversation started (the request's system text
    /// stays as it was, so the conversation's start does not change): a mid-conversation
    /// `system` message for Anthropic and Bedrock, a `system` message for OpenAI Chat, a
    /// `developer` item for Responses, a user turn for Gemini (which has no other place for
    /// it). Anthropic takes one only after a user turn (the question, or tool results).
    pub fn push_instruction(&mut self, text: &str) {
        self.messages
            .push(self.api.provider().instruction_message(text));
    }

    /// Sets what the model is offered from the next request on: `tools` (`None`: everything
    /// the conversation declared), never by editing the declared list. Where the API takes a
    /// message for it (Anthropic, Bedrock) a change is appended to the conversation (call this
    /// after a user turn: the question, or tool results), and [`Declared::offered`] follows it;
    /// elsewhere the next request narrows what its model may call
    /// ([`Request::narrowed_to`](crate::provider::Request::narrowed_to)). Names outside the
    /// declared list (a deferred tool the model reaches through `call_tool`) may be called
    /// and are not offered otherwise. The agent loop calls it before every request.
    pub fn offer(&mut self, tools: Option<Vec<String>>) {
        self.turn_tools = tools;
        let Some(declared) = &mut self.declared else {
            return;
        };
        let wanted: Vec<String> = match &self.turn_tools {
            Some(names) => declared
                .tools
                .iter()
                .filter(|d| names.contains(d))
                .cloned()
                .collect(),
            None => declared.tools.clone(),
        };
        let now = declared.offered.as_ref().unwrap_or(&declared.tools);
        let removed: Vec<String> = now
            .iter()
            .filter(|t| !wanted.contains(t))
            .cloned()
            .collect();
        let added: Vec<String> = wanted
            .iter()
            .filter(|t| !now.contains(t))
            .cloned()
            .collect();
        if removed.is_empty() && added.is_empty() {
            return;
        }
        if let Some(change) = self.api.provider().tool_change(&added, &removed) {
            self.messages.push(change);
            declared.offered = (wanted != declared.tools).then_some(wanted);
        }
    }

    /// The request that sends this conversation as `request` describes, in the API's format:
    /// post its body to its [`url`](HttpRequest::url) with its headers and your credentials.
    /// Its tool list is the one the conversation declared (or the set's own), and it offers the
    /// tools this turn has ([`Conversation::offer`]).
    pub fn request(&self, request: &Request<'_>) -> Result<HttpRequest, RequestError> {
        let declared = self.declared.as_ref().map(|d| d.tools.as_slice());
        let narrow = match (&self.turn_tools, declared) {
            (Some(turn), Some(declared)) => Some(
                declared
                    .iter()
                    .filter(|d| turn.contains(d))
                    .cloned()
                    .collect::<Vec<_>>(),
            ),
            (Some(turn), None) => Some(turn.clone()),
            (None, _) => None,
        }
        .filter(|narrow| declared.is_none_or(|d| narrow.len() < d.len()));
        spans::requested(&request.model);
        let request = request.offering(declared, narrow.as_deref());
        self.api.provider().request(&request, &self.messages)
    }
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Finished {
    /// The model answered without calling a tool: its text and stop reason (check
    /// `reply.finish` for a refusal or a truncated answer).
    Answered {
        /// The model's final text and why it stopped.
        reply: Reply,
        /// The whole conversation, the model's answer included.
        conversation: Conversation,
        /// What the run used (the runs it resumed included).
        usage: Usage,
    },
    /// A call waits for a person. Store the [`Paused`] state; [`Agent::resume`] goes on.
    Paused(Paused),
    /// The model was still calling tools after the turn limit.
    TurnLimit {
        /// The conversation so far, the last turn's tool results included.
        conversation: Conversation,
        /// What the run used (the runs it resumed included).
        usage: Usage,
    },
}

impl Finished {
    /// What the run used (the runs it resumed included).
    pub fn usage(&self) -> Usage {
        match self {
            Finished::Answered { usage, .. } | Finished::TurnLimit { usage, .. } => *usage,
            Finished::Paused(paused) => paused.usage,
        }
    }
}

/// A conversation stopped at a turn whose calls are answered except those waiting for approval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Paused {
    /// The conversation up to the model's turn with the waiting calls; that turn's results are
    /// appended when it resumes.
    pub conversation: Conversation,
    /// The turn's outcomes, in the calls' order.
    outcomes: Vec<Outcome>,
    /// Model turns taken so far.
    turns: usize,
    /// What the run used up to the pause.
    #[serde(default)]
    usage: Usage,
}

impl Paused {
    /// What the run used up to the pause.
    pub fn usage(&self) -> Usage {
        self.usage
    }

    /// The calls waiting for a person: show each one's `tool` and `arguments`.
    pub fn waiting(&self) -> impl Iterator<Item = &PendingCall> {
        self.outcomes.iter().filter_map(|o| match o {
            Outcome::Waiting { pending, .. } => Some(pending),
            Outcome::Answered(_) => None,
        })
    }
}

/// What the person decided about a waiting call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Run the call.
    Approve,
    /// Do not run it; the model is told the call was declined.
    Reject,
}

/// Why a run could not go on. What went wrong is the [`source`](Error::source).
#[derive(Debug)]
#[non_exhaustive]
pub enum AgentError {
    /// The sending closure failed.
    Transport(Box<dyn Error + Send + Sync>),
    /// The response is not in the API's format.
    Unreadable(ReadError),
    /// A streamed response broke off, stalled, or broke its API's event order.
    Stream(StreamError),
    /// The hook that chooses each turn's tools ([`Agent::prepare_tools`]) chose a tool the set
    /// does not have, or more than a request may offer.
    Prepare(PrepareError),
    /// The run reached a limit of its [`Budget`]: which one, and the run as it stood, to go
    /// on with [`Agent::resume_stopped`] once the budget allows.
    OverBudget(Box<Stopped>),
}

/// What is wrong with the tools a hook chose for a turn ([`Agent::prepare_tools`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PrepareError {
    /// No tool of the set has this name.
    Unknown {
        /// The name chosen.
        name: String,
    },
    /// More tools than one request may offer.
    TooMany {
        /// How many were chosen.
        chosen: usize,
        /// The most a turn may offer ([`MOST_TURN_TOOLS`]).
        most: usize,
    },
}

/// The most tools a hook may choose for one turn: OpenAI's limit per request, the lowest of the
/// APIs'.
pub const MOST_TURN_TOOLS: usize = 128;

impl fmt::Display for PrepareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PrepareError::Unknown { name } => write!(
                f,
                "the turn's tools name `{name}`, which the agent's tool set does not have"
            ),
            PrepareError::TooMany { chosen, most } => write!(
                f,
                "the turn's tools are {chosen}; a request offers at most {most}"
            ),
        }
    }
}

impl Error for PrepareError {}

impl AgentError {
    /// A short, stable name of the kind of failure (`transport`, `unreadable`, `stream`): the
    /// `error.type` of the run's span.
    pub fn kind(&self) -> &'static str {
        match self {
            AgentError::Transport(_) => "transport",
            AgentError::Unreadable(_) => "unreadable",
            AgentError::Stream(_) => "stream",
            AgentError::Prepare(_) => "prepare",
            AgentError::OverBudget(_) => "over_budget",
        }
    }
}

impl fmt::Display for AgentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AgentError::Transport(_) => "the request to the model failed",
            AgentError::Unreadable(_) => "the model's response could not be read",
            AgentError::Stream(_) => "the model's streamed response failed",
            AgentError::Prepare(_) => "the hook choosing the turn's tools chose wrongly",
            AgentError::OverBudget(stopped) => {
                return write!(f, "the run stopped at its budget: {}", stopped.limit);
            }
        })
    }
}

impl Error for AgentError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            AgentError::Transport(e) => Some(&**e),
            AgentError::Unreadable(e) => Some(e),
            AgentError::Stream(e) => Some(e),
            AgentError::Prepare(e) => Some(e),
            AgentError::OverBudget(_) => None,
        }
    }
}

/// The most found tools a conversation records (the oldest give way).
const MOST_FOUND_KEPT: usize = 32;

/// The deferred tools a turn's searches found, added to what the conversation found before
/// (once each, only tools the turn offers, at most [`MOST_FOUND_KEPT`]).
fn note_found(
    tools: &ToolSet,
    found: &mut Vec<String>,
    turn_tools: Option<&[String]>,
    outcomes: &[Outcome],
) {
    let searches = outcomes.iter().filter_map(|o| match o {
        Outcome::Answered(a) if !a.is_error && tools.loading(&a.name) == Loading::Search => {
            a.value.as_ref()
        }
        _ => None,
    });
    for name in searches.flat_map(found_in) {
        let offered = turn_tools.is_none_or(|offered| offered.iter().any(|o| o == name));
        if offered && tools.is_deferred(name) && !found.iter().any(|f| f == name) {
            found.push(name.to_owned());
        }
    }
    let over = found.len().saturating_sub(MOST_FOUND_KEPT);
    found.drain(..over);
}

/// A host's hook choosing each turn's tools from the conversation so far
/// ([`Agent::prepare_tools`]).
pub type PrepareTools = dyn Fn(&Context, &Conversation) -> Vec<String> + Send + Sync;

/// Runs the loop for one tool set.
///
/// Calls that need approval are held in the tool set's approval store
/// ([`ToolSet::with_approvals`]; by default the set's own), so a [`Paused`] run can be resumed
/// by another `Agent` over a set with the same store: a clone of the set, a set given the same
/// [`MemoryApprovals`](crate::MemoryApprovals), or, in another process or replica, a SQLite or
/// PostgreSQL store.
#[derive(Clone, Copy)]
pub struct Agent<'a> {
    tools: &'a ToolSet,
    max_turns: usize,
    concurrency: usize,
    idle_timeout: Duration,
    offload: Option<fn(Job)>,
    prepare: Option<&'a PrepareTools>,
    budget: Budget,
}

impl fmt::Debug for Agent<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Agent")
            .field("tools", &self.tools.len())
            .field("max_turns", &self.max_turns)
            .field("concurrency", &self.concurrency)
            .field("idle_timeout", &self.idle_timeout)
            .field("prepare_tools", &self.prepare.is_some())
            .field("budget", &self.budget)
            .finish_non_exhaustive()
    }
}

impl<'a> Agent<'a> {
    /// At most 8 model turns, 4 calls at once, 60 seconds without an event ends a stream.
    pub fn new(tools: &'a ToolSet) -> Self {
        Agent {
            tools,
            max_turns: 8,
            concurrency: 4,
            idle_timeout: Duration::from_secs(60),
            offload: None,
            prepare: None,
            budget: Budget::default(),
        }
    }

    /// Limits on a run's tokens, cache, requests, tool calls and cost: a run that reaches one
    /// stops with [`AgentError::OverBudget`], which says which, and goes on from there with
    /// [`resume_stopped`](Agent::resume_stopped). A turn's calls beyond the tool-call limit do
    /// not run (the model is told so) and the run stops before its next request.
    ///
    /// ```
    /// use serde_json::{Value, json};
    /// use tool_runtime::agent::{Agent, AgentError, Budget, Conversation, Limit, Prices};
    /// use tool_runtime::{Api, Context, ToolSet, tool};
    ///
    /// #[tool(description = "Add two whole numbers and return the sum.")]
    /// fn add(#[arg(description = "A", range = -9..=9)] a: i32, #[arg(description = "B", range = -9..=9)] b: i32) -> i32 { a + b }
    ///
    /// // A model that keeps calling, and reports 1,000 prompt tokens a turn, 900 from the cache.
    /// let send = |_: &Conversation| async {
    ///     Ok::<Value, String>(json!({"choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant",
    ///         "content": null, "tool_calls": [{"id": "c", "type": "function",
    ///         "function": {"name": "add", "arguments": "{\"a\": 2, \"b\": 3}"}}]}}],
    ///         "usage": {"prompt_tokens": 1000, "completion_tokens": 20,
    ///                   "prompt_tokens_details": {"cached_tokens": 900}}}))
    /// };
    /// let tools = ToolSet::new([add::tool()]).unwrap();
    /// let prices = Prices { input: 3.0, cache_read: 0.3, cache_write: 3.75, output: 15.0 };
    /// let agent = Agent::new(&tools).budget(Budget::new().input_tokens(2_500).cost(1.0, prices));
    /// let mut conversation = Conversation::new(Api::OPENAI_CHAT);
    /// conversation.push_user("Add 2 and 3, again and again.");
    /// let Err(AgentError::OverBudget(stopped)) =
    ///     pollster::block_on(agent.run(&Context::new(), conversation, send)) else { panic!() };
    /// assert_eq!(stopped.limit, Limit::InputTokens { allowed: 2_500, used: 3_000 });
    /// assert_eq!(stopped.usage.requests, 3);
    /// assert_eq!(stopped.usage.cache_read_tokens, 2_700);
    /// assert!((stopped.usage.cost(&prices) - 0.00261).abs() < 1e-9);
    /// ```
    pub fn budget(mut self, budget: Budget) -> Self {
        self.budget = budget;
        self
    }

    /// Chooses the tools of each turn from the conversation so far (what Pydantic AI calls
    /// `prepare_tools`): before every request the loop calls `choose` and offers only the tools
    /// it names ([`Conversation::turn_tools`]; the set's search tool stays offered when it
    /// defers tools). A call of a tool the turn did not offer is answered as an unknown tool,
    /// and does not run.
    ///
    /// The choice is bounded: it only narrows the set (a tool the set does not have, or more
    /// than [`MOST_TURN_TOOLS`] with the search tool, ends the run with
    /// [`AgentError::Prepare`]), and it never widens what the caller may do: a chosen tool the
    /// caller may not call is left out. The set's search tool then finds only the chosen tools.
    ///
    /// ```
    /// use tool_runtime::agent::{Agent, Conversation};
    /// use tool_runtime::{Context, ToolSet, tool};
    ///
    /// #[tool(description = "Cancel an order that has not shipped yet.")]
    /// fn cancel_order(#[arg(description = "The order's number", range = 1..=999_999)] order: u32) -> bool { true }
    ///
    /// #[tool(description = "Return an order's status.")]
    /// fn order_status(#[arg(description = "The order's number", range = 1..=999_999)] order: u32) -> String { "sent".into() }
    ///
    /// // No cancelling once the user said the parcel arrived.
    /// let choose = |_: &Context, c: &Conversation| {
    ///     let arrived = c.messages.iter().any(|m| m.to_string().contains("arrived"));
    ///     let mut names = vec!["order_status".to_owned()];
    ///     if !arrived { names.push("cancel_order".into()) }
    ///     names
    /// };
    /// let tools = ToolSet::new([cancel_order::tool(), order_status::tool()]).unwrap();
    /// let agent = Agent::new(&tools).prepare_tools(&choose);
    /// # let _ = agent;
    /// ```
    pub fn prepare_tools(mut self, choose: &'a PrepareTools) -> Self {
        self.prepare = Some(choose);
        self
    }

    /// The tools the hook chooses for the next turn, checked; `None` without a hook (every
    /// tool the conversation declared: those the caller may call).
    fn turn_tools(
        &self,
        cx: &Context,
        conversation: &Conversation,
    ) -> Result<Option<Vec<String>>, AgentError> {
        let Some(choose) = self.prepare else {
            return Ok(None);
        };
        let mut chosen: Vec<String> = Vec::new();
        for name in choose(cx, conversation) {
            let Some(tool) = self.tools.get(&name) else {
                return Err(AgentError::Prepare(PrepareError::Unknown { name }));
            };
            if tool.permits(cx) && !chosen.contains(&name) {
                chosen.push(name);
            }
        }
        // The search tool (and `call_tool`, through which the model calls what it found)
        // stay offered.
        let always = [self.tools.search_tool(), Some(crate::defer::CALL_TOOL)];
        for name in always.into_iter().flatten() {
            let declared = conversation
                .declared
                .as_ref()
                .is_some_and(|d| d.tools.iter().any(|t| t == name));
            if declared && !chosen.iter().any(|c| c == name) {
                chosen.push(name.to_owned());
            }
        }
        if chosen.len() > MOST_TURN_TOOLS {
            return Err(AgentError::Prepare(PrepareError::TooMany {
                chosen: chosen.len(),
                most: MOST_TURN_TOOLS,
            }));
        }
        Ok(Some(chosen))
    }

    /// How long a streamed response may send nothing before the run ends with
    /// [`AgentError::Stream`].
    pub fn idle_timeout(mut self, idle_timeout: Duration) -> Self {
        self.idle_timeout = idle_timeout;
        self
    }

    /// Model turns (requests) a run may take.
    pub fn max_turns(mut self, max_turns: usize) -> Self {
        self.max_turns = max_turns.max(1);
        self
    }

    /// Where a blocking tool runs ([`Tool::blocks`](crate::Tool::blocks): a sync `#[tool]`
    /// function, unless it says `blocking = false`): each of its calls is a [`Job`] given to
    /// `spawn` to run on a thread where blocking is allowed, while the run goes on. With Tokio,
    /// `.offload(|job| drop(tokio::task::spawn_blocking(job)))`; with no runtime:
    ///
    /// ```
    /// # let tools = tool_runtime::ToolSet::new(Vec::<tool_runtime::ToolRef>::new()).unwrap();
    /// let agent = tool_runtime::agent::Agent::new(&tools)
    ///     .offload(|job| drop(std::thread::spawn(job)));
    /// ```
    ///
    /// Without it a blocking tool runs on the thread that polls the run: right for a command
    /// line program or a test, wrong on a server's async workers, where a slow tool stalls
    /// every task of that worker. A job `spawn` drops without running answers the call with an
    /// error; one that starts after the run went away runs nothing. Calls a person approved
    /// ([`resume`](Agent::resume)) go there too, and a dropped [`AgentStream`] hands it the
    /// rejection of its held calls. `spawn` is a `fn` (a closure that captures nothing), which
    /// keeps `Agent` `Copy`: to reach a particular runtime, keep its `Handle` in a `static`.
    pub fn offload(mut self, spawn: fn(Job)) -> Self {
        self.offload = Some(spawn);
        self
    }

    /// Calls of one turn run at once.
    pub fn concurrency(mut self, concurrency: usize) -> Self {
        self.concurrency = concurrency.max(1);
        self
    }

    /// Sends `conversation`, runs the calls of each response and sends their results, until
    /// the model answers, a call waits for approval, or the turn limit. Before its first
    /// request the conversation declares its tools ([`Declared`]: those the caller may call),
    /// and every request writes that list again: a turn's choice of tools
    /// ([`prepare_tools`](Agent::prepare_tools)) and a deferred tool found by the search go
    /// through each API's own means, so each request extends the one before it.
    pub async fn run<F, Fut, E>(
        &self,
        cx: &Context,
        conversation: Conversation,
        send: F,
    ) -> Result<Finished, AgentError>
    where
        F: FnMut(&Conversation) -> Fut,
        Fut: Future<Output = Result<Value, E>>,
        E: Into<Box<dyn Error + Send + Sync>>,
    {
        self.turns(cx, conversation, 0, Usage::default(), send)
            .await
    }

    /// Goes on from a pause: each waiting call is run (approved: the store hands it out once)
    /// or dropped and answered as declined (rejected), the turn's results are appended, and the
    /// loop continues. A call the store no longer holds (decided already, by this or another
    /// process, or expired) is answered as not run: it did not run.
    pub async fn resume<D, F, Fut, E>(
        &self,
        cx: &Context,
        paused: Paused,
        decide: D,
        send: F,
    ) -> Result<Finished, AgentError>
    where
        D: Fn(&PendingCall) -> Decision,
        F: FnMut(&Conversation) -> Fut,
        Fut: Future<Output = Result<Value, E>>,
        E: Into<Box<dyn Error + Send + Sync>>,
    {
        let (conversation, turns, usage) = self.decided(cx, paused, decide).await;
        self.turns(cx, conversation, turns, usage, send).await
    }

    /// Goes on from a run its budget stopped ([`AgentError::OverBudget`]), under this agent's
    /// budget (give it a larger one first: a limit still reached stops the run again at once),
    /// with the usage so far carried on.
    pub async fn resume_stopped<F, Fut, E>(
        &self,
        cx: &Context,
        stopped: Stopped,
        send: F,
    ) -> Result<Finished, AgentError>
    where
        F: FnMut(&Conversation) -> Fut,
        Fut: Future<Output = Result<Value, E>>,
        E: Into<Box<dyn Error + Send + Sync>>,
    {
        let Stopped {
            conversation,
            usage,
            turns,
            ..
        } = stopped;
        self.turns(cx, conversation, turns, usage, send).await
    }

    /// The paused turn answered: approved calls run (once), rejected ones declined.
    async fn decided<D>(
        &self,
        cx: &Context,
        paused: Paused,
        decide: D,
    ) -> (Conversation, usize, Usage)
    where
        D: Fn(&PendingCall) -> Decision,
    {
        let Paused {
            mut conversation,
            outcomes,
            turns,
            usage,
        } = paused;
        let wording = self.tools.wording();
        let mut answers = Vec::with_capacity(outcomes.len());
        for outcome in outcomes {
            answers.push(match outcome {
                Outcome::Answered(a) => a,
                Outcome::Waiting { call, pending } => {
                    let (id, name) = (call.id, call.name);
                    match decide(&pending) {
                        Decision::Approve => {
                            match resume_one(self.tools, cx, &pending, self.offload).await {
                                Ok(out) => run::answer(self.tools, id, name, &out),
                                Err(e) => ToolAnswer::error(id, name, self.tools.model_message(&e)),
                            }
                        }
                        Decision::Reject => {
                            let message = match self.tools.reject(&pending.ticket).await {
                                Ok(_) => wording.approval_declined.to_string(),
                                Err(e) => self.tools.model_message(&e.into()),
                            };
                            ToolAnswer::error(id, name, message)
                        }
                    }
                }
            });
        }
        conversation
            .messages
            .extend(render(conversation.api, &answers));
        (conversation, turns, usage)
    }

    /// The conversation with a turn's answers appended, or the pause when a call waits.
    #[allow(
        clippy::result_large_err,
        reason = "the pause is the run's result, once"
    )]
    fn after_calls(
        &self,
        mut conversation: Conversation,
        outcomes: Vec<Outcome>,
        turns: usize,
        usage: Usage,
    ) -> Result<Conversation, Paused> {
        note_found(
            self.tools,
            &mut conversation.found,
            conversation.turn_tools.as_deref(),
            &outcomes,
        );
        if outcomes
            .iter()
            .any(|o| matches!(o, Outcome::Waiting { .. }))
        {
            return Err(Paused {
                conversation,
                outcomes,
                turns,
                usage,
            });
        }
        let answers: Vec<ToolAnswer> = outcomes
            .into_iter()
            .filter_map(|o| match o {
                Outcome::Answered(a) => Some(a),
                Outcome::Waiting { .. } => None,
            })
            .collect();
        conversation
            .messages
            .extend(render(conversation.api, &answers));
        Ok(conversation)
    }

    /// Before a run's first request: the conversation declares the tools the caller may call
    /// (once: a resumed run keeps what it declared).
    fn declare(&self, cx: &Context, conversation: &mut Conversation) {
        if conversation.declared.is_none() {
            let tools = self
                .tools
                .declared_names(conversation.api.provider(), |t| t.permits(cx));
            conversation.declared = Some(Declared {
                tools,
                offered: None,
            });
        }
    }

    /// Before each request: the budget allows it (else the run stops here, whole), and the
    /// turn's tools are offered.
    fn before_request(
        &self,
        cx: &Context,
        conversation: Conversation,
        turns: usize,
        usage: Usage,
    ) -> Result<Conversation, AgentError> {
        if let Some(limit) = self.budget.before_request(&usage) {
            let mut conversation = conversation;
            conversation.turn_tools = None;
            return Err(AgentError::OverBudget(Box::new(Stopped {
                limit,
                conversation,
                usage,
                turns,
            })));
        }
        let mut conversation = conversation;
        let offered = self.turn_tools(cx, &conversation)?;
        conversation.offer(offered);
        Ok(conversation)
    }

    /// How many of a turn's `calls` the budget lets run; the others are answered as not run.
    fn calls_allowed(&self, usage: &Usage, calls: usize) -> usize {
        match self.budget.tool_calls {
            Some(most) => calls.min(most.saturating_sub(usage.tool_calls) as usize),
            None => calls,
        }
    }

    async fn turns<F, Fut, E>(
        &self,
        cx: &Context,
        conversation: Conversation,
        turns: usize,
        usage: Usage,
        send: F,
    ) -> Result<Finished, AgentError>
    where
        F: FnMut(&Conversation) -> Fut,
        Fut: Future<Output = Result<Value, E>>,
        E: Into<Box<dyn Error + Send + Sync>>,
    {
        let run = spans::run(conversation.api);
        let mut totals = spans::Totals::default();
        let result = self
            .turns_within(cx, conversation, turns, usage, send, &mut totals)
            .instrument(run.clone())
            .await;
        spans::ended(&run, &totals, &result);
        result
    }

    async fn turns_within<F, Fut, E>(
        &self,
        cx: &Context,
        mut conversation: Conversation,
        mut turns: usize,
        mut usage: Usage,
        mut send: F,
        totals: &mut spans::Totals,
    ) -> Result<Finished, AgentError>
    where
        F: FnMut(&Conversation) -> Fut,
        Fut: Future<Output = Result<Value, E>>,
        E: Into<Box<dyn Error + Send + Sync>>,
    {
        let api = conversation.api;
        self.declare(cx, &mut conversation);
        while turns < self.max_turns {
            conversation = self.before_request(cx, conversation, turns, usage)?;
            let chat = spans::chat(api);
            // The request is written inside the turn's span (its model is recorded there).
            let sending = chat.in_scope(|| send(&conversation));
            let raw = sending
                .instrument(chat.clone())
                .await
                .map_err(|e| spans::failed(&chat, AgentError::Transport(e.into())))?;
            turns += 1;
            let info = api.provider().read_info(&raw);
            usage.add_response(&info);
            if !chat.is_disabled() {
                totals.response(&chat, &info);
            }
            let turn = read_turn(api, &raw)
                .map_err(|e| spans::failed(&chat, AgentError::Unreadable(e)))?;
            drop(chat);
            conversation.messages.extend(turn.append);
            if turn.calls.is_empty() {
                conversation.turn_tools = None;
                return Ok(Finished::Answered {
                    reply: turn.reply,
                    conversation,
                    usage,
                });
            }
            let allowed = self.calls_allowed(&usage, turn.calls.len());
            usage.tool_calls = usage.tool_calls.saturating_add(allowed as u64);
            let outcomes = run_all(
                self.tools,
                cx,
                &turn.calls,
                run::Scope {
                    concurrency: self.concurrency,
                    offload: self.offload,
                    turn_tools: conversation.turn_tools.as_deref(),
                    allowed,
                },
            )
            .await;
            match self.after_calls(conversation, outcomes, turns, usage) {
                Ok(next) => conversation = next,
                Err(paused) => return Ok(Finished::Paused(paused)),
            }
            // Calls the budget did not let run: the run stops before its next request.
            if allowed < turn.calls.len() {
                let limit = Limit::ToolCalls {
                    allowed: self.budget.tool_calls.unwrap_or(0),
                    used: usage.tool_calls,
                    asked: turn.calls.len() as u64,
                };
                conversation.turn_tools = None;
                return Err(AgentError::OverBudget(Box::new(Stopped {
                    limit,
                    conversation,
                    usage,
                    turns,
                })));
            }
        }
        conversation.turn_tools = None;
        Ok(Finished::TurnLimit {
            conversation,
            usage,
        })
    }
}
