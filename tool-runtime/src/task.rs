//! Tasks: calls that outlive their request. A tool that may run long, or that waits for a
//! person, can run as a *task*: the caller gets a handle at once ([`TaskRecord::id`], 128 random
//! bits), and asks later how it stands, answers what it waits for, or cancels it, from another
//! connection or another replica.
//!
//! One place keeps the rules ([`Tasks`]); a [`TaskStore`] only keeps records and replaces one
//! when nobody changed it in between (a version number), so every store (this process's memory,
//! `tool-runtime-sqlite`, `tool-runtime-postgres`) gives the same guarantees:
//!
//! - a task is its owner's: another caller asking for it is answered as for a task that does
//!   not exist ([`Tasks::get`] with the owner);
//! - a task runs on one replica at a time, which holds a *lease* it renews while the tool runs;
//!   a replica that dies leaves its tasks `working` until their lease ends, and then the next
//!   reader marks them `failed` with the reason: never `working` forever, never run again;
//! - a task waiting for input (an approval) is taken by one answer only: a hundred approvals at
//!   once run it once ([`Tasks::claim`]);
//! - a finished task keeps its outcome until its time to live ends; one owner holds at most
//!   [`Tasks::with_per_owner`] tasks: a new one makes room by forgetting that owner's oldest
//!   finished task, and is refused only when all of them are still running or waiting.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::approval::{StoreError, new_ticket};
use crate::future::BoxFuture;

/// Whether a tool may run as a task (`#[tool(task = "optional")]`, [`ToolDef::task`](crate::ToolDef::task)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TaskSupport {
    /// Always answered in its request (the default).
    #[default]
    Forbidden,
    /// Runs as a task when the caller can follow one, else in its request.
    Optional,
    /// Only as a task: a caller that cannot follow one is refused.
    Required,
}

/// Where a task stands: `working` and `input_required` change, the other three never do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Running (on the replica holding its lease).
    Working,
    /// Waiting for an answer (an approval): [`TaskRecord::input`] says what it asks.
    InputRequired,
    /// Ran; [`TaskRecord::outcome`] is its result.
    Completed,
    /// Could not finish; [`TaskRecord::outcome`] is the error, [`TaskRecord::message`] why.
    Failed,
    /// Cancelled by its owner before its tool changed anything: the tool never ran, or stopped
    /// at its commit point ([`Commit`](crate::Commit)), or is read-only.
    Cancelled,
}

impl TaskStatus {
    /// `completed`, `failed` or `cancelled`: it never changes again.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }

    /// Its name in the protocol: `working`, `input_required`, ...
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    /// The status named `name`, as [`as_str`](Self::as_str) writes it.
    pub fn parse(name: &str) -> Option<TaskStatus> {
        [
            TaskStatus::Working,
            TaskStatus::InputRequired,
            TaskStatus::Completed,
            TaskStatus::Failed,
            TaskStatus::Cancelled,
        ]
        .into_iter()
        .find(|s| s.as_str() == name)
    }
}

/// One task as a store keeps it: plain data, written whole.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskRecord {
    /// Its handle: 128 random bits, in hex.
    pub id: String,
    /// The caller it belongs to (a principal, or an address when nobody authenticated).
    pub owner: String,
    /// The tool it runs.
    pub tool: String,
    /// Where it stands.
    pub status: TaskStatus,
    /// What a person reads about it (progress, or why it failed).
    pub message: Option<String>,
    /// When it was made and last changed, in milliseconds since the Unix epoch.
    pub created_ms: u64,
    /// When it last changed.
    pub updated_ms: u64,
    /// When it is forgotten, whatever its status (its time to live ends).
    pub expires_ms: u64,
    /// While `input_required`: what it asks (the host's shape; MCP's `inputRequests`).
    pub input: Option<Value>,
    /// While `input_required`: the ticket of the call held for approval
    /// ([`ApprovalStore`](crate::ApprovalStore)).
    pub ticket: Option<String>,
    /// When finished: the result (`completed`) or the error (`failed`), in the host's shape.
    pub outcome: Option<Value>,
    /// While `working`: the replica running it.
    pub runner: Option<String>,
    /// While `working`: when the runner's lease ends unless renewed.
    pub lease_ms: Option<u64>,
    /// Who the owner is, as the server that made the task knew them (opaque to the store; for
    /// MCP the authenticated principal and the peer's address), so a held call another person
    /// approves runs as its owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller: Option<Value>,
    /// While `input_required`: the call's arguments, for the person who approves it, or to run
    /// the tool again with the answers to its questions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    /// While `input_required` for the tool's own questions: the answers given so far
    /// (elicitation results by key; see [`Answers`](crate::Answers)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers: Option<Value>,
    /// While `working`: its tool has passed its commit point (or, committing from its start,
    /// has started): a cancel no longer stops it, and the task ends with what the tool did.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub committed: bool,
    /// Bumped by every change: a store replaces a record only over the version it was read at.
    pub version: u64,
}

