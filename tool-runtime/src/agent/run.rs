//! Running one turn's calls: concurrently up to a limit, each the way every call runs.

use futures_util::StreamExt;
use serde::{Deserialize, Serialize};

use crate::approval::PendingCall;
use crate::call::{Call, Pipeline};
use crate::context::Context;
use crate::defer::{CALL_TOOL, Loading, Offered, SchemasInAnswers, unwrap_call_tool};
use crate::error::ToolError;
use crate::output::CallOutput;
use crate::provider::{CallArguments, ToolAnswer, ToolCall};
use crate::set::{ToolRef, ToolSet};

/// One call of a blocking tool, handed to the host to run where blocking is allowed
/// ([`Agent::offload`](super::Agent::offload)).
pub type Job = Box<dyn FnOnce() + Send + 'static>;

/// What became of one call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Outcome {
    /// The call's answer for the model: the tool's output, or the error (an unknown tool,
    /// invalid arguments, a failure).
    Answered(ToolAnswer),
    /// The call needs a person's approval and is held in the tool set's approval store.
    Waiting {
        /// The call as the model made it (its id is what the result must carry).
        call: ToolCall,
        /// The held call: its ticket, the tool and the validated arguments.
        pending: PendingCall,
    },
}

/// Runs `calls` with `cx`, at most `concurrency` at once, and returns one outcome per call, in
/// the calls' order. Every call goes through the tool set (middleware, permissions,
/// validation, approval, hooks); one the model got wrong (an unknown tool, invalid arguments, a
/// tool this caller may not use) is answered with the repair message as an error. A call that
/// needs approval is held in the set's approval store and comes back as
/// [`Outcome::Waiting`]. A call of [`CALL_TOOL`] is the call of the tool it names.
///
/// An async tool runs concurrently with the others; a sync tool runs when its turn is polled,
/// on the thread that polls ([`Agent::offload`](super::Agent::offload) runs blocking tools
/// elsewhere).
pub async fn run_calls(
    tools: &ToolSet,
    cx: &Context,
    calls: &[ToolCall],
    concurrency: usize,
) -> Vec<Outcome> {
    let scope = Scope {
        concurrency,
        offload: None,
        turn_tools: None,
        allowed: calls.len(),
    };
    run_all(tools, cx, calls, scope).await
}

/// How one turn's calls run: at most `concurrency` at once, a blocking tool's call handed to
/// `offload` when it is set, only the tools of `turn_tools` (when the agent's hook chose
/// them), and only the first `allowed` calls (the budget's), the others answered as not run.
#[derive(Clone, Copy)]
pub(crate) struct Scope<'a> {
    pub(crate) concurrency: usize,
    pub(crate) offload: Option<fn(Job)>,
    pub(crate) turn_tools: Option<&'a [String]>,
    pub(crate) allowed: usize,
}

/// [`run_calls`] within a [`Scope`].
pub(crate) async fn run_all(
    tools: &ToolSet,
    cx: &Context,
    calls: &[ToolCall],
    scope: Scope<'_>,
) -> Vec<Outcome> {
    let runs = calls.iter().enumerate().map(|(i, call)| async move {
        if i >= scope.allowed {
            return over_budget(tools, call);
        }
        run_one(tools, cx, call, scope.offload, scope.turn_tools).await
    });
    futures_util::stream::iter(runs)
        .buffered(scope.concurrency.max(1))
        .collect()
        .await
}

/// The answer of a call the run's budget did not let run.
pub(crate) fn over_budget(tools: &ToolSet, call: &ToolCall) -> Outcome {
    Outcome::Answered(ToolAnswer::error(
        call.id.clone(),
        call.name.clone(),
        tools.wording().budget_spent.to_string(),
    ))
}

