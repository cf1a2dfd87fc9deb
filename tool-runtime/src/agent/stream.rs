//! The agent loop over streamed responses: events for the host as they happen, and each call
//! run as soon as its arguments are complete.

use std::collections::VecDeque;
use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context as TaskContext, Poll, Waker};

use futures_util::FutureExt;
use futures_util::stream::{FuturesUnordered, Stream, StreamExt};

use super::read::{ModelTurn, read_parts};
use super::run::{Outcome, over_budget, run_one};
use super::{Agent, AgentError, Conversation, Finished, Limit, Paused, Stopped, Usage, spans};
use crate::context::Context;
use crate::future::BoxFuture;
use crate::progress::{Progress, ProgressReport};
use crate::provider::{
    Api, Delta, ReadError, ResponseInfo, ResponseStream, StreamError, StreamEvent, ToolCall,
};
use tracing::Instrument as _;

/// What happens during a streamed run, in order. The last event is always [`Done`](AgentEvent::Done).
#[derive(Debug)]
#[non_exhaustive]
pub enum AgentEvent {
    /// A piece of the model's answer text.
    Text(String),
    /// A piece of the model's reasoning (thinking, reasoning summaries, thought parts).
    Thinking(String),
    /// A call started: its arguments were complete (the response may still be arriving).
    CallStarted(ToolCall),
    /// A running call reported progress ([`Progress`] in its context).
    Progress {
        /// The call's id (`None` where the provider gives none).
        call_id: Option<String>,
        /// The tool's name.
        name: String,
        /// How far it is.
        report: ProgressReport,
    },
    /// A call ended: its answer for the model, or [`Outcome::Waiting`] when it waits for a
    /// person's approval.
    CallFinished(Outcome),
    /// The run ended, as [`Agent::run`] would have returned.
    Done(Result<Finished, AgentError>),
}

/// The events of a streamed run ([`Agent::run_streamed`]). Dropping it stops the run: the
/// response being read is dropped and so are the calls still running (a dropped call never
/// reports success, and its [`Progress`] says it was cancelled). Calls of the
/// unfinished turn already held for approval are taken out of the store too, so no later
/// approval can run them: by a [`Job`](super::Job) given to
/// [`Agent::offload`](super::Agent::offload) (without one, dropping cannot wait for the store,
/// and they stay until they expire); [`cancel`](AgentStream::cancel) does it before it returns.
#[must_use = "a run does nothing until its events are polled"]
pub struct AgentStream<'a> {
    run: Option<BoxFuture<'a, Result<Finished, AgentError>>>,
    events: Events,
    tools: &'a crate::set::ToolSet,
    /// Where the held calls of a dropped run are rejected.
    offload: Option<fn(super::Job)>,
    /// `Done` was handed out: the stream has ended.
    ended: bool,
}

impl Drop for AgentStream<'_> {
    fn drop(&mut self) {
        let held = std::mem::take(&mut self.events.lock().held);
        let (false, Some(spawn)) = (held.is_empty(), self.offload) else {
            return;
        };
        let approvals = self.tools.approvals().clone();
        let job: super::Job = Box::new(move || {
            for ticket in held {
                let _ = pollster::block_on(approvals.take(&ticket));
            }
        });
        // A host's `spawn` that panics here (no runtime) must not abort a panicking thread.
        if !std::thread::panicking() {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| spawn(job)));
        }
    }
}

impl AgentStream<'_> {
    /// Stops the run: the response and the running calls are dropped, and the calls of the
    /// unfinished turn held for approval are taken out of the store. (After
    /// [`Done`](AgentEvent::Done) was taken, the held calls of a [`Paused`] run are the host's,
    /// and stay.)
    pub async fn cancel(mut self) {
        self.run = None;
        let held = std::mem::take(&mut self.events.lock().held);
        for ticket in held {
            let _ = self.tools.reject(&ticket).await;
        }
    }
}

impl AgentStream<'_> {
    /// The last event ends the stream; the held calls of a paused run are now the host's.
    fn handed_out(&mut self, event: AgentEvent) -> AgentEvent {
        if matches!(event, AgentEvent::Done(_)) {
            self.ended = true;
            self.events.lock().held.clear();
        }
        event
    }
}

