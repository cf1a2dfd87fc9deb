//! Results cut to their tool's bound (`max_result_chars`): the model gets the start and a
//! notice, and the whole result is kept for a while as a resource only its caller can read
//! (`resources/read` of the `resource_link` in the call's result).
//!
//! Kept in the server's task store ([`Tasks::keep_result`]), with its bounds (256 results, 32 a
//! caller, 128 MiB, an hour by default; the oldest give way): replicas sharing a SQLite or
//! PostgreSQL store each read the links the others made.

use tool_runtime::{Context, Tasks, Wording};

/// The scheme of a kept result's URI.
pub(crate) const SCHEME: &str = "tool-result://";

/// What a call of a bounded tool needs to keep its whole result: put in its context by the
/// server.
#[derive(Clone)]
pub(crate) struct Keeper {
    pub(crate) tasks: Tasks,
    /// The caller's key ([`Caller::key`](crate::Caller::key)): only they read it back.
    pub(crate) owner: String,
    /// The tool set's words for the notice.
    pub(crate) wording: Wording,
}

/// `text` as the model receives it from a tool bounded to `max` characters: whole (`None`)
/// when within it, else its start, the notice, and (when the call's context has a [`Keeper`]
/// and the store kept it) the URI of the whole, also returned.
pub(crate) async fn cut(text: &str, max: usize, cx: &Context) -> Option<(String, Option<String>)> {
    let keeper = cx.get::<Keeper>();
    let english = Wording::english();
    let wording = keeper.map_or(&english, |k| &k.wording);
    let mut cut = wording.cut_result(text, max)?;
    let uri = match keeper {
        Some(k) => match k.tasks.keep_result(&k.owner, text).await {
            Ok(id) => id.map(|id| format!("{SCHEME}{id}")),
            Err(e) => {
                tracing::warn!(error = %e, "a cut result could not be kept");
                None
            }
        },
        None => None,
    };
    if let Some(uri) = &uri {
        cut.push_str(&wording.result_kept_message(uri));
    }
    Some((cut, uri))
}

/// The id in a kept result's URI.
pub(crate) fn id_of(uri: &str) -> Option<&str> {
    uri.strip_prefix(SCHEME)
        .filter(|id| id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()))
}
