//! MCP Tasks: the `io.modelcontextprotocol/tasks` extension (`tasks/get`, `tasks/update`,
//! `tasks/cancel`), which rmcp 3.11 implements. A 2026-07-28 request declares it in its
//! `clientCapabilities`; a 2025-11-25 session never gets a task (the extension "MUST NOT"
//! enable tasks under 2025-11-25).
//!
//! A call of a tool that may run as a task ([`TaskSupport`]), from a caller that declared the
//! extension, is answered at once with the task's handle; the call runs here, under the lease of
//! [`Tasks`] (renewed while it runs, so another replica can tell a live run from a dead one),
//! and its result is kept in the task store for whoever polls, on any replica. A call that needs
//! a person's approval becomes a task `input_required` with the approval question; the answer
//! comes in `tasks/update` (to any replica), which takes the task once and runs the held call.
//! Every task method checks the caller first, and another caller's task is answered exactly as
//! an unknown one.

use std::sync::Arc;

use rmcp::model::{
    CallToolResponse, CancelTaskParams, CreateTaskResult, DetailedTask, ErrorData, GetTaskParams,
    GetTaskResult, JsonObject, Task, TaskPayload,
};
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tool_runtime::task::{Cancel, Held, TaskError, TaskRecord, TaskStatus};
use tool_runtime::{
    Answers, Cancelled, Commit, CommitHook, Context, Progress, StoreError, ToolError, ToolRef,
    ToolSet,
};

use crate::approval::question;
use crate::arguments::CallArguments;
use crate::caller::Caller;
use crate::export::{error_result, success};
use crate::incoming::Incoming;
use crate::run::{run, thread_lost};
use crate::server::McpServer;

/// What a task runs: a call, or a held call approved in `tasks/update`.
pub(crate) enum Job {
    Call(CallArguments),
    Resume(String),
}

pub(crate) fn unknown_task(id: &str) -> ErrorData {
    ErrorData::invalid_params(format!("unknown task: {id}"), None)
}

pub(crate) fn store_failed(e: &StoreError) -> ErrorData {
    tracing::warn!(error = %e, "the task store failed");
    ErrorData::internal_error("the task store failed; try again", None)
}

/// Milliseconds since the Unix epoch as RFC 3339 (what the protocol's timestamps are).
fn timestamp(ms: u64) -> String {
    i64::try_from(ms)
        .ok()
        .and_then(chrono::DateTime::from_timestamp_millis)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(m) => m,
        other => {
            let mut m = JsonObject::new();
            m.insert("value".into(), other);
            m
        }
    }
}

impl McpServer {
    /// The protocol's view of a task record.
    fn task_of(&self, t: &TaskRecord) -> Task {
        let mut task = Task::new(
            t.id.clone(),
            match t.status {
                TaskStatus::Working => rmcp::model::TaskStatus::Working,
                TaskStatus::InputRequired => rmcp::model::TaskStatus::InputRequired,
                TaskStatus::Completed => rmcp::model::TaskStatus::Completed,
                TaskStatus::Failed => rmcp::model::TaskStatus::Failed,
                TaskStatus::Cancelled => rmcp::model::TaskStatus::Cancelled,
            },
            timestamp(t.created_ms),
            timestamp(t.updated_ms),
        )
        .with_ttl_ms(t.expires_ms.saturating_sub(t.created_ms))
        .with_poll_interval_ms(
            u64::try_from(self.tasks.poll_interval().as_millis())
                .unwrap_or(u64::MAX)
                .max(1),
        );
        if let Some(m) = &t.message {
            task = task.with_status_message(m.clone());
        }
        task
    }

    /// A task as `tasks/get` answers it: with what it waits for, its result or its error.
    fn detailed(&self, t: &TaskRecord) -> DetailedTask {
        let payload = match t.status {
            TaskStatus::Working => TaskPayload::Working,
            TaskStatus::InputRequired => TaskPayload::InputRequired {
                input_requests: t
                    .input
                    .clone()
                    .and_then(|v| serde_json::from_value(v).ok())
                    .unwrap_or_default(),
            },
            TaskStatus::Completed => TaskPayload::Completed {
                result: object(t.outcome.clone().unwrap_or_else(|| json!({"content": []}))),
            },
            TaskStatus::Failed => TaskPayload::Failed {
                error: match t.outcome.clone() {
                    Some(Value::Object(m)) => m,
                    other => object(json!({
                        "code": rmcp::model::ErrorCode::INTERNAL_ERROR.0,
                        "message": other
                            .as_ref()
                            .and_then(Value::as_str)
                            .or(t.message.as_deref())
                            .unwrap_or("the task failed"),
                    })),
                },
            },
            TaskStatus::Cancelled => TaskPayload::Cancelled,
        };
        DetailedTask::new(self.task_of(t), payload)
    }

