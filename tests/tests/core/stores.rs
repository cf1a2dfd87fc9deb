//! The shared approval-store suite (`testing::approval_store_suite`) on the in-memory store;
//! the SQLite and PostgreSQL crates run the same suite on theirs.

use std::sync::Arc;

use tool_runtime::testing::approval_store_suite;
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
