//! Calls waiting for a person's approval, held in PostgreSQL so that replicas behind a load
//! balancer share them: an [`ApprovalStore`] for [`tool_runtime`].
//!
//! The store runs on a connection pool the application supplies (`deadpool-postgres`, so the
//! application chooses TLS, pool size and timeouts), or makes a small unencrypted pool with
//! [`PostgresApprovals::connect`] for a database on a private network or a local socket.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use tool_runtime::ToolSet;
//! use tool_runtime_postgres::{PostgresApprovals, deadpool_postgres, tokio_postgres};
//!
//! // A pool of the application's own, here without TLS; with TLS, give `Manager::from_config`
//! // a connector (`tokio-postgres-rustls`, `postgres-native-tls`).
//! let config: tokio_postgres::Config = "postgresql://app@db/app".parse()?;
//! let manager = deadpool_postgres::Manager::new(config, tokio_postgres::NoTls);
//! let pool = deadpool_postgres::Pool::builder(manager).max_size(8).build()?;
//! let tools = ToolSet::all()?.with_approvals(Arc::new(PostgresApprovals::new(pool).await?));
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

use std::time::Duration;

pub use deadpool_postgres;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
pub use tokio_postgres;
use tool_runtime::{ApprovalStore, BoxFuture, PendingCall, StoreError};

/// Held calls in a PostgreSQL table (`tool_runtime_held_calls`), for replicas behind a load
/// balancer. `take` is one `DELETE … RETURNING`, so however many replicas take one ticket at
/// once, one gets the call. A connection broken by a restart of the database is replaced by
/// the pool; a statement cut off by a broken connection is not retried: a `take` is never
/// repeated, so a call runs at most once.
#[derive(Clone)]
pub struct PostgresApprovals {
    pool: Pool,
}

impl std::fmt::Debug for PostgresApprovals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresApprovals").finish_non_exhaustive()
    }
}

/// Two replicas creating the table at once: one wins, the other sees it exists.
const CREATE: &str = "
    BEGIN;
    SELECT pg_advisory_xact_lock(7325001);
    CREATE TABLE IF NOT EXISTS tool_runtime_held_calls (
        ticket    text PRIMARY KEY,
        tool      text NOT NULL,
        arguments jsonb NOT NULL,
        held_at   timestamptz NOT NULL DEFAULT now()
    );
    COMMIT;";

impl PostgresApprovals {
    /// A store on the application's pool; creates the table if needed.
    pub async fn new(pool: Pool) -> Result<Self, StoreError> {
        let store = PostgresApprovals { pool };
        store
            .client()
            .await?
            .batch_execute(CREATE)
            .await
            .map_err(StoreError::from_source)?;
        Ok(store)
    }

    /// A store on a pool of at most 4 unencrypted connections to `config`
    /// (`postgresql://user@host:port/db`, or key=value settings): for a database on a private
    /// network or a local socket. Elsewhere, build the pool with TLS and use
    /// [`new`](Self::new).
    pub async fn connect(config: &str) -> Result<Self, StoreError> {
        let config: tokio_postgres::Config = config.parse().map_err(StoreError::from_source)?;
        let manager = Manager::from_config(
            config,
            tokio_postgres::NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(4)
            .build()
            .map_err(StoreError::from_source)?;
        Self::new(pool).await
    }

    async fn client(&self) -> Result<deadpool_postgres::Object, StoreError> {
        self.pool.get().await.map_err(StoreError::from_source)
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
            .map_err(StoreError::from_source)
    }
}

impl ApprovalStore for PostgresApprovals {
    fn hold(&self, call: PendingCall) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(async move {
            self.client()
                .await?
                .execute(
                    "INSERT INTO tool_runtime_held_calls (ticket, tool, arguments) VALUES ($1, $2, $3::text::jsonb)",
                    &[&call.ticket, &call.tool, &call.arguments.to_string()],
                )
                .await
                .map(drop)
                .map_err(StoreError::from_source)
        })
    }

    fn take<'a>(
        &'a self,
        ticket: &'a str,
    ) -> BoxFuture<'a, Result<Option<PendingCall>, StoreError>> {
        Box::pin(async move {
            let row = self
                .client()
                .await?
                .query_opt(
                    "DELETE FROM tool_runtime_held_calls WHERE ticket = $1 RETURNING tool, arguments::text",
                    &[&ticket],
                )
                .await
                .map_err(StoreError::from_source)?;
            row.map(|r| {
                let arguments: String = r.get(1);
                let arguments =
                    serde_json::from_str(&arguments).map_err(StoreError::from_source)?;
                Ok(PendingCall::new(ticket, r.get::<_, String>(0), arguments))
            })
            .transpose()
        })
    }
}
