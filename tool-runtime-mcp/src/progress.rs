//! A call's progress reports, forwarded to the client as `notifications/progress`.

use std::time::Duration;

use rmcp::model::ProgressNotificationParam;
use tokio::sync::{mpsc, oneshot};
use tool_runtime::{Progress, ProgressReport};

use crate::incoming::Incoming;

/// A call's [`Progress`]: for a request that carried a `progressToken`, its reports become
/// `notifications/progress` sent in order by one task, through a bounded queue (reports beyond
/// it are dropped, never the call); without a token, they go nowhere. A tool on a blocking
/// thread always gets a handle, which says when the call was cancelled; another tool without
/// a token gets none (its future is dropped on cancellation, and the context's fallback handle
/// reports nowhere), which saves two allocations per call.
pub(crate) struct Forwarder {
    pub(crate) handle: Option<Progress>,
    queue: Option<mpsc::Sender<Report>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

enum Report {
    Progress(ProgressReport),
    /// Answered once every earlier report was sent.
    Flush(oneshot::Sender<()>),
}

/// Reports waiting to be sent for one call.
const PROGRESS_QUEUE: usize = 64;
/// How long an answer waits for its call's reports to go out.
const PROGRESS_FLUSH: Duration = Duration::from_secs(1);

impl Forwarder {
    pub(crate) fn start(context: &Incoming, blocks: bool) -> Self {
        // A request a transport answers itself never carries a token: with one, it goes
        // through rmcp's service, which streams the reports.
        let (Some(token), Some(peer)) = (context.progress_token(), context.peer()) else {
            return Forwarder {
                handle: blocks.then(Progress::none),
                queue: None,
                task: None,
            };
        };
        let (tx, mut rx) = mpsc::channel(PROGRESS_QUEUE);
        let peer = peer.clone();
        let task = tokio::spawn(async move {
            while let Some(report) = rx.recv().await {
                match report {
                    Report::Progress(r) => {
                        let mut param = ProgressNotificationParam::new(token.clone(), r.progress);
                        param.total = r.total;
                        param.message = r.message;
                        if peer.notify_progress(param).await.is_err() {
                            return;
                        }
                    }
                    // The answer goes next: nothing after it.
                    Report::Flush(done) => {
                        let _ = done.send(());
                        return;
                    }
                }
            }
        });
        let queue = tx.clone();
        let handle = Progress::new(move |r| {
            let _ = tx.try_send(Report::Progress(r));
        });
        Forwarder {
            handle: Some(handle),
            queue: Some(queue),
            task: Some(task),
        }
    }

    /// Tells a tool still running (on a blocking thread) that its caller gave up.
    pub(crate) fn cancel(&self) {
        if let Some(handle) = &self.handle {
            handle.cancel();
        }
    }

    /// Sends the reports so far (for at most [`PROGRESS_FLUSH`]) and stops forwarding, so no
    /// report follows the answer: once `cancel` returns no report is queued, the task ends at
    /// the flush mark, and one that overruns is stopped before the answer goes.
    pub(crate) async fn finish(&mut self) {
        self.cancel();
        let Some(queue) = self.queue.take() else {
            return;
        };
        let (done, sent) = oneshot::channel();
        let flushed = queue.send(Report::Flush(done)).await.is_ok()
            && tokio::time::timeout(PROGRESS_FLUSH, sent).await.is_ok();
        if let Some(task) = self.task.take() {
            if !flushed {
                task.abort();
            }
            let _ = task.await;
        }
    }
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        // A call dropped before it finished (its request went away): a tool still running on
        // a blocking thread sees its handle cancelled. After `finish`, this changes nothing.
        self.cancel();
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}