/// Milliseconds since the Unix epoch, now.
pub fn unix_now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Where tasks are kept. It keeps records and nothing else: the rules are [`Tasks`]'. A store
/// shared by replicas must make [`replace`](TaskStore::replace) atomic (one `UPDATE … WHERE
/// version = …`) and [`create`](TaskStore::create)'s count and insert one transaction.
pub trait TaskStore: Send + Sync {
    /// Keeps `task`. When its owner already has `per_owner` tasks not yet expired at
    /// `task.created_ms`, the owner's finished task that expires first is forgotten to make
    /// room; when none of them is finished, nothing is kept and the answer is `Ok(false)`.
    fn create<'a>(
        &'a self,
        task: &'a TaskRecord,
        per_owner: usize,
    ) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// The task `id`, if kept (expired or not: the rules decide).
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>>;

    /// Replaces the task `task.id` with `task` (its `version` one more than `read_version`) if
    /// the kept one is still at `read_version`: `Ok(false)` when someone changed it in between
    /// (or it is gone).
    fn replace<'a>(
        &'a self,
        task: &'a TaskRecord,
        read_version: u64,
    ) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// Forgets the tasks (and the [kept results](KeptResult)) whose time to live ended before
    /// `now_ms`; how many.
    fn forget_expired(&self, now_ms: u64) -> BoxFuture<'_, Result<usize, StoreError>>;

    /// Keeps `result` within `bounds`, in one step: expired results are forgotten first; at its
    /// owner's bound, the owner's oldest result gives way (never another owner's); then the
    /// oldest results give way until the store's count and bytes bounds hold with it.
    /// `Ok(false)` (nothing kept) when it alone is larger than the bytes bound. A store that
    /// cannot keep results keeps this default, which says so (a cut result then has no link).
    fn keep_result<'a>(
        &'a self,
        result: &'a KeptResult,
        bounds: KeptBounds,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        let _ = (result, bounds);
        Box::pin(std::future::ready(Err(StoreError::new(
            "this task store cannot keep results",
        ))))
    }

    /// The result kept as `id`, if kept (expired or not, whoever's: the rules decide).
    fn kept_result<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<KeptResult>, StoreError>> {
        let _ = id;
        Box::pin(std::future::ready(Ok(None)))
    }

    /// At most `limit` tasks `input_required` for an approval (holding a
    /// [`ticket`](TaskRecord::ticket)) of one of `tools`, whose time to live has not ended at
    /// `now_ms`, any owner's, those waiting longest first: what a person who approves other
    /// people's calls is shown ([`Tasks::waiting`]). A store that cannot list them keeps this
    /// default, which says so.
    fn waiting<'a>(
        &'a self,
        now_ms: u64,
        tools: &'a [String],
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<TaskRecord>, StoreError>> {
        let _ = (now_ms, tools, limit);
        Box::pin(std::future::ready(Err(StoreError::new(
            "this task store cannot list the tasks waiting for input",
        ))))
    }
}

/// The tasks of `tasks` [`TaskStore::waiting`] answers, in its order: every store sorts the
/// same way.
pub fn waiting_first<'a>(
    tasks: impl IntoIterator<Item = &'a TaskRecord>,
    now_ms: u64,
    tools: &[String],
    limit: usize,
) -> Vec<TaskRecord> {
    let mut waiting: Vec<TaskRecord> = tasks
        .into_iter()
        .filter(|t| {
            t.status == TaskStatus::InputRequired
                && t.ticket.is_some()
                && t.expires_ms > now_ms
                && tools.contains(&t.tool)
        })
        .cloned()
        .collect();
    waiting.sort_by(|a, b| (a.updated_ms, &a.id).cmp(&(b.updated_ms, &b.id)));
    waiting.truncate(limit);
    waiting
}

/// A call's whole result, kept when what its caller received was cut to the tool's bound
/// ([`Tool::max_result_chars`](crate::Tool::max_result_chars)): its owner reads it back, on any
/// replica sharing the store, until it expires.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct KeptResult {
    /// Its id: 128 random bits, in hex.
    pub id: String,
    /// The caller it belongs to (as [`TaskRecord::owner`]).
    pub owner: String,
    /// The result, whole.
    pub text: String,
    /// When it was kept, in milliseconds since the Unix epoch (the oldest give way first).
    pub kept_ms: u64,
    /// When it is forgotten.
    pub expires_ms: u64,
}

impl KeptResult {
    /// A kept result as a store reads it back.
    pub fn new(id: String, owner: String, text: String, kept_ms: u64, expires_ms: u64) -> Self {
        KeptResult {
            id,
            owner,
            text,
            kept_ms,
            expires_ms,
        }
    }
}

