//! Where a sync tool's call runs. A sync tool may block its thread, so a tool's calls start on
//! Tokio's blocking pool, never on the async workers. Once a tool has shown it is fast (its last
//! [`PROVEN`] calls each returned within [`Limits::inline_budget`]), its calls run on the worker
//! that received them, without the two hand-offs between threads; never more at once than one
//! fewer than there are workers, so a worker is always free. A call over the budget sends its
//! tool back to the pool until twice as many calls in a row have been fast again: a tool slow now
//! and then soon runs on the workers seldom, a tool delayed once by a busy machine comes back.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, RwLock};
use std::time::{Duration, Instant};

use crate::limits::Limits;

/// Calls within the budget, one after another, before a tool runs on the workers.
pub(crate) const PROVEN: u32 = 64;
/// The most a tool's slow calls can make it wait for.
const MOST: u32 = 1 << 24;

/// What the server has seen of its sync tools' calls.
pub(crate) struct Pace {
    budget: Option<Duration>,
    tools: RwLock<HashMap<String, Arc<Record>>>,
    /// Calls running on the workers now.
    inline: AtomicUsize,
    /// How many may: one fewer than the runtime's workers.
    room: OnceLock<usize>,
}

/// One tool's calls so far.
pub(crate) struct Record {
    /// Calls within the budget in a row.
    fast: AtomicU32,
    /// How many it takes to run on the workers: [`PROVEN`], doubled by each slow call.
    needed: AtomicU32,
}

impl Default for Record {
    fn default() -> Self {
        Record {
            fast: AtomicU32::new(0),
            needed: AtomicU32::new(PROVEN),
        }
    }
}

/// Where one call runs.
pub(crate) enum Lane<'a> {
    /// On this worker: the tool has proven fast and a worker stays free.
    Worker(OnWorker<'a>),
    /// On the blocking pool, its time recorded for the tool (`None` when nothing is recorded).
    Pool(Option<Timed>),
    /// The tool has proven fast but every place on the workers is taken (by calls that take
    /// microseconds, unless one just turned slow): ask again after a yield, else the pool.
    Taken(Timed),
}

/// A call on a worker: frees its place when dropped, and records its time when finished.
pub(crate) struct OnWorker<'a> {
    pace: &'a Pace,
    timed: Timed,
}

/// A call whose time counts for its tool.
pub(crate) struct Timed {
    record: Arc<Record>,
    budget: Duration,
    started: Instant,
}

impl Pace {
    pub(crate) fn new(limits: &Limits) -> Self {
        Pace {
            budget: limits.inline_budget,
            tools: RwLock::default(),
            inline: AtomicUsize::new(0),
            room: OnceLock::new(),
        }
    }

    /// Where a call of the sync tool `name` runs.
    pub(crate) fn lane(&self, name: &str) -> Lane<'_> {
        let Some(budget) = self.budget else {
            return Lane::Pool(None);
        };
        let record = self.record(name);
        let timed = |record| Timed {
            record,
            budget,
            started: Instant::now(),
        };
        if record.fast.load(Ordering::Relaxed) < record.needed.load(Ordering::Relaxed) {
            return Lane::Pool(Some(timed(record)));
        }
        let room = *self.room.get_or_init(|| {
            tokio::runtime::Handle::try_current()
                .map_or(0, |h| h.metrics().num_workers().saturating_sub(1))
        });
        if self.inline.fetch_add(1, Ordering::AcqRel) >= room {
            self.inline.fetch_sub(1, Ordering::AcqRel);
            return if room == 0 {
                Lane::Pool(Some(timed(record)))
            } else {
                Lane::Taken(timed(record))
            };
        }
        Lane::Worker(OnWorker {
            pace: self,
            timed: timed(record),
        })
    }

    fn record(&self, name: &str) -> Arc<Record> {
        let known = self
            .tools
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .cloned();
        known.unwrap_or_else(|| {
            self.tools
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .entry(name.to_owned())
                .or_default()
                .clone()
        })
    }
}

impl Timed {
    /// Timed from now: on the pool, from when its thread takes the call.
    pub(crate) fn restarted(self) -> Self {
        Timed {
            started: Instant::now(),
            ..self
        }
    }

    /// The call returned: its time counts for its tool.
    pub(crate) fn finish(self) {
        let record = &self.record;
        if self.started.elapsed() > self.budget {
            record.fast.store(0, Ordering::Relaxed);
            let needed = record.needed.load(Ordering::Relaxed);
            record
                .needed
                .store(needed.saturating_mul(2).min(MOST), Ordering::Relaxed);
        } else if record.fast.load(Ordering::Relaxed) < MOST {
            record.fast.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl OnWorker<'_> {
    /// The call returned: its place is free, its time counts.
    pub(crate) fn finish(self) {
        self.pace.inline.fetch_sub(1, Ordering::AcqRel);
        self.timed.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pace(budget: Duration) -> Pace {
        Pace::new(&Limits {
            inline_budget: Some(budget),
            ..Limits::default()
        })
    }

    fn on_worker(lane: &Lane<'_>) -> bool {
        matches!(lane, Lane::Worker(_))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 3)]
    async fn a_tool_runs_on_the_workers_once_proven_fast_and_a_slow_call_doubles_the_proof() {
        let pace = pace(Duration::from_secs(60));
        for _ in 0..PROVEN {
            match pace.lane("cepat") {
                Lane::Pool(Some(t)) => t.finish(),
                _ => panic!("an unproven tool runs on the pool"),
            }
        }
        let (a, b) = (pace.lane("cepat"), pace.lane("cepat"));
        assert!(on_worker(&a) && on_worker(&b), "proven: on the workers");
        let c = pace.lane("cepat");
        assert!(
            matches!(c, Lane::Taken(_)),
            "three workers: at most two calls on them"
        );
        if let Lane::Worker(w) = a {
            w.finish();
        }
        assert!(on_worker(&pace.lane("cepat")), "a place came free");
        // One call over the budget: back on the pool for twice as many fast calls.
        let Lane::Worker(mut w) = b else {
            unreachable!()
        };
        w.timed.budget = Duration::ZERO;
        std::thread::sleep(Duration::from_millis(1));
        w.finish();
        for _ in 0..PROVEN * 2 {
            match pace.lane("cepat") {
                Lane::Pool(Some(t)) => t.finish(),
                _ => panic!("a slow tool stays on the pool until proven again"),
            }
        }
        assert!(on_worker(&pace.lane("cepat")), "proven again");
        assert!(
            matches!(pace.lane("lain"), Lane::Pool(Some(_))),
            "each tool proves itself"
        );
    }

    #[tokio::test(flavor = "current_thread")]
    async fn with_one_worker_nothing_runs_on_it() {
        let pace = pace(Duration::from_secs(60));
        for _ in 0..PROVEN * 2 {
            match pace.lane("cepat") {
                Lane::Pool(Some(t)) => t.finish(),
                _ => panic!("the only worker stays free"),
            }
        }
    }
}
