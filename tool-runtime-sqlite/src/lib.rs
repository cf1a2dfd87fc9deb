//! Calls waiting for a person's approval, held in a SQLite file that the processes of one
//! machine share: an [`ApprovalStore`] for [`tool_runtime`].
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use tool_runtime::ToolSet;
//! use tool_runtime_sqlite::SqliteApprovals;
//! let tools = ToolSet::from_module(module_path!())?.with_approvals(Arc::new(SqliteApprovals::open("held.sqlite")?));
//! # Ok(()) }
//! ```
//!
//! SQLite's calls block, so each runs on Tokio's blocking threads (`spawn_blocking`), never on
//! an async worker: the store needs a Tokio runtime. The `bundled` feature (on by default)
//! compiles SQLite in; a program that already links its own SQLite (another `rusqlite` or
//! `sqlx-sqlite` version) turns it off, as only one `libsqlite3-sys` may be linked.

#![warn(missing_docs, unreachable_pub)]

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// `rusqlite`, whose [`Connection`] [`SqliteApprovals::new`] takes: the version this crate is
/// built with.
pub use rusqlite;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};
use tool_runtime::approval::{MAX_AGE, PER_OWNER, unix_now};
use tool_runtime::task::{KeptBounds, KeptResult, TaskRecord, TaskStore};
use tool_runtime::{ApprovalStore, BoxFuture, PendingCall, StoreError};

/// Held calls in a table of a SQLite file (`tool_runtime_pending_calls`), shared by every process
/// that opens the same file. `take` is one `DELETE … RETURNING`: two processes taking the same
/// ticket at once get it once between them. Bounded: a call waits at most
/// [`max_age`](Self::with_max_age) (a day by default) or until its own expiry, and one owner has
/// at most [`per_owner`](Self::with_per_owner) calls waiting (100 by default; holding one more
/// forgets that owner's oldest). Each `hold` forgets what expired.
#[derive(Clone, Debug)]
pub struct SqliteApprovals {
    db: Arc<Mutex<Connection>>,
    max_age: Duration,
    per_owner: usize,
}

const CREATE: &str = "CREATE TABLE IF NOT EXISTS tool_runtime_pending_calls (
    ticket     TEXT PRIMARY KEY,
    tool       TEXT NOT NULL,
    arguments  TEXT NOT NULL,
    owner      TEXT,
    held_at    INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS tool_runtime_pending_calls_owner
    ON tool_runtime_pending_calls (owner, held_at);
CREATE INDEX IF NOT EXISTS tool_runtime_pending_calls_expiry
    ON tool_runtime_pending_calls (expires_at);
