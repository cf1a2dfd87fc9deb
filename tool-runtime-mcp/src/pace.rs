//! Where a sync tool's call runs. A sync tool may block its thread, so a tool's calls start on
//! Tokio's blocking pool, never on the async workers. Once a tool has shown it is fast (its last
//! [`PROVEN`] calls each returned within [`Limits::inline_budget`]), its calls run on the worker
//! that received them, without the two hand-offs between threads; never more at once than one
//! fewer than there are workers, so a worker is always free. A slow call sends its tool back to
//! the pool until twice as many calls in a row have been fast again (at most 1,024): a tool
//! often slow stays on the pool, one slow now and then comes back.
//!
//! What makes a call slow is the tool's own doing, read from its thread's use (Linux): CPU time
//! over the budget, or giving up the CPU (sleeping, waiting on a lock or on I/O) in a call that
//! took ten budgets (a lock another thread held a moment is not a tool that blocks). A call that
//! only waited because the machine gave its CPU to another thread is not slow: on a busy machine (a
//! telemetry exporter's thread beside the server, a load generator on the same cores) counting
//! such waits sent every tool back to the pool, and the hand-offs halved the server. Where the
//! thread's use cannot be read (another OS, or the call moved threads) the wall time counts.
//!
//! A wait counts when it comes again within [`WAIT_WINDOW`] calls of the tool: one wait in
//! thousands of calls is the machine (a lock shared with other threads, its holder preempted
//! while two cores run five threads: with a telemetry exporter at 50 connections, once in about
//! 8,000 calls, each sending the tool to the pool for hundreds of calls, a quarter of all calls);
//! a tool that blocks waits again soon. A tool that waits on fewer than one call in a few hundred
//! may run on a worker and hold it through such a wait, as its first slow call always did.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, RwLock};
use std::time::{Duration, Instant};

use crate::limits::Limits;

/// Calls within the budget, one after another, before a tool runs on the workers.
pub(crate) const PROVEN: u32 = 64;
/// The most a tool's slow calls can make it wait for: sixteen times [`PROVEN`]. A tool slow on
/// one call in ten never makes that many in a row; one slow now and then (a lock its thread
/// waited on once, a cold cache) comes back within a few thousand calls. (It was 2^24: a few
/// dozen such calls, as a telemetry exporter's locks cause, kept a fast tool off the workers
/// for good, and halved the server.)
const MOST: u32 = PROVEN * 16;
/// A call that waited is slow when the tool's previous call that waited was at most this many
/// calls before it.
pub(crate) const WAIT_WINDOW: u32 = PROVEN * 4;

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
    /// Calls since its last call that waited (`u32::MAX`: none has).
    since_wait: AtomicU32,
}