/// Runs one call through the tool set and says what became of it: a blocking tool's call as a
/// [`Job`] given to `offload`, when set. A tool the turn did not offer does not run: the model
/// is told there is no such tool. A call of [`CALL_TOOL`] (where the set has no tool of that
/// name) runs the tool it names with the arguments it gives, and is answered as itself.
pub(crate) async fn run_one(
    tools: &ToolSet,
    cx: &Context,
    call: &ToolCall,
    offload: Option<fn(Job)>,
    turn_tools: Option<&[String]>,
) -> Outcome {
    let answer_error = |message: String| {
        Outcome::Answered(ToolAnswer::error(
            call.id.clone(),
            call.name.clone(),
            message,
        ))
    };
    // `call_tool`: the call is the named tool's, with its arguments.
    let unwrapped;
    let target = if call.name == CALL_TOOL && tools.defers() && tools.get(CALL_TOOL).is_none() {
        match unwrap_call(call) {
            Ok(inner) => {
                unwrapped = inner;
                &unwrapped
            }
            Err(message) => return answer_error(message),
        }
    } else {
        call
    };
    // (A tool the caller may not call is refused by the set itself, as it always is.)
    let left_out = turn_tools.is_some_and(|offered| !offered.contains(&target.name))
        && tools.get(&target.name).is_some_and(|t| t.permits(cx));
    if left_out {
        let unknown = ToolError::UnknownTool {
            name: target.name.clone(),
            did_you_mean: None,
        };
        return answer_error(tools.model_message(&unknown));
    }
    // The set's search tool finds only what the turn offers, and gives the input schemas of
    // what it found when the model calls those through `call_tool`.
    let scoped;
    let cx = if tools.loading(&target.name) == Loading::Search {
        let mut inner = cx.clone();
        if let Some(list) = turn_tools {
            inner.insert(Offered(list.to_vec()));
        }
        if tools.get(CALL_TOOL).is_none() {
            inner.insert(SchemasInAnswers);
        }
        scoped = inner;
        &scoped
    } else {
        cx
    };
    let detached = offload.and_then(|spawn| Some((spawn, tools.detached(&target.name)?)));
    let out = match detached {
        Some((spawn, (tool, pipeline))) => {
            let work = Work::Run(target.clone());
            off_thread(spawn, tool, pipeline, cx, work, call.id.clone()).await
        }
        None => match &call.id {
            Some(id) => {
                tools
                    .call(cx, &target.name, target.call_arguments())
                    .call_id(id)
                    .await
            }
            None => tools.call(cx, &target.name, target.call_arguments()).await,
        },
    };
    match out {
        Ok(out) => Outcome::Answered(answer_as(
            tools,
            call.id.clone(),
            call.name.clone(),
            &target.name,
            &out,
        )),
        Err(ToolError::ApprovalRequired(pending)) => Outcome::Waiting {
            call: call.clone(),
            pending: *pending,
        },
        Err(e) => answer_error(tools.model_message(&e)),
    }
}

/// A call of [`CALL_TOOL`] as the call of the tool it names: its arguments exactly as written
/// when they came as text.
fn unwrap_call(call: &ToolCall) -> Result<ToolCall, String> {
    let outer = match &call.arguments {
        CallArguments::Text(text) => {
            let parsed = crate::validate::parse::exact(text)
                .map_err(|e| format!("the arguments of `{CALL_TOOL}` are not JSON: {e}"))?;
            // A key given twice is refused, as a tool's own arguments are: the value parsed
            // keeps the last copy, the text handed on below the first.
            if let Some(path) = parsed.duplicates.first() {
                let given_twice = crate::validate::violation::given_twice(path);
                return Err(format!(
                    "the arguments of `{CALL_TOOL}` are not valid: {given_twice}"
                ));
            }
            parsed.value
        }
        CallArguments::Value(v) => v.clone(),
        CallArguments::NotAFunction(v) => v.clone(),
    };
    let (name, inner) = unwrap_call_tool(&outer)?;
    let arguments = match &call.arguments {
        CallArguments::Text(text) => {
            match crate::validate::parse::member(text.as_bytes(), 0, "arguments") {
                Some(at) if text.as_bytes()[at.start] == b'{' => {
                    CallArguments::Text(text[at].to_owned())
                }
                _ => CallArguments::Value(inner),
            }
        }
        _ => CallArguments::Value(inner),
    };
    let mut inner_call = ToolCall::new(call.id.clone(), name, arguments);
    inner_call.null_means_absent = call.null_means_absent;
    Ok(inner_call)
}

