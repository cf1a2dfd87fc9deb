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
//! let tools = ToolSet::from_module(module_path!())?.with_approvals(Arc::new(PostgresApprovals::new(pool).await?));
//! # Ok(()) }
//! ```

#![warn(missing_docs, unreachable_pub)]

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

use std::time::Duration;

pub use deadpool_postgres;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
pub use tokio_postgres;
use tool_runtime::approval::{MAX_AGE, PER_OWNER, unix_now};
use tool_runtime::task::{KeptBounds, KeptResult, TaskRecord, TaskStore};
use tool_runtime::{ApprovalStore, BoxFuture, PendingCall, StoreError};

/// Held calls in a PostgreSQL table (`tool_runtime_pending_calls`), for replicas behind a load
/// balancer. `take` is one `DELETE … RETURNING`, so however many replicas take one ticket at
/// once, one gets the call. A connection broken by a restart of the database is replaced by
/// the pool; a statement cut off by a broken connection is not retried: a `take` is never
/// repeated, so a call runs at most once. Bounded: a call waits at most
/// [`max_age`](Self::with_max_age) (a day by default) or until its own expiry, and one owner has
/// at most [`per_owner`](Self::with_per_owner) calls waiting (100 by default; holding one more
/// forgets that owner's oldest). Each `hold` forgets what expired.
#[derive(Clone)]
pub struct PostgresApprovals {
    pool: Pool,
    max_age: Duration,
    per_owner: usize,
}

impl std::fmt::Debug for PostgresApprovals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresApprovals").finish_non_exhaustive()
    }
}

/// Two replicas creating the table at once: one wins, the other sees it exists. Times are
/// seconds since the Unix epoch, from the replica that holds the call.
const CREATE: &str = "
    BEGIN;
    SELECT pg_advisory_xact_lock(7325001);
    CREATE TABLE IF NOT EXISTS tool_runtime_pending_calls (
        seq        bigserial,
        ticket     text PRIMARY KEY,
        tool       text NOT NULL,
        arguments  jsonb NOT NULL,
        owner      text,
        held_at    bigint NOT NULL,
        expires_at bigint NOT NULL
    );
    CREATE INDEX IF NOT EXISTS tool_runtime_pending_calls_owner
        ON tool_runtime_pending_calls (owner, seq);
    CREATE INDEX IF NOT EXISTS tool_runtime_pending_calls_expiry
        ON tool_runtime_pending_calls (expires_at);
    CREATE TABLE IF NOT EXISTS tool_runtime_tasks (
        id         text PRIMARY KEY,
        owner      text NOT NULL,
        version    bigint NOT NULL,
        expires_ms bigint NOT NULL,
        done       boolean NOT NULL,
        record     text NOT NULL
    );
    CREATE INDEX IF NOT EXISTS tool_runtime_tasks_owner ON tool_runtime_tasks (owner);
    CREATE INDEX IF NOT EXISTS tool_runtime_tasks_expiry ON tool_runtime_tasks (expires_ms);
    CREATE TABLE IF NOT EXISTS tool_runtime_kept (
        id         text PRIMARY KEY,
        -- The order results were kept in (several may be kept in one millisecond).
        seq        bigserial,
        owner      text NOT NULL,
        bytes      bigint NOT NULL,
        kept_ms    bigint NOT NULL,
        expires_ms bigint NOT NULL,
        text       text NOT NULL
    );
    CREATE INDEX IF NOT EXISTS tool_runtime_kept_owner ON tool_runtime_kept (owner, kept_ms);
    CREATE INDEX IF NOT EXISTS tool_runtime_kept_age ON tool_runtime_kept (kept_ms);
    COMMIT;";

/// A count (seconds, milliseconds, a version) as PostgreSQL's `bigint`.
fn int(s: u64) -> i64 {
    i64::try_from(s).unwrap_or(i64::MAX)
}