/// How much a store keeps of cut results ([`TaskStore::keep_result`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct KeptBounds {
    /// The most results kept at once.
    pub most: usize,
    /// The most results of one owner (their oldest give way first).
    pub most_each: usize,
    /// The most bytes kept at once (every result's text together).
    pub most_bytes: usize,
}

impl KeptBounds {
    /// At most `most` results, `most_each` of one owner, `most_bytes` bytes.
    pub fn new(most: usize, most_each: usize, most_bytes: usize) -> Self {
        KeptBounds {
            most,
            most_each,
            most_bytes,
        }
    }

    /// 256 results, 32 an owner, 128 MiB.
    pub const DEFAULT: KeptBounds = KeptBounds {
        most: 256,
        most_each: 32,
        most_bytes: 128 * 1024 * 1024,
    };
}

impl Default for KeptBounds {
    fn default() -> Self {
        KeptBounds::DEFAULT
    }
}

/// Tasks in this process's memory: for one server, or tests. At most
/// [`MemoryTasks::CAPACITY`] (creating one more, when none has expired, is refused).
#[derive(Debug, Default)]
pub struct MemoryTasks {
    tasks: Mutex<HashMap<String, TaskRecord>>,
    /// Kept results, oldest first.
    kept: Mutex<std::collections::VecDeque<KeptResult>>,
}

impl MemoryTasks {
    /// How many tasks one process keeps at most.
    pub const CAPACITY: usize = 10_000;

    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, TaskRecord>> {
        self.tasks.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl TaskStore for MemoryTasks {
    fn create<'a>(
        &'a self,
        task: &'a TaskRecord,
        per_owner: usize,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        let mut tasks = self.lock();
        let now = task.created_ms;
        tasks.retain(|_, t| t.expires_ms > now);
        let owned = tasks.values().filter(|t| t.owner == task.owner).count();
        if owned >= per_owner {
            let oldest_done = tasks
                .values()
                .filter(|t| t.owner == task.owner && t.status.is_terminal())
                .min_by_key(|t| (t.expires_ms, t.id.clone()))
                .map(|t| t.id.clone());
            if let Some(id) = oldest_done {
                tasks.remove(&id);
            }
        }
        let owned = tasks.values().filter(|t| t.owner == task.owner).count();
        let created = owned < per_owner && tasks.len() < Self::CAPACITY;
        if created {
            tasks.insert(task.id.clone(), task.clone());
        }
        Box::pin(std::future::ready(Ok(created)))
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        let found = self.lock().get(id).cloned();
        Box::pin(std::future::ready(Ok(found)))
    }

    fn replace<'a>(
        &'a self,
        task: &'a TaskRecord,
        read_version: u64,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        let mut tasks = self.lock();
        let replaced = match tasks.get_mut(&task.id) {
            Some(kept) if kept.version == read_version => {
                *kept = task.clone();
                true
            }
            _ => false,
        };
        Box::pin(std::future::ready(Ok(replaced)))
    }

    fn forget_expired(&self, now_ms: u64) -> BoxFuture<'_, Result<usize, StoreError>> {
        let mut tasks = self.lock();
        let before = tasks.len();
        tasks.retain(|_, t| t.expires_ms > now_ms);
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let before_kept = kept.len();
        kept.retain(|k| k.expires_ms > now_ms);
        let forgotten = before - tasks.len() + before_kept - kept.len();
        Box::pin(std::future::ready(Ok(forgotten)))
    }

    fn keep_result<'a>(
        &'a self,
        result: &'a KeptResult,
        bounds: KeptBounds,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        if result.text.len() > bounds.most_bytes {
            return Box::pin(std::future::ready(Ok(false)));
        }
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.retain(|k| k.expires_ms > result.kept_ms);
        // One owner's results make way for its own first, never for another's.
        if kept.iter().filter(|k| k.owner == result.owner).count() >= bounds.most_each
            && let Some(at) = kept.iter().position(|k| k.owner == result.owner)
        {
            kept.remove(at);
        }
        let mut bytes: usize = kept.iter().map(|k| k.text.len()).sum::<usize>() + result.text.len();
        while kept.len() >= bounds.most || bytes > bounds.most_bytes {
            let Some(oldest) = kept.pop_front() else {
                break;
            };
            bytes -= oldest.text.len();
        }
        kept.push_back(result.clone());
        Box::pin(std::future::ready(Ok(true)))
    }

    fn kept_result<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<KeptResult>, StoreError>> {
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let found = kept.iter().find(|k| k.id == id).cloned();
        Box::pin(std::future::ready(Ok(found)))
    }

    fn waiting<'a>(
        &'a self,
        now_ms: u64,
        tools: &'a [String],
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<TaskRecord>, StoreError>> {
        let waiting = waiting_first(self.lock().values(), now_ms, tools, limit);
        Box::pin(std::future::ready(Ok(waiting)))
    }
}

