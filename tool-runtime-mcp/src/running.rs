//! The task runs of this process: what `tasks/cancel` stops at once.

use std::collections::HashMap;
use std::sync::Mutex;

use tokio_util::sync::CancellationToken;

/// The calls running as tasks in this process, by task id: what `tasks/cancel` stops at once
/// (a cancel on another replica reaches them at their next lease renewal).
/// Each run has its number, so a run that ends does not forget a later run of the same task
/// (one resumed here after it waited for approval).
#[derive(Default)]
pub(crate) struct Running {
    runs: Mutex<HashMap<String, (u64, CancellationToken)>>,
    next: std::sync::atomic::AtomicU64,
}

impl Running {
    /// A new run of task `id`: the token that stops it, and its number.
    pub(crate) fn start(&self, id: &str) -> (u64, CancellationToken) {
        let n = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let stop = CancellationToken::new();
        self.lock().insert(id.to_owned(), (n, stop.clone()));
        (n, stop)
    }

    /// Run `n` of task `id` ended.
    pub(crate) fn ended(&self, id: &str, n: u64) {
        let mut runs = self.lock();
        if runs.get(id).is_some_and(|(m, _)| *m == n) {
            runs.remove(id);
        }
    }

    /// Stops the run of task `id` here, if any.
    pub(crate) fn stop(&self, id: &str) {
        if let Some((_, stop)) = self.lock().get(id) {
            stop.cancel();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (u64, CancellationToken)>> {
        self.runs.lock().unwrap_or_else(|e| e.into_inner())
    }
}
