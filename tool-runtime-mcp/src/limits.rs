//! How much work a server takes on: the limits, and the semaphores that enforce them.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::oneshot;

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
    /// A sync tool's calls run on Tokio's blocking pool until its last 64 calls in a row each
    /// returned within this time; then on the async worker that received them, without the
    /// hand-offs between threads (never more at once than one fewer than the workers, so one is
    /// always free), until a call takes longer, after which it needs twice as many fast calls (at
    /// most 1,024). On Linux a call is slow when its thread computes past this time, or waits
    /// (sleeps, locks, I/O) in a call of ten times this, when another of its last 256 calls
    /// waited too (one wait in thousands is a lock whose holder was preempted); not when the
    /// machine is busy.
    /// A proven tool that turns slow (a cache miss, a lock) holds that one worker for the call,
    /// and the call's time limit cannot end it early there; set `None` for tools whose speed
    /// changes that much. `None`: always on the pool. Tools that say `#[tool(blocking = false)]` always run on the
    /// worker.
    pub inline_budget: Option<Duration>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            concurrent_calls: 64,
            calls_per_caller: 8,
            queue_wait: Duration::from_secs(30),
            call_timeout: Duration::from_secs(60),
            approval_timeout: Duration::from_secs(600),
            max_in_flight: 256,
            inline_budget: Some(Duration::from_micros(100)),
        }
    }
}

/// The queue behind [`Limits`]: calls running, over all callers and per caller, and the calls
/// waiting for a turn, each caller's in the order it sent them.
///
/// A turn that frees goes to the waiting caller running the fewest calls (the one that waited
/// longest among equals), not to whoever asked first: a caller holding nothing is served next,
/// however many calls others have queued. And the last eighth of the turns is kept for callers
/// running none: when the others' slow calls fill the rest, a newcomer still starts at once.
pub(crate) struct Gates {
    total: usize,
    per_caller: usize,
    /// Turns only a caller running no call may take.
    reserve: usize,
    queue: Mutex<Queue>,
}

#[derive(Default)]
struct Queue {
    running: usize,
    callers: HashMap<String, Caller>,
    /// Numbers the waiters in arrival order.
    arrived: u64,
}

#[derive(Default)]
struct Caller {
    running: usize,
    waiting: VecDeque<(u64, oneshot::Sender<()>)>,
}

/// A call's turn: held while it runs, on the async worker or on a blocking thread; the next
/// waiting call gets it when it is dropped.
pub(crate) struct Turn {
    gates: Arc<Gates>,
    caller: String,
}

impl Drop for Turn {
    fn drop(&mut self) {
        let mut queue = self.gates.lock();
        queue.running -= 1;
        if let Some(c) = queue.callers.get_mut(&self.caller) {
            c.running -= 1;
        }
        self.gates.dispatch(&mut queue);
    }
}

impl Gates {
    pub(crate) fn new(limits: &Limits) -> Self {
        let total = limits.concurrent_calls.max(1);
        Gates {
            total,
            per_caller: limits.calls_per_caller.max(1),
            reserve: total / 8,
            queue: Mutex::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a caller running `running` calls may start one more now.
    fn may_start(&self, queue: &Queue, running: usize) -> bool {
        let room = if running == 0 {
            self.total
        } else {
            self.total - self.reserve
        };
        running < self.per_caller && queue.running < room
    }

    /// Hands freed turns to the waiting callers running the fewest calls.
    fn dispatch(&self, queue: &mut Queue) {
        loop {
            let next = queue
                .callers
                .iter()
                .filter_map(|(key, c)| {
                    let (seq, _) = c.waiting.front()?;
                    self.may_start(queue, c.running)
                        .then_some((c.running, *seq, key.clone()))
                })
                .min();
            let Some((_, _, key)) = next else {
                break;
            };
            let Some(caller) = queue.callers.get_mut(&key) else {
                break;
            };
            let Some((_, waiter)) = caller.waiting.pop_front() else {
                break;
            };
            // A waiter that gave up (its time ran out) takes nothing.
            if waiter.send(()).is_ok() {
                caller.running += 1;
                queue.running += 1;
            }
        }
        queue
            .callers
            .retain(|_, c| c.running > 0 || !c.waiting.is_empty());
    }

    /// A turn for a call of `caller`, waiting at most `queue_wait`; `None` when none came.
    pub(crate) async fn turn(self: &Arc<Self>, caller: &str, limits: &Limits) -> Option<Turn> {
        let (seq, granted) = {
            let mut queue = self.lock();
            let c = queue.callers.entry(caller.to_owned()).or_default();
            let (running, first) = (c.running, c.waiting.is_empty());
            if first && self.may_start(&queue, running) {
                queue.running += 1;
                if let Some(c) = queue.callers.get_mut(caller) {
                    c.running += 1;
                }
                return Some(Turn {
                    gates: self.clone(),
                    caller: caller.to_owned(),
                });
            }
            queue.arrived += 1;
            let seq = queue.arrived;
            let (tx, rx) = oneshot::channel();
            if let Some(c) = queue.callers.get_mut(caller) {
                c.waiting.push_back((seq, tx));
            }
            (seq, rx)
        };
        let turn = || Turn {
            gates: self.clone(),
            caller: caller.to_owned(),
        };
        match tokio::time::timeout(limits.queue_wait, granted).await {
            Ok(Ok(())) => Some(turn()),
            _ => {
                let mut queue = self.lock();
                let waiting = queue.callers.get_mut(caller).is_some_and(|c| {
                    let before = c.waiting.len();
                    c.waiting.retain(|(s, _)| *s != seq);
                    c.waiting.len() < before
                });
                if waiting {
                    queue
                        .callers
                        .retain(|_, c| c.running > 0 || !c.waiting.is_empty());
                    return None;
                }
                // Granted just as the time ran out: the turn is this call's.
                drop(queue);
                Some(turn())
            }
        }
    }
}
