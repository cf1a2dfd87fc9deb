//! Calls held for a person's approval, kept where another process can find them.
//!
//! A call that needs approval is validated, then held under a *ticket* (128 random bits) in an
//! [`ApprovalStore`] instead of running. Whoever resumes it — this process or another, minutes
//! or days later — gives the ticket back; the store hands the call out once ([`take`]) and the
//! arguments it kept are the ones that run, whatever a copy of the conversation says.
//!
//! [`MemoryApprovals`] keeps them in this process; [`SqliteApprovals`] (feature `sqlite`) in a
//! file the processes of one machine share; [`PostgresApprovals`] (feature `postgres`) in the
//! database replicas on several machines share. Each hands a call out once: `take` deletes the
//! row and returns it in one statement. Another store implements the two methods.
//!
//! [`take`]: ApprovalStore::take

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::tool::BoxFuture;

#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "sqlite")]
mod sqlite;

#[cfg(feature = "postgres")]
pub use postgres::PostgresApprovals;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteApprovals;

/// A validated call waiting for approval, as a store keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HeldCall {
    /// The key it is held under: unguessable, and given out with the deferred call.
    pub ticket: String,
    /// The tool's name.
    pub tool: String,
    /// The arguments as validated, defaults filled in: what runs when approved.
    pub arguments: Value,
}

/// A store that failed (a database error, say).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreError(pub String);

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the approval store failed: {}", self.0)
    }
}

impl std::error::Error for StoreError {}

/// Where held calls wait.
pub trait ApprovalStore: Send + Sync {
    /// Keeps `call` until it is taken.
    fn hold<'a>(&'a self, call: HeldCall) -> BoxFuture<'a, Result<(), StoreError>>;

    /// Hands out the call held under `ticket` and forgets it: `Some` once, `None` after (and for
    /// a ticket never held). Two processes taking the same ticket at once get it once between
    /// them.
    fn take<'a>(&'a self, ticket: &'a str) -> BoxFuture<'a, Result<Option<HeldCall>, StoreError>>;
}

/// Held calls in this process's memory, bounded: at most [`MemoryApprovals::CAPACITY`] calls
/// (when full, holding one more forgets the oldest) and none older than a day. A call forgotten
/// either way is answered as no longer waiting; nothing runs.
#[derive(Debug)]
pub struct MemoryApprovals {
    held: Mutex<HashMap<String, (HeldCall, Instant)>>,
    capacity: usize,
    max_age: Duration,
}

impl Default for MemoryApprovals {
    fn default() -> Self {
        MemoryApprovals {
            held: Mutex::default(),
            capacity: Self::CAPACITY,
            max_age: Duration::from_secs(24 * 3600),
        }
    }
}

impl MemoryApprovals {
    /// How many calls the default store keeps.
    pub const CAPACITY: usize = 10_000;

    /// An empty store with the default bounds.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty store keeping at most `capacity` calls (at least one), none older than `max_age`.
    pub fn bounded(capacity: usize, max_age: Duration) -> Self {
        MemoryApprovals {
            held: Mutex::default(),
            capacity: capacity.max(1),
            max_age,
        }
    }

    /// How many calls are waiting.
    pub fn len(&self) -> usize {
        self.held.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether no call is waiting.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl ApprovalStore for MemoryApprovals {
    fn hold<'a>(&'a self, call: HeldCall) -> BoxFuture<'a, Result<(), StoreError>> {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        held.retain(|_, (_, at)| now.duration_since(*at) < self.max_age);
        while held.len() >= self.capacity {
            let oldest = held
                .iter()
                .min_by_key(|(_, (_, at))| *at)
                .map(|(ticket, _)| ticket.clone());
            match oldest {
                Some(ticket) => held.remove(&ticket),
                None => break,
            };
        }
        held.insert(call.ticket.clone(), (call, now));
        Box::pin(std::future::ready(Ok(())))
    }

    fn take<'a>(&'a self, ticket: &'a str) -> BoxFuture<'a, Result<Option<HeldCall>, StoreError>> {
        let taken = self
            .held
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(ticket)
            .filter(|(_, at)| at.elapsed() < self.max_age)
            .map(|(call, _)| call);
        Box::pin(std::future::ready(Ok(taken)))
    }
}

/// A fresh ticket: 128 random bits from the operating system, in hex.
pub fn new_ticket() -> Result<String, StoreError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| StoreError(format!("no randomness: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(n: u32) -> HeldCall {
        HeldCall {
            ticket: format!("t{n}"),
            tool: "hapus".into(),
            arguments: serde_json::json!({"n": n}),
        }
    }

    #[test]
    fn memory_is_bounded_by_count_and_age() {
        let store = MemoryApprovals::bounded(3, Duration::from_secs(3600));
        for n in 0..5 {
            pollster::block_on(store.hold(call(n))).unwrap();
        }
        assert_eq!(store.len(), 3, "the two oldest were forgotten");
        assert_eq!(pollster::block_on(store.take("t0")).unwrap(), None);
        assert_eq!(pollster::block_on(store.take("t4")).unwrap(), Some(call(4)));
        let store = MemoryApprovals::bounded(10, Duration::ZERO);
        pollster::block_on(store.hold(call(1))).unwrap();
        assert_eq!(
            pollster::block_on(store.take("t1")).unwrap(),
            None,
            "too old"
        );
    }

    #[test]
    fn a_held_call_is_taken_once() {
        let store = MemoryApprovals::new();
        let ticket = new_ticket().unwrap();
        assert_eq!(ticket.len(), 32);
        assert_ne!(ticket, new_ticket().unwrap());
        let call = HeldCall {
            ticket: ticket.clone(),
            tool: "hapus".into(),
            arguments: serde_json::json!({}),
        };
        pollster::block_on(store.hold(call.clone())).unwrap();
        assert_eq!(pollster::block_on(store.take(&ticket)).unwrap(), Some(call));
        assert_eq!(pollster::block_on(store.take(&ticket)).unwrap(), None);
    }
}
