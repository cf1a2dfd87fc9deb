//! `tools/call`: the caller's context, the tool's visibility, a turn within the limits, the call
//! through the tool set with its time limit and cancellation, and the approval flows.

use std::sync::Arc;

use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{CallToolRequestParams, CallToolResponse, ErrorCode, ErrorData};
use rmcp::service::Peer;
use serde_json::{Value, json};
use tool_runtime::{
    Answers, Context, Holder, Question, SchemasInAnswers, TaskSupport, ToolError, ToolRef, ToolSet,
    Unanswered,
};

use bytes::Bytes;

use crate::approval::{self, Retried};
use crate::arguments::{CallArguments, RawArguments};
use crate::caller::Caller;
use crate::export::{CALL_TOOL, error_result, success};
use crate::incoming::Incoming;
use crate::progress::Forwarder;
use crate::run::run;
use crate::server::McpServer;

/// The answer to a call of a tool this caller cannot see: the did-you-mean comes from the
/// tools it may see, and why a tool is hidden is logged for the host, never told the caller.
#[cold]
fn unknown_tool(tools: &ToolSet, name: &str, cx: &Context, caller: &str) -> ErrorData {
    if let Some(hidden) = tools.get(name) {
        crate::server::log_hidden(hidden, cx, caller);
    }
    let unknown = ToolError::UnknownTool {
        name: name.to_owned(),
        did_you_mean: tools.visible_to(cx).closest(name).map(str::to_owned),
    };
    ErrorData::invalid_params(tools.model_message(&unknown), None)
}