impl Default for Record {
    fn default() -> Self {
        Record {
            fast: AtomicU32::new(0),
            needed: AtomicU32::new(PROVEN),
            since_wait: AtomicU32::new(u32::MAX),
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
    /// The thread's use when the call started, on the thread that runs it.
    used: Option<(std::thread::ThreadId, Usage)>,
}

/// How a call went against the budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Took {
    /// Within the budget (or past it only for want of the CPU).
    Fast,
    /// Past the budget by its own computing (or by the clock, where the thread's use is unknown).
    Slow,
    /// Past ten budgets, having given up the CPU: slow when the tool waited recently too.
    Waited,
}

/// What a thread has used: CPU time, and how many times it gave up the CPU itself (it slept or
/// waited) rather than had it taken away.
#[derive(Clone, Copy)]
struct Usage {
    cpu: Duration,
    waits: i64,
}

impl Usage {
    /// This thread's use so far (Linux: its CPU clock, exact, where `getrusage`'s times are
    /// counted in scheduler ticks; and `getrusage(RUSAGE_THREAD)`'s voluntary switches).
    #[cfg(target_os = "linux")]
    fn now() -> Option<Usage> {
        let mut clock = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `clock_gettime` writes a `timespec` through the pointer, which points at one.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut clock) } != 0 {
            return None;
        }
        let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: `getrusage` writes a whole `rusage` through the pointer, which points at
        // one, and reads nothing from it.
        if unsafe { libc::getrusage(libc::RUSAGE_THREAD, usage.as_mut_ptr()) } != 0 {
            return None;
        }
        // SAFETY: it succeeded, so it wrote the value (and it started zeroed).
        let usage = unsafe { usage.assume_init() };
        #[allow(
            clippy::unnecessary_cast,
            reason = "`c_long` is `i64` on 64-bit Linux only"
        )]
        Some(Usage {
            cpu: Duration::new(
                clock.tv_sec.max(0) as u64,
                clock.tv_nsec.clamp(0, 999_999_999) as u32,
            ),
            waits: usage.ru_nvcsw as i64,
        })
    }

    #[cfg(not(target_os = "linux"))]
    fn now() -> Option<Usage> {
        None
    }

    fn here() -> Option<(std::thread::ThreadId, Usage)> {
        Usage::now().map(|u| (std::thread::current().id(), u))
    }
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
            used: Usage::here(),
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
            used: Usage::here(),
            ..self
        }
    }

    /// How the call went: within the budget, or past it and why (its thread used more CPU than
    /// the budget, or waited; where that cannot be read, the time alone decides).
    fn pace(&self) -> Took {
        if self.started.elapsed() <= self.budget {
            return Took::Fast;
        }
        if let Some((thread, before)) = self.used
            && thread == std::thread::current().id()
            && let Some(after) = Usage::now()
        {
            return if after.cpu.saturating_sub(before.cpu) > self.budget {
                Took::Slow
            } else if after.waits > before.waits && self.started.elapsed() > self.budget * 10 {
                // A short wait (a lock held a moment by another thread) does not hold a worker
                // for long: waiting counts when the call also took ten budgets.
                Took::Waited
            } else {
                Took::Fast
            };
        }
        Took::Slow
    }

    /// The call returned: its time counts for its tool.
    pub(crate) fn finish(self) {
        let record = &self.record;
        let since_wait = record.since_wait.load(Ordering::Relaxed);
        let slow = match self.pace() {
            Took::Fast => {
                record
                    .since_wait
                    .store(since_wait.saturating_add(1), Ordering::Relaxed);
                false
            }
            Took::Slow => true,
            Took::Waited => {
                record.since_wait.store(0, Ordering::Relaxed);
                since_wait < WAIT_WINDOW
            }
        };
        if slow {
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

    fn timed(budget: Duration) -> Timed {
        Timed {
            record: Arc::default(),
            budget,
            started: Instant::now(),
            used: Usage::here(),
        }
    }

    fn spin(time: Duration) {
        let start = Instant::now();
        while start.elapsed() < time {
            std::hint::black_box(0u64);
        }
    }

    /// Computes for `time` of this thread's CPU (wall time where it cannot be read): a busy
    /// machine may give it the CPU for less than the wall time it spins.
    fn compute(time: Duration) {
        let Some(start) = Usage::now() else {
            return spin(time);
        };
        while Usage::now().is_some_and(|now| now.cpu.saturating_sub(start.cpu) < time) {
            spin(Duration::from_micros(50));
        }
    }

    #[test]
    fn a_call_is_slow_when_it_computes_past_the_budget_or_waits() {
        let t = timed(Duration::from_millis(1));
        compute(Duration::from_millis(3));
        assert_eq!(t.pace(), Took::Slow, "3 ms of CPU against a 1 ms budget");
        let t = timed(Duration::from_micros(100));
        std::thread::sleep(Duration::from_millis(3));
        assert_eq!(
            t.pace(),
            Took::Waited,
            "it slept ten budgets: it would have held its worker"
        );
        let t = timed(Duration::from_millis(1));
        std::thread::sleep(Duration::from_millis(2));
        assert_eq!(
            t.pace(),
            Took::Fast,
            "a short wait (two budgets) holds a worker only as long"
        );
        let t = timed(Duration::from_secs(60));
        std::thread::sleep(Duration::from_millis(1));
        assert_eq!(t.pace(), Took::Fast, "within the budget, whatever it did");
        let t = timed(Duration::from_millis(50));
        spin(Duration::from_micros(200));
        assert_eq!(t.pace(), Took::Fast);
    }

    /// A call that waited sends its tool to the pool only when another call waited shortly
    /// before it: one such wait in thousands of calls is a lock whose holder was preempted.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_wait_counts_when_the_tool_waited_again_within_the_window() {
        let record = Arc::<Record>::default();
        let call = |budget| Timed {
            record: record.clone(),
            ..timed(budget)
        };
        // A budget of 1 ms: a test thread's first call may spend more than 100 µs of CPU
        // (its thread handle made, a page touched) on a busy machine, and would be slow.
        let waited = || {
            let t = call(Duration::from_millis(1));
            std::thread::sleep(Duration::from_millis(20));
            t.finish();
        };
        let needed = || record.needed.load(Ordering::Relaxed);
        waited();
        assert_eq!(needed(), PROVEN, "a first wait is not the tool's");
        for _ in 0..WAIT_WINDOW {
            call(Duration::from_secs(60)).finish();
        }
        waited();
        assert_eq!(needed(), PROVEN, "nor one that long after another");
        waited();
        assert_eq!(
            needed(),
            PROVEN * 2,
            "a wait again soon after is the tool's"
        );
        assert_eq!(record.fast.load(Ordering::Relaxed), 0);
    }

    /// Two threads on one CPU: the calls often wait for it (wall time past the budget), but
    /// they neither compute past the budget nor wait of their own, so none is slow.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_call_that_only_waited_for_the_cpu_is_not_slow() {
        fn pin_to_first_cpu() {
            // SAFETY: a zeroed `cpu_set_t` is an empty set; the calls read and write only it.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                let mut mine: libc::cpu_set_t = std::mem::zeroed();
                libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut mine);
                let first = (0..libc::CPU_SETSIZE as usize)
                    .find(|&c| libc::CPU_ISSET(c, &mine))
                    .unwrap_or(0);
                libc::CPU_SET(first, &mut set);
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
            }
        }
        let budget = Duration::from_millis(1);
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                pin_to_first_cpu();
                while !done.load(Ordering::Relaxed) {
                    std::hint::black_box(0u64);
                }
            });
            let (late, slow) = scope
                .spawn(|| {
                    pin_to_first_cpu();
                    let (mut late, mut slow) = (0, 0);
                    let until = Instant::now() + Duration::from_millis(400);
                    while Instant::now() < until {
                        let t = timed(budget);
                        spin(Duration::from_micros(100));
                        late += usize::from(t.started.elapsed() > budget);
                        slow += usize::from(t.pace() != Took::Fast);
                    }
                    (late, slow)
                })
                .join()
                .unwrap();
            done.store(true, Ordering::Relaxed);
            assert!(late > 0, "the two threads shared the CPU");
            assert_eq!(
                slow, 0,
                "{late} calls waited for the CPU, none of their own"
            );
        });
    }
}