CREATE TABLE IF NOT EXISTS tool_runtime_tasks (
    id         TEXT PRIMARY KEY,
    owner      TEXT NOT NULL,
    version    INTEGER NOT NULL,
    expires_ms INTEGER NOT NULL,
    done       INTEGER NOT NULL,
    record     TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS tool_runtime_tasks_owner ON tool_runtime_tasks (owner);
CREATE INDEX IF NOT EXISTS tool_runtime_tasks_expiry ON tool_runtime_tasks (expires_ms);
CREATE TABLE IF NOT EXISTS tool_runtime_kept (
    id         TEXT PRIMARY KEY,
    owner      TEXT NOT NULL,
    bytes      INTEGER NOT NULL,
    kept_ms    INTEGER NOT NULL,
    expires_ms INTEGER NOT NULL,
    text       TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS tool_runtime_kept_owner ON tool_runtime_kept (owner, kept_ms);
CREATE INDEX IF NOT EXISTS tool_runtime_kept_age ON tool_runtime_kept (kept_ms);";

impl SqliteApprovals {
    /// Opens (or creates) the file and the table, in WAL mode, waiting up to 5 s for a lock
    /// other processes hold. Call it at start-up: it blocks while it opens the file.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let db = Connection::open(path).map_err(StoreError::from_source)?;
        db.busy_timeout(Duration::from_secs(5))
            .map_err(StoreError::from_source)?;
        db.execute_batch("PRAGMA journal_mode = WAL;")
            .map_err(StoreError::from_source)?;
        Self::new(db)
    }

    /// A store on a connection the application opened (its own file, settings and busy
    /// timeout); creates the table if needed.
    pub fn new(db: Connection) -> Result<Self, StoreError> {
        db.execute_batch(CREATE).map_err(StoreError::from_source)?;
        Ok(SqliteApprovals {
            db: Arc::new(Mutex::new(db)),
            max_age: MAX_AGE,
            per_owner: PER_OWNER,
        })
    }

    /// The store keeping no call longer than `max_age`.
    pub fn with_max_age(mut self, max_age: Duration) -> Self {
        self.max_age = max_age;
        self
    }

    /// The store keeping at most `per_owner` calls (at least one) of one owner.
    pub fn with_per_owner(mut self, per_owner: usize) -> Self {
        self.per_owner = per_owner.max(1);
        self
    }

    /// How many calls are held (expired ones included until the next `hold`).
    pub async fn held(&self) -> Result<u64, StoreError> {
        self.with_db(|db| {
            db.query_row("SELECT count(*) FROM tool_runtime_pending_calls", [], |r| {
                r.get::<_, i64>(0)
            })
            .map(|n| n.unsigned_abs())
            .map_err(StoreError::from_source)
        })
        .await
    }

    /// Runs `f` on the connection on a blocking thread.
    async fn with_db<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let db = self.db.clone();
        tokio::task::spawn_blocking(move || f(&db.lock().unwrap_or_else(|e| e.into_inner())))
            .await
            .map_err(StoreError::from_source)?
    }

    /// Forgets calls held longer than `age` (nobody came back for them); returns how many.
    pub async fn forget_older_than(&self, age: Duration) -> Result<usize, StoreError> {
        let before = int(unix_now()).saturating_sub(int(age.as_secs()));
        self.with_db(move |db| {
            db.execute(
                "DELETE FROM tool_runtime_pending_calls WHERE held_at < ?1",
                params![before],
            )
            .map_err(StoreError::from_source)
        })
        .await
    }
}

/// A count (seconds, milliseconds, a version) as SQLite's integer.
fn int(s: u64) -> i64 {
    i64::try_from(s).unwrap_or(i64::MAX)
}

impl ApprovalStore for SqliteApprovals {
    fn forget_expired(&self) -> BoxFuture<'_, Result<usize, StoreError>> {
        let now = int(unix_now());
        Box::pin(self.with_db(move |db| {
            db.execute(
                "DELETE FROM tool_runtime_pending_calls WHERE expires_at <= ?1",
                params![now],
            )
            .map_err(StoreError::from_source)
        }))
    }

    fn hold(&self, call: PendingCall) -> BoxFuture<'_, Result<(), StoreError>> {
        let now = unix_now();
        let expires = call
            .expires_at
            .unwrap_or(u64::MAX)
            .min(now.saturating_add(self.max_age.as_secs()));
        let per_owner = int(self.per_owner as u64);
        Box::pin(self.with_db(move |db| {
            let go = || -> rusqlite::Result<()> {
                let tx = db.unchecked_transaction()?;
                tx.execute(
                    "INSERT INTO tool_runtime_pending_calls (ticket, tool, arguments, owner, held_at, expires_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![call.ticket, call.tool, call.arguments.to_string(), call.owner, int(now), int(expires)],
                )?;
                tx.execute(
                    "DELETE FROM tool_runtime_pending_calls WHERE expires_at <= ?1",
                    params![int(now)],
                )?;
                if call.owner.is_some() {
                    tx.execute(
                        "DELETE FROM tool_runtime_pending_calls WHERE owner = ?1 AND ticket NOT IN (
                             SELECT ticket FROM tool_runtime_pending_calls WHERE owner = ?1
                             ORDER BY held_at DESC, rowid DESC LIMIT ?2)",
                        params![call.owner, per_owner],
                    )?;
                }
                tx.commit()
            };
            go().map_err(StoreError::from_source)
        }))
    }

    fn take<'a>(
        &'a self,
        ticket: &'a str,
    ) -> BoxFuture<'a, Result<Option<PendingCall>, StoreError>> {
        let ticket = ticket.to_owned();
        Box::pin(self.with_db(move |db| {
            type Row = (String, String, Option<String>, i64);
            let row: Option<Row> = db
                .query_row(
                    "DELETE FROM tool_runtime_pending_calls WHERE ticket = ?1
                     RETURNING tool, arguments, owner, expires_at",
                    params![ticket],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
                )
                .optional()
                .map_err(StoreError::from_source)?;
            match row {
                Some((_, _, _, expires)) if expires <= int(unix_now()) => Ok(None),
                Some((tool, arguments, owner, expires)) => {
                    let arguments = tool_runtime::json::from_str(&arguments)
                        .map_err(StoreError::from_source)?;
                    Ok(Some(
                        PendingCall::new(ticket, tool, arguments)
                            .with_owner(owner)
                            .with_expiry(u64::try_from(expires).ok()),
                    ))
                }
                None => Ok(None),
            }
        }))
    }
}