impl std::fmt::Debug for AgentStream<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentStream")
            .field("running", &self.run.is_some())
            .finish_non_exhaustive()
    }
}

impl Stream for AgentStream<'_> {
    type Item = AgentEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<AgentEvent>> {
        if self.ended {
            return Poll::Ready(None);
        }
        if let Some(event) = self.events.pop() {
            return Poll::Ready(Some(self.handed_out(event)));
        }
        // A tool may report progress from another thread while the run waits.
        self.events.wake_on_push(cx.waker());
        let Some(run) = self.run.as_mut() else {
            return Poll::Ready(None);
        };
        if let Poll::Ready(result) = run.as_mut().poll(cx) {
            self.run = None;
            self.events.push(AgentEvent::Done(result));
        }
        match self.events.pop() {
            Some(event) => Poll::Ready(Some(self.handed_out(event))),
            None => Poll::Pending,
        }
    }
}

/// The events a run has produced and the host has not taken yet. The run pushes while the
/// stream polls it; a tool's progress may arrive from another thread and wakes the stream.
/// Progress reports beyond [`MAX_QUEUED`] waiting events are dropped (the host is not reading).
#[derive(Clone, Default)]
struct Events(Arc<Mutex<Queue>>);

#[derive(Default)]
struct Queue {
    events: VecDeque<AgentEvent>,
    waker: Option<Waker>,
    /// Tickets of the unfinished turn's calls held for approval.
    held: Vec<String>,
}

/// Waiting events past which progress reports are dropped.
const MAX_QUEUED: usize = 1024;

impl Events {
    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn push(&self, event: AgentEvent) {
        let mut queue = self.lock();
        if matches!(event, AgentEvent::Progress { .. }) && queue.events.len() >= MAX_QUEUED {
            return;
        }
        queue.events.push_back(event);
        if let Some(waker) = queue.waker.take() {
            waker.wake();
        }
    }

    fn pop(&self) -> Option<AgentEvent> {
        self.lock().events.pop_front()
    }

    fn wake_on_push(&self, waker: &Waker) {
        self.lock().waker = Some(waker.clone());
    }
}

type Boxed = Box<dyn std::error::Error + Send + Sync>;

