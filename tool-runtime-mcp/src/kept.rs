//! Results cut to their tool's bound (`max_result_chars`): the model gets the start and a
//! notice, and the whole result is kept here for a while as a resource only its caller can read
//! (`resources/read` of the `resource_link` in the call's result).
//!
//! Bounded: at most [`MOST_KEPT`] results ([`MOST_KEPT_EACH`] a caller) and [`MOST_KEPT_BYTES`]
//! bytes, each for [`KEPT_FOR`]; the oldest give way. Kept in the memory of the process that ran the call: a
//! replica behind a load balancer serves only the links it made.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tool_runtime::{Context, Wording};

/// The most results kept at once.
pub(crate) const MOST_KEPT: usize = 256;
/// The most results kept at once for one caller (the caller's oldest give way first).
pub(crate) const MOST_KEPT_EACH: usize = 32;
/// The most bytes kept at once (every result's text together).
pub(crate) const MOST_KEPT_BYTES: usize = 128 * 1024 * 1024;
/// How long a result is kept.
pub(crate) const KEPT_FOR: Duration = Duration::from_secs(60 * 60);

/// The scheme of a kept result's URI.
pub(crate) const SCHEME: &str = "tool-result://";

/// The results a server keeps.
#[derive(Default)]
pub(crate) struct KeptResults {
    held: Mutex<VecDeque<Held>>,
}

struct Held {
    uri: String,
    owner: String,
    text: Arc<str>,
    at: Instant,
}

impl KeptResults {
    /// Keeps `text` for `owner` and returns its URI, or `None` when it is larger than everything
    /// kept may be, or no random id could be drawn.
    pub(crate) fn keep(&self, owner: &str, text: &str) -> Option<String> {
        if text.len() > MOST_KEPT_BYTES {
            return None;
        }
        let mut id = [0u8; 16];
        getrandom::fill(&mut id).ok()?;
        let uri = format!(
            "{SCHEME}{}",
            id.iter().map(|b| format!("{b:02x}")).collect::<String>()
        );
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        held.retain(|h| now.duration_since(h.at) < KEPT_FOR);
        // One caller's results make way for its own first, never for another's.
        if held.iter().filter(|h| h.owner == owner).count() >= MOST_KEPT_EACH
            && let Some(at) = held.iter().position(|h| h.owner == owner)
        {
            held.remove(at);
        }
        let mut bytes: usize = held.iter().map(|h| h.text.len()).sum::<usize>() + text.len();
        while held.len() >= MOST_KEPT || bytes > MOST_KEPT_BYTES {
            let Some(oldest) = held.pop_front() else {
                break;
            };
            bytes -= oldest.text.len();
        }
        held.push_back(Held {
            uri: uri.clone(),
            owner: owner.to_owned(),
            text: text.into(),
            at: now,
        });
        Some(uri)
    }

    /// The result kept under `uri` for `owner`; `None` when there is none, it expired, or it is
    /// another caller's (which is not told apart from none).
    pub(crate) fn read(&self, owner: &str, uri: &str) -> Option<Arc<str>> {
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        held.iter()
            .find(|h| h.uri == uri && h.owner == owner && h.at.elapsed() < KEPT_FOR)
            .map(|h| h.text.clone())
    }
}

/// What a call of a bounded tool needs to keep its whole result: put in its context by the
/// server.
#[derive(Clone)]
pub(crate) struct Keeper {
    pub(crate) results: Arc<KeptResults>,
    /// The caller's key ([`Caller::key`](crate::Caller::key)): only they read it back.
    pub(crate) owner: String,
    /// The tool set's words for the notice.
    pub(crate) wording: Wording,
}

/// `text` as the model receives it from a tool bounded to `max` characters: whole when within
/// it, else its start, the notice, and (when the call's context has a [`Keeper`]) the URI of
/// the whole, also returned.
pub(crate) fn cut(text: &str, max: usize, cx: &Context) -> Option<(String, Option<String>)> {
    let keeper = cx.get::<Keeper>();
    let english = Wording::english();
    let wording = keeper.map_or(&english, |k| &k.wording);
    let mut cut = wording.cut_result(text, max)?;
    let uri = keeper.and_then(|k| k.results.keep(&k.owner, text));
    if let Some(uri) = &uri {
        cut.push_str(&wording.result_kept_message(uri));
    }
    Some((cut, uri))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_caller_who_made_a_result_reads_it_back() {
        let kept = KeptResults::default();
        let uri = kept.keep("principal:sari", "the whole").unwrap();
        assert!(
            uri.starts_with(SCHEME) && uri.len() == SCHEME.len() + 32,
            "{uri}"
        );
        assert_eq!(
            kept.read("principal:sari", &uri).as_deref(),
            Some("the whole")
        );
        assert_eq!(kept.read("principal:budi", &uri), None);
        assert_eq!(kept.read("principal:sari", "tool-result://other"), None);
        assert_ne!(kept.keep("principal:sari", "again").unwrap(), uri);
    }

    #[test]
    fn the_oldest_results_give_way_to_the_bounds() {
        let kept = KeptResults::default();
        let first = kept.keep("k", "first").unwrap();
        for i in 0..MOST_KEPT {
            kept.keep(&format!("k{}", i % 16), &i.to_string()).unwrap();
        }
        assert_eq!(kept.read("k", &first), None, "at most {MOST_KEPT}");
        assert_eq!(kept.held.lock().unwrap().len(), MOST_KEPT);

        // One caller keeping many pushes out only its own.
        let kept = KeptResults::default();
        let other = kept.keep("other", "theirs").unwrap();
        let mine = kept.keep("mine", "first").unwrap();
        for i in 0..MOST_KEPT_EACH {
            kept.keep("mine", &i.to_string()).unwrap();
        }
        assert_eq!(
            kept.read("mine", &mine),
            None,
            "at most {MOST_KEPT_EACH} each"
        );
        assert!(kept.read("other", &other).is_some());

        let big = "x".repeat(MOST_KEPT_BYTES / 2 + 1);
        let a = kept.keep("k", &big).unwrap();
        let b = kept.keep("k", &big).unwrap();
        assert_eq!(kept.read("k", &a), None, "at most {MOST_KEPT_BYTES} bytes");
        assert!(kept.read("k", &b).is_some());
        assert_eq!(kept.keep("k", &"x".repeat(MOST_KEPT_BYTES + 1)), None);
    }
}
