//! How much work a server takes on: the limits, and the semaphores that enforce them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// How much work the server takes on.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Limits {
    /// Calls running at once, over all callers.
    pub concurrent_calls: usize,
    /// Calls running at once for one caller (see [`Caller`](crate::Caller)).
    pub calls_per_caller: usize,
    /// How long a call waits for its turn before it is refused as busy.
    pub queue_wait: Duration,
    /// How long a call may run when its tool sets no `timeout`.
    pub call_timeout: Duration,
    /// How long a person has to answer an approval question.
    pub approval_timeout: Duration,
    /// On stdio: requests read and not yet answered; beyond it the server stops reading.
    pub max_in_flight: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            concurrent_calls: 64,
            calls_per_caller: 8,
            queue_wait: Duration::from_secs(30),
            call_timeout: Duration::from_secs(60),
            approval_timeout: Duration::from_secs(600),
            max_in_flight: crate::stdio::MAX_IN_FLIGHT,
        }
    }
}

/// The semaphores behind [`Limits`]: one for the server, one per caller key (dropped when idle).
pub(crate) struct Gates {
    server: Arc<Semaphore>,
    callers: Mutex<HashMap<String, Arc<Semaphore>>>,
}

/// A call's turn: held while it runs, on the async worker or on a blocking thread.
pub(crate) struct Turn {
    _server: OwnedSemaphorePermit,
    _caller: OwnedSemaphorePermit,
}

impl Gates {
    pub(crate) fn new(limits: &Limits) -> Self {
        Gates {
            server: Arc::new(Semaphore::new(limits.concurrent_calls.max(1))),
            callers: Mutex::new(HashMap::new()),
        }
    }

    pub(crate) async fn turn(&self, caller: &str, limits: &Limits) -> Option<Turn> {
        let per_caller = {
            let mut callers = self.callers.lock().unwrap_or_else(|e| e.into_inner());
            // Keys of callers with no call running are forgotten: the map stays small.
            if callers.len() > 1024 {
                callers.retain(|_, s| Arc::strong_count(s) > 1);
            }
            callers
                .entry(caller.to_owned())
                .or_insert_with(|| Arc::new(Semaphore::new(limits.calls_per_caller.max(1))))
                .clone()
        };
        let wait = async {
            let caller = per_caller.acquire_owned().await.ok()?;
            let server = self.server.clone().acquire_owned().await.ok()?;
            Some(Turn {
                _server: server,
                _caller: caller,
            })
        };
        tokio::time::timeout(limits.queue_wait, wait)
            .await
            .ok()
            .flatten()
    }
}
