//! The shared approval-store suite on PostgreSQL: `TEST_DATABASE_URL` when one is given, else a
//! throwaway server started with `scripts/pg-start.sh` (Debian's packages, installed when
//! missing) and stopped at the end. Several handles (as several replicas) on one table.

use std::process::Command;
use std::sync::Arc;

use tool_runtime::ApprovalStore;
use tool_runtime_postgres::PostgresApprovals;

/// A PostgreSQL for this test, stopped when dropped if the test started it.
struct Postgres {
    url: String,
    dir: Option<String>,
}

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/pg-start.sh");

impl Postgres {
    fn start() -> Postgres {
        if let Ok(url) = std::env::var("TEST_DATABASE_URL") {
            return Postgres { url, dir: None };
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port()
            .to_string();
        let out = Command::new("bash")
            .args([SCRIPT, &port])
            .output()
            .expect("bash runs scripts/pg-start.sh");
        assert!(
            out.status.success(),
            "PostgreSQL did not start: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).expect("its URL");
        let (url, dir) = text.trim().split_once(' ').expect("a URL and a directory");
        Postgres {
            url: url.into(),
            dir: Some(dir.into()),
        }
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if let Some(dir) = &self.dir {
            let _ = Command::new("bash").args([SCRIPT, "--stop", dir]).status();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_postgres_store_keeps_the_rules_of_every_store() {
    let pg = Postgres::start();
    // One pool per handle: the handles are as apart as two replicas' are.
    let mut handles = Vec::new();
    for _ in 0..10 {
        let store = PostgresApprovals::connect(&pg.url)
            .await
            .expect("connected");
        handles.push(Arc::new(store.with_per_owner(4)) as Arc<dyn ApprovalStore>);
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let open = || {
        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        handles[i % handles.len()].clone()
    };
    tool_runtime::testing::approval_store_suite(open, 4).await;
}

/// The task rules on PostgreSQL, each replica with its own pool: eight replicas answering one
/// task at once (eight connections) take it once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_postgres_task_store_keeps_the_rules_of_every_task_store() {
    let pg = Postgres::start();
    let mut handles = Vec::new();
    for _ in 0..10 {
        let store = PostgresApprovals::connect(&pg.url)
            .await
            .expect("connected");
        handles.push(Arc::new(store) as Arc<dyn tool_runtime::task::TaskStore>);
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let open = || {
        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        handles[i % handles.len()].clone()
    };
    tool_runtime::testing::task_store_suite(open).await;
}
