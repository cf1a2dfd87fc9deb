//! Stand-in models for tests (feature `testing`): they read the requests the agent loop sends,
//! check them, and answer in the API's own wire format, streamed or not, from a script or from
//! a function of the conversation. Nothing here calls a model.
//!
//! A test of an agent, start to end:
//!
//! ```
//! use serde_json::json;
//! use tool_runtime::agent::{Agent, Finished};
//! use tool_runtime::provider::{Api, Request, Turn};
//! use tool_runtime::testing::TestModel;
//! use tool_runtime::{Context, ToolSet, tool};
//!
//! #[tool(description = "Add two whole numbers and return the sum.")]
//! fn add(#[arg(description = "A number", range = 0..=100)] a: u8, #[arg(description = "A number", range = 0..=100)] b: u8) -> u16 {
//!     u16::from(a) + u16::from(b)
//! }
//!
//! let tools = ToolSet::new([add::tool()]).unwrap();
//! let model = TestModel::scripted(Api::ANTHROPIC, [
//!     Turn::call("add", json!({"a": 2, "b": 3})),
//!     Turn::text("2 + 3 = 5"),
//! ]);
//! let request = Request::new("claude-sonnet-4-5").tools(&tools);
//! let finished = pollster::block_on(model.run(&Agent::new(&tools), &Context::new(), "What is 2 + 3?", &request));
//! let Ok(Finished::Answered { reply, .. }) = finished else { panic!() };
//! assert_eq!(reply.text.as_deref(), Some("2 + 3 = 5"));
//! assert_eq!(model.requests()[1].messages.len(), 3); // the question, the call, its result
//! ```
//!
//! Every request is read back by the API's provider and checked before it is answered: it is
//! in the API's format, it streams exactly when the model is asked for a stream, and each
//! model turn's calls are answered by the next message, once each, in order, under their ids;
//! and, as the providers' caches and Anthropic's prefix check want, it extends the last request
//! of its conversation, the model's last turn sent back exactly as it was written
//! ([`TestModelError::PrefixChanged`] names the first JSON path that differs).
//! A request that breaks one of these is a [`TestModelError`], which the agent loop reports as
//! [`AgentError::Transport`].
//!
//! Each answer reports the tokens it used, in the API's usage fields, unless its turn gives
//! its own ([`Turn::with_usage`]): an estimate at about four bytes a token, of the request's
//! start (its tools, system text and messages) and of the turn. The cache's share is what a
//! provider's cache would hold: the bytes the request repeated of the one before it (where the
//! API caches by itself, or after a request that marked its start, for Anthropic and
//! Bedrock), and a marked request writes the rest; no minimum length, no expiry. So a run's
//! [`Usage`](crate::agent::Usage) and its budget behave in a test as they do against a
//! provider, and a conversation whose start changed shows as a cache that stopped hitting.

use std::collections::VecDeque;
use std::fmt;
use std::future::{Ready, ready};
use std::sync::{Mutex, PoisonError};

use futures_util::stream::{self, Iter};
use serde_json::Value;

use crate::agent::{Agent, AgentError, AgentStream, Conversation, Finished};
use crate::context::Context;
use crate::provider::{
    Api, HttpRequest, Message, ReadError, Request, RequestError, SentRequest, StreamEvent, Turn,
    TurnUsage,
};

/// A stand-in model of one API: answers each request with the next turn of a script, or with
/// what a function of the request says.
pub struct TestModel {
    api: Api,
    state: Mutex<State>,
}

struct State {
    answer: Answer,
    requests: Vec<SentRequest>,
    /// Calls numbered so far (ids given to calls the turns left without one).
    calls: usize,
    /// Each request extends the last one of its conversation.
    check: PrefixCheck,
}

enum Answer {
    Script(VecDeque<Turn>),
    Function(Box<dyn FnMut(&SentRequest) -> Turn + Send>),
}

impl fmt::Debug for TestModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TestModel")
            .field("api", &self.api)
            .field("requests", &self.lock().requests.len())
            .finish_non_exhaustive()
    }
}

/// The events of a streamed answer, as the agent's streamed loop takes them.
pub type TestEvents = Iter<std::vec::IntoIter<Result<StreamEvent, TestModelError>>>;

impl TestModel {
    /// A model that answers request after request with these turns, in order; a request after
    /// the last is [`TestModelError::ScriptEnded`].
    pub fn scripted(api: Api, turns: impl IntoIterator<Item = Turn>) -> Self {
        TestModel::new(api, Answer::Script(turns.into_iter().collect()))
    }

    /// A model whose answer is a function of the request (the conversation so far, read
    /// back).
    pub fn function(api: Api, answer: impl FnMut(&SentRequest) -> Turn + Send + 'static) -> Self {
        TestModel::new(api, Answer::Function(Box::new(answer)))
    }

    fn new(api: Api, answer: Answer) -> Self {
        TestModel {
            api,
            state: Mutex::new(State {
                answer,
                requests: Vec::new(),
                calls: 0,
                check: PrefixCheck::new(api),
            }),
        }
    }

    /// The model without its check that each request of a conversation extends the one before
    /// it (for a test of a conversation its host edits on purpose).
    pub fn allowing_prefix_changes(self) -> Self {
        self.lock().check.changes_allowed = true;
        self
    }

