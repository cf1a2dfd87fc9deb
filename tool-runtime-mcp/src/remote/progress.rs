//! A remote server's progress reports, passed on to the callers that follow each call, in the
//! order the server sent them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::RoleClient;
use rmcp::model::{ProgressNotificationParam, ProgressToken, ServerNotification};
use tool_runtime::Progress;

/// The progress reports of one connection's calls, passed on to the callers that follow
/// them, in the order the server sent them: [`Routed`] routes each as the transport receives
/// it, before the call's answer (which comes after it) reaches the call. A report can come
/// before its call is registered (the request goes out before its token is known here): the
/// last [`EARLY_REPORTS`] reports of tokens not registered yet wait for it.
#[derive(Clone, Default)]
pub(super) struct Reports(Arc<Mutex<Routes>>);

#[derive(Default)]
pub(super) struct Routes {
    /// The calls in flight: where their reports go (`None`: no one follows it).
    calls: HashMap<ProgressToken, Option<Progress>>,
    early: std::collections::VecDeque<ProgressNotificationParam>,
}

/// Reports kept for calls not registered yet.
pub(super) const EARLY_REPORTS: usize = 64;

/// The most characters of a remote's progress message kept and passed on: a report is not
/// trusted to be short (one message can be 16 MiB, and [`EARLY_REPORTS`] of them wait).
pub(super) const MAX_MESSAGE_CHARS: usize = 1_000;

/// The longest progress token of a report kept waiting for its call: the tokens this client
/// gives are short, so a longer one is no call's.
const MAX_TOKEN_CHARS: usize = 128;

impl Reports {
    pub(super) fn routes(&self) -> std::sync::MutexGuard<'_, Routes> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Passes a report on to its call's caller, or keeps it until the call is registered.
    pub(super) fn route(&self, mut report: ProgressNotificationParam) {
        if let Some(message) = &mut report.message
            && let Some((end, _)) = message.char_indices().nth(MAX_MESSAGE_CHARS)
        {
            message.truncate(end);
            message.push('…');
        }
        let mut routes = self.routes();
        let progress = match routes.calls.get(&report.progress_token) {
            Some(Some(progress)) => progress.clone(),
            Some(None) => return,
            None => {
                if matches!(&report.progress_token.0, rmcp::model::NumberOrString::String(s) if s.chars().count() > MAX_TOKEN_CHARS)
                {
                    return;
                }
                if routes.early.len() == EARLY_REPORTS {
                    routes.early.pop_front();
                }
                routes.early.push_back(report);
                return;
            }
        };
        drop(routes);
        pass_on(&progress, &report);
    }

    /// Registers the call of `token`: its reports go to `progress` (those already come first)
    /// until the returned guard is dropped.
    pub(super) fn follow(&self, token: ProgressToken, progress: Option<Progress>) -> Following {
        let mut routes = self.routes();
        let mut early = Vec::new();
        routes.early.retain(|r| {
            let mine = r.progress_token == token;
            if mine {
                early.push(r.clone());
            }
            !mine
        });
        routes.calls.insert(token.clone(), progress.clone());
        drop(routes);
        if let Some(progress) = &progress {
            for report in &early {
                pass_on(progress, report);
            }
        }
        Following {
            reports: self.clone(),
            token,
        }
    }
}

pub(super) fn pass_on(progress: &Progress, report: &ProgressNotificationParam) {
    progress.report(report.progress, report.total, report.message.as_deref());
}

/// A call in flight; its token is forgotten once dropped.
pub(super) struct Following {
    reports: Reports,
    token: ProgressToken,
}

impl Drop for Following {
    fn drop(&mut self) {
        self.reports.routes().calls.remove(&self.token);
    }
}

/// A client transport that routes the server's progress reports as it receives them, in the
/// server's order (rmcp hands each notification to a task of its own, which may run after
/// the answer that followed it on the wire).
pub(super) struct Routed<T> {
    inner: T,
    reports: Reports,
}

impl<T> Routed<T> {
    pub(super) fn new(inner: T, reports: &Reports) -> Self {
        Routed {
            inner,
            reports: reports.clone(),
        }
    }
}

impl<T: rmcp::transport::Transport<RoleClient>> rmcp::transport::Transport<RoleClient>
    for Routed<T>
{
    type Error = T::Error;

    fn send(
        &mut self,
        item: rmcp::service::TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<rmcp::service::RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
        if let rmcp::model::JsonRpcMessage::Notification(n) = &message
            && let ServerNotification::ProgressNotification(p) = &n.notification
        {
            self.reports.route(p.params.clone());
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(token: i64, progress: f64) -> ProgressNotificationParam {
        ProgressNotificationParam::new(
            ProgressToken(rmcp::model::NumberOrString::Number(token)),
            progress,
        )
    }

    #[test]
    fn a_report_that_comes_before_its_call_is_followed_is_passed_on_first() {
        let reports = Reports::default();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let progress = Progress::new(move |r| sink.lock().unwrap().push(r.progress));
        reports.route(report(7, 1.0));
        reports.route(report(8, 5.0)); // another call's
        let following = reports.follow(report(7, 0.0).progress_token, Some(progress));
        reports.route(report(7, 2.0));
        drop(following);
        reports.route(report(7, 3.0)); // no longer followed
        assert_eq!(*seen.lock().unwrap(), [1.0, 2.0]);
        assert_eq!(reports.routes().early.len(), 2, "8's and the late one wait");
        // A call no one follows: its reports are dropped, not kept.
        let _unfollowed = reports.follow(report(9, 0.0).progress_token, None);
        reports.route(report(9, 1.0));
        assert_eq!(reports.routes().early.len(), 2);
        for n in 0..100 {
            reports.route(report(100 + n, 1.0));
        }
        assert_eq!(reports.routes().early.len(), EARLY_REPORTS);
    }

    /// A remote's report is not trusted to be short: its message is cut, and a report whose
    /// token is longer than any this client gives waits for no call.
    #[test]
    fn a_long_message_is_cut_and_a_long_token_waits_for_nothing() {
        let reports = Reports::default();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let progress = Progress::new(move |r| sink.lock().unwrap().push(r.message.clone()));
        let _following = reports.follow(report(1, 0.0).progress_token, Some(progress));
        reports.route(report(1, 1.0).with_message("x".repeat(1 << 20)));
        let message = seen.lock().unwrap()[0].clone().unwrap();
        assert_eq!(
            message.chars().count(),
            MAX_MESSAGE_CHARS + 1,
            "cut, with `…`"
        );
        let long = ProgressToken(rmcp::model::NumberOrString::String(
            "t".repeat(10_000).into(),
        ));
        reports.route(ProgressNotificationParam::new(long, 1.0));
        assert!(reports.routes().early.is_empty());
    }
}