/// Why a task could not be made.
#[derive(Debug)]
#[non_exhaustive]
pub enum TaskError {
    /// The owner already has as many tasks as it may ([`Tasks::with_per_owner`]).
    TooMany {
        /// How many one owner may have.
        per_owner: usize,
    },
    /// The store failed.
    Store(StoreError),
}

impl std::fmt::Display for TaskError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TaskError::TooMany { per_owner } => write!(
                f,
                "too many tasks: a caller may have {per_owner} running or waiting at a time; wait for one to finish, or cancel one"
            ),
            TaskError::Store(e) => write!(f, "the task store failed: {e}"),
        }
    }
}

impl std::error::Error for TaskError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TaskError::Store(e) => Some(e),
            TaskError::TooMany { .. } => None,
        }
    }
}

impl From<StoreError> for TaskError {
    fn from(e: StoreError) -> Self {
        TaskError::Store(e)
    }
}

/// What [`Tasks::claim`] found.
#[derive(Debug)]
pub enum Claim {
    /// This replica took the task: it is `working` here now; run the held call of `ticket`.
    Won {
        /// The task as it is now.
        task: TaskRecord,
        /// The held call's ticket, if the task waited for an approval.
        ticket: Option<String>,
    },
    /// The task no longer waits (another answer took it, it was cancelled or finished).
    NotWaiting(TaskRecord),
    /// No such task for this owner.
    Unknown,
}

/// What a task waiting for input holds, to run on with once answered
/// ([`Tasks::wait_for_input`]).
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Held {
    /// The ticket of the call held for approval.
    pub ticket: Option<String>,
    /// The call's arguments.
    pub arguments: Option<Value>,
    /// The answers to the tool's questions given so far.
    pub answers: Option<Value>,
}

impl Held {
    /// A call held for approval under `ticket`, with its `arguments` (for who approves it).
    pub fn approval(ticket: String, arguments: Value) -> Held {
        Held {
            ticket: Some(ticket),
            arguments: Some(arguments),
            answers: None,
        }
    }

    /// A call whose tool asked questions: its `arguments`, and the `answers` given so far.
    pub fn questions(arguments: Value, answers: Value) -> Held {
        Held {
            ticket: None,
            arguments: Some(arguments),
            answers: Some(answers),
        }
    }
}

/// What [`Tasks::answer`] did.
#[derive(Debug)]
pub enum Answered {
    /// Every question is answered and this replica took the task: run the tool again here
    /// with `arguments` and `answers`.
    Complete {
        /// The task as it is now (`working` here).
        task: Box<TaskRecord>,
        /// The call's arguments.
        arguments: Value,
        /// Every answer given.
        answers: Value,
    },
    /// Some questions are still open: the task waits for them.
    Partial,
    /// The task does not wait for answers to its questions (it waits for an approval, or
    /// nothing; the answers were ignored).
    NotWaiting,
    /// No such task for this owner.
    Unknown,
}

/// The message a task left `working` by a replica that stopped gets.
pub const RUNNER_LOST: &str =
    "the replica running this task stopped before it finished; it was not run again";

/// The message of a task whose cancel came after its tool committed.
pub const CANCEL_TOO_LATE: &str = "cancel asked after the tool had started its change: it runs to its end, and the task says what it did";

/// What [`Tasks::cancel`] did.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Cancel {
    /// The task is `cancelled`: nothing of its tool's change was made. `held` is the ticket of
    /// the call it held for approval (drop it); `was_running` says whether its tool may still be
    /// running somewhere (stop it: it will not commit).
    Stopped {
        /// The ticket of the call held for approval.
        held: Option<String>,
        /// Its tool had started (on `runner`).
        was_running: bool,
    },
    /// Its tool had committed: the task goes on, and ends with what the tool did.
    TooLate(TaskRecord),
    /// It had already finished, as this record says.
    Finished(TaskRecord),
}

/// How many times a change is tried again when another replica changed the task in between.
const ATTEMPTS: usize = 16;

/// The task rules over one [`TaskStore`]: every replica of a server makes one over the same
/// store (each with its own replica id), and asks it for everything.
#[derive(Clone)]
pub struct Tasks {
    store: Arc<dyn TaskStore>,
    replica: Arc<str>,
    ttl: Duration,
    per_owner: usize,
    lease: Duration,
    poll_interval: Duration,
    kept_for: Duration,
    kept_bounds: KeptBounds,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("replica", &self.replica)
            .field("ttl", &self.ttl)
            .field("per_owner", &self.per_owner)
            .field("lease", &self.lease)
            .finish_non_exhaustive()
    }
}

impl Default for Tasks {
    fn default() -> Self {
        Tasks::new(MemoryTasks::new())
    }
}

