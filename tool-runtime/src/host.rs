//! What the host decides and the model never does: who may call a tool, and what of its output
//! reaches the model and the screen.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

/// The permissions a caller holds, put in the call's [`Context`](crate::Context) by the host
/// (from its login session, never from the model). A tool declared with
/// `#[tool(requires = "hr.leave.read")]` runs only for a caller whose grants include that.
///
/// ```
/// use tool_runtime::{Context, Grants, ToolError, ToolSet, tool};
///
/// #[tool(
///     description = "Return the leave days left of the signed-in employee.",
///     requires = "hr.leave.read",
/// )]
/// fn leave_left() -> u32 {
///     12
/// }
///
/// let tools = ToolSet::new([leave_left::tool()]).unwrap();
/// let staff = Context::new().with(Grants::new(["hr.leave.read"]));
/// assert_eq!(tools.call(&staff, "leave_left", "{}").blocking().unwrap().value(), 12);
///
/// // A caller without the grant neither sees the tool nor can call it.
/// let guest = Context::new().with(Grants::new(["hr.profile.read"]));
/// assert!(tools.visible_to(&guest).is_empty());
/// let err = tools.call(&guest, "leave_left", "{}").blocking().unwrap_err();
/// assert!(matches!(err, ToolError::Forbidden { .. }));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Grants(BTreeSet<String>);

impl Grants {
    /// The grants holding exactly these permissions.
    pub fn new<S: Into<String>>(grants: impl IntoIterator<Item = S>) -> Self {
        Grants(grants.into_iter().map(Into::into).collect())
    }

    /// Whether the caller holds `permission` (compared exactly: no wildcards or prefixes).
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
    pub fn missing<S: AsRef<str>>(&self, required: &[S]) -> Vec<String> {
        required
            .iter()
            .map(AsRef::as_ref)
            .filter(|p| !self.allows(p))
            .map(str::to_owned)
            .collect()
    }
}

/// MCP's tool annotations: hints for clients about what a tool does. They are never trusted for
/// security; permissions and approval are enforced by the runtime from `requires` and
/// `needs_approval`, not from these. A field is `None` when the tool does not say.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Annotations {
    /// A human-readable title for the tool (`#[tool(title = "..")]`), for a client's UI.
    pub title: Option<std::borrow::Cow<'static, str>>,
    /// Whether the tool leaves its environment unchanged (`read_only`; MCP `readOnlyHint`).
    pub read_only: Option<bool>,
    /// Whether a change the tool makes may destroy or overwrite data (`destructive`; MCP
    /// `destructiveHint`).
    pub destructive: Option<bool>,
    /// Whether calling again with the same arguments has no further effect (`idempotent`; MCP
    /// `idempotentHint`).
    pub idempotent: Option<bool>,
    /// Whether the tool reaches an open world of outside things, such as the web (`open_world`;
    /// MCP `openWorldHint`).
    pub open_world: Option<bool>,
}

/// A piece of what the model receives from a tool.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Content {
    /// Text for the model to read.
    Text {
        /// The text; a tool without a `to_model` summary sends its JSON output this way.
        text: String,
    },
    /// An image, given by its URL.
    ImageUrl {
        /// The image's URL.
        url: String,
    },
}

/// What a tool gives the model instead of its full output (`#[tool(to_model = path)]`): a
/// sentence and an icon, say, rather than the raw API payload the application keeps.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ModelOutput(pub Vec<Content>);

impl ModelOutput {
    /// Output of one piece of text.
    pub fn text(text: impl Into<String>) -> Self {
        ModelOutput(vec![Content::Text { text: text.into() }])
    }

    /// Appends a piece of text.
    pub fn and_text(mut self, text: impl Into<String>) -> Self {
        self.0.push(Content::Text { text: text.into() });
        self
    }

    /// Appends an image, given by its URL.
    pub fn and_image_url(mut self, url: impl Into<String>) -> Self {
        self.0.push(Content::ImageUrl { url: url.into() });
        self
    }

    /// The pieces as one text, images named by their URL: for a format that takes no images.
    pub fn as_text(&self) -> String {
        as_text(&self.0)
    }
}

/// Pieces of content as one text, one per line, images named by their URL.
pub(crate) fn as_text(content: &[Content]) -> String {
    let parts: Vec<String> = content
        .iter()
        .map(|c| match c {
            Content::Text { text } => text.clone(),
            Content::ImageUrl { url } => format!("[image: {url}]"),
        })
        .collect();
    parts.join("\n")
}

/// What of a call's output may be shown to a person, in a UI or a transcript.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Disclosure {
    /// The tool has no redaction: the full output may be shown.
    Full,
    /// The output as the tool's redaction function made it.
    Redacted(Value),
    /// Redaction failed: nothing may be shown (fail closed), never the raw payload.
    Withheld {
        /// Why redaction failed (the redaction function's error, or that it panicked), for the
        /// application's log.
        reason: String,
    },
}