    /// `tools/call` of a tool that may run as a task, for a caller that can follow one: the task
    /// is made (in the store, so any replica finds it) and runs here; the handle is the answer.
    pub(crate) async fn start_task(
        &self,
        tools: Arc<ToolSet>,
        tool: ToolRef,
        cx: Context,
        caller: &Caller,
        owner: String,
        arguments: CallArguments,
    ) -> Result<CallToolResponse, ErrorData> {
        let who = crate::caller::owner_of(caller);
        let record = match self.tasks.start(&owner, who, tool.name()).await {
            Ok(r) => r,
            Err(e @ TaskError::TooMany { .. }) => return Ok(error_result(e.to_string()).into()),
            Err(TaskError::Store(e)) => return Err(store_failed(&e)),
            Err(e) => return Err(ErrorData::internal_error(e.to_string(), None)),
        };
        let handle = self.task_of(&record);
        self.spawn_task(record.id, owner, tools, tool, cx, Job::Call(arguments));
        Ok(CreateTaskResult::new(handle).into())
    }

    /// Runs `job` for the task `id` on this replica, in the background.
    pub(crate) fn spawn_task(
        &self,
        id: String,
        owner: String,
        tools: Arc<ToolSet>,
        tool: ToolRef,
        cx: Context,
        job: Job,
    ) {
        // A cut result's whole is kept for the task's owner, whichever path started the run.
        let mut cx = cx;
        if tool.max_result_chars().is_some() {
            self.with_keeper(&mut cx, &owner, &tools);
        }
        let server = self.clone();
        let (n, stop) = self.running.start(&id);
        tokio::spawn(async move {
            server
                .run_task(&id, &owner, tools, tool, cx, job, stop)
                .await;
            server.running.ended(&id, n);
        });
    }

