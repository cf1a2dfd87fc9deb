//! The approval model: one name for a call waiting for a person ([`PendingCall`]), one place it
//! waits ([`ApprovalStore`]).
//!
//! A call to a tool that needs approval is validated, then held in the tool set's store under a
//! *ticket* (128 random bits) instead of running, and the caller gets the [`PendingCall`]
//! back in [`ToolError::ApprovalRequired`](crate::ToolError::ApprovalRequired). Whoever resumes
//! it — this process or another, minutes or days later — gives the ticket to
//! [`ToolSet::resume`](crate::ToolSet::resume); the store hands the call out once
//! ([`take`](ApprovalStore::take)), and the arguments it kept are the ones that run, whatever a
//! copy of the pending call says.
//!
//! Where calls wait is the tool set's choice ([`ToolSet::with_approvals`](crate::ToolSet::with_approvals)).
//! By default each set has its own bounded [`MemoryApprovals`], shared only with its clones and
//! the sets made from it ([`visible_to`](crate::ToolSet::visible_to)): nothing is shared between
//! sets unless the host gives them one store. Calls that must outlive the process, or be
//! resumed by another replica, go in a shared store: the `tool-runtime-sqlite` and
//! `tool-runtime-postgres` crates, or any type implementing the two methods of
//! [`ApprovalStore`].

use std::collections::{HashMap, VecDeque};
use std::error::Error;
use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::future::BoxFuture;

/// How long a store keeps a held call unless told otherwise: a day. Every store of this
/// toolkit's (memory, SQLite, PostgreSQL) starts with this bound.
pub const MAX_AGE: Duration = Duration::from_secs(24 * 3600);

/// How many held calls of one owner a store keeps unless told otherwise (holding one more
/// forgets that owner's oldest): one caller cannot fill a store others share.
pub const PER_OWNER: usize = 100;

/// A validated call waiting for a person's approval: the ticket it is held under, the tool that
/// will run and the arguments as validated (defaults filled in).
///
/// It is plain data: show `tool` and `arguments` to the person, keep it with a paused
/// conversation, write it to disk. Approve it with
/// [`ToolSet::resume`](crate::ToolSet::resume) and its ticket (the store's copy of the
/// arguments is what runs, once), or drop it with [`ToolSet::reject`](crate::ToolSet::reject).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PendingCall {
    /// The key it is held under: 128 random bits, in hex.
    pub ticket: String,
    /// The name of the tool that will run.
    pub tool: String,
    /// The arguments as validated, with defaults filled in: what will run.
    pub arguments: Value,
    /// Who asked for it, when the host said ([`Holder`]): a store keeps at most so many calls of
    /// one owner, so one caller cannot fill it for everyone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// When it stops waiting, in seconds since the Unix epoch, when the host gave a time to live
    /// ([`Holder`]); a store hands out nothing past it and forgets it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
}

impl PendingCall {
    /// A pending call of `tool` with these arguments, held under `ticket` (for stores that read
    /// one back), with no owner and no expiry of its own.
    pub fn new(ticket: impl Into<String>, tool: impl Into<String>, arguments: Value) -> Self {
        PendingCall {
            ticket: ticket.into(),
            tool: tool.into(),
            arguments,
            owner: None,
            expires_at: None,
        }
    }

    /// The same call, owned by `owner`.
    pub fn with_owner(mut self, owner: Option<String>) -> Self {
        self.owner = owner;
        self
    }

    /// The same call, waiting until `expires_at` (seconds since the Unix epoch).
    pub fn with_expiry(mut self, expires_at: Option<u64>) -> Self {
        self.expires_at = expires_at;
        self
    }

    /// Whether its time to live is over at `now` (seconds since the Unix epoch).
    pub fn expired_at(&self, now: u64) -> bool {
        self.expires_at.is_some_and(|at| at <= now)
    }
}

/// Who a call is held for, and for how long: a value the host puts in a call's
/// [`Context`](crate::Context) (the MCP server puts the caller and its approval timeout there).
/// A call held without one has no owner, and waits as long as its store keeps calls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holder {
    /// The caller the call is held for (a principal, or an address): stores bound how many
    /// calls one owner has waiting.
    pub owner: String,
    /// How long the call may wait for a person.
    pub ttl: Option<Duration>,
}

/// Seconds since the Unix epoch, now.
pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl fmt::Display for PendingCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.tool, self.arguments)
    }
}

/// An approval store that failed (a database error, say); its cause is its
/// [`source`](Error::source).
#[derive(Debug)]
pub struct StoreError {
    message: String,
    source: Option<Box<dyn Error + Send + Sync>>,
}

impl StoreError {
    /// A failure described by `message`.
    pub fn new(message: impl Into<String>) -> Self {
        StoreError {
            message: message.into(),
            source: None,
        }
    }

