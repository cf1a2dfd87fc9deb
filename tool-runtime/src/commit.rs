//! A call's point of no return: where a tool that changes something is about to make the change.
//! Until a tool reaches it, its caller's cancel wins (the tool stops there, and nothing was
//! done); from then on the cancel loses, and the call reports what the tool did.

use std::fmt;
use std::sync::Arc;

use crate::future::BoxFuture;

/// A tool's commit point. A tool that changes something takes it as `#[ctx] commit: &Commit`
/// and calls [`now`](Commit::now) right before the change (inside its transaction, before the
/// `COMMIT`); taking it declares the tool [cancellable until it commits](crate::Tool::commits):
///
/// - a cancel that comes first wins: `now` answers [`Cancelled`], the tool returns without its
///   change, and the caller is told the call was cancelled (an MCP task reads `cancelled`);
/// - once `now` has answered `Ok`, a cancel loses: the tool makes its change and the caller
///   gets its result (an MCP task reads `completed`).
///
/// Which of the two happened is decided once, in the host's store, so it holds across
/// replicas. A tool that does not take a `Commit` and is not read-only is committed when it
/// starts: a cancel after that never stops it. A read-only tool has nothing to commit and is
/// stopped by any cancel.
///
/// ```
/// use tool_runtime::{Commit, Context, ToolSet, tool};
///
/// #[tool(description = "Book a meeting room for the signed-in employee; changes the bookings.")]
/// fn book_room(
///     #[arg(description = "The room's number", range = 1..=40)] room: u8,
///     #[ctx] commit: &Commit,
/// ) -> Result<String, tool_runtime::Cancelled> {
///     // ... check the room is free, inside a transaction ...
///     commit.now().blocking()?; // a cancel that came first stops the booking here
///     // ... write the booking, commit the transaction ...
///     Ok(format!("room {room} booked"))
/// }
///
/// let tools = ToolSet::new([book_room::tool()]).unwrap();
/// assert!(tools.get("book_room").unwrap().commits());
/// // Without a host that cancels (a plain call), `now` always answers Ok.
/// let out = tools.call(&Context::new(), "book_room", r#"{"room": 7}"#).blocking().unwrap();
/// assert_eq!(*out.value(), "room 7 booked");
/// ```
#[derive(Clone, Default)]
pub struct Commit {
    hook: Option<Arc<dyn CommitHook>>,
}

/// The host's side of a [`Commit`]: decides, once, whether the call's cancel or its commit
/// came first (an MCP server asks its task store, so the answer holds on every replica).
pub trait CommitHook: Send + Sync {
    /// Commits the call unless it was cancelled first.
    fn commit(&self) -> BoxFuture<'_, Result<(), Cancelled>>;

    /// The same, from a thread that may block (a sync tool's). By default it drives
    /// [`commit`](Self::commit) to its end here, which suits a future that needs no particular
    /// runtime's reactor.
    fn commit_blocking(&self) -> Result<(), Cancelled> {
        pollster::block_on(self.commit())
    }
}

/// The commit point of a call whose host gave none.
pub(crate) static NONE: Commit = Commit { hook: None };

impl Commit {
    /// A commit point the host decides with `hook`.
    pub fn new(hook: impl CommitHook + 'static) -> Self {
        Commit {
            hook: Some(Arc::new(hook)),
        }
    }

    /// The call commits here, unless its caller cancelled it first: `.await` it in an async
    /// tool, [`blocking`](CommitNow::blocking) in a sync one.
    pub fn now(&self) -> CommitNow<'_> {
        CommitNow { commit: self }
    }
}

impl fmt::Debug for Commit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Commit")
            .field("decided_by_host", &self.hook.is_some())
            .finish()
    }
}

/// [`Commit::now`]: `.await` it, or call [`blocking`](Self::blocking).
#[must_use = "the commit point is passed only once it is awaited or `blocking` is called"]
pub struct CommitNow<'a> {
    commit: &'a Commit,
}

impl<'a> CommitNow<'a> {
    /// Decides here, on a thread that may block (a sync tool's).
    pub fn blocking(self) -> Result<(), Cancelled> {
        match &self.commit.hook {
            Some(hook) => hook.commit_blocking(),
            None => Ok(()),
        }
    }
}

impl<'a> std::future::IntoFuture for CommitNow<'a> {
    type Output = Result<(), Cancelled>;
    type IntoFuture = BoxFuture<'a, Result<(), Cancelled>>;

    fn into_future(self) -> Self::IntoFuture {
        match &self.commit.hook {
            Some(hook) => hook.commit(),
            None => Box::pin(std::future::ready(Ok(()))),
        }
    }
}

/// The caller cancelled the call before it reached its commit point: the tool makes no change
/// and returns (with this error, or its own that holds it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cancelled;

impl fmt::Display for Cancelled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the call was cancelled before it made its change; nothing was changed")
    }
}

impl std::error::Error for Cancelled {}