    /// One task's run: the call within the tool's time limit (or the task's time to live), the
    /// lease renewed meanwhile (with the latest progress message as the task's message), and the
    /// outcome written to the store. Stopped at once by a cancel here, or at the next renewal by
    /// one elsewhere (the tool's future dropped, a sync tool's handle cancelled).
    #[allow(clippy::too_many_arguments)]
    async fn run_task(
        &self,
        id: &str,
        owner: &str,
        tools: Arc<ToolSet>,
        tool: ToolRef,
        mut cx: Context,
        job: Job,
        stop: CancellationToken,
    ) {
        let (said, mut latest) = watch::channel(None::<String>);
        let progress = Progress::new(move |r| {
            if r.message.is_some() {
                said.send_replace(r.message);
            }
        });
        cx.insert(progress.clone());
        // A tool that asks questions runs again with the answers: its arguments are kept.
        let replay = match &job {
            Job::Call(arguments) if tool.asks() => Some(arguments.to_value()),
            _ => None,
        };
        // A tool that commits decides its commit against a cancel in the store, on any replica.
        if tool.commits() {
            cx.insert(Commit::new(TaskCommit {
                tasks: self.tasks.clone(),
                id: id.to_owned(),
            }));
        }
        let cx = Arc::new(cx);
        let limit = tool.timeout().unwrap_or_else(|| self.tasks.ttl());
        // A call held for approval runs nothing yet; any other starts its tool, committed from
        // the start unless the tool commits later (or is read-only, and never does).
        let holds = matches!(job, Job::Call(_)) && tool.needs_approval();
        let committed_at_start = !tool.commits() && tool.annotations().read_only != Some(true);
        let work = async {
            // A task waits its turn among the caller's calls (however long it takes: it is
            // bounded by its time limit, and one caller's tasks by `Tasks::with_per_owner`).
            let turn = loop {
                if let Some(turn) = self.gates.turn(owner, &self.limits).await {
                    break turn;
                }
            };
            if !holds {
                match self.tasks.begin(id, committed_at_start).await {
                    Ok(true) => {}
                    // Cancelled before its tool started: it never runs.
                    Ok(false) => return Err(NotStarted::Cancelled),
                    Err(e) => return Err(NotStarted::Store(e)),
                }
            }
            Ok(match job {
                Job::Call(arguments) => {
                    run(
                        tools.clone(),
                        tool.clone(),
                        cx.clone(),
                        arguments,
                        turn,
                        &self.pace,
                    )
                    .await
                }
                // A sync tool that may block runs on a blocking thread, as any call of it does.
                Job::Resume(ticket) if tool.blocks() => {
                    let (tools, cx) = (tools.clone(), cx.clone());
                    let out = tokio::task::spawn_blocking(move || {
                        let out = tools.resume(&cx, &ticket).blocking();
                        drop(turn);
                        out
                    })
                    .await;
                    out.unwrap_or_else(|e| Err(thread_lost(&e)))
                }
                Job::Resume(ticket) => {
                    let out = tools.resume(&cx, &ticket).await;
                    drop(turn);
                    out
                }
            })
        };
        let tasks = self.tasks.clone();
        let heartbeat = async {
            loop {
                tokio::time::sleep(tasks.renew_every()).await;
                let message = if latest.has_changed().unwrap_or(false) {
                    latest.borrow_and_update().clone()
                } else {
                    None
                };
                if let Some(message) = message {
                    let _ = tasks.set_message(id, message).await;
                }
                // A store that fails now may answer at the next renewal; a task no longer
                // running here (cancelled, or failed after a lapse) stops.
                if let Ok(false) = tasks.renew(id).await {
                    return;
                }
            }
        };
        let outcome = tokio::select! {
            out = tokio::time::timeout(limit, work) => out,
            () = stop.cancelled() => {
                progress.cancel();
                return;
            }
            () = heartbeat => {
                progress.cancel();
                return;
            }
        };
        let outcome = match outcome {
            Err(elapsed) => Err(elapsed),
            Ok(Ok(out)) => Ok(out),
            Ok(Err(NotStarted::Cancelled)) => return,
            Ok(Err(NotStarted::Store(e))) => {
                let reason = format!("the task could not start: its store failed ({e})");
                self.fail(id, &reason).await;
                return;
            }
        };
        let result = match outcome {
            Err(_) => error_result(tools.model_message(&ToolError::TimedOut {
                seconds: limit.as_secs_f64(),
            })),
            Ok(Ok(out)) => success(&tool, out, &cx).await,
            Ok(Err(ToolError::ApprovalRequired(pending))) => {
                let ticket = pending.ticket.clone();
                // Who may answer: the caller, unless the tool is approved by others it is not.
                let waiting = match self.approver_of(&pending.tool) {
                    Some(grant) => tools.wording().approval_by_other_message(grant),
                    None => tools.wording().approval_waiting.to_string(),
                };
                let waits = match question(&pending.tool, &pending.arguments)
                    .map_err(StoreError::new)
                    .and_then(|q| serde_json::to_value(q).map_err(StoreError::from_source))
                {
                    Ok(input) => {
                        let held = Held::approval(ticket.clone(), pending.arguments.clone());
                        self.tasks
                            .wait_for_input(id, input, held, Some(waiting))
                            .await
                    }
                    Err(e) => Err(e),
                };
                if !matches!(waits, Ok(true)) {
                    // Cancelled meanwhile, or the store failed: nothing will approve it.
                    let _ = tools.reject(&ticket).await;
                    if let Err(e) = waits {
                        self.fail(id, &tools.wording().approval_failed_message(e.message()))
                            .await;
                    }
                }
                return;
            }
            // The tool asked the person: the task waits for the answers, then runs it again.
            Ok(Err(e)) if e.unanswered().is_some() && tool.asks() => {
                let asked = e.unanswered().map(crate::ask::requests_value);
                let answers = cx
                    .get::<Answers>()
                    .map_or_else(|| json!({}), Answers::to_responses);
                let waits = match (asked, replay) {
                    (Some(Ok(input)), Some(arguments)) => {
                        let message = e.unanswered().map(ToString::to_string);
                        let held = Held::questions(arguments, answers);
                        self.tasks
                            .wait_for_input(id, input, held, message)
                            .await
                            .map_err(|e| e.to_string())
                    }
                    (Some(Err(e)), _) => Err(e),
                    // Asked after an approval: the approved call cannot be run again.
                    _ => Err(format!(
                        "`{}` asked the person a question after its call was approved, which a task cannot answer",
                        tool.name()
                    )),
                };
                if let Err(reason) = waits {
                    self.fail(id, &reason).await;
                }
                return;
            }
            // The tool did not run to an answer (it panicked, or its approval store failed):
            // the task failed, as a server's internal error, not a result the tool gave.
            Ok(Err(e @ (ToolError::Panicked { .. } | ToolError::ApprovalStore(_)))) => {
                self.fail(id, &tools.model_message(&e)).await;
                return;
            }
            Ok(Err(e)) => error_result(tools.model_message(&e)),
        };
        self.finish(id, &result).await;
    }