    /// A failure caused by `source` (its [`source`](Error::source)); the message is its
    /// `Display` and those of its own causes.
    pub fn from_source(source: impl Into<Box<dyn Error + Send + Sync>>) -> Self {
        let source = source.into();
        let mut message = source.to_string();
        let mut cause = source.source();
        while let Some(c) = cause {
            let text = c.to_string();
            if !message.contains(&text) {
                message = format!("{message}: {text}");
            }
            cause = c.source();
        }
        StoreError {
            message,
            source: Some(source),
        }
    }

    /// What failed, in words.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// "the approval store failed", with the message where there is no source to say it (an error
/// reporter prints the source after it, once).
impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.source {
            Some(_) => f.write_str("the approval store failed"),
            None => write!(f, "the approval store failed: {}", self.message),
        }
    }
}

impl Error for StoreError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.source.as_deref().map(|e| e as &(dyn Error + 'static))
    }
}

/// Two store errors are equal when they say the same thing.
impl PartialEq for StoreError {
    fn eq(&self, other: &Self) -> bool {
        self.message == other.message
    }
}

/// Where calls wait for approval. Each held call is handed out once: a store shared by several
/// processes must make [`take`](ApprovalStore::take) atomic (one `DELETE … RETURNING`).
pub trait ApprovalStore: Send + Sync {
    /// Keeps `call` until it is taken.
    fn hold(&self, call: PendingCall) -> BoxFuture<'_, Result<(), StoreError>>;

    /// Hands out the call held under `ticket` and forgets it: `Some` once, `None` after (and for
    /// a ticket never held, or forgotten). Two processes taking the same ticket at once get it
    /// once between them.
    fn take<'a>(
        &'a self,
        ticket: &'a str,
    ) -> BoxFuture<'a, Result<Option<PendingCall>, StoreError>>;

    /// Forgets every call past its own expiry (or the store's age limit) now, rather than at
    /// the next [`hold`](ApprovalStore::hold): what a server does when an expired approval
    /// comes back, whose ticket it can no longer read. How many it forgot; by default none (a
    /// store that forgets them only on its own schedule).
    fn forget_expired(&self) -> BoxFuture<'_, Result<usize, StoreError>> {
        Box::pin(std::future::ready(Ok(0)))
    }
}

/// Held calls in this process's memory, bounded: at most [`MemoryApprovals::CAPACITY`] calls
/// (when full, holding one more forgets the oldest), at most [`PER_OWNER`] of
/// one owner (holding one more forgets that owner's oldest), none older than a day or past its
/// own expiry. A call forgotten any way is answered as no longer waiting; nothing runs.
#[derive(Debug)]
pub struct MemoryApprovals {
    held: Mutex<Held>,
    capacity: usize,
    max_age: Duration,
    per_owner: usize,
}

#[derive(Debug, Default)]
struct Held {
    by_ticket: HashMap<String, (PendingCall, Instant)>,
    /// Tickets in the order they were held (some already taken), oldest first.
    order: VecDeque<(Instant, String)>,
    /// The tickets of each owner, oldest first (some already taken).
    by_owner: HashMap<String, VecDeque<String>>,
}

impl Default for MemoryApprovals {
    fn default() -> Self {
        MemoryApprovals::bounded(Self::CAPACITY, MAX_AGE)
    }
}

impl MemoryApprovals {
    /// How many calls the default store keeps.
    pub const CAPACITY: usize = 10_000;

    /// An empty store with the default bounds.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty store keeping at most `capacity` calls (at least one), none older than `max_age`,
    /// and at most [`PER_OWNER`] of one owner.
    pub fn bounded(capacity: usize, max_age: Duration) -> Self {
        MemoryApprovals {
            held: Mutex::default(),
            capacity: capacity.max(1),
            max_age,
            per_owner: PER_OWNER,
        }
    }

    /// The store keeping at most `per_owner` calls (at least one) of one owner.
    pub fn per_owner(mut self, per_owner: usize) -> Self {
        self.per_owner = per_owner.max(1);
        self
    }

    /// How many calls are waiting.
    pub fn len(&self) -> usize {
        self.lock().by_ticket.len()
    }

    /// Whether no call is waiting.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Held {
    /// Forgets calls past `max_age`, then the oldest until fewer than `room` remain; drops the
    /// order's entries of tickets already taken, so the order stays as small as the store.
    fn sweep(&mut self, now: Instant, max_age: Duration, room: usize) {
        while let Some((at, ticket)) = self.order.front() {
            // Only the entry held at that moment is live: a taken ticket held again is newer.
            let live = self.by_ticket.get(ticket).is_some_and(|(_, t)| t == at);
            if live && now.duration_since(*at) < max_age && self.by_ticket.len() < room {
                break;
            }
            if live {
                self.by_ticket.remove(ticket);
            }
            self.order.pop_front();
        }
        if self.order.len() > 2 * room {
            let by_ticket = &self.by_ticket;
            self.order
                .retain(|(at, t)| by_ticket.get(t).is_some_and(|(_, held)| held == at));
        }
    }
}

