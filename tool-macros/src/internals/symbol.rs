//! Attribute keys, in one place: the parsers match on these constants and the "expected one of"
//! lists are made from them.

// #[tool(...)]
pub(crate) const DESCRIPTION: &str = "description";
pub(crate) const NOT_FOR: &str = "not_for";
pub(crate) const NAME: &str = "name";
pub(crate) const TITLE: &str = "title";
pub(crate) const REQUIRES: &str = "requires";
pub(crate) const NEEDS_APPROVAL: &str = "needs_approval";
pub(crate) const READ_ONLY: &str = "read_only";
pub(crate) const DESTRUCTIVE: &str = "destructive";
pub(crate) const IDEMPOTENT: &str = "idempotent";
pub(crate) const OPEN_WORLD: &str = "open_world";
pub(crate) const TO_MODEL: &str = "to_model";
pub(crate) const REDACT: &str = "redact";
pub(crate) const PANIC_TO_MODEL: &str = "panic_to_model";
pub(crate) const ALLOW_LINT: &str = "allow_lint";
pub(crate) const CRATE: &str = "crate";
pub(crate) const TIMEOUT: &str = "timeout";
pub(crate) const BLOCKING: &str = "blocking";
pub(crate) const TASK: &str = "task";
pub(crate) const ASK_FIRST: &str = "ask_first";
pub(crate) const MAX_RESULT_CHARS: &str = "max_result_chars";

// #[arg(...)]
pub(crate) const RANGE: &str = "range";
pub(crate) const MIN: &str = "min";
pub(crate) const MAX: &str = "max";
pub(crate) const LENGTH: &str = "length";
pub(crate) const PATTERN: &str = "pattern";
pub(crate) const DEFAULT: &str = "default";
pub(crate) const EXAMPLE: &str = "example";
pub(crate) const UNBOUNDED: &str = "unbounded";
pub(crate) const VALIDATE: &str = "validate";

// Attribute names.
pub(crate) const ARG: &str = "arg";
pub(crate) const CTX: &str = "ctx";
pub(crate) const DOC: &str = "doc";
pub(crate) const TOOL: &str = "tool";

pub(crate) const TOOL_KEYS: &[&str] = &[
    DESCRIPTION,
    NOT_FOR,
    NAME,
    TITLE,
    REQUIRES,
    NEEDS_APPROVAL,
    READ_ONLY,
    DESTRUCTIVE,
    IDEMPOTENT,
    OPEN_WORLD,
    TO_MODEL,
    REDACT,
    PANIC_TO_MODEL,
    ALLOW_LINT,
    TIMEOUT,
    BLOCKING,
    TASK,
    ASK_FIRST,
    MAX_RESULT_CHARS,
    CRATE,
];

/// `#[tools(...)]` on an impl block: what every tool of the group shares.
pub(crate) const GROUP_KEYS: &[&str] = &[CRATE];

pub(crate) const ARG_KEYS: &[&str] = &[
    DESCRIPTION,
    RANGE,
    MIN,
    MAX,
    LENGTH,
    PATTERN,
    DEFAULT,
    EXAMPLE,
    UNBOUNDED,
    VALIDATE,
];

/// `#[arg(...)]` on a `#[derive(ToolArg)]` type itself.
pub(crate) const CONTAINER_KEYS: &[&str] = &[DESCRIPTION, VALIDATE, ALLOW_LINT, CRATE];

pub(crate) fn list(keys: &[&str]) -> String {
    keys.iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