/// Tasks in the same file as the held calls (table `tool_runtime_tasks`): every process that
/// opens the file shares them; a task is replaced only over the version it was read at, in one
/// `UPDATE`.
impl TaskStore for SqliteApprovals {
    fn create<'a>(
        &'a self,
        task: &'a TaskRecord,
        per_owner: usize,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        let record = serde_json::to_string(task);
        let (id, owner) = (task.id.clone(), task.owner.clone());
        let (now, expires, version) = (
            int(task.created_ms),
            int(task.expires_ms),
            int(task.version),
        );
        let done = task.status.is_terminal();
        let per_owner = int(per_owner as u64);
        Box::pin(async move {
            let record = record.map_err(StoreError::from_source)?;
            self.with_db(move |db| {
                let go = || -> rusqlite::Result<bool> {
                    // IMMEDIATE: the count and the insert under one write lock.
                    let tx = rusqlite::Transaction::new_unchecked(
                        db,
                        rusqlite::TransactionBehavior::Immediate,
                    )?;
                    tx.execute(
                        "DELETE FROM tool_runtime_tasks WHERE expires_ms <= ?1",
                        params![now],
                    )?;
                    let owned: i64 = tx.query_row(
                        "SELECT count(*) FROM tool_runtime_tasks WHERE owner = ?1",
                        params![owner],
                        |r| r.get(0),
                    )?;
                    // At the bound, the owner's finished task that expires first makes room.
                    if owned >= per_owner
                        && tx.execute(
                            "DELETE FROM tool_runtime_tasks WHERE id = (
                                 SELECT id FROM tool_runtime_tasks WHERE owner = ?1 AND done = 1
                                 ORDER BY expires_ms, id LIMIT 1)",
                            params![owner],
                        )? == 0
                    {
                        return Ok(false);
                    }
                    tx.execute(
                        "INSERT INTO tool_runtime_tasks (id, owner, version, expires_ms, done, record)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                        params![id, owner, version, expires, done, record],
                    )?;
                    tx.commit()?;
                    Ok(true)
                };
                go().map_err(StoreError::from_source)
            })
            .await
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        let id = id.to_owned();
        Box::pin(self.with_db(move |db| {
            let record: Option<String> = db
                .query_row(
                    "SELECT record FROM tool_runtime_tasks WHERE id = ?1",
                    params![id],
                    |r| r.get(0),
                )
                .optional()
                .map_err(StoreError::from_source)?;
            record
                .map(|r| tool_runtime::json::from_str(&r).map_err(StoreError::from_source))
                .transpose()
        }))
    }