impl McpServer {
    pub(crate) async fn call(
        &self,
        mut request: CallToolRequestParams,
        context: Incoming,
    ) -> Result<CallToolResponse, ErrorData> {
        let (caller, mut cx) = self.context_for(&context).await?;
        // On HTTP the arguments arrive as their text, cut out of what rmcp parsed.
        let mut raw = raw_arguments(&context);
        let key = caller.key();
        let tools = self.current();
        if tools.defers() {
            // A client that lists only the search/call pair calls a deferred tool through
            // `call_tool`: the call is then the named tool's, checked as any other.
            if let Some(wrong) = unwrap_call_tool(&tools, &mut request, &mut raw) {
                return Ok(error_result(wrong).into());
            }
            cx.insert(SchemasInAnswers);
        }
        self.with_desk(&mut cx, &key);
        // Calls held for approval are the caller's, and wait as long as an approval may take
        // (unless the host's context says otherwise).
        let host_holder = cx.get::<Holder>().is_some();
        if !host_holder {
            cx.insert(Holder {
                owner: key.clone(),
                ttl: Some(self.limits.approval_timeout),
            });
        }
        // 2026-07-28 requests carry their version; they have no session to wait on.
        let stateless = context
            .protocol_version()
            .is_some_and(|v| !v.has_initialize());
        let name = request.name.as_ref();
        // A tool this caller may not see is as unknown as one that does not exist.
        let Some(tool) = tools.get(name).filter(|t| t.permits(&cx)) else {
            return Err(unknown_tool(&tools, name, &cx, &key));
        };
        if tool.max_result_chars().is_some() {
            self.with_keeper(&mut cx, &key, &tools);
        }
        let refuse = |e: ToolError| Ok(error_result(tools.model_message(&e)).into());
        // Questions the person answers before the tool runs: answered in this request's state
        // (2026-07-28) or asked now in a session; only then does the call run or become a task.
        if let Some(questions) = tool.ask_first() {
            let first = First {
                stateless,
                context: &context,
                caller: &caller,
                tools: &tools,
            };
            if let Some(answer) = self
                .answer_first(questions, first, &mut cx, &mut request, &mut raw)
                .await?
            {
                return Ok(answer);
            }
        }
        // A caller that can follow a task gets one for a tool that may run as one (made at once:
        // its run takes a turn of the caller's calls when it starts); a call that can run only as
        // a task refuses a caller who cannot, with the capability it lacks. Only a 2026-07-28
        // request can: the extension "MUST NOT" enable tasks in a 2025-11-25 session.
        // (Read only for such a tool: the capabilities are parsed from the request's `_meta`.)
        let support = tool.task_support();
        let approver = self.approver_of(tool.name());
        let follows_tasks = (support != TaskSupport::Forbidden || approver.is_some())
            && stateless
            && context
                .client_capabilities()
                .is_some_and(|c| c.supports_tasks());
        // A call someone else approves can wait for them only as a task.
        if let (Some(grant), false) = (approver, follows_tasks) {
            let mut refused = crate::extension::tasks_required();
            refused.message = tools
                .wording()
                .approval_by_other_unavailable_message(grant)
                .into();
            return Err(refused);
        }
        if support == TaskSupport::Required && !follows_tasks {
            return Err(crate::extension::tasks_required());
        }
        // It runs as its owner once approved: the server must know who that is.
        if let Some(grant) = approver
            && (request.request_state.is_some() || crate::caller::owner_of(&caller).is_none())
        {
            return Ok(
                error_result(tools.wording().approval_by_other_unavailable_message(grant)).into(),
            );
        }
        match support {
            TaskSupport::Optional | TaskSupport::Required
                if follows_tasks && request.request_state.is_none() =>
            {
                let arguments = match raw {
                    Some(text) => CallArguments::Text(text),
                    None => CallArguments::Value(
                        request
                            .arguments
                            .take()
                            .map_or_else(|| json!({}), Value::Object),
                    ),
                };
                // A call that would be refused is refused now, in its request, not as a task.
                if let Err(e) = tool.check_call(&cx, arguments.peek()) {
                    return refuse(e);
                }
                // A call held for approval in a task waits as long as the task is kept (unless
                // the host's context said otherwise).
                if !host_holder {
                    cx.insert(Holder {
                        owner: key.clone(),
                        ttl: Some(self.tasks.ttl()),
                    });
                }
                return self
                    .start_task(tools.clone(), tool.clone(), cx, &caller, key, arguments)
                    .await;
            }
            _ => {}
        }

        let Some(turn) = self.gates.turn(&key, &self.limits).await else {
            return refuse(ToolError::Busy);
        };
        let timeout = tool.timeout().unwrap_or(self.limits.call_timeout);
        // An approval (or a question) binds to the arguments as a value: only then are they
        // parsed here.
        let binds = tool.needs_approval() || tool.asks();
        if stateless && (binds || request.request_state.is_some()) {
            bind_to_value(&mut request, raw.as_ref())?;
        }
        if stateless && request.request_state.is_some() {
            let Some(mrtr) = self.mrtr() else {
                return Err(ErrorData::invalid_params(
                    "invalid or expired requestState",
                    None,
                ));
            };
            let finish = approval::finish(&tools, tool, &cx, &caller, &request, mrtr);
            match tokio::time::timeout(timeout, finish).await {
                // The tool's questions answered: it runs again below, with the answers.
                Ok(Ok(Retried::Answers(answers))) => cx.insert(answers),
                Ok(Ok(Retried::Decided(answer))) => return Ok(*answer),
                Ok(Err(e)) => return Err(e),
                Err(_) => {
                    return refuse(ToolError::TimedOut {
                        seconds: timeout.as_secs_f64(),
                    });
                }
            }
        }
        // A 2026-07-28 approval or question binds its state to the arguments as sent: only
        // then are they kept.
        let arguments = match raw {
            Some(text) => CallArguments::Text(text),
            None => {
                let arguments = if stateless && binds {
                    request.arguments.clone()
                } else {
                    request.arguments.take()
                };
                CallArguments::Value(arguments.map_or_else(|| json!({}), Value::Object))
            }
        };
        // A tool that asks in a session runs again with the answers: its arguments are kept.
        let replay = (tool.asks() && !stateless).then(|| arguments.to_value());
        let progress = Forwarder::start(&context, tool.blocks());
        if let Some(handle) = &progress.handle {
            cx.insert(handle.clone());
        }
        let cx = Arc::new(cx);
        let run = run(
            tools.clone(),
            tool.clone(),
            cx.clone(),
            arguments,
            turn,
            &self.pace,
        );
        let outcome = tokio::select! {
            r = tokio::time::timeout(timeout, run) => r,
            // The client cancelled: the tool's future is dropped here (a sync tool still
            // running sees its handle cancelled); rmcp sends no answer.
            () = context.ct().cancelled() => {
                progress.cancel();
                return Err(ErrorData::new(ErrorCode(-32800), "request cancelled", None));
            }
        };
        // Every report goes out before the answer, none after it; a call held for approval
        // keeps its handle until the person has decided and it ran.
        let mut progress = progress;
        if !matches!(outcome, Ok(Err(ToolError::ApprovalRequired(_)))) {
            progress.finish().await;
        }
        let session = Session {
            tools: &tools,
            tool,
            cx: &cx,
            key: &key,
            timeout,
        };
        match outcome {
            Err(_) => refuse(ToolError::TimedOut {
                seconds: timeout.as_secs_f64(),
            }),
            Ok(Ok(out)) => Ok(success(tool, out, &cx).await.into()),
            Ok(Err(ToolError::ApprovalRequired(pending))) if stateless => {
                // The call runs (if approved) in a later request, with that request's handle.
                progress.finish().await;
                let can_elicit = context
                    .client_capabilities()
                    .is_some_and(|c| c.elicitation.is_some());
                match self.mrtr() {
                    Some(mrtr) => {
                        approval::hold(&tools, *pending, &caller, &request, can_elicit, mrtr).await
                    }
                    None => {
                        let _ = tools.reject(&pending.ticket).await;
                        refuse(ToolError::failed("no key to sign the approval request"))
                    }
                }
            }
            Ok(Err(ToolError::ApprovalRequired(pending))) => {
                let ticket = pending.ticket.clone();
                // Only a request through rmcp's service (a session, stdio) is not stateless.
                let Some(peer) = context.peer() else {
                    let _ = tools.reject(&ticket).await;
                    return refuse(ToolError::failed("no client to ask for the approval"));
                };
                let asked = approval::ask(&tools, tool, *pending, &cx, peer, &self.limits);
                tokio::select! {
                    answer = Box::pin(asked) => {
                        progress.finish().await;
                        Ok(answer.into())
                    }
                    // Cancelled while the person decides: the held call is dropped from the
                    // store, so a late approval cannot run it.
                    () = context.ct().cancelled() => {
                        progress.cancel();
                        let _ = tools.reject(&ticket).await;
                        Err(ErrorData::new(ErrorCode(-32800), "request cancelled", None))
                    }
                }
            }
            // The tool asked the person questions: a 2026-07-28 result asks them (the retry
            // runs it again); a session asks them now and runs it again here.
            Ok(Err(e)) => match (e.unanswered().cloned(), context.peer(), replay) {
                // (A tool that did not say it asks cannot be run again: its error is final.)
                (Some(_), _, _) if !tool.asks() => refuse(e),
                (Some(asked), _, _) if stateless => {
                    let can_elicit = context
                        .client_capabilities()
                        .is_some_and(|c| c.elicitation.is_some());
                    match self.mrtr() {
                        Some(mrtr) => approval::ask_again(
                            &tools,
                            &asked,
                            cx.get::<Answers>(),
                            &caller,
                            &request,
                            can_elicit,
                            mrtr,
                        ),
                        None => refuse(ToolError::failed("no key to sign the question")),
                    }
                }
                (Some(asked), Some(peer), Some(arguments)) => {
                    let asking = self.answer_in_session(session, arguments, asked, peer);
                    tokio::select! {
                        answer = Box::pin(asking) => answer,
                        () = context.ct().cancelled() => {
                            Err(ErrorData::new(ErrorCode(-32800), "request cancelled", None))
                        }
                    }
                }
                _ => refuse(e),
            },
        }
    }