    /// A task running here ends `failed`, with an internal error saying `message` (what the
    /// model may read: a panic's own message only when its tool opted in).
    pub(crate) async fn fail(&self, id: &str, message: &str) {
        let error = json!({"code": rmcp::model::ErrorCode::INTERNAL_ERROR.0, "message": message});
        self.keep(id, TaskStatus::Failed, error, Some(message.to_owned()))
            .await;
    }

    /// A task running here ends with `result` (a tool's error too: the call ran and answered).
    pub(crate) async fn finish(&self, id: &str, result: &rmcp::model::CallToolResult) {
        let mut value = serde_json::to_value(result)
            .unwrap_or_else(|e| json!({"content": [], "isError": true, "error": e.to_string()}));
        // Inlined in `tasks/get`, whose own `resultType` is the envelope's.
        if let Value::Object(m) = &mut value {
            m.remove("resultType");
        }
        self.keep(id, TaskStatus::Completed, value, None).await;
    }

    /// Writes a task's outcome; when the store fails, the log says so.
    async fn keep(&self, id: &str, status: TaskStatus, outcome: Value, message: Option<String>) {
        if let Err(e) = self.tasks.finish(id, status, outcome, message).await {
            tracing::warn!(task = id, error = %e, "a task's outcome could not be kept");
        }
    }

    /// `tasks/get`: the caller's task as it stands.
    pub(crate) async fn get_task(
        &self,
        params: GetTaskParams,
        request: Incoming,
    ) -> Result<GetTaskResult, ErrorData> {
        let (caller, _) = self.context_for(&request).await?;
        match self.tasks.get(&params.task_id, &caller.key()).await {
            Ok(Some(task)) => Ok(GetTaskResult::new(self.detailed(&task))),
            Ok(None) => Err(unknown_task(&params.task_id)),
            Err(e) => Err(store_failed(&e)),
        }
    }

    /// `tasks/cancel`, acknowledged once the store has decided (one change, on any replica):
    /// a task waiting for input, or whose tool has not committed, becomes `cancelled` (a call
    /// held for approval is dropped; a run here stops at once, elsewhere at its next renewal or
    /// at its commit point); a task whose tool committed goes on and ends with what the tool
    /// did, as the extension allows ("MAY ultimately reach a terminal status other than
    /// `cancelled` if the work finished before cancellation could take effect").
    pub(crate) async fn cancel_task(
        &self,
        params: CancelTaskParams,
        request: Incoming,
    ) -> Result<(), ErrorData> {
        let (caller, _) = self.context_for(&request).await?;
        match self.tasks.cancel(&params.task_id, &caller.key()).await {
            Ok(Some(Cancel::Stopped { held, was_running })) => {
                if let Some(ticket) = held {
                    let _ = self.current().reject(&ticket).await;
                }
                if was_running {
                    self.running.stop(&params.task_id);
                }
                Ok(())
            }
            Ok(Some(_)) => Ok(()),
            Ok(None) => Err(unknown_task(&params.task_id)),
            Err(e) => Err(store_failed(&e)),
        }
    }
}

/// Why a task's tool did not start.
enum NotStarted {
    /// The task was cancelled while it waited for its turn.
    Cancelled,
    /// The store could not say.
    Store(StoreError),
}

/// A task's commit point: the store decides, once, whether the tool's commit or its owner's
/// cancel came first.
struct TaskCommit {
    tasks: tool_runtime::Tasks,
    id: String,
}

impl CommitHook for TaskCommit {
    fn commit(&self) -> tool_runtime::BoxFuture<'_, Result<(), Cancelled>> {
        Box::pin(async move {
            match self.tasks.commit(&self.id).await {
                Ok(true) => Ok(()),
                Ok(false) => Err(Cancelled),
                // Unknown: the change is not made (the tool's error says it was not).
                Err(e) => {
                    tracing::warn!(task = %self.id, error = %e, "a task's commit could not be decided");
                    Err(Cancelled)
                }
            }
        })
    }

    /// A sync tool's commit, on the blocking thread it runs on (a committing tool never runs
    /// on an async worker): the store's future runs on the server's runtime.
    fn commit_blocking(&self) -> Result<(), Cancelled> {
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => runtime.block_on(self.commit()),
            // (A task runs on the server's runtime: its threads always have one.)
            Err(_) => Err(Cancelled),
        }
    }
}
