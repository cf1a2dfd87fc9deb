//! Held calls in PostgreSQL: the store replicas on several machines share.

use std::time::Duration;

use tokio_postgres::{Client, NoTls};

use super::{ApprovalStore, HeldCall, StoreError};
use crate::tool::BoxFuture;

/// Held calls in a PostgreSQL table (`tool_runtime_held_calls`), for replicas behind a load
/// balancer. `take` is one `DELETE … RETURNING`, so however many replicas take one ticket at
/// once, one gets the call. One connection per store (statements are pipelined on it); when the
/// database restarts or the connection drops, the next call connects again. A statement cut off
/// by a broken connection is not retried: a `take` is never repeated, so a call is run at most
/// once.
pub struct PostgresApprovals {
    config: String,
    client: tokio::sync::Mutex<Option<std::sync::Arc<Client>>>,
}

impl std::fmt::Debug for PostgresApprovals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresApprovals").finish_non_exhaustive()
    }
}

fn failed(e: impl std::fmt::Display) -> StoreError {
    StoreError(e.to_string())
}

/// Two replicas creating the table at once: one wins, the other sees it exists.
const CREATE: &str = "
    SELECT pg_advisory_xact_lock(7325001);
    CREATE TABLE IF NOT EXISTS tool_runtime_held_calls (
        ticket    text PRIMARY KEY,
        tool      text NOT NULL,
        arguments jsonb NOT NULL,
        held_at   timestamptz NOT NULL DEFAULT now()
    );";

impl PostgresApprovals {
    /// Connects (`postgresql://user@host:port/db`, or key=value settings; no TLS: keep the
    /// database on a private network or a local socket) and creates the table if needed. The
    /// connection runs on a Tokio task.
    pub async fn connect(config: &str) -> Result<Self, StoreError> {
        let store = PostgresApprovals {
            config: config.to_owned(),
            client: tokio::sync::Mutex::new(None),
        };
        store.client().await?;
        Ok(store)
    }

    /// The open connection, or a new one when there is none or it has closed.
    async fn client(&self) -> Result<std::sync::Arc<Client>, StoreError> {
        let mut slot = self.client.lock().await;
        if let Some(client) = slot.as_ref().filter(|c| !c.is_closed()) {
            return Ok(client.clone());
        }
        let (client, connection) = tokio_postgres::connect(&self.config, NoTls)
            .await
            .map_err(failed)?;
        tokio::spawn(connection);
        client
            .batch_execute(&format!("BEGIN; {CREATE} COMMIT;"))
            .await
            .map_err(failed)?;
        let client = std::sync::Arc::new(client);
        *slot = Some(client.clone());
        Ok(client)
    }

    /// Forgets calls held longer than `age` (nobody came back for them); returns how many.
    pub async fn forget_older_than(&self, age: Duration) -> Result<u64, StoreError> {
        self.client()
            .await?
            .execute(
                "DELETE FROM tool_runtime_held_calls WHERE held_at < now() - make_interval(secs => $1)",
                &[&age.as_secs_f64()],
            )
            .await
            .map_err(failed)
    }
}

impl ApprovalStore for PostgresApprovals {
    fn hold<'a>(&'a self, call: HeldCall) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            self.client()
                .await?
                .execute(
                    "INSERT INTO tool_runtime_held_calls (ticket, tool, arguments) VALUES ($1, $2, $3::text::jsonb)",
                    &[&call.ticket, &call.tool, &call.arguments.to_string()],
                )
                .await
                .map(|_| ())
                .map_err(failed)
        })
    }

    fn take<'a>(&'a self, ticket: &'a str) -> BoxFuture<'a, Result<Option<HeldCall>, StoreError>> {
        Box::pin(async move {
            let row = self
                .client()
                .await?
                .query_opt(
                    "DELETE FROM tool_runtime_held_calls WHERE ticket = $1 RETURNING tool, arguments::text",
                    &[&ticket],
                )
                .await
                .map_err(failed)?;
            row.map(|r| {
                let arguments: String = r.get(1);
                Ok(HeldCall {
                    ticket: ticket.to_owned(),
                    tool: r.get(0),
                    arguments: serde_json::from_str(&arguments).map_err(failed)?,
                })
            })
            .transpose()
        })
    }
}