    /// The questions `tool` asks before it runs, answered: `None` when every one is (the
    /// answers are in `cx`, the request's state used up), else the answer that asks them.
    async fn answer_first(
        &self,
        questions: Vec<Question>,
        first: First<'_>,
        cx: &mut Context,
        request: &mut CallToolRequestParams,
        raw: &mut Option<Bytes>,
    ) -> Result<Option<CallToolResponse>, ErrorData> {
        let mut answers = Answers::new();
        if first.stateless {
            // The state binds to the arguments as a value.
            bind_to_value(request, raw.as_ref())?;
            if request.request_state.is_some() {
                let Some(mrtr) = self.mrtr() else {
                    return Err(ErrorData::invalid_params(
                        "invalid or expired requestState",
                        None,
                    ));
                };
                answers = approval::answers_in(first.caller, request, mrtr)?;
                request.request_state = None;
            }
        }
        let missing: Vec<Question> = questions
            .into_iter()
            .filter(|q| answers.get(&q.key).is_none())
            .collect();
        if !missing.is_empty() {
            let asked = Unanswered { questions: missing };
            let tools = first.tools;
            if first.stateless {
                let can_elicit = first
                    .context
                    .client_capabilities()
                    .is_some_and(|c| c.elicitation.is_some());
                let Some(mrtr) = self.mrtr() else {
                    let e = ToolError::failed("no key to sign the question");
                    return Ok(Some(error_result(tools.model_message(&e)).into()));
                };
                let again = approval::ask_again(
                    tools,
                    &asked,
                    Some(&answers),
                    first.caller,
                    request,
                    can_elicit,
                    mrtr,
                );
                return again.map(Some);
            }
            let Some(peer) = first.context.peer() else {
                let e = ToolError::failed_with(asked);
                return Ok(Some(error_result(tools.model_message(&e)).into()));
            };
            match approval::ask_in_session(&asked, peer, &self.limits).await {
                Ok(responses) => answers = answers.with_responses(&responses),
                Err(reason) => {
                    let why = tools.wording().approval_failed_message(&reason);
                    return Ok(Some(error_result(why).into()));
                }
            }
        }
        cx.insert(answers);
        Ok(None)
    }