    /// The share of each request's start (the members [`Provider::prefix_members`] names,
    /// cache marks aside) that the next request of the same conversation repeated as its own
    /// start, over every request so far: 1 for a conversation that only appends, as the
    /// providers' caches and Anthropic's prefix check want.
    ///
    /// [`Provider::prefix_members`]: crate::provider::Provider::prefix_members
    pub fn prefix_kept(&self) -> f64 {
        self.lock().check.kept()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The API it answers in.
    pub fn api(&self) -> Api {
        self.api
    }

    /// The requests it was sent, read back, in order.
    pub fn requests(&self) -> Vec<SentRequest> {
        self.lock().requests.clone()
    }

    /// The response to `request`, as the API writes it unstreamed.
    pub fn respond(&self, request: &HttpRequest) -> Result<Value, TestModelError> {
        let turn = self.next(request, false)?;
        self.api
            .provider()
            .write_response(&turn)
            .ok_or(TestModelError::Unsupported { api: self.api })
    }

    /// The events of the streamed response to `request`, in order.
    pub fn respond_streamed(
        &self,
        request: &HttpRequest,
    ) -> Result<Vec<StreamEvent>, TestModelError> {
        let turn = self.next(request, true)?;
        self.api
            .provider()
            .write_stream(&turn)
            .ok_or(TestModelError::Unsupported { api: self.api })
    }

    /// A sending closure for [`Agent::run`]: writes the conversation as `request` describes,
    /// and answers it.
    pub fn sender<'m>(
        &'m self,
        request: &'m Request<'m>,
    ) -> impl FnMut(&Conversation) -> Ready<Result<Value, TestModelError>> + 'm {
        move |conversation| {
            ready(
                self.written(conversation, request)
                    .and_then(|http| self.respond(&http)),
            )
        }
    }

    /// A sending closure for [`Agent::run_streamed`]: as [`sender`](TestModel::sender), with
    /// `request` streamed.
    pub fn streamed_sender<'m>(
        &'m self,
        request: &'m Request<'m>,
    ) -> impl FnMut(&Conversation) -> Ready<Result<TestEvents, TestModelError>> + Send + 'm {
        move |conversation| {
            let streamed = self
                .written_streamed(conversation, request)
                .and_then(|http| self.respond_streamed(&http))
                .map(|events| stream::iter(events.into_iter().map(Ok).collect::<Vec<_>>()));
            ready(streamed)
        }
    }

    /// Runs `agent` on `user`'s message in this model's API: the request described by
    /// `request`, the answers from this model.
    pub async fn run(
        &self,
        agent: &Agent<'_>,
        cx: &Context,
        user: &str,
        request: &Request<'_>,
    ) -> Result<Finished, AgentError> {
        let mut conversation = Conversation::new(self.api);
        conversation.push_user(user);
        agent.run(cx, conversation, self.sender(request)).await
    }

    /// [`run`](TestModel::run) over streamed responses: the run's events.
    pub fn run_streamed<'s>(
        &'s self,
        agent: &Agent<'s>,
        cx: &'s Context,
        user: &str,
        request: &'s Request<'s>,
    ) -> AgentStream<'s> {
        let mut conversation = Conversation::new(self.api);
        conversation.push_user(user);
        agent.run_streamed(cx, conversation, self.streamed_sender(request))
    }

    fn written(
        &self,
        conversation: &Conversation,
        request: &Request<'_>,
    ) -> Result<HttpRequest, TestModelError> {
        conversation
            .request(request)
            .map_err(TestModelError::Request)
    }

    fn written_streamed(
        &self,
        conversation: &Conversation,
        request: &Request<'_>,
    ) -> Result<HttpRequest, TestModelError> {
        if request.stream {
            return self.written(conversation, request);
        }
        self.written(conversation, &request.clone().streamed())
    }

    /// The request read back and checked, and the turn that answers it, its calls numbered.
    fn next(&self, request: &HttpRequest, stream: bool) -> Result<Turn, TestModelError> {
        let mut sent = self
            .api
            .provider()
            .read_request(request)
            .map_err(TestModelError::Unreadable)?;
        sent.api = Some(self.api);
        if sent.stream != stream {
            return Err(TestModelError::Stream {
                asked: sent.stream,
                answered: stream,
            });
        }
        check_answers(&sent.messages)?;
        let mut state = self.lock();
        let seen = state.check.check(request)?;
        state.requests.push(sent.clone());
        let mut turn = match &mut state.answer {
            Answer::Script(turns) => turns.pop_front().ok_or(TestModelError::ScriptEnded {
                requests: state.requests.len(),
            })?,
            Answer::Function(answer) => answer(&sent),
        };
        for call in &mut turn.calls {
            if call.id.is_none() {
                state.calls += 1;
                call.id = Some(format!("call_{}", state.calls));
            }
        }
        if turn.usage.is_none() {
            turn.usage = Some(estimated_usage(self.api, &seen, &turn));
        }
        // The turn as the API returns it whole: streamed or not, it must come back so.
        if let Some(whole) = self.api.provider().write_response(&turn) {
            state.check.response(&whole);
        }
        Ok(turn)
    }
}

/// The check a provider makes of a conversation's requests, for a stand-in of your own (a
/// test that answers with recorded responses, a proxy under test): each request must extend
/// the last one of its conversation (its tools, system text and earlier messages unchanged,
/// cache marks aside), and the model's last turn must come back exactly as the API returned
/// it. A [`TestModel`] makes it on every request.
///
/// ```
/// use tool_runtime::agent::Conversation;
/// use tool_runtime::provider::{Api, Request};
/// use tool_runtime::testing::{PrefixCheck, TestModelError};
///
/// let request = Request::new("m").system("Be brief.");
/// let mut check = PrefixCheck::new(Api::ANTHROPIC);
/// let mut conversation = Conversation::new(Api::ANTHROPIC);
/// conversation.push_user("Hello");
/// check.request(&conversation.request(&request).unwrap()).unwrap();
/// conversation.push_user("And now?");
/// check.request(&conversation.request(&request).unwrap()).unwrap();
/// // A host that edits the system text breaks the conversation's start.
/// conversation.push_user("Again?");
/// let edited = request.clone().system("Be very brief.");
/// let refused = check.request(&conversation.request(&edited).unwrap()).unwrap_err();
/// assert!(matches!(refused, TestModelError::PrefixChanged { ref path, .. } if path.starts_with("system")));
/// ```
pub struct PrefixCheck {
    api: Api,
    /// The start of the last request, as the API binds it ([`Prefix`]).
    last: Option<Prefix>,
    /// Where the last response's turn goes in the conversation's list, and the turn as the
    /// provider sends it back: the next request must hold it exactly so.
    echo: Option<(usize, Vec<Value>)>,
    /// Bytes of each request's start that the next request of its conversation repeated, and
    /// the bytes of those starts in all.
    kept: (u64, u64),
    /// Requests that change the start of their conversation pass (and are measured).
    changes_allowed: bool,
}

/// What the check saw of a request: the bytes of its start, those a provider's cache would
/// hold from the request before it, and whether it marked its start for caching.
struct Seen {
    start: u64,
    cached: u64,
    marked: bool,
}

impl fmt::Debug for PrefixCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PrefixCheck")
            .field("api", &self.api)
            .field("kept", &self.kept())
            .finish_non_exhaustive()
    }
}

impl PrefixCheck {
    /// A check of `api`'s requests, before the first.
    pub fn new(api: Api) -> Self {
        PrefixCheck {
            api,
            last: None,
            echo: None,
            kept: (0, 0),
            changes_allowed: false,
        }
    }

    /// The check that lets a changed start pass (it still measures [`kept`](Self::kept)).
    pub fn allowing_changes(mut self) -> Self {
        self.changes_allowed = true;
        self
    }

    /// Checks the next request: [`TestModelError::PrefixChanged`] with the first JSON path
    /// where it does not extend the last request of its conversation, or where the model's
    /// last turn ([`response`](Self::response)) did not come back as it was. A request with no
    /// more messages than the last starts a conversation of its own. A refused request is
    /// forgotten: the next is checked against the last one that passed.
    pub fn request(&mut self, request: &HttpRequest) -> Result<(), TestModelError> {
        self.check(request).map(drop)
    }

    /// Notes the response the last request got, whole (unstreamed, or a stream assembled): the
    /// next request must send its model turn back exactly as the API returned it (thinking
    /// with empty text and signatures, every block, in order).
    pub fn response(&mut self, response: &Value) {
        let provider = self.api.provider();
        let Some(listed) = self.last.as_ref().map(|p| p.list.1.len()) else {
            return;
        };
        if let Ok((_, append)) = provider.read_calls(response)
            && let Ok(echo) = provider.request(&Request::new("echo"), &append)
        {
            self.echo = Some((listed, Prefix::of(self.api, &echo.body).list.1));
        }
    }

