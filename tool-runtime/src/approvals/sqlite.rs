//! Held calls in a SQLite file: one machine, any number of processes.

use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};

use super::{ApprovalStore, HeldCall, StoreError};
use crate::tool::BoxFuture;

/// Held calls in a table of a SQLite file (`tool_runtime_held_calls`), shared by every process
/// that opens the same file. `take` is one `DELETE … RETURNING`: two processes taking the same
/// ticket at once get it once between them. Calls are quick, and run on the calling thread.
#[derive(Debug)]
pub struct SqliteApprovals {
    db: Mutex<Connection>,
}

fn failed(e: impl std::fmt::Display) -> StoreError {
    StoreError(e.to_string())
}

impl SqliteApprovals {
    /// Opens (or creates) the file and the table, waiting up to 5 s for a lock other processes
    /// hold.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let db = Connection::open(path).map_err(failed)?;
        db.busy_timeout(Duration::from_secs(5)).map_err(failed)?;
        db.execute_batch(
            "PRAGMA journal_mode = WAL;
             CREATE TABLE IF NOT EXISTS tool_runtime_held_calls (
                 ticket    TEXT PRIMARY KEY,
                 tool      TEXT NOT NULL,
                 arguments TEXT NOT NULL,
                 held_at   INTEGER NOT NULL DEFAULT (unixepoch())
             );",
        )
        .map_err(failed)?;
        Ok(SqliteApprovals { db: Mutex::new(db) })
    }

    /// Forgets calls held longer than `age` (nobody came back for them); returns how many.
    pub fn forget_older_than(&self, age: Duration) -> Result<usize, StoreError> {
        let db = self.db.lock().unwrap_or_else(|e| e.into_inner());
        db.execute(
            "DELETE FROM tool_runtime_held_calls WHERE held_at < unixepoch() - ?1",
            params![age.as_secs() as i64],
        )
        .map_err(failed)
    }
}

impl ApprovalStore for SqliteApprovals {
    fn hold<'a>(&'a self, call: HeldCall) -> BoxFuture<'a, Result<(), StoreError>> {
        let db = self.db.lock().unwrap_or_else(|e| e.into_inner());
        let held = db
            .execute(
                "INSERT INTO tool_runtime_held_calls (ticket, tool, arguments) VALUES (?1, ?2, ?3)",
                params![call.ticket, call.tool, call.arguments.to_string()],
            )
            .map(|_| ())
            .map_err(failed);
        Box::pin(std::future::ready(held))
    }

    fn take<'a>(&'a self, ticket: &'a str) -> BoxFuture<'a, Result<Option<HeldCall>, StoreError>> {
        let db = self.db.lock().unwrap_or_else(|e| e.into_inner());
        let row: Result<Option<(String, String)>, StoreError> = db
            .query_row(
                "DELETE FROM tool_runtime_held_calls WHERE ticket = ?1 RETURNING tool, arguments",
                params![ticket],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(failed);
        let taken = row.and_then(|row| {
            row.map(|(tool, arguments)| {
                Ok(HeldCall {
                    ticket: ticket.to_owned(),
                    tool,
                    arguments: serde_json::from_str(&arguments).map_err(failed)?,
                })
            })
            .transpose()
        });
        Box::pin(std::future::ready(taken))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_of_many_takers_on_one_file_gets_the_call() {
        let path = std::env::temp_dir().join(format!("held-{}.sqlite", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let store = SqliteApprovals::open(&path).unwrap();
        let call = HeldCall {
            ticket: super::super::new_ticket().unwrap(),
            tool: "hapus".into(),
            arguments: serde_json::json!({"id": 7}),
        };
        pollster::block_on(store.hold(call.clone())).unwrap();
        // Sixteen connections (as sixteen processes would have) take the same ticket at once.
        let taken: Vec<Option<HeldCall>> = std::thread::scope(|s| {
            let takers: Vec<_> = (0..16)
                .map(|_| {
                    let (path, ticket) = (path.clone(), call.ticket.clone());
                    s.spawn(move || {
                        let store = SqliteApprovals::open(&path).unwrap();
                        pollster::block_on(store.take(&ticket)).unwrap()
                    })
                })
                .collect();
            takers.into_iter().map(|t| t.join().unwrap()).collect()
        });
        let got: Vec<_> = taken.into_iter().flatten().collect();
        assert_eq!(got, vec![call]);
        assert_eq!(store.forget_older_than(Duration::ZERO).unwrap(), 0);
        let _ = std::fs::remove_file(&path);
    }
}