impl Tasks {
    /// How long a task is kept unless told otherwise: an hour.
    pub const TTL: Duration = Duration::from_secs(3600);
    /// How many tasks one owner may have at a time unless told otherwise.
    pub const PER_OWNER: usize = 32;
    /// How long a runner's lease lasts unless told otherwise (renewed every third of it).
    pub const LEASE: Duration = Duration::from_secs(30);

    /// The rules over `store`, for a replica with a random id.
    pub fn new(store: impl TaskStore + 'static) -> Self {
        Tasks::shared(Arc::new(store))
    }

    /// The rules over a store shared with other parts of the host.
    pub fn shared(store: Arc<dyn TaskStore>) -> Self {
        let replica = new_ticket().unwrap_or_else(|_| format!("replica-{}", unix_now_ms()));
        Tasks {
            store,
            replica: replica.into(),
            ttl: Self::TTL,
            per_owner: Self::PER_OWNER,
            lease: Self::LEASE,
            poll_interval: Duration::from_millis(500),
            kept_for: Self::KEPT_FOR,
            kept_bounds: KeptBounds::DEFAULT,
        }
    }

    /// How long a cut result's whole is kept unless told otherwise: an hour.
    pub const KEPT_FOR: Duration = Duration::from_secs(3600);

    /// Cut results' wholes kept `kept_for` (at least a second), within `bounds`.
    pub fn with_kept_results(mut self, kept_for: Duration, bounds: KeptBounds) -> Self {
        self.kept_for = kept_for.max(Duration::from_secs(1));
        self.kept_bounds = bounds;
        self
    }

    /// Keeps `text`, the whole of a result its caller `owner` received cut, for `owner` to read
    /// back ([`kept_result`](Self::kept_result), on any replica sharing the store): its id, or
    /// `None` when it is larger than everything kept may be.
    pub async fn keep_result(&self, owner: &str, text: &str) -> Result<Option<String>, StoreError> {
        let now = unix_now_ms();
        let result = KeptResult {
            id: new_ticket()?,
            owner: owner.to_owned(),
            text: text.to_owned(),
            kept_ms: now,
            expires_ms: now.saturating_add(ms(self.kept_for)),
        };
        let kept = self.store.keep_result(&result, self.kept_bounds).await?;
        Ok(kept.then_some(result.id))
    }

    /// The result kept as `id`, if it is `owner`'s and has not expired (another owner's is
    /// answered as none).
    pub async fn kept_result(&self, id: &str, owner: &str) -> Result<Option<String>, StoreError> {
        let found = self.store.kept_result(id).await?;
        Ok(found
            .filter(|k| k.owner == owner && k.expires_ms > unix_now_ms())
            .map(|k| k.text))
    }

