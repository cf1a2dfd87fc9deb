//! Approval by another person: a tool whose calls someone other than the caller approves (a
//! manager approving an employee's leave), named with [`McpServer::with_approver`].
//!
//! Such a call runs only as a task: it waits `input_required` (for days if the task store keeps
//! it that long) and its owner cannot approve it, even one holding the grant (`tasks/update` is
//! refused, naming the grant; cancelling stays the owner's). A caller that cannot follow a task,
//! or that the server could not name again (stdio), is told the call needs someone else's
//! approval, and nothing runs. Whoever else holds the grant finds the waiting calls and decides
//! them through the
//! [`ApprovalDesk`] the server puts in each call's [`Context`] (the host exposes it as tools of
//! its own, with its own checks, such as "only the owner's manager"). An approved call runs
//! once, on the replica that took the decision, as its owner: with the context the host's
//! context function makes for the owner's principal and address, kept with the task (a
//! [`Caller`] with no HTTP request: a context function that reads headers cannot rebuild it).

use serde_json::Value;
use tool_runtime::task::{Claim, TaskRecord};
use tool_runtime::{Context, Grants, Holder, StoreError};

use crate::caller::{Principal, owner_from};
use crate::export::error_result;
use crate::server::McpServer;
use crate::task::Job;

/// How many waiting calls [`ApprovalDesk::waiting`] reads from the task store at most (the
/// longest waiting first); those the approver may decide are answered.
const WAITING_READ: usize = 1_000;

impl McpServer {
    /// Puts the approval desk of the caller `key`, whose context `cx` is, in it, when some tool
    /// is approved by others.
    pub(crate) fn with_desk(&self, cx: &mut Context, key: &str) {
        if !self.approvers.is_empty() {
            let grants = cx.get::<Grants>().cloned();
            cx.insert(ApprovalDesk {
                server: self.clone(),
                decider: key.to_owned(),
                grants,
            });
        }
    }
}

/// A waiting call as the desk shows it: the owner's principal without the token's other
/// claims (the approver needs who, not everything the token said).
fn waiting(t: TaskRecord) -> Waiting {
    let owner = owner_from(t.caller.as_ref())
        .and_then(|c| c.principal)
        .map(|mut p| {
            p.claims = serde_json::Map::new();
            p
        });
    Waiting {
        owner,
        arguments: t.arguments.unwrap_or(Value::Null),
        task: t.id,
        tool: t.tool,
        since_ms: t.updated_ms,
    }
}

/// Where a person decides the calls waiting for their approval: in the [`Context`] of every
/// call on a server that names approvers ([`McpServer::with_approver`]). Only calls of tools
/// whose approvers' grant the deciding caller's [`Grants`] hold are shown and decided, never
/// the caller's own, and only calls whose owner the server knew (a principal or an address:
/// not stdio's); any other task is answered as unknown.
#[derive(Clone)]
pub struct ApprovalDesk {
    server: McpServer,
    /// The deciding caller ([`Caller::key`]): never the owner of what they decide.
    decider: String,
    /// The deciding caller's grants.
    grants: Option<Grants>,
}

impl std::fmt::Debug for ApprovalDesk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApprovalDesk").finish_non_exhaustive()
    }
}

/// A call waiting for someone's approval, as [`ApprovalDesk::waiting`] shows it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Waiting {
    /// The task's id: what [`ApprovalDesk::decide`] takes.
    pub task: String,
    /// The tool it would run.
    pub tool: String,
    /// Its arguments, as validated (defaults filled in).
    pub arguments: Value,
    /// Who asked for it, when they were authenticated.
    pub owner: Option<Principal>,
    /// Since when it waits, in milliseconds since the Unix epoch.
    pub since_ms: u64,
}

/// What [`ApprovalDesk::decide`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Decided {
    /// Approved: the call runs now (here), and its owner finds the result in the task.
    Approved,
    /// Rejected: the call was dropped; its task completes with the refusal.
    Rejected,
}

/// Why [`ApprovalDesk::decide`] decided nothing.
#[derive(Debug)]
#[non_exhaustive]
pub enum DeskError {
    /// No call of that id waits for this caller's decision: unknown, another's to decide,
    /// decided already, cancelled or expired.
    NotWaiting {
        /// The id given.
        task: String,
    },
    /// The owner may no longer make the call (the host's context function refused them, or
    /// their grants no longer allow the tool): it was dropped, and its task failed saying why.
    OwnerRefused {
        /// Why.
        reason: String,
    },
    /// The task store or the approval store failed.
    Store(StoreError),
}

impl std::fmt::Display for DeskError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeskError::NotWaiting { task } => {
                write!(f, "no call {task} waits for your decision")
            }
            DeskError::OwnerRefused { reason } => write!(
                f,
                "the call was dropped: its owner may no longer make it ({reason})"
            ),
            DeskError::Store(e) => write!(f, "a store failed: {e}"),
        }
    }
}

impl std::error::Error for DeskError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DeskError::Store(e) => Some(e),
            _ => None,
        }
    }
}