impl<'a> Agent<'a> {
    /// [`run`](Agent::run) over streamed responses: `send` returns the response's events
    /// (the API's [`Framing`](crate::provider::Framing) over the body's bytes:
    /// `conversation.api.provider().framing().events(body)`; for Bedrock, or the events the
    /// AWS SDK decoded), and the run is a stream of [`AgentEvent`]s a web server can
    /// forward. Each call starts as soon as its arguments are complete; the model's turn is
    /// kept exactly as the unstreamed response would have been. A stream that is cut short,
    /// breaks the API's event order, or sends nothing for [`idle_timeout`](Agent::idle_timeout)
    /// ends the run with [`AgentError::Stream`] naming the event; no incomplete call runs, and
    /// calls of that turn held for approval are dropped from the store.
    pub fn run_streamed<'s, F, Fut, S, E, E2>(
        &self,
        cx: &'s Context,
        conversation: Conversation,
        send: F,
    ) -> AgentStream<'s>
    where
        'a: 's,
        F: FnMut(&Conversation) -> Fut + Send + 's,
        Fut: Future<Output = Result<S, E>> + Send + 's,
        S: Stream<Item = Result<StreamEvent, E2>> + Send + 's,
        E: Into<Boxed> + 's,
        E2: Into<Boxed> + 's,
    {
        let agent = *self;
        self.stream_of(move |sink| async move {
            agent
                .streamed_turns(cx, conversation, 0, Usage::default(), send, &sink)
                .await
        })
    }

    /// [`resume_stopped`](Agent::resume_stopped) over streamed responses, as
    /// [`run_streamed`](Agent::run_streamed).
    pub fn resume_stopped_streamed<'s, F, Fut, S, E, E2>(
        &self,
        cx: &'s Context,
        stopped: Stopped,
        send: F,
    ) -> AgentStream<'s>
    where
        'a: 's,
        F: FnMut(&Conversation) -> Fut + Send + 's,
        Fut: Future<Output = Result<S, E>> + Send + 's,
        S: Stream<Item = Result<StreamEvent, E2>> + Send + 's,
        E: Into<Boxed> + 's,
        E2: Into<Boxed> + 's,
    {
        let agent = *self;
        let Stopped {
            conversation,
            usage,
            turns,
            ..
        } = stopped;
        self.stream_of(move |sink| async move {
            agent
                .streamed_turns(cx, conversation, turns, usage, send, &sink)
                .await
        })
    }

    /// [`resume`](Agent::resume) over streamed responses, as [`run_streamed`](Agent::run_streamed).
    pub fn resume_streamed<'s, D, F, Fut, S, E, E2>(
        &self,
        cx: &'s Context,
        paused: Paused,
        decide: D,
        send: F,
    ) -> AgentStream<'s>
    where
        'a: 's,
        D: Fn(&crate::approval::PendingCall) -> super::Decision + Send + 's,
        F: FnMut(&Conversation) -> Fut + Send + 's,
        Fut: Future<Output = Result<S, E>> + Send + 's,
        S: Stream<Item = Result<StreamEvent, E2>> + Send + 's,
        E: Into<Boxed> + 's,
        E2: Into<Boxed> + 's,
    {
        let agent = *self;
        self.stream_of(move |sink| async move {
            let (conversation, turns, usage) = agent.decided(cx, paused, decide).await;
            agent
                .streamed_turns(cx, conversation, turns, usage, send, &sink)
                .await
        })
    }

    /// The host's stream over `run`, which pushes its events to the sink it is given.
    fn stream_of<'s, R, Fut>(&self, run: R) -> AgentStream<'s>
    where
        'a: 's,
        R: FnOnce(Events) -> Fut,
        Fut: Future<Output = Result<Finished, AgentError>> + Send + 's,
    {
        let events = Events::default();
        AgentStream {
            run: Some(Box::pin(run(events.clone()))),
            events,
            tools: self.tools,
            offload: self.offload,
            ended: false,
        }
    }

    async fn streamed_turns<F, Fut, S, E, E2>(
        &self,
        cx: &Context,
        conversation: Conversation,
        turns: usize,
        usage: Usage,
        send: F,
        sink: &Events,
    ) -> Result<Finished, AgentError>
    where
        F: FnMut(&Conversation) -> Fut,
        Fut: Future<Output = Result<S, E>>,
        S: Stream<Item = Result<StreamEvent, E2>>,
        E: Into<Boxed>,
        E2: Into<Boxed>,
    {
        let run = spans::run(conversation.api);
        let mut totals = spans::Totals::default();
        let result = self
            .streamed_turns_within(cx, conversation, turns, usage, send, sink, &mut totals)
            .instrument(run.clone())
            .await;
        spans::ended(&run, &totals, &result);
        result
    }

    #[allow(clippy::too_many_arguments)]
    async fn streamed_turns_within<F, Fut, S, E, E2>(
        &self,
        cx: &Context,
        mut conversation: Conversation,
        mut turns: usize,
        mut usage: Usage,
        mut send: F,
        sink: &Events,
        totals: &mut spans::Totals,
    ) -> Result<Finished, AgentError>
    where
        F: FnMut(&Conversation) -> Fut,
        Fut: Future<Output = Result<S, E>>,
        S: Stream<Item = Result<StreamEvent, E2>>,
        E: Into<Boxed>,
        E2: Into<Boxed>,
    {
        let api = conversation.api;
        self.declare(cx, &mut conversation);
        while turns < self.max_turns {
            conversation = self.before_request(cx, conversation, turns, usage)?;
            // The turn's span lasts until its stream ended; the calls that start while it
            // streams are the run's children, beside it.
            let chat = spans::chat(api);
            // The request is written inside the turn's span (its model is recorded there).
            let sending = chat.in_scope(|| send(&conversation));
            let events = sending
                .instrument(chat.clone())
                .await
                .map_err(|e| spans::failed(&chat, AgentError::Transport(e.into())))?;
            turns += 1;
            let allowed = self.calls_allowed(&usage, usize::MAX);
            let (turn, outcomes, info) = self
                .streamed_turn(
                    cx,
                    api,
                    events,
                    sink,
                    conversation.turn_tools.as_deref(),
                    allowed,
                )
                .await
                .map_err(|e| spans::failed(&chat, e))?;
            usage.add_response(&info);
            totals.response(&chat, &info);
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
            let ran = turn.calls.len().min(allowed);
            usage.tool_calls = usage.tool_calls.saturating_add(ran as u64);
            match self.after_calls(conversation, outcomes, turns, usage) {
                Ok(next) => conversation = next,
                Err(paused) => return Ok(Finished::Paused(paused)),
            }
            // Calls the budget did not let run: the run stops before its next request.
            if ran < turn.calls.len() {
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

    /// Reads one streamed response, running each call as soon as it is complete.
    async fn streamed_turn<S, E2>(
        &self,
        cx: &Context,
        api: Api,
        events: S,
        sink: &Events,
        turn_tools: Option<&[String]>,
        allowed: usize,
    ) -> Result<(ModelTurn, Vec<Outcome>, ResponseInfo), AgentError>
    where
        S: Stream<Item = Result<StreamEvent, E2>>,
        E2: Into<Boxed>,
    {
        let mut turn = Turn {
            agent: self,
            cx,
            sink,
            turn_tools,
            allowed,
            calls: Vec::new(),
            outcomes: Vec::new(),
            queue: VecDeque::new(),
            running: FuturesUnordered::new(),
        };
        let result = turn.read(api, events).await;
        if result.is_err() {
            turn.running.clear();
            turn.drop_held().await;
        }
        result
    }
}

/// One streamed turn: the calls handed out so far, their outcomes, and those running.
struct Turn<'t, 'a> {
    agent: &'t Agent<'a>,
    cx: &'t Context,
    sink: &'t Events,
    /// The tools the turn offers, when the agent's hook chose them.
    turn_tools: Option<&'t [String]>,
    /// How many of the turn's calls the budget lets run, in order; the others are answered as
    /// not run.
    allowed: usize,
    calls: Vec<ToolCall>,
    outcomes: Vec<Option<Outcome>>,
    queue: VecDeque<usize>,
    running: FuturesUnordered<BoxFuture<'t, (usize, Outcome)>>,
}

/// What woke the turn up.
enum Step<E> {
    Event(Option<Result<StreamEvent, E>>),
    Ran(usize, Box<Outcome>),
    Stalled,
}

impl<'t> Turn<'t, '_> {
    async fn read<S, E2>(
        &mut self,
        api: Api,
        events: S,
    ) -> Result<(ModelTurn, Vec<Outcome>, ResponseInfo), AgentError>
    where
        S: Stream<Item = Result<StreamEvent, E2>>,
        E2: Into<Boxed>,
    {
        let mut events = pin!(events);
        let mut assembler = Some(ResponseStream::new(api));
        let mut response = None;
        let idle = self.agent.idle_timeout;
        let mut timer = futures_timer::Delay::new(idle);
        loop {
            self.start_queued();
            if response.is_some() && self.running.is_empty() {
                break;
            }
            let step = poll_fn(|t| {
                if let Poll::Ready(Some((i, outcome))) = self.running.poll_next_unpin(t) {
                    return Poll::Ready(Step::Ran(i, Box::new(outcome)));
                }
                if response.is_none() {
                    if let Poll::Ready(event) = events.as_mut().poll_next(t) {
                        return Poll::Ready(Step::Event(event));
                    }
                    if timer.poll_unpin(t).is_ready() {
                        return Poll::Ready(Step::Stalled);
                    }
                }
                Poll::Pending
            })
            .await;
            match step {
                Step::Ran(i, outcome) => {
                    if let Outcome::Waiting { pending, .. } = &*outcome {
                        self.sink.lock().held.push(pending.ticket.clone());
                    }
                    self.sink.push(AgentEvent::CallFinished((*outcome).clone()));
                    self.outcomes[i] = Some(*outcome);
                }
                Step::Stalled => {
                    return Err(AgentError::Stream(StreamError {
                        api,
                        event: "the stream".into(),
                        error: ReadError::malformed(format!(
                            "no event for {idle:?}; the provider stalled"
                        )),
                    }));
                }
                Step::Event(Some(Err(e))) => return Err(AgentError::Transport(e.into())),
                Step::Event(Some(Ok(event))) => {
                    timer.reset(idle);
                    let stream = assembler.as_mut().ok_or_else(|| unreachable_state(api))?;
                    let deltas = stream.push(&event).map_err(AgentError::Stream)?;
                    self.take(deltas);
                }
                Step::Event(None) => {
                    let stream = assembler.take().ok_or_else(|| unreachable_state(api))?;
                    let (raw, deltas) = stream.finish().map_err(AgentError::Stream)?;
                    self.take(deltas);
                    response = Some(raw);
                }
            }
        }
        let raw = response.ok_or_else(|| unreachable_state(api))?;
        let info = api.provider().read_info(&raw);
        let turn = read_parts(api, &raw).map_err(AgentError::Unreadable)?;
        if turn.calls != self.calls {
            return Err(AgentError::Stream(StreamError {
                api,
                event: "the end of the stream".into(),
                error: ReadError::malformed(
                    "the response's tool calls differ from the calls streamed",
                ),
            }));
        }
        let outcomes = std::mem::take(&mut self.outcomes)
            .into_iter()
            .map(|o| o.ok_or_else(|| unreachable_state(api)))
            .collect::<Result<_, _>>()?;
        Ok((turn, outcomes, info))
    }

    /// Forwards text and reasoning to the host; queues complete calls.
    fn take(&mut self, deltas: Vec<Delta>) {
        for delta in deltas {
            match delta {
                Delta::Text(text) => self.sink.push(AgentEvent::Text(text)),
                Delta::Thinking(text) => self.sink.push(AgentEvent::Thinking(text)),
                Delta::Call(call) => {
                    self.queue.push_back(self.calls.len());
                    self.calls.push(call);
                    self.outcomes.push(None);
                }
            }
        }
    }

    /// Starts queued calls, up to the agent's concurrency.
    fn start_queued(&mut self) {
        while self.running.len() < self.agent.concurrency {
            let Some(i) = self.queue.pop_front() else {
                return;
            };
            let call = self.calls[i].clone();
            self.sink.push(AgentEvent::CallStarted(call.clone()));
            let (sink, call_id, name) = (self.sink.clone(), call.id.clone(), call.name.clone());
            let progress = Progress::new(move |report| {
                sink.push(AgentEvent::Progress {
                    call_id: call_id.clone(),
                    name: name.clone(),
                    report,
                })
            });
            let cx = self.cx.clone().with(progress.clone());
            let (tools, offload, turn_tools) =
                (self.agent.tools, self.agent.offload, self.turn_tools);
            let within_budget = i < self.allowed;
            self.running.push(Box::pin(async move {
                if !within_budget {
                    return (i, over_budget(tools, &call));
                }
                // Dropped before it ends (the run failed or the host dropped the stream): a
                // sync tool polling its handle stops.
                let mut cancel_on_drop = CancelOnDrop(Some(progress));
                let outcome = run_one(tools, &cx, &call, offload, turn_tools).await;
                cancel_on_drop.0 = None;
                (i, outcome)
            }));
        }
    }

    /// A failed turn is not answered: the calls of it held for approval are taken out of the
    /// store, so no one can approve and run them.
    async fn drop_held(&mut self) {
        self.sink.lock().held.clear();
        for outcome in self.outcomes.iter().flatten() {
            if let Outcome::Waiting { pending, .. } = outcome {
                let _ = self.agent.tools.reject(&pending.ticket).await;
            }
        }
    }
}

fn unreachable_state(api: Api) -> AgentError {
    AgentError::Stream(StreamError {
        api,
        event: "the end of the stream".into(),
        error: ReadError::malformed("the stream's state is inconsistent (a bug in the toolkit)"),
    })
}

/// Marks a call cancelled when dropped before it ended (then emptied).
struct CancelOnDrop(Option<Progress>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(progress) = &self.0 {
            progress.cancel();
        }
    }
}
