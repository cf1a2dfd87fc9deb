//! The shared approval-store and task-store suites (`testing::approval_store_suite`,
//! `testing::task_store_suite`) on the in-memory stores; the SQLite and PostgreSQL crates run
//! the same suites on theirs.

use std::sync::Arc;

use tool_runtime::task::{MemoryTasks, TaskRecord, TaskStore};
use tool_runtime::testing::{approval_store_suite, task_store_suite};
use tool_runtime::{ApprovalStore, MemoryApprovals};

#[test]
fn the_memory_store_keeps_the_rules_of_every_store() {
    let store = Arc::new(MemoryApprovals::new().per_owner(4));
    pollster::block_on(approval_store_suite(
        || store.clone() as Arc<dyn ApprovalStore>,
        4,
    ));
}

/// The suite fails a store that breaks a rule (a store that hands a call out twice).
#[test]
fn the_suite_fails_a_store_that_hands_a_call_out_twice() {
    struct Twice(MemoryApprovals);
    impl ApprovalStore for Twice {
        fn hold(
            &self,
            call: tool_runtime::PendingCall,
        ) -> tool_runtime::BoxFuture<'_, Result<(), tool_runtime::StoreError>> {
            self.0.hold(call)
        }
        fn take<'a>(
            &'a self,
            ticket: &'a str,
        ) -> tool_runtime::BoxFuture<
            'a,
            Result<Option<tool_runtime::PendingCall>, tool_runtime::StoreError>,
        > {
            Box::pin(async move {
                let call = self.0.take(ticket).await?;
                if let Some(c) = &call {
                    // Held again: the next take hands it out a second time.
                    self.0.hold(c.clone()).await?;
                }
                Ok(call)
            })
        }
    }
    let store = Arc::new(Twice(MemoryApprovals::new().per_owner(4)));
    let failed = std::panic::catch_unwind(|| {
        pollster::block_on(approval_store_suite(
            || store.clone() as Arc<dyn ApprovalStore>,
            4,
        ))
    });
    let message = failed.unwrap_err();
    let message = message
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(message.contains("handed out once"), "{message}");
}

/// The task-store suite (`testing::task_store_suite`) on the in-memory store.
#[test]
fn the_memory_task_store_keeps_the_rules_of_every_task_store() {
    let store = Arc::new(MemoryTasks::new());
    pollster::block_on(task_store_suite(|| store.clone() as Arc<dyn TaskStore>));
}

/// The task suite fails a store whose `replace` ignores the version read: two replicas
/// answering one approval at once would both run it.
#[test]
fn the_task_suite_fails_a_store_that_replaces_over_any_version() {
    struct Blind(MemoryTasks);
    impl TaskStore for Blind {
        fn create<'a>(
            &'a self,
            task: &'a TaskRecord,
            per_owner: usize,
        ) -> tool_runtime::BoxFuture<'a, Result<bool, tool_runtime::StoreError>> {
            self.0.create(task, per_owner)
        }
        fn get<'a>(
            &'a self,
            id: &'a str,
        ) -> tool_runtime::BoxFuture<'a, Result<Option<TaskRecord>, tool_runtime::StoreError>>
        {
            self.0.get(id)
        }
        fn replace<'a>(
            &'a self,
            task: &'a TaskRecord,
            _read_version: u64,
        ) -> tool_runtime::BoxFuture<'a, Result<bool, tool_runtime::StoreError>> {
            // Whatever version it holds now.
            Box::pin(async move {
                let held = self.0.get(&task.id).await?.map(|t| t.version);
                match held {
                    Some(v) => self.0.replace(task, v).await,
                    None => Ok(false),
                }
            })
        }
        fn forget_expired(
            &self,
            now_ms: u64,
        ) -> tool_runtime::BoxFuture<'_, Result<usize, tool_runtime::StoreError>> {
            self.0.forget_expired(now_ms)
        }
        fn waiting<'a>(
            &'a self,
            now_ms: u64,
            tools: &'a [String],
            limit: usize,
        ) -> tool_runtime::BoxFuture<'a, Result<Vec<TaskRecord>, tool_runtime::StoreError>>
        {
            self.0.waiting(now_ms, tools, limit)
        }
    }
    let store = Arc::new(Blind(MemoryTasks::new()));
    let failed = std::panic::catch_unwind(|| {
        pollster::block_on(task_store_suite(|| store.clone() as Arc<dyn TaskStore>))
    });
    let message = failed.unwrap_err();
    let message = message
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| message.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_default();
    // The first rule it breaks: a runner's write over a version read before the task was
    // marked failed (the suite's own "a second replace over the same version fails" comes
    // later).
    assert!(
        message.contains("a write over the version read before the task was marked failed"),
        "{message}"
    );
}