    /// The share of each request's start (the members [`Provider::prefix_members`] names,
    /// cache marks aside) that the next request of the same conversation repeated as its own
    /// start, over every request so far: 1 for conversations that only append.
    ///
    /// [`Provider::prefix_members`]: crate::provider::Provider::prefix_members
    pub fn kept(&self) -> f64 {
        let (kept, total) = self.kept;
        if total == 0 {
            1.0
        } else {
            kept as f64 / total as f64
        }
    }

    fn check(&mut self, request: &HttpRequest) -> Result<Seen, TestModelError> {
        let prefix = Prefix::of(self.api, &request.body);
        let echo = self.echo.take();
        let mut cached = 0;
        if let Some(last) = self.last.take()
            && prefix.continues(&last)
        {
            let (kept, total) = last.repeated_by(&prefix);
            self.kept.0 += kept;
            self.kept.1 += total;
            // What a cache holds of the last request: all of it where the API caches by
            // itself, up to its mark where it caches only what a request marks.
            if !needs_marks(self.api) || last.marked {
                cached = kept;
            }
            let change = last
                .change_to(&prefix)
                .or_else(|| echo.and_then(|(at, turn)| prefix.echoes(at, &turn)));
            if let (Some(change), false) = (change, self.changes_allowed) {
                self.last = Some(last);
                return Err(change);
            }
        }
        let seen = Seen {
            start: prefix.bytes().len() as u64,
            cached,
            marked: prefix.marked,
        };
        self.last = Some(prefix);
        Ok(seen)
    }
}

