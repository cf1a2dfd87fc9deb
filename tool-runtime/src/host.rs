//! What the host decides and the model never does: who may call a tool, whether a person must
//! approve it first, and what of its output reaches the model and the screen.

use std::collections::{BTreeSet, HashSet};
use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;
use serde_json::Value;

/// The permissions a caller holds, put in the call's [`Context`](crate::Context) by the host
/// (from its login session, never from the model). A tool declared with
/// `#[tool(requires = "hr.leave.read")]` runs only for a caller whose grants include that.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Grants(BTreeSet<String>);

impl Grants {
    pub fn new<S: Into<String>>(grants: impl IntoIterator<Item = S>) -> Self {
        Grants(grants.into_iter().map(Into::into).collect())
    }

    pub fn allows(&self, permission: &str) -> bool {
        self.0.contains(permission)
    }

    /// Only the permissions also in `allowed` (an access token's scopes narrowing a role).
    pub fn narrowed_to<'a>(&self, allowed: impl IntoIterator<Item = &'a str>) -> Grants {
        let allowed: BTreeSet<&str> = allowed.into_iter().collect();
        Grants(
            self.0
                .iter()
                .filter(|p| allowed.contains(p.as_str()))
                .cloned()
                .collect(),
        )
    }

    /// The permissions of `required` this caller lacks.
    pub fn missing(&self, required: &[&'static str]) -> Vec<&'static str> {
        required
            .iter()
            .copied()
            .filter(|p| !self.allows(p))
            .collect()
    }
}

/// MCP's tool annotations: hints for clients about what a tool does. They are never trusted for
/// security; permissions and approval are enforced by the runtime from `requires` and
/// `needs_approval`, not from these.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Annotations {
    pub title: Option<&'static str>,
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    pub open_world: Option<bool>,
}

/// A piece of what the model receives from a tool.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    Text { text: String },
    ImageUrl { url: String },
}

/// What a tool gives the model instead of its full output (`#[tool(to_model = path)]`): a
/// sentence and an icon, say, rather than the raw API payload the application keeps.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ModelOutput(pub Vec<Content>);

impl ModelOutput {
    pub fn text(text: impl Into<String>) -> Self {
        ModelOutput(vec![Content::Text { text: text.into() }])
    }

    pub fn and_text(mut self, text: impl Into<String>) -> Self {
        self.0.push(Content::Text { text: text.into() });
        self
    }

    pub fn and_image_url(mut self, url: impl Into<String>) -> Self {
        self.0.push(Content::ImageUrl { url: url.into() });
        self
    }
}

/// What of a call's output may be shown to a person, in a UI or a transcript.
#[derive(Clone, Debug, PartialEq)]
pub enum Disclosure {
    /// The tool has no redaction: the full output may be shown.
    Full,
    /// The output as the tool's redaction function made it.
    Redacted(Value),
    /// Redaction failed: nothing may be shown (fail closed), never the raw payload.
    Withheld { reason: String },
}

/// A validated call waiting for a person's approval. Give it back to
/// [`ToolSet::resume`](crate::ToolSet::resume) once approved; it runs at most once.
///
/// The record of which calls are waiting lives in this process's memory. To resume one in
/// another process or after a restart, move it into an approval store with
/// [`ToolSet::hold`](crate::ToolSet::hold) (which hands it out once) and run what the store
/// gives back with [`ToolSet::run_held`](crate::ToolSet::run_held). It serializes (for a log
/// or a review screen); a copy read back cannot run.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PendingCall {
    #[serde(skip)]
    pub(crate) id: u64,
    pub tool: &'static str,
    /// The arguments as validated, with defaults filled in: what will run.
    pub arguments: Value,
}

impl PendingCall {
    pub fn id(&self) -> u64 {
        self.id
    }
}

impl fmt::Display for PendingCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.tool, self.arguments)
    }
}

/// The calls waiting for approval in this process. An id leaves the set when its call resumes
/// or is rejected, so a copy of a pending call cannot run a second time.
static PENDING: Mutex<Option<HashSet<u64>>> = Mutex::new(None);
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

pub(crate) fn hold(tool: &'static str, arguments: Value) -> PendingCall {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let mut pending = PENDING.lock().unwrap_or_else(|e| e.into_inner());
    pending.get_or_insert_with(HashSet::new).insert(id);
    PendingCall {
        id,
        tool,
        arguments,
    }
}

/// Takes the call out of the waiting set; false when it is not waiting (already run, rejected,
/// or never issued here).
pub(crate) fn release(id: u64) -> bool {
    let mut pending = PENDING.lock().unwrap_or_else(|e| e.into_inner());
    pending.get_or_insert_with(HashSet::new).remove(&id)
}