impl PostgresApprovals {
    /// A store on the application's pool; creates the table if needed.
    pub async fn new(pool: Pool) -> Result<Self, StoreError> {
        let store = PostgresApprovals {
            pool,
            max_age: MAX_AGE,
            per_owner: PER_OWNER,
        };
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
        let row = self
            .client()
            .await?
            .query_one("SELECT count(*) FROM tool_runtime_pending_calls", &[])
            .await
            .map_err(StoreError::from_source)?;
        Ok(row.get::<_, i64>(0).unsigned_abs())
    }

    async fn client(&self) -> Result<deadpool_postgres::Object, StoreError> {
        self.pool.get().await.map_err(StoreError::from_source)
    }

    /// Forgets calls held longer than `age` (nobody came back for them); returns how many.
    pub async fn forget_older_than(&self, age: Duration) -> Result<u64, StoreError> {
        self.client()
            .await?
            .execute(
                "DELETE FROM tool_runtime_pending_calls WHERE held_at < $1",
                &[&int(unix_now()).saturating_sub(int(age.as_secs()))],
            )
            .await
            .map_err(StoreError::from_source)
    }
}

impl ApprovalStore for PostgresApprovals {
    fn forget_expired(&self) -> BoxFuture<'_, Result<usize, StoreError>> {
        Box::pin(async move {
            let forgot = self
                .client()
                .await?
                .execute(
                    "DELETE FROM tool_runtime_pending_calls WHERE expires_at <= $1",
                    &[&int(unix_now())],
                )
                .await
                .map_err(StoreError::from_source)?;
            Ok(forgot as usize)
        })
    }

    fn hold(&self, call: PendingCall) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(async move {
            let now = unix_now();
            let expires = call
                .expires_at
                .unwrap_or(u64::MAX)
                .min(now.saturating_add(self.max_age.as_secs()));
            let mut client = self.client().await?;
            let tx = client
                .transaction()
                .await
                .map_err(StoreError::from_source)?;
            tx.execute(
                "INSERT INTO tool_runtime_pending_calls (ticket, tool, arguments, owner, held_at, expires_at)
                 VALUES ($1, $2, $3::text::jsonb, $4, $5, $6)",
                &[&call.ticket, &call.tool, &call.arguments.to_string(), &call.owner, &int(now), &int(expires)],
            )
            .await
            .map_err(StoreError::from_source)?;
            tx.execute(
                "DELETE FROM tool_runtime_pending_calls WHERE expires_at <= $1",
                &[&int(now)],
            )
            .await
            .map_err(StoreError::from_source)?;
            if call.owner.is_some() {
                tx.execute(
                    "DELETE FROM tool_runtime_pending_calls WHERE owner = $1 AND ticket NOT IN (
                         SELECT ticket FROM tool_runtime_pending_calls WHERE owner = $1
                         ORDER BY seq DESC LIMIT $2)",
                    &[&call.owner, &int(self.per_owner as u64)],
                )
                .await
                .map_err(StoreError::from_source)?;
            }
            tx.commit().await.map_err(StoreError::from_source)
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
                    "DELETE FROM tool_runtime_pending_calls WHERE ticket = $1
                     RETURNING tool, arguments::text, owner, expires_at",
                    &[&ticket],
                )
                .await
                .map_err(StoreError::from_source)?;
            let Some(r) = row else { return Ok(None) };
            let expires: i64 = r.get(3);
            if expires <= int(unix_now()) {
                return Ok(None);
            }
            let arguments: String = r.get(1);
            let arguments =
                tool_runtime::json::from_str(&arguments).map_err(StoreError::from_source)?;
            Ok(Some(
                PendingCall::new(ticket, r.get::<_, String>(0), arguments)
                    .with_owner(r.get(2))
                    .with_expiry(u64::try_from(expires).ok()),
            ))
        })
    }
}

