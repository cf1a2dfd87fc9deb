//! The connections an HTTP server holds, and which of them make room when it is full.
//!
//! A connection is *busy* while a request on it is being answered (its response body, event
//! streams included, not yet finished) and *idle* otherwise: still sending its first request's
//! headers, or kept alive between requests. When every place is taken and another connection
//! arrives, the oldest idle connection is closed for it; when all are busy, the oldest
//! connection of the caller holding the most is closed. So a crowd of connections that never
//! finish their headers, or one caller's crowd of slow bodies and streams, cannot keep other
//! callers out, and the cap still bounds file descriptors and memory.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use super::holding;

/// Every open connection, by age.
pub(super) struct Connections {
    places: Arc<Semaphore>,
    max: usize,
    live: Mutex<Live>,
}

#[derive(Default)]
struct Live {
    next: u64,
    by_age: BTreeMap<u64, Held>,
}

struct Held {
    requests: Arc<AtomicUsize>,
    evict: CancellationToken,
    owner: ConnectionOwner,
}

/// The caller of a connection's latest request (set once its credentials are checked), as a
/// request extension the server's layers fill in.
#[derive(Clone, Default)]
pub(super) struct ConnectionOwner(Arc<Mutex<Option<String>>>);

impl ConnectionOwner {
    pub(super) fn set(&self, owner: &str) {
        let mut slot = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if slot.as_deref() != Some(owner) {
            *slot = Some(owner.to_owned());
        }
    }

    fn get(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// One connection's place: its requests in progress, the signal that closes it to make room,
/// and its share of the cap (given back when dropped).
pub(super) struct Place {
    id: u64,
    pub(super) requests: Arc<AtomicUsize>,
    pub(super) evicted: CancellationToken,
    pub(super) owner: ConnectionOwner,
    connections: Arc<Connections>,
    _permit: OwnedSemaphorePermit,
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut live = self
            .connections
            .live
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        live.by_age.remove(&self.id);
    }
}

impl Connections {
    pub(super) fn new(max: usize) -> Arc<Connections> {
        let max = max.max(1);
        Arc::new(Connections {
            places: Arc::new(Semaphore::new(max)),
            max,
            live: Mutex::default(),
        })
    }

    /// A place for a new connection: free, or made by closing the oldest idle connection, or
    /// (all busy) when one frees up.
    pub(super) async fn place(self: &Arc<Self>) -> Place {
        let permit = match self.places.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(_) => {
                self.evict_for_newcomer();
                self.places
                    .clone()
                    .acquire_owned()
                    .await
                    .expect("the semaphore is never closed")
            }
        };
        let requests = Arc::new(AtomicUsize::new(0));
        let evicted = CancellationToken::new();
        let owner = ConnectionOwner::default();
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        let id = live.next;
        live.next += 1;
        live.by_age.insert(
            id,
            Held {
                requests: requests.clone(),
                evict: evicted.clone(),
                owner: owner.clone(),
            },
        );
        Place {
            id,
            requests,
            evicted,
            owner,
            connections: self.clone(),
            _permit: permit,
        }
    }

    /// Closes a connection to make room: the oldest idle one, or else the oldest of the caller
    /// holding the most connections.
    fn evict_for_newcomer(&self) {
        let live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        let open = || live.by_age.values().filter(|h| !h.evict.is_cancelled());
        if let Some(held) = open().find(|h| h.requests.load(Ordering::Acquire) == 0) {
            held.evict.cancel();
            return;
        }
        let mut per: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        for h in open() {
            if let Some(owner) = h.owner.get() {
                *per.entry(owner).or_default() += 1;
            }
        }
        let Some((top, _)) = per.into_iter().max_by_key(|(_, n)| *n) else {
            return;
        };
        if let Some(held) = open().find(|h| h.owner.get().as_deref() == Some(top.as_str())) {
            held.evict.cancel();
        }
    }

    /// Waits (up to `grace`) until every connection has closed.
    pub(super) async fn drained(&self, grace: std::time::Duration) {
        let all = u32::try_from(self.max).unwrap_or(u32::MAX);
        let _ = tokio::time::timeout(grace, self.places.acquire_many(all)).await;
    }
}

/// Counts a request as in progress on its connection until its response body is finished, and
/// lets the layers inside name the connection's caller.
pub(super) async fn track(
    requests: Arc<AtomicUsize>,
    owner: ConnectionOwner,
    mut request: Request,
    next: Next,
) -> Response {
    let guard = InProgress::new(requests);
    request.extensions_mut().insert(owner);
    let response = next.run(request).await;
    // The request stays counted until its response body is finished or dropped.
    holding(response, guard)
}

struct InProgress(Arc<AtomicUsize>);

impl InProgress {
    fn new(requests: Arc<AtomicUsize>) -> Self {
        requests.fetch_add(1, Ordering::AcqRel);
        InProgress(requests)
    }
}

impl Drop for InProgress {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}
