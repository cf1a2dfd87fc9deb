//! `tasks/update`: a person's answers to a task waiting for input (the tool's questions, or the
//! approval of a held call), which run the call again here.

use rmcp::model::{ElicitResult, ElicitationAction, ErrorData, UpdateTaskParams};
use tool_runtime::Answers;
use tool_runtime::task::{Answered, Claim, TaskStatus};

use crate::approval::{APPROVAL, approves};
use crate::arguments::CallArguments;
use crate::export::error_result;
use crate::incoming::Incoming;
use crate::server::McpServer;
use crate::task::{Job, store_failed, unknown_task};

impl McpServer {
    /// `tasks/update`: the answers to what a task waits for. An approval (exactly
    /// `{"approve": true}`, accepted) takes the task once, however many answers arrive, and
    /// runs the held call here; anything else drops it, and the task completes with the refusal.
    /// Answers to keys it does not wait for are ignored.
    pub(crate) async fn update_task(
        &self,
        params: UpdateTaskParams,
        request: Incoming,
    ) -> Result<(), ErrorData> {
        let (caller, mut cx) = self.context_for(&request).await?;
        let owner = caller.key();
        self.with_desk(&mut cx, &owner);
        let task = match self.tasks.get(&params.task_id, &owner).await {
            Ok(Some(task)) => task,
            Ok(None) => return Err(unknown_task(&params.task_id)),
            Err(e) => return Err(store_failed(&e)),
        };
        if task.status != TaskStatus::InputRequired {
            return Ok(());
        }
        // The tool's own questions: answered, perhaps some at a time; the last answer runs the
        // tool again here with all of them.
        if task.ticket.is_none() && task.arguments.is_some() {
            let responses = params.input_responses.into_iter().collect();
            let (task, arguments, answers) =
                match self.tasks.answer(&task.id, &owner, &responses).await {
                    Ok(Answered::Complete {
                        task,
                        arguments,
                        answers,
                    }) => (task, arguments, answers),
                    Ok(_) => return Ok(()),
                    Err(e) => return Err(store_failed(&e)),
                };
            let tools = self.current();
            let Some(tool) = tools.get(&task.tool).cloned() else {
                self.fail(&task.id, &tools.wording().not_pending).await;
                return Ok(());
            };
            cx.insert(Answers::from_responses(&answers));
            let job = Job::Call(CallArguments::Value(arguments));
            self.spawn_task(task.id, owner, tools.clone(), tool, cx, job);
            return Ok(());
        }
        let Some(answer) = params.input_responses.get(APPROVAL) else {
            return Ok(());
        };
        // A call someone else approves waits for them; its owner may still cancel it.
        if let Some(grant) = self.approver_of(&task.tool) {
            return Err(ErrorData::invalid_params(
                format!(
                    "this task waits for approval by someone else holding `{grant}`: its owner cannot approve it, only cancel it"
                ),
                None,
            ));
        }
        let approved = serde_json::from_value::<ElicitResult>(answer.clone())
            .is_ok_and(|r| r.action == ElicitationAction::Accept && approves(r.content.as_ref()));
        let (task, ticket) = match self.tasks.claim(&task.id, &owner).await {
            Ok(Claim::Won { task, ticket }) => (task, ticket),
            Ok(_) => return Ok(()),
            Err(e) => return Err(store_failed(&e)),
        };
        let tools = self.current();
        let wording = tools.wording();
        let ran = match (ticket, tools.get(&task.tool)) {
            (Some(ticket), Some(tool)) if approved => {
                if cx.get::<tool_runtime::Holder>().is_none() {
                    cx.insert(tool_runtime::Holder {
                        owner: owner.clone(),
                        ttl: Some(self.tasks.ttl()),
                    });
                }
                let tool = tool.clone();
                self.spawn_task(task.id, owner, tools.clone(), tool, cx, Job::Resume(ticket));
                return Ok(());
            }
            (Some(ticket), _) => match tools.reject(&ticket).await {
                Ok(_) if approved => wording.not_pending.to_string(),
                Ok(_) => wording.approval_declined.to_string(),
                Err(e) => wording.approval_failed_message(e.message()),
            },
            (None, _) => wording.not_pending.to_string(),
        };
        self.finish(&task.id, &error_result(ran)).await;
        Ok(())
    }
}