/// The answer of a call that ran: cut to its tool's bound ([`Tool::max_result_chars`](crate::Tool::max_result_chars)).
pub(crate) fn answer(
    tools: &ToolSet,
    id: Option<String>,
    name: String,
    out: &CallOutput,
) -> ToolAnswer {
    let tool = name.clone();
    answer_as(tools, id, name, &tool, out)
}

/// [`answer`] of the call `name` (as the model made it) that ran `tool` (`name` itself, or
/// the tool a `call_tool` named): cut to `tool`'s bound.
fn answer_as(
    tools: &ToolSet,
    id: Option<String>,
    name: String,
    tool: &str,
    out: &CallOutput,
) -> ToolAnswer {
    let bound = tools.get(tool).and_then(|t| t.max_result_chars());
    let answer = ToolAnswer::output(id, name, out);
    match bound {
        Some(max) => answer.cut(max, tools.wording()),
        None => answer,
    }
}

/// Runs a person's approved call through the tool set, on a thread `offload` gives when its
/// tool blocks.
pub(crate) async fn resume_one(
    tools: &ToolSet,
    cx: &Context,
    pending: &PendingCall,
    offload: Option<fn(Job)>,
) -> Result<CallOutput, ToolError> {
    match offload.and_then(|spawn| Some((spawn, tools.detached(&pending.tool)?))) {
        Some((spawn, (tool, pipeline))) => {
            let work = Work::Resume(pending.ticket.clone());
            off_thread(spawn, tool, pipeline, cx, work, None).await
        }
        None => tools.resume(cx, &pending.ticket).await,
    }
}

/// What a job does with its tool.
enum Work {
    /// A call with the model's arguments.
    Run(ToolCall),
    /// The call held under this ticket, approved.
    Resume(String),
}

/// The one tool a resumed job may find.
struct One<'a>(&'a ToolRef);

impl crate::call::Lookup for One<'_> {
    fn find(&self, name: &str) -> Result<&crate::tool::Tool, ToolError> {
        if self.0.name() == name {
            return Ok(self.0);
        }
        Err(ToolError::UnknownTool {
            name: name.to_owned(),
            did_you_mean: None,
        })
    }
}

/// Runs a blocking tool's call as a job `spawn` runs elsewhere, and waits for its answer.
async fn off_thread(
    spawn: fn(Job),
    tool: ToolRef,
    pipeline: Pipeline,
    cx: &Context,
    work: Work,
    call_id: Option<String>,
) -> Result<CallOutput, ToolError> {
    let (answer, answered) = futures_channel::oneshot::channel::<Result<CallOutput, ToolError>>();
    let cx = cx.clone();
    spawn(Box::new(move || {
        // The run went away while the job waited: nothing runs.
        if answer.is_canceled() {
            return;
        }
        // The tool's own panic is already an error; this catches one in the approval store or
        // the middleware, driven here without an async runtime.
        let one = One(&tool);
        let run = || {
            let call = match &work {
                Work::Run(call) => Call::new(Ok(&tool), &cx, call.call_arguments(), &pipeline),
                Work::Resume(ticket) => Call::resume(&cx, ticket, &one, &pipeline),
            };
            match &call_id {
                Some(id) => call.call_id(id),
                None => call,
            }
            .blocking()
        };
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run))
            .unwrap_or_else(|panic| Err(crate::tool::panicked(panic, false)));
        // Held for approval after the run went away: no one will decide it.
        if let (Err(ToolError::ApprovalRequired(pending)), true) = (&out, answer.is_canceled()) {
            let _ = pollster::block_on(pipeline.approvals.take(&pending.ticket));
        }
        let _ = answer.send(out);
    }));
    answered.await.unwrap_or_else(|_| {
        Err(ToolError::failed(
            "the host dropped the call before it ended (Agent::offload)",
        ))
    })
}
