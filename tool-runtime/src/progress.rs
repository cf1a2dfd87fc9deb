//! How far a long call is, and whether it should stop: a host value every tool can take.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

/// A call's progress handle: the tool reports how far it is; the host forwards the reports
/// (over MCP as `notifications/progress` for a request that carried a `progressToken`; in a
/// streamed agent run as [`AgentEvent::Progress`](crate::agent::AgentEvent::Progress)) and
/// marks the call cancelled when its caller gives up, which a sync tool polls (an async
/// tool's future is simply dropped).
///
/// A tool takes it as `#[ctx] progress: &Progress`. It is never missing: where the host gave
/// none, reports go nowhere and the call is never cancelled.
///
/// Progress only goes up: a report whose `progress` is not above the last one is dropped (MCP
/// requires increasing values).
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use tool_runtime::{Context, Progress, ToolSet, tool};
///
/// #[tool(description = "Count slowly to `n` and return `n`, reporting each step.")]
/// fn count(
///     #[arg(description = "Where to stop", range = 1..=10)] n: u32,
///     #[ctx] progress: &Progress,
/// ) -> u32 {
///     for i in 1..=n {
///         if progress.is_cancelled() {
///             break;
///         }
///         progress.report(i as f64, Some(n as f64), Some(&format!("step {i}")));
///     }
///     n
/// }
///
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let sink = seen.clone();
/// let progress = Progress::new(move |r| sink.lock().unwrap().push(r.progress));
/// let tools = ToolSet::new([count::tool()]).unwrap();
/// let cx = Context::new().with(progress);
/// tools.call(&cx, "count", r#"{"n": 3}"#).blocking().unwrap();
/// assert_eq!(*seen.lock().unwrap(), [1.0, 2.0, 3.0]);
/// // Without a handle in the context the tool still runs; its reports go nowhere.
/// tools.call(&Context::new(), "count", r#"{"n": 3}"#).blocking().unwrap();
/// ```
#[derive(Clone, Default)]
pub struct Progress {
    inner: Option<Arc<Inner>>,
}

struct Inner {
    sink: Box<dyn Fn(ProgressReport) + Send + Sync>,
    /// The last progress reported (`None` before the first). Held while the sink runs, so
    /// reports from several threads reach it in increasing order.
    last: Mutex<Option<f64>>,
    cancelled: AtomicBool,
}

/// One progress report.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgressReport {
    /// How far the call is; goes up with every report.
    pub progress: f64,
    /// The total `progress` reaches, if known.
    pub total: Option<f64>,
    /// What the call is doing, for a person.
    pub message: Option<String>,
}

/// The handle of a call whose host gave none.
pub(crate) static NONE: Progress = Progress { inner: None };

impl Progress {
    /// A handle whose reports go to `sink` (called on the tool's thread: keep it short, e.g. a
    /// send on a channel).
    pub fn new(sink: impl Fn(ProgressReport) + Send + Sync + 'static) -> Self {
        Progress {
            inner: Some(Arc::new(Inner {
                sink: Box::new(sink),
                last: Mutex::new(None),
                cancelled: AtomicBool::new(false),
            })),
        }
    }

    /// A handle whose reports go nowhere (it can still be cancelled).
    pub fn none() -> Self {
        Progress::new(|_| {})
    }

    /// Reports `progress` (of `total`, if known) with a message. Dropped when `progress` is
    /// not above the last report, is not a finite number, or the call was cancelled.
    pub fn report(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let Some(inner) = &self.inner else { return };
        if !progress.is_finite() {
            return;
        }
        let mut last = inner.last.lock().unwrap_or_else(PoisonError::into_inner);
        if last.is_some_and(|last| progress <= last) || inner.cancelled.load(Ordering::Acquire) {
            return;
        }
        *last = Some(progress);
        (inner.sink)(ProgressReport {
            progress,
            total: total.filter(|t| t.is_finite()),
            message: message.map(str::to_owned),
        });
    }

    /// Whether the caller gave up on the call: a sync tool checks it between steps and
    /// returns early. (It is never true for a handle the host did not give.)
    pub fn is_cancelled(&self) -> bool {
        self.inner
            .as_ref()
            .is_some_and(|i| i.cancelled.load(Ordering::Acquire))
    }

    /// Marks the call cancelled (the host's side); later reports are dropped. A report being
    /// handed to the sink at that moment finishes first: once `cancel` returns, none follows.
    pub fn cancel(&self) {
        if let Some(inner) = &self.inner {
            let _last = inner.last.lock().unwrap_or_else(PoisonError::into_inner);
            inner.cancelled.store(true, Ordering::Release);
        }
    }
}

impl fmt::Debug for Progress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Progress")
            .field("forwarded", &self.inner.is_some())
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}