    /// Tasks kept for `ttl` (at least a second) after they are made and after each change of
    /// their status (waiting for input, running again, finished), finished or not; a task is
    /// never forgotten while its runner holds its lease (a tool that runs longer than `ttl`).
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl.max(Duration::from_secs(1));
        self
    }

    /// At most `per_owner` tasks of one owner at a time (at least one).
    pub fn with_per_owner(mut self, per_owner: usize) -> Self {
        self.per_owner = per_owner.max(1);
        self
    }

    /// A runner's lease: a replica that stops renewing it for this long has its tasks marked
    /// failed (at least 300 ms).
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_millis(300));
        self
    }

    /// How often a client is told to ask how a task stands.
    pub fn with_poll_interval(mut self, every: Duration) -> Self {
        self.poll_interval = every;
        self
    }

    /// This replica's id (a runner's name in the store).
    pub fn replica(&self) -> &str {
        &self.replica
    }

    /// How long tasks are kept.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// How often a runner renews its lease: a third of it.
    pub fn renew_every(&self) -> Duration {
        self.lease / 3
    }

    /// How often a client is told to poll.
    pub fn poll_interval(&self) -> Duration {
        self.poll_interval
    }

    /// A new task of `owner` running `tool` here, `working` (the store has it before this
    /// returns, so any replica finds it). `caller` is who the owner is, kept with the task
    /// ([`TaskRecord::caller`]).
    pub async fn start(
        &self,
        owner: &str,
        caller: Option<Value>,
        tool: &str,
    ) -> Result<TaskRecord, TaskError> {
        let now = unix_now_ms();
        let lease_ms = now.saturating_add(ms(self.lease));
        let task = TaskRecord {
            id: new_ticket()?,
            owner: owner.to_owned(),
            tool: tool.to_owned(),
            status: TaskStatus::Working,
            message: None,
            created_ms: now,
            updated_ms: now,
            // Never forgotten while it runs (see `written`).
            expires_ms: now.saturating_add(ms(self.ttl)).max(lease_ms),
            input: None,
            ticket: None,
            outcome: None,
            runner: Some(self.replica.to_string()),
            lease_ms: Some(lease_ms),
            caller,
            arguments: None,
            answers: None,
            committed: false,
            version: 0,
        };
        if self.store.create(&task, self.per_owner).await? {
            Ok(task)
        } else {
            Err(TaskError::TooMany {
                per_owner: self.per_owner,
            })
        }
    }

    /// The task `id` if `owner` owns it and it has not expired; a task left `working` by a
    /// replica whose lease ended is marked failed first ([`RUNNER_LOST`]).
    pub async fn get(&self, id: &str, owner: &str) -> Result<Option<TaskRecord>, StoreError> {
        for _ in 0..ATTEMPTS {
            let Some(task) = self.read(id, owner).await? else {
                return Ok(None);
            };
            let now = unix_now_ms();
            if task.status != TaskStatus::Working || task.lease_ms.is_none_or(|l| l > now) {
                return Ok(Some(task));
            }
            let lost = Value::from(RUNNER_LOST);
            let mut failed = finished(&task, TaskStatus::Failed, Some(lost), now);
            failed.message = Some(RUNNER_LOST.to_owned());
            let failed = self.written(&task, failed, now)?;
            if self.store.replace(&failed, task.version).await? {
                return Ok(Some(failed));
            }
        }
        Err(contended(id))
    }

    /// The task if kept, `owner`'s and not expired.
    async fn read(&self, id: &str, owner: &str) -> Result<Option<TaskRecord>, StoreError> {
        let task = self.store.get(id).await?;
        Ok(task.filter(|t| t.owner == owner && t.expires_ms > unix_now_ms()))
    }

    /// Applies `change` to the task `id` (read fresh each attempt) until it sticks; `change`
    /// returns `None` to leave it as it is. The task after, or `None` if unknown.
    async fn change(
        &self,
        id: &str,
        owner: Option<&str>,
        mut change: impl FnMut(&TaskRecord, u64) -> Option<TaskRecord>,
    ) -> Result<Option<(TaskRecord, bool)>, StoreError> {
        for _ in 0..ATTEMPTS {
            let task = match owner {
                Some(owner) => self.read(id, owner).await?,
                None => self.store.get(id).await?,
            };
            let Some(task) = task else { return Ok(None) };
            let now = unix_now_ms();
            let Some(next) = change(&task, now) else {
                return Ok(Some((task, false)));
            };
            let next = self.written(&task, next, now)?;
            if self.store.replace(&next, task.version).await? {
                return Ok(Some((next, true)));
            }
        }
        Err(contended(id))
    }

    /// `next`, a change of `was` made at `now`, as the store is to keep it: one version on,
    /// kept at least `ttl` past a change of its status (it waits, runs again or finishes) and
    /// at least as long as its runner's lease, so a task is never forgotten while it runs, nor
    /// as soon as it finishes.
    fn written(
        &self,
        was: &TaskRecord,
        mut next: TaskRecord,
        now: u64,
    ) -> Result<TaskRecord, StoreError> {
        next.version = next_version(was)?;
        if next.status != was.status {
            next.expires_ms = next.expires_ms.max(now.saturating_add(ms(self.ttl)));
        }
        if let Some(lease) = next.lease_ms {
            next.expires_ms = next.expires_ms.max(lease);
        }
        Ok(next)
    }

    /// Extends this replica's lease on a task it runs: `false` when the task is no longer
    /// running here (cancelled, or marked failed after a lapse): stop the tool.
    pub async fn renew(&self, id: &str) -> Result<bool, StoreError> {
        let lease = ms(self.lease);
        let changed = self
            .change(id, None, |t, now| {
                self.runs_here(t).then(|| {
                    let mut next = t.clone();
                    next.lease_ms = Some(now.saturating_add(lease));
                    next
                })
            })
            .await?;
        Ok(changed.is_some_and(|(_, changed)| changed))
    }

    fn runs_here(&self, t: &TaskRecord) -> bool {
        t.status == TaskStatus::Working && t.runner.as_deref() == Some(&*self.replica)
    }

    /// A task running here finished with `outcome`: `Completed` or `Failed` (with `message`).
    /// `false` when it no longer runs here (cancelled meanwhile): the outcome is dropped.
    pub async fn finish(
        &self,
        id: &str,
        status: TaskStatus,
        outcome: Value,
        message: Option<String>,
    ) -> Result<bool, StoreError> {
        let status = if status.is_terminal() {
            status
        } else {
            TaskStatus::Failed
        };
        let changed = self
            .change(id, None, |t, now| {
                self.runs_here(t).then(|| {
                    let mut next = finished(t, status, Some(outcome.clone()), now);
                    next.message.clone_from(&message);
                    next
                })
            })
            .await?;
        Ok(changed.is_some_and(|(_, changed)| changed))
    }

    /// A task running here now waits for `input` (what it asks, in the host's shape: a map of
    /// questions by key), holding what it runs on with: no replica runs it until
    /// [`claim`](Self::claim) (an approval) or [`answer`](Self::answer) (its questions).
    pub async fn wait_for_input(
        &self,
        id: &str,
        input: Value,
        held: Held,
        message: Option<String>,
    ) -> Result<bool, StoreError> {
        let Held {
            ticket,
            arguments,
            answers,
        } = held;
        let changed = self
            .change(id, None, |t, now| {
                self.runs_here(t).then(|| {
                    let mut next = t.clone();
                    next.status = TaskStatus::InputRequired;
                    next.committed = false;
                    next.input = Some(input.clone());
                    next.ticket.clone_from(&ticket);
                    next.arguments.clone_from(&arguments);
                    next.answers.clone_from(&answers);
                    next.message.clone_from(&message);
                    next.runner = None;
                    next.lease_ms = None;
                    next.updated_ms = now;
                    next
                })
            })
            .await?;
        Ok(changed.is_some_and(|(_, changed)| changed))
    }

    /// Takes a task waiting for input to run it here: one caller wins, however many answer at
    /// once, on however many replicas.
    pub async fn claim(&self, id: &str, owner: &str) -> Result<Claim, StoreError> {
        let lease = ms(self.lease);
        let replica = self.replica.to_string();
        let mut ticket = None;
        let changed = self
            .change(id, Some(owner), |t, now| {
                ticket.clone_from(&t.ticket);
                (t.status == TaskStatus::InputRequired).then(|| {
                    let mut next = t.clone();
                    next.status = TaskStatus::Working;
                    next.input = None;
                    next.ticket = None;
                    next.arguments = None;
                    next.answers = None;
                    next.message = None;
                    next.runner = Some(replica.clone());
                    next.lease_ms = Some(now.saturating_add(lease));
                    next.updated_ms = now;
                    next
                })
            })
            .await?;
        Ok(match changed {
            None => Claim::Unknown,
            Some((task, false)) => Claim::NotWaiting(task),
            // The ticket as read in the attempt that took it.
            Some((task, true)) => Claim::Won { task, ticket },
        })
    }

    /// Answers some of the questions `owner`'s task `id` waits for (`responses`: elicitation
    /// results by key; keys it does not ask are ignored). When none remains, this replica takes
    /// the task to run the tool again: one of any number of answers at once wins.
    pub async fn answer(
        &self,
        id: &str,
        owner: &str,
        responses: &serde_json::Map<String, Value>,
    ) -> Result<Answered, StoreError> {
        let lease = ms(self.lease);
        let replica = self.replica.to_string();
        let mut held = None;
        let changed = self
            .change(id, Some(owner), |t, now| {
                held = None;
                let (Some(Value::Object(asked)), None, Some(arguments)) =
                    (&t.input, &t.ticket, &t.arguments)
                else {
                    return None;
                };
                if t.status != TaskStatus::InputRequired
                    || !responses.keys().any(|k| asked.contains_key(k))
                {
                    return None;
                }
                let mut answers = match &t.answers {
                    Some(Value::Object(m)) => m.clone(),
                    _ => serde_json::Map::new(),
                };
                let mut open = asked.clone();
                for (k, v) in responses {
                    if open.remove(k).is_some() {
                        answers.insert(k.clone(), v.clone());
                    }
                }
                let mut next = t.clone();
                next.updated_ms = now;
                if open.is_empty() {
                    held = Some((arguments.clone(), Value::Object(answers)));
                    next.status = TaskStatus::Working;
                    next.input = None;
                    next.arguments = None;
                    next.answers = None;
                    next.message = None;
                    next.runner = Some(replica.clone());
                    next.lease_ms = Some(now.saturating_add(lease));
                } else {
                    next.input = Some(Value::Object(open));
                    next.answers = Some(Value::Object(answers));
                }
                Some(next)
            })
            .await?;
        Ok(match (changed, held) {
            (None, _) => Answered::Unknown,
            (Some((_, false)), _) => Answered::NotWaiting,
            (Some((task, true)), Some((arguments, answers))) => Answered::Complete {
                task: Box::new(task),
                arguments,
                answers,
            },
            (Some((_, true)), None) => Answered::Partial,
        })
    }

    /// Sets a task's message (a progress report) while it runs here.
    pub async fn set_message(&self, id: &str, message: String) -> Result<bool, StoreError> {
        let changed = self
            .change(id, None, |t, now| {
                (self.runs_here(t) && t.message.as_ref() != Some(&message)).then(|| {
                    let mut next = t.clone();
                    next.message = Some(message.clone());
                    next.updated_ms = now;
                    next
                })
            })
            .await?;
        Ok(changed.is_some_and(|(_, changed)| changed))
    }

    /// Cancels `owner`'s task `id`, as far as that is still true: a task waiting for input, or
    /// one whose tool has not committed ([`Commit`](crate::Commit)), becomes `cancelled` at once
    /// (its runner, told or finding out at its next renewal, stops it; a tool at its commit
    /// point is refused there); one whose tool committed goes on and ends with what the tool
    /// did ([`Cancel::TooLate`], its message saying so); a finished one stays as it is. One
    /// change in the store, whichever replica asks: quick, and decided once against the
    /// tool's commit. `None` if unknown.
    pub async fn cancel(&self, id: &str, owner: &str) -> Result<Option<Cancel>, StoreError> {
        let mut held = None;
        let mut was_running = false;
        let changed = self
            .change(id, Some(owner), |t, now| {
                held.clone_from(&t.ticket);
                was_running = t.status == TaskStatus::Working;
                if t.status.is_terminal() {
                    return None;
                }
                if t.committed {
                    let note = Some(CANCEL_TOO_LATE.to_owned());
                    return (t.message != note).then(|| {
                        let mut next = t.clone();
                        next.message = note;
                        next.updated_ms = now;
                        next
                    });
                }
                let mut next = finished(t, TaskStatus::Cancelled, None, now);
                next.message = Some("cancelled by its owner".to_owned());
                Some(next)
            })
            .await?;
        Ok(changed.map(|(task, changed)| match task.status {
            TaskStatus::Cancelled if changed => Cancel::Stopped { held, was_running },
            s if s.is_terminal() => Cancel::Finished(task),
            _ => Cancel::TooLate(task),
        }))
    }

    /// This replica starts the tool of a task it runs: `committed` when the tool commits from
    /// its start (neither read-only nor taking a [`Commit`](crate::Commit)). `false` when the
    /// task was cancelled meanwhile: do not start it.
    pub async fn begin(&self, id: &str, committed: bool) -> Result<bool, StoreError> {
        self.mark_committed(id, committed).await
    }

    /// The tool of a task running here passes its commit point: `true` when its change may
    /// go ahead (no cancel came first; a cancel from now on loses), `false` when the task was
    /// cancelled first (the tool must not make its change).
    pub async fn commit(&self, id: &str) -> Result<bool, StoreError> {
        self.mark_committed(id, true).await
    }

    async fn mark_committed(&self, id: &str, committed: bool) -> Result<bool, StoreError> {
        let changed = self
            .change(id, None, |t, now| {
                if !self.runs_here(t) || t.committed == committed {
                    return None;
                }
                let mut next = t.clone();
                next.committed = committed;
                next.updated_ms = now;
                Some(next)
            })
            .await?;
        Ok(changed.is_some_and(|(t, _)| self.runs_here(&t) && t.committed == committed))
    }

    /// At most `limit` tasks of `tools` waiting for an approval, any owner's, those waiting
    /// longest first: for the person who approves other people's calls (the server checks who
    /// may see which).
    pub async fn waiting(
        &self,
        tools: &[String],
        limit: usize,
    ) -> Result<Vec<TaskRecord>, StoreError> {
        if tools.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        self.store.waiting(unix_now_ms(), tools, limit).await
    }

    /// The task `id` if it waits for an approval and has not expired, whoever owns it: what a
    /// person who approves other people's calls decides on (then [`claim`](Self::claim) with
    /// its owner).
    pub async fn waiting_task(&self, id: &str) -> Result<Option<TaskRecord>, StoreError> {
        let task = self.store.get(id).await?;
        Ok(task.filter(|t| {
            t.status == TaskStatus::InputRequired
                && t.ticket.is_some()
                && t.expires_ms > unix_now_ms()
        }))
    }

    /// Forgets the tasks whose time to live ended.
    pub async fn forget_expired(&self) -> Result<usize, StoreError> {
        self.store.forget_expired(unix_now_ms()).await
    }
}

/// `task` finished with `status`: no runner, no input, the outcome kept.
fn finished(task: &TaskRecord, status: TaskStatus, outcome: Option<Value>, now: u64) -> TaskRecord {
    let mut next = task.clone();
    next.status = status;
    next.outcome = outcome;
    next.input = None;
    next.ticket = None;
    next.arguments = None;
    next.answers = None;
    next.runner = None;
    next.lease_ms = None;
    next.committed = false;
    next.updated_ms = now;
    next
}

/// The version a change of `task` is written at. A stored version is read back, not trusted:
/// a record already at the largest version is refused rather than wrapped.
fn next_version(task: &TaskRecord) -> Result<u64, StoreError> {
    task.version.checked_add(1).ok_or_else(|| {
        StoreError::new(format!(
            "task {} is at the largest version ({}): the store holds a record no replica wrote",
            task.id, task.version
        ))
    })
}

fn contended(id: &str) -> StoreError {
    StoreError::new(format!(
        "task {id} changed {ATTEMPTS} times while this replica tried to change it"
    ))
}
