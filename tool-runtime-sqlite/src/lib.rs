//! Calls waiting for a person's approval, held in a SQLite file that the processes of one
//! machine share: an [`ApprovalStore`] for [`tool_runtime`].
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use tool_runtime::ToolSet;
//! use tool_runtime_sqlite::SqliteApprovals;
//! let tools = ToolSet::all()?.with_approvals(Arc::new(SqliteApprovals::open("held.sqlite")?));
//! # Ok(()) }
//! ```
//!
//! SQLite's calls block, so each runs on Tokio's blocking threads (`spawn_blocking`), never on
//! an async worker: the store needs a Tokio runtime. The `bundled` feature (on by default)
//! compiles SQLite in; a program that already links its own SQLite (another `rusqlite` or
//! `sqlx-sqlite` version) turns it off, as only one `libsqlite3-sys` may be linked.

#![warn(missing_docs)]

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};
use tool_runtime::{ApprovalStore, BoxFuture, PendingCall, StoreError};

/// Held calls in a table of a SQLite file (`tool_runtime_held_calls`), shared by every process
/// that opens the same file. `take` is one `DELETE … RETURNING`: two processes taking the same
/// ticket at once get it once between them.
#[derive(Clone, Debug)]
pub struct SqliteApprovals {
    db: Arc<Mutex<Connection>>,
}

const CREATE: &str = "CREATE TABLE IF NOT EXISTS tool_runtime_held_calls (
    ticket    TEXT PRIMARY KEY,
    tool      TEXT NOT NULL,
    arguments TEXT NOT NULL,
    held_at   INTEGER NOT NULL DEFAULT (unixepoch())
);";

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
        })
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
        let secs = i64::try_from(age.as_secs()).unwrap_or(i64::MAX);
        self.with_db(move |db| {
            db.execute(
                "DELETE FROM tool_runtime_held_calls WHERE held_at < unixepoch() - ?1",
                params![secs],
            )
            .map_err(StoreError::from_source)
        })
        .await
    }
}

impl ApprovalStore for SqliteApprovals {
    fn hold(&self, call: PendingCall) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(self.with_db(move |db| {
            db.execute(
                "INSERT INTO tool_runtime_held_calls (ticket, tool, arguments) VALUES (?1, ?2, ?3)",
                params![call.ticket, call.tool, call.arguments.to_string()],
            )
            .map(drop)
            .map_err(StoreError::from_source)
        }))
    }

    fn take<'a>(
        &'a self,
        ticket: &'a str,
    ) -> BoxFuture<'a, Result<Option<PendingCall>, StoreError>> {
        let ticket = ticket.to_owned();
        Box::pin(self.with_db(move |db| {
            let row: Option<(String, String)> = db
                .query_row(
                    "DELETE FROM tool_runtime_held_calls WHERE ticket = ?1 RETURNING tool, arguments",
                    params![ticket],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()
                .map_err(StoreError::from_source)?;
            row.map(|(tool, arguments)| {
                let arguments = serde_json::from_str(&arguments).map_err(StoreError::from_source)?;
                Ok(PendingCall::new(ticket, tool, arguments))
            })
            .transpose()
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(got, vec![call]);
        assert_eq!(store.forget_older_than(Duration::ZERO).await.unwrap(), 0);
        let _ = std::fs::remove_file(&path);
    }
}