    /// A session's call whose tool asked `asked`: the person is asked, and the tool runs again
    /// with every answer so far, until it answers (at most [`ROUNDS`] times).
    async fn answer_in_session(
        &self,
        s: Session<'_>,
        arguments: Value,
        mut asked: Unanswered,
        peer: &Peer<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let refuse = |e: ToolError| Ok(error_result(s.tools.model_message(&e)).into());
        let mut answers = s.cx.get::<Answers>().cloned().unwrap_or_default();
        for _ in 0..ROUNDS {
            let responses = match approval::ask_in_session(&asked, peer, &self.limits).await {
                Ok(responses) => responses,
                Err(reason) => {
                    let why = s.tools.wording().approval_failed_message(&reason);
                    return Ok(error_result(why).into());
                }
            };
            answers = answers.with_responses(&responses);
            let mut cx = Context::clone(s.cx);
            cx.insert(answers.clone());
            let Some(turn) = self.gates.turn(s.key, &self.limits).await else {
                return refuse(ToolError::Busy);
            };
            let again = run(
                s.tools.clone(),
                s.tool.clone(),
                Arc::new(cx),
                CallArguments::Value(arguments.clone()),
                turn,
                &self.pace,
            );
            match tokio::time::timeout(s.timeout, again).await {
                Err(_) => {
                    return refuse(ToolError::TimedOut {
                        seconds: s.timeout.as_secs_f64(),
                    });
                }
                Ok(Ok(out)) => return Ok(success(s.tool, out, s.cx).await.into()),
                Ok(Err(e)) => match e.unanswered() {
                    Some(more) => asked = more.clone(),
                    None => return refuse(e),
                },
            }
        }
        refuse(ToolError::failed(format!(
            "`{}` asked the person {ROUNDS} times without finishing",
            s.tool.name()
        )))
    }
}

/// How many times a session's call asks the person before it gives up.
const ROUNDS: usize = 8;

/// Where a call whose tool asks first came from.
struct First<'a> {
    stateless: bool,
    context: &'a Incoming,
    caller: &'a Caller,
    tools: &'a ToolSet,
}

/// What a session's call that asks questions runs again with.
struct Session<'a> {
    tools: &'a Arc<ToolSet>,
    tool: &'a ToolRef,
    cx: &'a Arc<Context>,
    key: &'a str,
    timeout: Duration,
}

/// A call of [`CALL_TOOL`] made the call of the tool it names, with its arguments; what is
/// wrong with it otherwise (for the model to repair). Nothing for any other call, or when the
/// set has a tool of its own by that name.
fn unwrap_call_tool(
    tools: &ToolSet,
    request: &mut CallToolRequestParams,
    raw: &mut Option<Bytes>,
) -> Option<String> {
    if request.name != CALL_TOOL || tools.get(CALL_TOOL).is_some() {
        return None;
    }
    let text = raw.take();
    let outer = match &text {
        Some(text) => match crate::arguments::parse(text) {
            Ok(outer) => outer,
            Err(e) => {
                return Some(format!(
                    "the arguments of `{CALL_TOOL}` are not a JSON object: {e}"
                ));
            }
        },
        None => request.arguments.take().unwrap_or_default(),
    };
    // The named tool's own arguments, as their text when the call's came as text.
    *raw = text.and_then(|text| {
        let inner = tool_runtime::json::member(&text, 0, "arguments")?;
        (text[inner.start] == b'{').then(|| text.slice(inner))
    });
    let outer = Value::Object(outer);
    let (name, arguments) = match tool_runtime::unwrap_call_tool(&outer) {
        Ok((name, Value::Object(arguments))) => (name.to_owned(), arguments),
        Ok((_, other)) => return Some(format!("`{CALL_TOOL}` got arguments {other}")),
        Err(wrong) => return Some(wrong),
    };
    request.name = name.into();
    request.arguments = Some(arguments);
    None
}

/// The arguments the transport cut out of the message: in the request's extensions (stdio), or
/// in its HTTP parts' (the body check).
fn raw_arguments(context: &Incoming) -> Option<Bytes> {
    if let Some(RawArguments(text)) = context.extensions().get::<RawArguments>() {
        return Some(text.clone());
    }
    #[cfg(feature = "http")]
    if let Some(RawArguments(text)) = context
        .parts()
        .and_then(|p| p.extensions.get::<RawArguments>())
    {
        return Some(text.clone());
    }
    None
}

/// The arguments as the value an approval or a question binds to, parsed exactly from their
/// text when the transport cut them out (the call itself still reads the text).
fn bind_to_value(
    request: &mut CallToolRequestParams,
    raw: Option<&Bytes>,
) -> Result<(), ErrorData> {
    if let Some(text) = raw {
        request.arguments = Some(crate::arguments::parse(text).map_err(|e| {
            ErrorData::invalid_params(format!("the arguments are not a JSON object: {e}"), None)
        })?);
    }
    Ok(())
}