impl Held {
    /// Forgets the oldest calls of `owner` until fewer than `room` remain.
    fn make_room_for(&mut self, owner: &str, room: usize) {
        let Some(tickets) = self.by_owner.get_mut(owner) else {
            return;
        };
        let by_ticket = &mut self.by_ticket;
        tickets.retain(|t| by_ticket.contains_key(t));
        while tickets.len() >= room {
            if let Some(oldest) = tickets.pop_front() {
                by_ticket.remove(&oldest);
            }
        }
    }
}

impl ApprovalStore for MemoryApprovals {
    fn forget_expired(&self) -> BoxFuture<'_, Result<usize, StoreError>> {
        let now = unix_now();
        let mut held = self.lock();
        let before = held.by_ticket.len();
        let max_age = self.max_age;
        held.by_ticket
            .retain(|_, (call, at)| at.elapsed() < max_age && !call.expired_at(now));
        let forgot = before - held.by_ticket.len();
        Box::pin(std::future::ready(Ok(forgot)))
    }

    fn hold(&self, call: PendingCall) -> BoxFuture<'_, Result<(), StoreError>> {
        let mut held = self.lock();
        let now = Instant::now();
        held.sweep(now, self.max_age, self.capacity);
        if let Some(owner) = &call.owner {
            held.make_room_for(owner, self.per_owner);
            held.by_owner
                .entry(owner.clone())
                .or_default()
                .push_back(call.ticket.clone());
        }
        held.order.push_back((now, call.ticket.clone()));
        held.by_ticket.insert(call.ticket.clone(), (call, now));
        if held.by_owner.len() > 2 * self.capacity {
            let by_ticket = &held.by_ticket;
            let live: std::collections::HashSet<&str> = by_ticket
                .values()
                .filter_map(|(c, _)| c.owner.as_deref())
                .collect();
            let stale: Vec<String> = held
                .by_owner
                .keys()
                .filter(|o| !live.contains(o.as_str()))
                .cloned()
                .collect();
            for owner in stale {
                held.by_owner.remove(&owner);
            }
        }
        Box::pin(std::future::ready(Ok(())))
    }

    fn take<'a>(
        &'a self,
        ticket: &'a str,
    ) -> BoxFuture<'a, Result<Option<PendingCall>, StoreError>> {
        let now = unix_now();
        let taken = self
            .lock()
            .by_ticket
            .remove(ticket)
            .filter(|(call, at)| at.elapsed() < self.max_age && !call.expired_at(now))
            .map(|(call, _)| call);
        Box::pin(std::future::ready(Ok(taken)))
    }
}

/// A fresh ticket: 128 random bits from the operating system, in hex.
pub fn new_ticket() -> Result<String, StoreError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| StoreError::new(format!("no randomness: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(n: u32) -> PendingCall {
        PendingCall::new(format!("t{n}"), "hapus", serde_json::json!({"n": n}))
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
        // A taken ticket's place in the order does not evict a newer call.
        for n in 5..7 {
            pollster::block_on(store.hold(call(n))).unwrap();
        }
        assert_eq!(store.len(), 3);
        assert_eq!(pollster::block_on(store.take("t6")).unwrap(), Some(call(6)));
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
        let call = PendingCall::new(ticket.clone(), "hapus", serde_json::json!({}));
        pollster::block_on(store.hold(call.clone())).unwrap();
        assert_eq!(pollster::block_on(store.take(&ticket)).unwrap(), Some(call));
        assert_eq!(pollster::block_on(store.take(&ticket)).unwrap(), None);
    }

    #[test]
    fn one_owner_cannot_fill_the_store_and_expired_calls_are_not_handed_out() {
        let store = MemoryApprovals::bounded(1000, Duration::from_secs(3600)).per_owner(3);
        for n in 0..10 {
            let call = call(n).with_owner(Some("sub:mallory".into()));
            pollster::block_on(store.hold(call)).unwrap();
        }
        pollster::block_on(store.hold(call(100).with_owner(Some("sub:sari".into())))).unwrap();
        assert_eq!(store.len(), 4, "three of mallory's, and sari's");
        assert_eq!(
            pollster::block_on(store.take("t9"))
                .unwrap()
                .map(|c| c.ticket),
            Some("t9".into())
        );
        assert_eq!(
            pollster::block_on(store.take("t0")).unwrap(),
            None,
            "forgotten"
        );
        assert!(pollster::block_on(store.take("t100")).unwrap().is_some());
        let expired = call(200).with_expiry(Some(unix_now() - 1));
        pollster::block_on(store.hold(expired)).unwrap();
        assert_eq!(pollster::block_on(store.take("t200")).unwrap(), None);
    }

    #[test]
    fn a_store_error_keeps_its_cause() {
        let io = std::io::Error::other("disk full");
        let e = StoreError::from_source(io);
        // The cause is the source, printed once by a reporter; the message has it all.
        assert_eq!(e.to_string(), "the approval store failed");
        assert!(e.source().is_some_and(|s| s.to_string() == "disk full"));
        assert_eq!(e.message(), "disk full");
        let plain = StoreError::new("the table is missing");
        assert_eq!(
            plain.to_string(),
            "the approval store failed: the table is missing"
        );
        assert!(plain.source().is_none());
    }
}