/// The start of a request as its API binds it: each member [`Provider::prefix_members`] names,
/// cache marks taken out (the providers ignore them for this), the last one the list each
/// request of a conversation appends to.
///
/// [`Provider::prefix_members`]: crate::provider::Provider::prefix_members
struct Prefix {
    /// Whether the request marked its start for caching.
    marked: bool,
    /// The members written once per conversation, by path.
    fixed: Vec<(&'static str, Value)>,
    /// The list's path and items.
    list: (&'static str, Vec<Value>),
}

impl Prefix {
    fn of(api: Api, body: &Value) -> Prefix {
        let members = api.provider().prefix_members();
        let at = |path: &str| {
            let mut value = path
                .split('.')
                .try_fold(body, |v, k| v.get(k))
                .cloned()
                .unwrap_or(Value::Null);
            unmarked(&mut value);
            value
        };
        let (last, fixed) = members.split_last().unwrap_or((&"messages", &[]));
        let items = match at(last) {
            Value::Array(items) => items,
            Value::Null => Vec::new(),
            other => vec![other],
        };
        Prefix {
            marked: marked(body),
            fixed: fixed.iter().map(|p| (*p, at(p))).collect(),
            list: (last, items),
        }
    }

    /// Whether this request goes on the conversation of `last` (a longer list); a request with
    /// no more items than the last starts a conversation of its own.
    fn continues(&self, last: &Prefix) -> bool {
        self.list.1.len() > last.list.1.len()
    }

    /// The start as bytes: each fixed member, then each item, as compact JSON.
    fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for (path, value) in &self.fixed {
            out.extend_from_slice(path.as_bytes());
            out.push(b'=');
            out.extend_from_slice(value.to_string().as_bytes());
            out.push(b'\n');
        }
        for item in &self.list.1 {
            out.extend_from_slice(item.to_string().as_bytes());
            out.push(b'\n');
        }
        out
    }

    /// How many bytes of this start `next` repeats as its own start, of how many.
    fn repeated_by(&self, next: &Prefix) -> (u64, u64) {
        let (a, b) = (self.bytes(), next.bytes());
        let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
        (common as u64, a.len() as u64)
    }

    /// Whether the model's `turn`, which went at position `at` of the list, comes back there
    /// exactly as the API returned it (thinking with empty text, signatures, every block).
    fn echoes(&self, at: usize, turn: &[Value]) -> Option<TestModelError> {
        let (path, items) = &self.list;
        for (i, written) in turn.iter().enumerate() {
            let mut written = written.clone();
            without_nulls(&mut written);
            let mut sent = items.get(at + i).cloned().unwrap_or(Value::Null);
            without_nulls(&mut sent);
            let sent = &sent;
            let place = format!("{path}[{}]", at + i);
            if let Some((at, was, now)) = first_difference(&written, sent, place) {
                return Some(TestModelError::PrefixChanged { path: at, was, now });
            }
        }
        None
    }

    /// The first place where `next` does not extend this start, as the refusal a provider
    /// would give.
    fn change_to(&self, next: &Prefix) -> Option<TestModelError> {
        for ((path, before), (_, after)) in self.fixed.iter().zip(&next.fixed) {
            if let Some((at, was, now)) = first_difference(before, after, path.to_string()) {
                return Some(TestModelError::PrefixChanged { path: at, was, now });
            }
        }
        let (path, items) = &self.list;
        for (i, before) in items.iter().enumerate() {
            let after = next.list.1.get(i).unwrap_or(&Value::Null);
            if let Some((at, was, now)) = first_difference(before, after, format!("{path}[{i}]")) {
                return Some(TestModelError::PrefixChanged { path: at, was, now });
            }
        }
        None
    }
}

/// Whether the API caches only what a request marks (Anthropic, Bedrock); the others cache
/// every request's start by themselves.
fn needs_marks(api: Api) -> bool {
    api == Api::ANTHROPIC || api == Api::BEDROCK_CONVERSE
}

/// Whether `value` holds a cache mark (Anthropic's `cache_control`, Bedrock's `cachePoint`).
fn marked(value: &Value) -> bool {
    match value {
        Value::Object(members) => {
            members.contains_key("cache_control")
                || members.contains_key("cachePoint")
                || members.values().any(marked)
        }
        Value::Array(items) => items.iter().any(marked),
        _ => false,
    }
}

/// Bytes as tokens, at about four bytes a token.
fn tokens_of(bytes: u64) -> u64 {
    bytes.div_ceil(BYTES_PER_TOKEN)
}

/// About how many bytes of JSON and English make a token.
const BYTES_PER_TOKEN: u64 = 4;

/// The usage a test model reports for `turn`, answering the request the check `saw`.
fn estimated_usage(api: Api, seen: &Seen, turn: &Turn) -> TurnUsage {
    let input = tokens_of(seen.start);
    let read = (seen.cached / BYTES_PER_TOKEN).min(input);
    let write = if needs_marks(api) && seen.marked {
        input - read
    } else {
        0
    };
    let written = turn.text.as_deref().map_or(0, str::len)
        + turn.thinking.as_deref().map_or(0, str::len)
        + turn
            .calls
            .iter()
            .map(|c| c.name.len() + c.arguments.as_text().len())
            .sum::<usize>();
    TurnUsage::new(input, tokens_of(written as u64).max(1)).cached(read, write)
}

/// `value` without members whose value is `null` (an API writes a member it has nothing for
/// as `null` or leaves it out, streamed or not).
fn without_nulls(value: &mut Value) {
    match value {
        Value::Object(members) => {
            members.retain(|_, v| !v.is_null());
            members.values_mut().for_each(without_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(without_nulls),
        _ => {}
    }
}

/// `value` without cache marks: Anthropic's `cache_control`, OpenAI's `prompt_cache_breakpoint`,
/// Bedrock's `cachePoint` blocks.
fn unmarked(value: &mut Value) {
    match value {
        Value::Object(members) => {
            members.remove("cache_control");
            members.remove("prompt_cache_breakpoint");
            members.values_mut().for_each(unmarked);
        }
        Value::Array(items) => {
            items.retain(|i| {
                !(i.get("cachePoint").is_some() && i.as_object().is_some_and(|o| o.len() == 1))
            });
            items.iter_mut().for_each(unmarked);
        }
        _ => {}
    }
}

/// The first path (in `before`'s order) where `after` differs from `before`, with the value
/// each has there (compact JSON, cut to 120 characters).
fn first_difference(
    before: &Value,
    after: &Value,
    path: String,
) -> Option<(String, String, String)> {
    match (before, after) {
        (Value::Object(b), Value::Object(a)) => {
            for (key, value) in b {
                let inner = format!("{path}.{key}");
                match a.get(key) {
                    Some(other) => {
                        if let Some(found) = first_difference(value, other, inner) {
                            return Some(found);
                        }
                    }
                    None => return Some((inner, shown(value), "absent".into())),
                }
            }
            a.keys()
                .find(|k| !b.contains_key(*k))
                .map(|k| (format!("{path}.{k}"), "absent".into(), shown(&a[k])))
        }
        (Value::Array(b), Value::Array(a)) => {
            for (i, value) in b.iter().enumerate() {
                let inner = format!("{path}[{i}]");
                match a.get(i) {
                    Some(other) => {
                        if let Some(found) = first_difference(value, other, inner) {
                            return Some(found);
                        }
                    }
                    None => return Some((inner, shown(value), "absent".into())),
                }
            }
            (a.len() > b.len()).then(|| {
                (
                    format!("{path}[{}]", b.len()),
                    "absent".into(),
                    shown(&a[b.len()]),
                )
            })
        }
        (b, a) if b == a => None,
        (Value::Null, a) => Some((path, "absent".into(), shown(a))),
        (b, Value::Null) => Some((path, shown(b), "absent".into())),
        (b, a) => Some((path, shown(b), shown(a))),
    }
}

/// A value as compact JSON, cut to 120 characters.
fn shown(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(120) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// Each model turn's calls answered by the next message, once each, in order, by id.
fn check_answers(messages: &[Message]) -> Result<(), TestModelError> {
    for (at, message) in messages.iter().enumerate() {
        let Message::Model { calls, .. } = message else {
            continue;
        };
        if calls.is_empty() {
            continue;
        }
        let expected: Vec<Option<String>> = calls.iter().map(|c| c.id.clone()).collect();
        let answered: Vec<Option<String>> = match messages.get(at + 1) {
            Some(Message::Results(results)) => results.iter().map(|r| r.call_id.clone()).collect(),
            _ => Vec::new(),
        };
        if answered != expected {
            return Err(TestModelError::Unanswered {
                turn: at,
                expected,
                answered,
            });
        }
    }
    Ok(())
}

/// Why a test model did not answer a request: the request is not what the API takes, or not
/// what an agent should send.
#[derive(Debug)]
#[non_exhaustive]
pub enum TestModelError {
    /// The conversation could not be written as a request.
    Request(RequestError),
    /// The request could not be read back in the model's API.
    Unreadable(ReadError),
    /// The request asks for a stream and was answered whole, or the other way round.
    Stream {
        /// Whether the request asks for a stream.
        asked: bool,
        /// Whether it was answered as a stream.
        answered: bool,
    },
    /// A model turn's calls are not answered by the next message, once each, in order.
    Unanswered {
        /// The model turn's position in the conversation.
        turn: usize,
        /// The ids of its calls.
        expected: Vec<Option<String>>,
        /// The ids the next message answers.
        answered: Vec<Option<String>>,
    },
    /// The script has no turn for this request.
    ScriptEnded {
        /// The requests sent, this one included.
        requests: usize,
    },
    /// The API's provider does not write responses.
    Unsupported {
        /// The API.
        api: Api,
    },
    /// The request does not extend the last request of its conversation: something before the
    /// new messages changed, which a provider that caches the conversation's start re-bills
    /// whole and Anthropic refuses once thinking is bound to it (a 400: "Invalid `signature`
    /// in `thinking` block. The block is bound to a different conversation").
    PrefixChanged {
        /// The first JSON path that differs (`tools[2].name`, `messages[3].content[0]`).
        path: String,
        /// What the last request had there (compact JSON, or `absent`).
        was: String,
        /// What this one has.
        now: String,
    },
}

impl fmt::Display for TestModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TestModelError::Request(_) => {
                f.write_str("the conversation could not be written as a request")
            }
            TestModelError::Unreadable(_) => {
                f.write_str("the request is not in the model's API format")
            }
            TestModelError::Stream { asked, .. } => write!(
                f,
                "the request {} a stream but was answered {}",
                if *asked {
                    "asks for"
                } else {
                    "does not ask for"
                },
                if *asked { "whole" } else { "as a stream" },
            ),
            TestModelError::Unanswered {
                turn,
                expected,
                answered,
            } => write!(
                f,
                "the calls of the model's turn at message {turn} ({expected:?}) are answered by {answered:?}, not once each in order"
            ),
            TestModelError::ScriptEnded { requests } => {
                write!(f, "request {requests} came after the script's last turn")
            }
            TestModelError::Unsupported { api } => {
                write!(f, "the {api} provider does not write responses")
            }
            TestModelError::PrefixChanged { path, was, now } => write!(
                f,
                "{path}: the request does not extend the previous one of its conversation (was {was}, now {now}); its start changed, which a provider's cache re-bills and Anthropic refuses once thinking is bound to it"
            ),
        }
    }
}

impl std::error::Error for TestModelError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TestModelError::Request(e) => Some(e),
            TestModelError::Unreadable(e) => Some(e),
            _ => None,
        }
    }
}