/// Tasks in the same database as the held calls (table `tool_runtime_tasks`): every replica
/// shares them; a task is replaced only over the version it was read at, in one `UPDATE`, and
/// one owner's count and insert are serialized by a transaction-scoped advisory lock.
impl TaskStore for PostgresApprovals {
    fn create<'a>(
        &'a self,
        task: &'a TaskRecord,
        per_owner: usize,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let record = serde_json::to_string(task).map_err(StoreError::from_source)?;
            let mut client = self.client().await?;
            let tx = client
                .transaction()
                .await
                .map_err(StoreError::from_source)?;
            tx.execute(
                "SELECT pg_advisory_xact_lock(7325002, hashtext($1))",
                &[&task.owner],
            )
            .await
            .map_err(StoreError::from_source)?;
            tx.execute(
                "DELETE FROM tool_runtime_tasks WHERE expires_ms <= $1",
                &[&int(task.created_ms)],
            )
            .await
            .map_err(StoreError::from_source)?;
            let owned: i64 = tx
                .query_one(
                    "SELECT count(*) FROM tool_runtime_tasks WHERE owner = $1",
                    &[&task.owner],
                )
                .await
                .map_err(StoreError::from_source)?
                .get(0);
            // At the bound, the owner's finished task that expires first makes room.
            if owned >= int(per_owner as u64)
                && tx
                    .execute(
                        "DELETE FROM tool_runtime_tasks WHERE id = (
                             SELECT id FROM tool_runtime_tasks WHERE owner = $1 AND done
                             ORDER BY expires_ms, id LIMIT 1)",
                        &[&task.owner],
                    )
                    .await
                    .map_err(StoreError::from_source)?
                    == 0
            {
                return Ok(false);
            }
            tx.execute(
                "INSERT INTO tool_runtime_tasks (id, owner, version, expires_ms, done, record)
                 VALUES ($1, $2, $3, $4, $5, $6)",
                &[
                    &task.id,
                    &task.owner,
                    &int(task.version),
                    &int(task.expires_ms),
                    &task.status.is_terminal(),
                    &record,
                ],
            )
            .await
            .map_err(StoreError::from_source)?;
            tx.commit().await.map_err(StoreError::from_source)?;
            Ok(true)
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        Box::pin(async move {
            let row = self
                .client()
                .await?
                .query_opt(
                    "SELECT record FROM tool_runtime_tasks WHERE id = $1",
                    &[&id],
                )
                .await
                .map_err(StoreError::from_source)?;
            row.map(|r| {
                tool_runtime::json::from_str(r.get::<_, &str>(0)).map_err(StoreError::from_source)
            })
            .transpose()
        })
    }

    fn replace<'a>(
        &'a self,
        task: &'a TaskRecord,
        read_version: u64,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let record = serde_json::to_string(task).map_err(StoreError::from_source)?;
            let n = self
                .client()
                .await?
                .execute(
                    "UPDATE tool_runtime_tasks SET record = $1, version = $2, expires_ms = $3, done = $4
                     WHERE id = $5 AND version = $6",
                    &[
                        &record,
                        &int(task.version),
                        &int(task.expires_ms),
                        &task.status.is_terminal(),
                        &task.id,
                        &int(read_version),
                    ],
                )
                .await
                .map_err(StoreError::from_source)?;
            Ok(n == 1)
        })
    }

    fn forget_expired(&self, now_ms: u64) -> BoxFuture<'_, Result<usize, StoreError>> {
        Box::pin(async move {
            let client = self.client().await?;
            let mut n = 0;
            for table in ["tool_runtime_tasks", "tool_runtime_kept"] {
                n += client
                    .execute(
                        &format!("DELETE FROM {table} WHERE expires_ms <= $1"),
                        &[&int(now_ms)],
                    )
                    .await
                    .map_err(StoreError::from_source)?;
            }
            Ok(usize::try_from(n).unwrap_or(usize::MAX))
        })
    }

    fn keep_result<'a>(
        &'a self,
        result: &'a KeptResult,
        bounds: KeptBounds,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            if result.text.len() > bounds.most_bytes {
                return Ok(false);
            }
            let e = StoreError::from_source;
            let mut client = self.client().await?;
            let tx = client.transaction().await.map_err(e)?;
            // Keeps are taken one at a time (every replica's): the counts and the insert agree.
            tx.execute("SELECT pg_advisory_xact_lock(7325003)", &[])
                .await
                .map_err(e)?;
            tx.execute(
                "DELETE FROM tool_runtime_kept WHERE expires_ms <= $1",
                &[&int(result.kept_ms)],
            )
            .await
            .map_err(e)?;
            // One owner's results make way for its own first, never for another's.
            let owned: i64 = tx
                .query_one(
                    "SELECT count(*) FROM tool_runtime_kept WHERE owner = $1",
                    &[&result.owner],
                )
                .await
                .map_err(e)?
                .get(0);
            if owned >= int(bounds.most_each as u64) {
                tx.execute(
                    "DELETE FROM tool_runtime_kept WHERE id = (
                         SELECT id FROM tool_runtime_kept WHERE owner = $1
                         ORDER BY kept_ms, seq LIMIT 1)",
                    &[&result.owner],
                )
                .await
                .map_err(e)?;
            }
            // Then the oldest, until the store's bounds hold with this one.
            let len = int(result.text.len() as u64);
            loop {
                let row = tx
                    .query_one(
                        "SELECT count(*), coalesce(sum(bytes), 0)::bigint FROM tool_runtime_kept",
                        &[],
                    )
                    .await
                    .map_err(e)?;
                let (count, bytes): (i64, i64) = (row.get(0), row.get(1));
                let over = count >= int(bounds.most as u64)
                    || bytes.saturating_add(len) > int(bounds.most_bytes as u64);
                if !over || count == 0 {
                    break;
                }
                tx.execute(
                    "DELETE FROM tool_runtime_kept WHERE id = (
                         SELECT id FROM tool_runtime_kept ORDER BY kept_ms, seq LIMIT 1)",
                    &[],
                )
                .await
                .map_err(e)?;
            }
            tx.execute(
                "INSERT INTO tool_runtime_kept (id, owner, bytes, kept_ms, expires_ms, text)
                 VALUES ($1, $2, $3, $4, $5, $6)",
                &[
                    &result.id,
                    &result.owner,
                    &len,
                    &int(result.kept_ms),
                    &int(result.expires_ms),
                    &result.text,
                ],
            )
            .await
            .map_err(e)?;
            tx.commit().await.map_err(e)?;
            Ok(true)
        })
    }

    fn kept_result<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<KeptResult>, StoreError>> {
        Box::pin(async move {
            let row = self
                .client()
                .await?
                .query_opt(
                    "SELECT id, owner, text, kept_ms, expires_ms FROM tool_runtime_kept WHERE id = $1",
                    &[&id],
                )
                .await
                .map_err(StoreError::from_source)?;
            Ok(row.map(|r| {
                let ms = |i: usize| u64::try_from(r.get::<_, i64>(i)).unwrap_or(0);
                KeptResult::new(r.get(0), r.get(1), r.get(2), ms(3), ms(4))
            }))
        })
    }

    fn waiting<'a>(
        &'a self,
        now_ms: u64,
        tools: &'a [String],
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<TaskRecord>, StoreError>> {
        Box::pin(async move {
            let rows = self
                .client()
                .await?
                .query(
                    "SELECT record FROM tool_runtime_tasks
                     WHERE NOT done AND expires_ms > $1
                       AND record::jsonb ->> 'status' = 'input_required'
                       AND record::jsonb ->> 'ticket' IS NOT NULL
                       AND record::jsonb ->> 'tool' = ANY($3)
                     ORDER BY (record::jsonb ->> 'updated_ms')::bigint, id LIMIT $2",
                    &[
                        &int(now_ms),
                        &i64::try_from(limit).unwrap_or(i64::MAX),
                        &tools,
                    ],
                )
                .await
                .map_err(StoreError::from_source)?;
            rows.iter()
                .map(|r| {
                    tool_runtime::json::from_str(r.get::<_, &str>(0))
                        .map_err(StoreError::from_source)
                })
                .collect()
        })
    }
}