impl From<StoreError> for DeskError {
    fn from(e: StoreError) -> Self {
        DeskError::Store(e)
    }
}

impl ApprovalDesk {
    /// Whether this caller may decide the task: a call of a tool whose approvers' grant they
    /// hold, not their own, whose owner is known.
    fn decides(&self, task: &TaskRecord) -> bool {
        task.caller.is_some()
            && task.owner != self.decider
            && self
                .server
                .approver_of(&task.tool)
                .is_some_and(|grant| self.grants.as_ref().is_some_and(|g| g.allows(grant)))
    }

    /// The tools whose calls this caller approves.
    fn tools(&self) -> Vec<String> {
        let Some(grants) = &self.grants else {
            return Vec::new();
        };
        self.server
            .approvers
            .iter()
            .filter(|(_, grant)| grants.allows(grant))
            .map(|(tool, _)| tool.clone())
            .collect()
    }

    /// The calls waiting for a decision this caller may take, the longest waiting first (at
    /// most 1,000).
    pub async fn waiting(&self) -> Result<Vec<Waiting>, DeskError> {
        let tasks = self
            .server
            .tasks
            .waiting(&self.tools(), WAITING_READ)
            .await?;
        Ok(tasks
            .into_iter()
            .filter(|t| self.decides(t))
            .map(waiting)
            .collect())
    }

    /// The call waiting as `task`, if this caller may decide it.
    pub async fn get(&self, task: &str) -> Result<Option<Waiting>, DeskError> {
        let found = self.server.tasks.waiting_task(task).await?;
        Ok(found.filter(|t| self.decides(t)).map(waiting))
    }

    /// Approves (`approve`) or rejects the call waiting as `task`. One decision takes it,
    /// however many arrive at once on however many replicas; an approved call runs here, as
    /// its owner, and its result is the task's.
    pub async fn decide(&self, task: &str, approve: bool) -> Result<Decided, DeskError> {
        let server = &self.server;
        let not_waiting = || DeskError::NotWaiting {
            task: task.to_owned(),
        };
        let found = server.tasks.waiting_task(task).await?;
        let Some(found) = found.filter(|t| self.decides(t)) else {
            return Err(not_waiting());
        };
        let (task, ticket) = match server.tasks.claim(&found.id, &found.owner).await? {
            Claim::Won { task, ticket } => (task, ticket),
            Claim::NotWaiting(_) | Claim::Unknown => return Err(not_waiting()),
        };
        let tools = server.current();
        let wording = tools.wording();
        let Some(ticket) = ticket else {
            server
                .finish(&task.id, &error_result(wording.not_pending.to_string()))
                .await;
            return Err(not_waiting());
        };
        if !approve {
            let said = match tools.reject(&ticket).await {
                Ok(_) => wording.approval_declined.to_string(),
                Err(e) => wording.approval_failed_message(e.message()),
            };
            server.finish(&task.id, &error_result(said)).await;
            return Ok(Decided::Rejected);
        }
        // The held call runs as its owner: the context the host makes for the owner's
        // principal and address, which must still allow the tool.
        let owned = match owner_from(task.caller.as_ref()) {
            Some(owner) => server.admit(owner).await.map_err(|refusal| refusal.message),
            None => Err("who asked for it could not be read back".to_owned()),
        };
        let owned = match owned {
            Ok(owned) => tools
                .get(&task.tool)
                .filter(|t| t.permits(&owned))
                .map(|t| (t.clone(), owned))
                .ok_or_else(|| format!("`{}` is not available to them", task.tool)),
            Err(reason) => Err(reason),
        };
        let (tool, mut owned) = match owned {
            Ok(found) => found,
            Err(reason) => {
                let _ = tools.reject(&ticket).await;
                server.fail(&task.id, &reason).await;
                return Err(DeskError::OwnerRefused { reason });
            }
        };
        // The held call may have left the approval store while its task waited (the store's
        // own bounds: its age cap, its room per owner): the approver is told it no longer
        // waits, and the task ends saying so, rather than "approved" with nothing to run. The
        // claim made the call this replica's alone, so taking it and holding it again races
        // with nobody.
        let store = tools.approvals();
        let kept = match store.take(&ticket).await {
            Ok(Some(held)) => store.hold(held).await.map(|()| true),
            Ok(None) => Ok(false),
            Err(e) => Err(e),
        };
        match kept {
            Ok(true) => {}
            Ok(false) => {
                server
                    .finish(&task.id, &error_result(wording.not_pending.to_string()))
                    .await;
                return Err(not_waiting());
            }
            Err(e) => {
                let said = wording.approval_failed_message(e.message());
                server.finish(&task.id, &error_result(said)).await;
                return Err(DeskError::Store(e));
            }
        }
        if owned.get::<Holder>().is_none() {
            owned.insert(Holder {
                owner: task.owner.clone(),
                ttl: Some(server.tasks.ttl()),
            });
        }
        server.with_desk(&mut owned, &task.owner);
        server.spawn_task(
            task.id,
            task.owner,
            tools.clone(),
            tool,
            owned,
            Job::Resume(ticket),
        );
        Ok(Decided::Approved)
    }
}