    fn replace<'a>(
        &'a self,
        task: &'a TaskRecord,
        read_version: u64,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        let record = serde_json::to_string(task);
        let id = task.id.clone();
        let (version, expires, read) = (int(task.version), int(task.expires_ms), int(read_version));
        let done = task.status.is_terminal();
        Box::pin(async move {
            let record = record.map_err(StoreError::from_source)?;
            self.with_db(move |db| {
                db.execute(
                    "UPDATE tool_runtime_tasks SET record = ?1, version = ?2, expires_ms = ?3, done = ?4
                     WHERE id = ?5 AND version = ?6",
                    params![record, version, expires, done, id, read],
                )
                .map(|n| n == 1)
                .map_err(StoreError::from_source)
            })
            .await
        })
    }

    fn forget_expired(&self, now_ms: u64) -> BoxFuture<'_, Result<usize, StoreError>> {
        let now = int(now_ms);
        Box::pin(self.with_db(move |db| {
            let tasks = db
                .execute(
                    "DELETE FROM tool_runtime_tasks WHERE expires_ms <= ?1",
                    params![now],
                )
                .map_err(StoreError::from_source)?;
            let kept = db
                .execute(
                    "DELETE FROM tool_runtime_kept WHERE expires_ms <= ?1",
                    params![now],
                )
                .map_err(StoreError::from_source)?;
            Ok(tasks + kept)
        }))
    }

    fn keep_result<'a>(
        &'a self,
        result: &'a KeptResult,
        bounds: KeptBounds,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        let result = result.clone();
        Box::pin(self.with_db(move |db| {
            if result.text.len() > bounds.most_bytes {
                return Ok(false);
            }
            let go = || -> rusqlite::Result<()> {
                // IMMEDIATE: the counts and the insert under one write lock.
                let tx = rusqlite::Transaction::new_unchecked(
                    db,
                    rusqlite::TransactionBehavior::Immediate,
                )?;
                tx.execute(
                    "DELETE FROM tool_runtime_kept WHERE expires_ms <= ?1",
                    params![int(result.kept_ms)],
                )?;
                // One owner's results make way for its own first, never for another's.
                let owned: i64 = tx.query_row(
                    "SELECT count(*) FROM tool_runtime_kept WHERE owner = ?1",
                    params![result.owner],
                    |r| r.get(0),
                )?;
                if owned >= int(bounds.most_each as u64) {
                    tx.execute(
                        "DELETE FROM tool_runtime_kept WHERE id = (
                             SELECT id FROM tool_runtime_kept WHERE owner = ?1
                             ORDER BY kept_ms, rowid LIMIT 1)",
                        params![result.owner],
                    )?;
                }
                // Then the oldest, until the store's bounds hold with this one.
                loop {
                    let (count, bytes): (i64, i64) = tx.query_row(
                        "SELECT count(*), coalesce(sum(bytes), 0) FROM tool_runtime_kept",
                        [],
                        |r| Ok((r.get(0)?, r.get(1)?)),
                    )?;
                    let over = count >= int(bounds.most as u64)
                        || bytes.saturating_add(int(result.text.len() as u64))
                            > int(bounds.most_bytes as u64);
                    if !over || count == 0 {
                        break;
                    }
                    tx.execute(
                        "DELETE FROM tool_runtime_kept WHERE id = (
                             SELECT id FROM tool_runtime_kept ORDER BY kept_ms, rowid LIMIT 1)",
                        [],
                    )?;
                }
                tx.execute(
                    "INSERT INTO tool_runtime_kept (id, owner, bytes, kept_ms, expires_ms, text)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![
                        result.id,
                        result.owner,
                        int(result.text.len() as u64),
                        int(result.kept_ms),
                        int(result.expires_ms),
                        result.text
                    ],
                )?;
                tx.commit()
            };
            go().map(|()| true).map_err(StoreError::from_source)
        }))
    }

    fn kept_result<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<KeptResult>, StoreError>> {
        let id = id.to_owned();
        Box::pin(self.with_db(move |db| {
            db.query_row(
                "SELECT id, owner, text, kept_ms, expires_ms FROM tool_runtime_kept WHERE id = ?1",
                params![id],
                |r| {
                    Ok(KeptResult::new(
                        r.get(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        u64::try_from(r.get::<_, i64>(3)?).unwrap_or(0),
                        u64::try_from(r.get::<_, i64>(4)?).unwrap_or(0),
                    ))
                },
            )
            .optional()
            .map_err(StoreError::from_source)
        }))
    }

    fn waiting<'a>(
        &'a self,
        now_ms: u64,
        tools: &'a [String],
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<TaskRecord>, StoreError>> {
        let (now, limit) = (int(now_ms), i64::try_from(limit).unwrap_or(i64::MAX));
        let tools = serde_json::to_string(tools).unwrap_or_else(|_| "[]".into());
        Box::pin(self.with_db(move |db| {
            let mut query = db
                .prepare(
                    "SELECT record FROM tool_runtime_tasks
                     WHERE done = 0 AND expires_ms > ?1
                       AND json_extract(record, '$.status') = 'input_required'
                       AND json_extract(record, '$.ticket') IS NOT NULL
                       AND json_extract(record, '$.tool') IN (SELECT value FROM json_each(?3))
                     ORDER BY json_extract(record, '$.updated_ms'), id LIMIT ?2",
                )
                .map_err(StoreError::from_source)?;
            let records = query
                .query_map(params![now, limit, tools], |r| r.get::<_, String>(0))
                .map_err(StoreError::from_source)?;
            records
                .map(|r| {
                    let r = r.map_err(StoreError::from_source)?;
                    tool_runtime::json::from_str(&r).map_err(StoreError::from_source)
                })
                .collect()
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_sqlite_store_keeps_the_rules_of_every_store() {
        let path = std::env::temp_dir().join(format!("held-suite-{}.sqlite", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let open = || {
            Arc::new(SqliteApprovals::open(&path).unwrap().with_per_owner(4))
                as Arc<dyn ApprovalStore>
        };
        tool_runtime::testing::approval_store_suite(open, 4).await;
        let _ = std::fs::remove_file(&path);
    }

    /// The task rules on one file, each replica with its own connection.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_sqlite_task_store_keeps_the_rules_of_every_task_store() {
        let path = std::env::temp_dir().join(format!("tasks-suite-{}.sqlite", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let open = || Arc::new(SqliteApprovals::open(&path).unwrap()) as Arc<dyn TaskStore>;
        tool_runtime::testing::task_store_suite(open).await;
        let _ = std::fs::remove_file(&path);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_of_many_takers_on_one_file_gets_the_call() {
        let path = std::env::temp_dir().join(format!("held-{}.sqlite", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let store = SqliteApprovals::open(&path).unwrap();
        let call = PendingCall::new(
            tool_runtime::approval::new_ticket().unwrap(),
            "delete",
            serde_json::json!({"id": 7}),
        );
        store.hold(call.clone()).await.unwrap();
        // Sixteen connections (as sixteen processes would have) take the same ticket at once.
        let takers: Vec<_> = (0..16)
            .map(|_| {
                let (path, ticket) = (path.clone(), call.ticket.clone());
                tokio::spawn(async move {
                    let store = SqliteApprovals::open(&path).unwrap();
                    store.take(&ticket).await.unwrap()
                })
            })
            .collect();
        let mut got = Vec::new();
        for t in takers {
            got.extend(t.await.unwrap());
        }
        assert_eq!(got.len(), 1);
        assert_eq!(
            (&got[0].ticket, &got[0].arguments),
            (&call.ticket, &call.arguments)
        );
        assert_eq!(store.forget_older_than(Duration::ZERO).await.unwrap(), 0);
        let _ = std::fs::remove_file(&path);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_owner_cannot_grow_the_table_and_expired_calls_are_forgotten() {
        let path = std::env::temp_dir().join(format!("held-owner-{}.sqlite", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let store = SqliteApprovals::open(&path).unwrap().with_per_owner(5);
        for n in 0..50 {
            let call = PendingCall::new(format!("m{n}"), "book", serde_json::json!({"n": n}))
                .with_owner(Some("sub:mallory".into()));
            store.hold(call).await.unwrap();
        }
        let sari = PendingCall::new("s1", "book", serde_json::json!({}))
            .with_owner(Some("sub:sari".into()));
        store.hold(sari).await.unwrap();
        assert_eq!(
            store.held().await.unwrap(),
            6,
            "mallory's newest five, and sari's"
        );
        assert!(store.take("m49").await.unwrap().is_some());
        assert!(
            store.take("m0").await.unwrap().is_none(),
            "the oldest were forgotten"
        );
        assert!(store.take("s1").await.unwrap().is_some());
        // A call past its own expiry is not handed out, and the next hold forgets it.
        let old = PendingCall::new("x1", "book", serde_json::json!({})).with_expiry(Some(1));
        store.hold(old).await.unwrap();
        assert!(store.take("x1").await.unwrap().is_none());
        let _ = std::fs::remove_file(&path);
    }
}