/// The behaviour every [`ApprovalStore`](crate::approval::ApprovalStore) must have, checked on one: a held
/// call is handed out once (also to many takers at once, and through another handle on the
/// same store, as another process or replica would take it); an unknown ticket is nothing; a
/// call past its expiry is not handed out, and [`forget_expired`](crate::approval::ApprovalStore::forget_expired)
/// forgets it (a store must implement it to pass); one owner cannot hold more than `per_owner` calls
/// (its oldest are forgotten, nobody else's). `open` gives a handle on the store under test,
/// opened with `per_owner` as its bound; every call gives one on the same data. Tickets and
/// owners are fresh, so stores that other tests share are fine. Panics, naming the rule, when
/// the store breaks one.
///
/// ```
/// # pollster::block_on(async {
/// use std::sync::Arc;
/// use tool_runtime::{ApprovalStore, MemoryApprovals};
/// let store = Arc::new(MemoryApprovals::new().per_owner(5));
/// tool_runtime::testing::approval_store_suite(|| store.clone() as Arc<dyn ApprovalStore>, 5).await;
/// # });
/// ```
pub async fn approval_store_suite<F>(open: F, per_owner: usize)
where
    F: Fn() -> std::sync::Arc<dyn crate::approval::ApprovalStore>,
{
    use crate::approval::{PendingCall, new_ticket, unix_now};
    let fresh = || new_ticket().expect("a ticket");
    let store = open();

    // Held, then handed out once, with the arguments it was held with.
    let call = PendingCall::new(
        fresh(),
        "hapus-draf",
        serde_json::json!({"id": 7, "teks": "ä"}),
    )
    .with_owner(Some(format!("sub:{}", fresh())));
    store.hold(call.clone()).await.expect("held");
    let taken = store.take(&call.ticket).await.expect("taken");
    assert_eq!(
        taken.as_ref().map(|c| (&c.ticket, &c.tool, &c.arguments)),
        Some((&call.ticket, &call.tool, &call.arguments)),
        "a held call is handed out as held"
    );
    assert_eq!(
        store.take(&call.ticket).await.expect("taken"),
        None,
        "a held call is handed out once"
    );
    assert_eq!(
        store.take(&fresh()).await.expect("taken"),
        None,
        "an unknown ticket is nothing"
    );

    // Through another handle on the same store (another process, another replica).
    let call = PendingCall::new(fresh(), "hapus-draf", serde_json::json!({}));
    store.hold(call.clone()).await.expect("held");
    let other = open();
    assert!(
        other.take(&call.ticket).await.expect("taken").is_some(),
        "another handle takes it"
    );
    assert!(
        store.take(&call.ticket).await.expect("taken").is_none(),
        "and then nobody"
    );

    // Many takers at once: one gets it.
    let call = PendingCall::new(fresh(), "hapus-draf", serde_json::json!({}));
    store.hold(call.clone()).await.expect("held");
    let handles: Vec<_> = (0..8).map(|_| open()).collect();
    let takes = handles.iter().map(|h| h.take(&call.ticket));
    let got = futures_util::future::join_all(takes).await;
    let handed = got.into_iter().filter(|t| matches!(t, Ok(Some(_)))).count();
    assert_eq!(handed, 1, "eight takers at once: one gets the call");

    // A call past its own expiry is not handed out.
    let expired = PendingCall::new(fresh(), "hapus-draf", serde_json::json!({}))
        .with_expiry(Some(unix_now().saturating_sub(1)));
    store.hold(expired.clone()).await.expect("held");
    assert!(
        store.take(&expired.ticket).await.expect("taken").is_none(),
        "an expired call is not handed out"
    );

    // Expired calls are forgotten when asked, the others kept.
    // (It expires after it is held: a hold may itself forget calls already expired.)
    let expires_at = unix_now() + 1;
    let expiring = PendingCall::new(fresh(), "hapus-draf", serde_json::json!({}))
        .with_expiry(Some(expires_at));
    let live = PendingCall::new(fresh(), "hapus-draf", serde_json::json!({}));
    store.hold(expiring).await.expect("held");
    store.hold(live.clone()).await.expect("held");
    while unix_now() < expires_at {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let forgot = store.forget_expired().await.expect("forgotten");
    assert!(
        forgot >= 1,
        "forget_expired forgets an expired call (forgot {forgot})"
    );
    assert!(
        store.take(&live.ticket).await.expect("taken").is_some(),
        "forget_expired keeps a call that has not expired"
    );

    // One owner holds at most `per_owner`: its oldest go, another owner's stay.
    let (mallory, sari) = (
        format!("sub:mallory-{}", fresh()),
        format!("sub:sari-{}", fresh()),
    );
    let theirs = PendingCall::new(fresh(), "pesan", serde_json::json!({})).with_owner(Some(sari));
    store.hold(theirs.clone()).await.expect("held");
    let tickets: Vec<String> = (0..per_owner + 3).map(|_| fresh()).collect();
    for ticket in &tickets {
        let call = PendingCall::new(ticket.clone(), "pesan", serde_json::json!({}))
            .with_owner(Some(mallory.clone()));
        store.hold(call).await.expect("held");
    }
    for (n, ticket) in tickets.iter().enumerate() {
        let kept = store.take(ticket).await.expect("taken").is_some();
        assert_eq!(
            kept,
            n >= 3,
            "call {n} of one owner past the bound of {per_owner}: only the newest {per_owner} are kept"
        );
    }
    assert!(
        store.take(&theirs.ticket).await.expect("taken").is_some(),
        "another owner's call is kept"
    );
}

/// The behaviour every [`TaskStore`](crate::task::TaskStore) must have under the rules of
/// [`Tasks`](crate::task::Tasks), checked on one: a task is its owner's only; one replica runs it
/// (another cannot renew or finish it); of many replicas answering a task that waits, one takes
/// it, with its ticket; a cancelled task stops its runner and drops a late outcome; a finished
/// task keeps its outcome and cannot be cancelled; a task whose runner stopped renewing is
/// marked failed by the next reader; an expired task is unknown and forgotten; one owner has at
/// most two tasks (the suite's bound) running or waiting, and a finished one makes room; the
/// tasks waiting for input are listed ([`TaskStore::waiting`](crate::task::TaskStore::waiting),
/// which a store must implement to pass), longest waiting first, with what they hold, and a
/// task no longer waiting is not. `open` gives a handle on the store under test; every call gives one
/// on the same data (another process, another replica). Owners are fresh, so stores that other
/// tests share are fine. Panics, naming the rule, when the store breaks one.
///
/// ```
/// # pollster::block_on(async {
/// use std::sync::Arc;
/// use tool_runtime::task::{MemoryTasks, TaskStore};
/// let store = Arc::new(MemoryTasks::new());
/// tool_runtime::testing::task_store_suite(|| store.clone() as Arc<dyn TaskStore>).await;
/// # });
/// ```
pub async fn task_store_suite<F>(open: F)
where
    F: Fn() -> std::sync::Arc<dyn crate::task::TaskStore>,
{
    use crate::approval::new_ticket;
    use crate::task::{Cancel, Claim, TaskError, TaskStatus, Tasks, unix_now_ms};
    use std::time::Duration;
    let fresh = || format!("sub:{}", new_ticket().expect("a ticket"));
    let replica = || Tasks::shared(open()).with_lease(Duration::from_secs(30));
    let (a, b) = (replica(), replica());
    let (sari, budi) = (fresh(), fresh());

    // Made on A, found on B by its owner only.
    let caller = serde_json::json!({"principal": {"subject": sari}});
    let task = a
        .start(&sari, Some(caller.clone()), "ajukan-cuti")
        .await
        .expect("started");
    assert_eq!(task.status, TaskStatus::Working);
    let found = b.get(&task.id, &sari).await.expect("read");
    assert_eq!(
        found.as_ref().map(|t| (&t.id, t.status)),
        Some((&task.id, TaskStatus::Working)),
        "another replica finds the task"
    );
    assert!(
        b.get(&task.id, &budi).await.expect("read").is_none(),
        "another owner's task is unknown"
    );
    assert!(
        b.get(&fresh(), &sari).await.expect("read").is_none(),
        "an unknown id is nothing"
    );

    // Only its runner renews or finishes it.
    assert!(
        a.renew(&task.id).await.expect("renewed"),
        "the runner renews its lease"
    );
    assert!(
        !b.renew(&task.id).await.expect("renewed"),
        "another replica does not hold the lease"
    );
    assert!(
        !b.finish(
            &task.id,
            TaskStatus::Completed,
            serde_json::json!({"x": 1}),
            None
        )
        .await
        .expect("finished"),
        "another replica cannot finish it"
    );

    // Waiting for an approval: eight replicas answer at once, one takes it with the ticket.
    let arguments = serde_json::json!({"hari": 2});
    assert!(
        a.wait_for_input(
            &task.id,
            serde_json::json!({"approval": {}}),
            crate::task::Held::approval("t-1".into(), arguments.clone()),
            None
        )
        .await
        .expect("waits")
    );
    let waiting = b.get(&task.id, &sari).await.expect("read").expect("kept");
    assert_eq!(
        (waiting.status, waiting.input.clone()),
        (
            TaskStatus::InputRequired,
            Some(serde_json::json!({"approval": {}}))
        )
    );
    // Whoever approves other people's calls finds it on any replica, with what it holds (a
    // store may hold other tests' tasks: only this suite's owners are looked at).
    let later = a.start(&budi, None, "ajukan-cuti").await.expect("started");
    std::thread::sleep(Duration::from_millis(2));
    assert!(
        a.wait_for_input(
            &later.id,
            serde_json::json!({}),
            crate::task::Held::approval("t-2".into(), serde_json::json!({})),
            None
        )
        .await
        .expect("waits")
    );
    // Waiting for answers to its questions, or another tool's approval: not listed.
    let (mut others, carol) = (Vec::new(), fresh());
    for tool in ["ajukan-cuti", "ekspor-gaji"] {
        let other = a.start(&carol, None, tool).await.expect("started");
        let held = if tool == "ajukan-cuti" {
            crate::task::Held::questions(serde_json::json!({}), serde_json::json!({}))
        } else {
            crate::task::Held::approval("t-3".into(), serde_json::json!({}))
        };
        assert!(
            a.wait_for_input(&other.id, serde_json::json!({"q": {}}), held, None)
                .await
                .expect("waits")
        );
        others.push(other.id);
    }
    let approved_here = ["ajukan-cuti".to_owned()];
    let ours = |all: Vec<crate::task::TaskRecord>| {
        all.into_iter()
            .filter(|t| [&sari, &budi, &carol].contains(&&t.owner))
            .map(|t| (t.id, t.caller, t.arguments))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        ours(b.waiting(&approved_here, 10_000).await.expect("listed")),
        vec![
            (task.id.clone(), Some(caller.clone()), Some(arguments)),
            (later.id.clone(), None, Some(serde_json::json!({}))),
        ],
        "the tasks waiting for input, longest waiting first, with their owner and arguments"
    );
    for other in &others {
        a.cancel(other, &carol).await.expect("cancelled");
    }
    assert_eq!(
        b.waiting_task(&task.id)
            .await
            .expect("read")
            .map(|t| t.owner),
        Some(sari.clone()),
        "a waiting task is found whoever asks"
    );
    assert!(
        b.waiting_task(&fresh()).await.expect("read").is_none(),
        "an unknown id is nothing"
    );
    b.cancel(&later.id, &budi).await.expect("cancelled");
    assert!(
        matches!(
            b.claim(&task.id, &budi).await.expect("claimed"),
            Claim::Unknown
        ),
        "another owner cannot answer it"
    );
    let replicas: Vec<Tasks> = (0..8).map(|_| replica()).collect();
    let claims =
        futures_util::future::join_all(replicas.iter().map(|r| r.claim(&task.id, &sari))).await;
    let mut winners = Vec::new();
    for (i, c) in claims.into_iter().enumerate() {
        if let Claim::Won { task, ticket } = c.expect("claimed") {
            assert_eq!(
                ticket.as_deref(),
                Some("t-1"),
                "the winner gets the held ticket"
            );
            assert_eq!(task.status, TaskStatus::Working);
            winners.push(i);
        }
    }
    assert_eq!(
        winners.len(),
        1,
        "eight answers at once: one takes the task"
    );
    assert!(
        ours(b.waiting(&approved_here, 10_000).await.expect("listed")).is_empty(),
        "a task taken or cancelled waits no more"
    );
    assert!(
        b.waiting_task(&task.id).await.expect("read").is_none(),
        "a task taken is no longer waiting"
    );
    let winner = &replicas[winners[0]];
    assert!(
        !a.renew(&task.id).await.expect("renewed"),
        "the first runner no longer runs it"
    );
    assert!(
        winner
            .finish(
                &task.id,
                TaskStatus::Completed,
                serde_json::json!({"ok": true}),
                None
            )
            .await
            .expect("finished")
    );
    let done = a.get(&task.id, &sari).await.expect("read").expect("kept");
    assert_eq!(
        (done.status, done.outcome.clone()),
        (TaskStatus::Completed, Some(serde_json::json!({"ok": true}))),
        "the outcome is kept"
    );
    let finished = b
        .cancel(&task.id, &sari)
        .await
        .expect("cancelled")
        .expect("known");
    assert!(
        matches!(&finished, Cancel::Finished(t) if t.status == TaskStatus::Completed),
        "a finished task cannot be cancelled: {finished:?}"
    );

    // Cancelled while running: the runner's renewal fails and its late outcome is dropped.
    let task = a.start(&sari, None, "ekspor-gaji").await.expect("started");
    assert!(
        b.cancel(&task.id, &budi)
            .await
            .expect("cancelled")
            .is_none(),
        "another owner cannot cancel it"
    );
    let stopped = b
        .cancel(&task.id, &sari)
        .await
        .expect("cancelled")
        .expect("known");
    assert_eq!(
        stopped,
        Cancel::Stopped {
            held: None,
            was_running: true
        }
    );
    assert!(
        !a.renew(&task.id).await.expect("renewed"),
        "a cancelled task's runner is told to stop"
    );
    assert!(
        !a.commit(&task.id).await.expect("decided"),
        "its tool is refused at its commit point"
    );
    assert!(
        !a.finish(&task.id, TaskStatus::Completed, serde_json::json!({}), None)
            .await
            .expect("finished"),
        "a late outcome is dropped"
    );
    assert_eq!(
        a.get(&task.id, &sari)
            .await
            .expect("read")
            .expect("kept")
            .status,
        TaskStatus::Cancelled
    );

    // Its tool committed first: a cancel on another replica loses, and the task ends with
    // what the tool did.
    let task = a.start(&sari, None, "ekspor-gaji").await.expect("started");
    assert!(a.begin(&task.id, false).await.expect("begun"));
    assert!(
        a.commit(&task.id).await.expect("decided"),
        "no cancel came first"
    );
    let late = b
        .cancel(&task.id, &sari)
        .await
        .expect("cancelled")
        .expect("known");
    let Cancel::TooLate(still) = &late else {
        panic!("a committed task goes on: {late:?}")
    };
    assert_eq!(still.status, TaskStatus::Working);
    assert_eq!(still.message.as_deref(), Some(crate::task::CANCEL_TOO_LATE));
    assert!(a.renew(&task.id).await.expect("renewed"), "it still runs");
    assert!(
        a.finish(
            &task.id,
            TaskStatus::Completed,
            serde_json::json!({"done": 1}),
            None
        )
        .await
        .expect("finished")
    );
    assert_eq!(
        b.get(&task.id, &sari)
            .await
            .expect("read")
            .expect("kept")
            .status,
        TaskStatus::Completed,
        "it says what the tool did"
    );
    // A tool committed from its start: a cancel before it started wins (it never starts).
    let task = a.start(&sari, None, "ekspor-gaji").await.expect("started");
    assert!(matches!(
        b.cancel(&task.id, &sari).await.expect("cancelled"),
        Some(Cancel::Stopped { .. })
    ));
    assert!(
        !a.begin(&task.id, true).await.expect("begun"),
        "a cancelled task's tool never starts"
    );
    let task = a.start(&sari, None, "ekspor-gaji").await.expect("started");
    assert!(a.begin(&task.id, true).await.expect("begun"));
    assert!(matches!(
        b.cancel(&task.id, &sari).await.expect("cancelled"),
        Some(Cancel::TooLate(_))
    ));

    // A runner that stops renewing: the next reader marks the task failed, once.
    let short = Tasks::shared(open()).with_lease(Duration::from_millis(300));
    let task = short
        .start(&sari, None, "ekspor-gaji")
        .await
        .expect("started");
    let store = open();
    let read_before = store.get(&task.id).await.expect("read").expect("kept");
    std::thread::sleep(Duration::from_millis(400));
    let lost = b.get(&task.id, &sari).await.expect("read").expect("kept");
    assert_eq!(
        (lost.status, lost.message.as_deref()),
        (TaskStatus::Failed, Some(crate::task::RUNNER_LOST)),
        "a task whose runner stopped is failed, with the reason"
    );
    // Marking it failed is a change like any other: a write over the version read before it
    // (a runner finishing just then) is refused.
    let mut late = read_before.clone();
    late.status = TaskStatus::Completed;
    late.version = read_before.version + 1;
    assert!(
        !store
            .replace(&late, read_before.version)
            .await
            .expect("replaced"),
        "a write over the version read before the task was marked failed"
    );
    assert!(
        !short
            .finish(&task.id, TaskStatus::Completed, serde_json::json!({}), None)
            .await
            .expect("finished"),
        "a runner back too late cannot finish it"
    );

    // A task is kept past its time to live while it runs. Approved near the end of it, its
    // tool runs on past it, and a new task's sweep of expired ones leaves it: the time to
    // live counts again from each change of its status.
    let brief = Tasks::shared(open())
        .with_ttl(Duration::from_secs(1))
        .with_lease(Duration::from_millis(300));
    let task = brief
        .start(&sari, None, "ajukan-cuti")
        .await
        .expect("started");
    assert!(
        brief
            .wait_for_input(
                &task.id,
                serde_json::json!({"approval": {}}),
                crate::task::Held::approval("t-late".into(), serde_json::json!({})),
                None
            )
            .await
            .expect("waits")
    );
    std::thread::sleep(Duration::from_millis(700));
    assert!(matches!(
        brief.claim(&task.id, &sari).await.expect("claimed"),
        Claim::Won { .. }
    ));
    std::thread::sleep(Duration::from_millis(500));
    a.start(&fresh(), None, "cek-sisa-cuti")
        .await
        .expect("started");
    assert!(
        brief.renew(&task.id).await.expect("renewed"),
        "a task approved near the end of its time to live runs on past it"
    );
    // And while its runner holds its lease, however short its time to live: renewed, it is
    // kept past the time to live it was made with.
    let long_run = Tasks::shared(open())
        .with_ttl(Duration::from_secs(1))
        .with_lease(Duration::from_secs(3));
    let task = long_run
        .start(&sari, None, "ekspor-gaji")
        .await
        .expect("started");
    std::thread::sleep(Duration::from_millis(1200));
    a.start(&fresh(), None, "cek-sisa-cuti")
        .await
        .expect("started");
    assert_eq!(
        b.get(&task.id, &sari)
            .await
            .expect("read")
            .map(|t| t.status),
        Some(TaskStatus::Working),
        "a task whose runner holds its lease is kept past its time to live"
    );
    assert!(long_run.renew(&task.id).await.expect("renewed"));

    // Past its time to live: unknown, then forgotten.
    let store = open();
    let now = unix_now_ms();
    let mut old = a.start(&sari, None, "ajukan-cuti").await.expect("started");
    old.expires_ms = now.saturating_sub(1);
    old.version += 1;
    assert!(
        store
            .replace(&old, old.version - 1)
            .await
            .expect("replaced"),
        "replaced over the version read"
    );
    assert!(
        !store
            .replace(&old, old.version - 1)
            .await
            .expect("replaced"),
        "a second replace over the same version fails"
    );
    assert!(
        a.get(&old.id, &sari).await.expect("read").is_none(),
        "an expired task is unknown"
    );
    assert!(
        store
            .forget_expired(unix_now_ms())
            .await
            .expect("forgotten")
            >= 1,
        "an expired task is forgotten"
    );
    assert!(store.get(&old.id).await.expect("read").is_none());

    // A tool's own questions: answered one at a time, on any replica; the last answer takes
    // the task once, however many arrive at once, with every answer and the arguments.
    let asks = a.start(&sari, None, "multi_input").await.expect("started");
    let questions = serde_json::json!({"name": {"q": 1}, "color": {"q": 2}});
    assert!(
        a.wait_for_input(
            &asks.id,
            questions,
            crate::task::Held::questions(serde_json::json!({"n": 1}), serde_json::json!({})),
            None
        )
        .await
        .expect("waits")
    );
    let answer = |key: &str| {
        let mut m = serde_json::Map::new();
        m.insert(
            key.into(),
            serde_json::json!({"action": "accept", "content": {"v": key}}),
        );
        m
    };
    assert!(
        matches!(
            b.answer(&asks.id, &budi, &answer("name"))
                .await
                .expect("answered"),
            crate::task::Answered::Unknown
        ),
        "another owner cannot answer it"
    );
    assert!(
        matches!(
            b.answer(&asks.id, &sari, &answer("unasked"))
                .await
                .expect("answered"),
            crate::task::Answered::NotWaiting
        ),
        "an answer to a question it does not ask changes nothing"
    );
    assert!(matches!(
        b.answer(&asks.id, &sari, &answer("name"))
            .await
            .expect("answered"),
        crate::task::Answered::Partial
    ));
    let partial = a.get(&asks.id, &sari).await.expect("read").expect("kept");
    assert_eq!(
        (partial.status, partial.input.clone()),
        (
            TaskStatus::InputRequired,
            Some(serde_json::json!({"color": {"q": 2}}))
        ),
        "only the unanswered question is left"
    );
    let replicas: Vec<Tasks> = (0..8).map(|_| replica()).collect();
    let last = answer("color");
    let answers =
        futures_util::future::join_all(replicas.iter().map(|r| r.answer(&asks.id, &sari, &last)))
            .await;
    let mut complete = Vec::new();
    for a in answers {
        if let crate::task::Answered::Complete {
            task,
            arguments,
            answers,
        } = a.expect("answered")
        {
            assert_eq!(task.status, TaskStatus::Working);
            assert_eq!(arguments, serde_json::json!({"n": 1}));
            assert_eq!(
                answers,
                serde_json::json!({
                    "name": {"action": "accept", "content": {"v": "name"}},
                    "color": {"action": "accept", "content": {"v": "color"}},
                }),
                "every answer, kept across replicas"
            );
            complete.push(task.id);
        }
    }
    assert_eq!(complete.len(), 1, "eight last answers at once: one runs it");

    // One owner has at most `per_owner` tasks; another owner is not affected; a finished task
    // makes room (the one that expires first), a running one never does.
    let bounded = Tasks::shared(open()).with_per_owner(2);
    let mallory = fresh();
    let mut running = Vec::new();
    for _ in 0..2 {
        running.push(
            bounded
                .start(&mallory, None, "ekspor-gaji")
                .await
                .expect("started"),
        );
    }
    assert!(
        matches!(
            bounded.start(&mallory, None, "ekspor-gaji").await,
            Err(TaskError::TooMany { per_owner: 2 })
        ),
        "a third running task of one owner is refused"
    );
    bounded
        .start(&budi, None, "ekspor-gaji")
        .await
        .expect("another owner starts one");
    assert!(
        bounded
            .finish(
                &running[0].id,
                TaskStatus::Completed,
                serde_json::json!({}),
                None
            )
            .await
            .expect("finished")
    );
    bounded
        .start(&mallory, None, "ekspor-gaji")
        .await
        .expect("a finished task makes room");
    assert!(
        bounded
            .get(&running[0].id, &mallory)
            .await
            .expect("read")
            .is_none(),
        "the finished task was forgotten to make room"
    );
    assert!(
        bounded
            .get(&running[1].id, &mallory)
            .await
            .expect("read")
            .is_some(),
        "the running one was kept"
    );

    // Cut results' wholes: kept for their owner only, read on any replica, within the bounds.
    let bounds = crate::task::KeptBounds {
        most: 6,
        most_each: 3,
        most_bytes: 100,
    };
    let kept_a = Tasks::shared(open()).with_kept_results(Duration::from_secs(60), bounds);
    let kept_b = Tasks::shared(open()).with_kept_results(Duration::from_secs(60), bounds);
    let [ana, ben, cy, dee] = [0; 4].map(|_| fresh());
    let keep = |tasks: &Tasks, owner: &str, text: &str| {
        let (tasks, owner, text) = (tasks.clone(), owner.to_owned(), text.to_owned());
        async move { tasks.keep_result(&owner, &text).await.expect("kept") }
    };
    let read = |tasks: &Tasks, id: &str, owner: &str| {
        let (tasks, id, owner) = (tasks.clone(), id.to_owned(), owner.to_owned());
        async move { tasks.kept_result(&id, &owner).await.expect("read") }
    };
    let first = keep(&kept_a, &ana, "the whole").await.expect("an id");
    assert_eq!(first.len(), 32, "128 random bits");
    assert_eq!(
        read(&kept_b, &first, &ana).await.as_deref(),
        Some("the whole"),
        "read back on another replica"
    );
    assert_eq!(
        read(&kept_b, &first, &ben).await,
        None,
        "another owner's is none"
    );
    assert_eq!(read(&kept_a, &fresh(), &ana).await, None);
    // At an owner's bound, its own oldest gives way, never another owner's.
    let bens = keep(&kept_a, &ben, "b0").await.expect("an id");
    for i in 0..3 {
        keep(&kept_b, &ana, &format!("a{i}")).await.expect("an id");
    }
    assert_eq!(read(&kept_a, &first, &ana).await, None, "three an owner");
    assert!(read(&kept_a, &bens, &ben).await.is_some());
    // Bytes: one larger than all may be is not kept; the oldest give way to a large one.
    assert_eq!(keep(&kept_a, &cy, &"x".repeat(101)).await, None);
    let big = keep(&kept_a, &cy, &"y".repeat(60)).await.expect("an id");
    let bigger = keep(&kept_b, &dee, &"z".repeat(60)).await.expect("an id");
    assert_eq!(read(&kept_a, &big, &cy).await, None, "at most 100 bytes");
    assert_eq!(
        read(&kept_a, &bigger, &dee).await.map(|t| t.len()),
        Some(60)
    );
    // Count: at most six, the oldest giving way.
    let owners = [0; 6].map(|_| fresh());
    let ids: Vec<String> = {
        let mut ids = Vec::new();
        for owner in &owners {
            ids.push(keep(&kept_a, owner, "s").await.expect("an id"));
        }
        ids
    };
    assert_eq!(read(&kept_a, &bigger, &dee).await, None, "at most six");
    for (id, owner) in ids.iter().zip(&owners) {
        assert!(
            read(&kept_b, id, owner).await.is_some(),
            "the newest six stay"
        );
    }
    // An expired result is none, and forgotten.
    let now = unix_now_ms();
    let expired = crate::task::KeptResult {
        id: fresh(),
        owner: ana.clone(),
        text: "old".into(),
        kept_ms: now - 10,
        expires_ms: now - 1,
    };
    let store = open();
    assert!(
        store
            .keep_result(&expired, crate::task::KeptBounds::DEFAULT)
            .await
            .expect("kept")
    );
    assert_eq!(read(&kept_a, &expired.id, &ana).await, None, "expired");
    assert!(store.forget_expired(now).await.expect("forgotten") >= 1);
    assert!(
        store
            .kept_result(&expired.id)
            .await
            .expect("read")
            .is_none()
    );
}
