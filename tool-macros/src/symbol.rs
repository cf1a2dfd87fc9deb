//! Attribute keys, in one place: the parsers match on these constants and the "expected one of"
//! lists are made from them.

// #[tool(...)]
pub const DESCRIPTION: &str = "description";
pub const NOT_FOR: &str = "not_for";
pub const NAME: &str = "name";
pub const TITLE: &str = "title";
pub const REQUIRES: &str = "requires";
pub const NEEDS_APPROVAL: &str = "needs_approval";
pub const READ_ONLY: &str = "read_only";
pub const DESTRUCTIVE: &str = "destructive";
pub const IDEMPOTENT: &str = "idempotent";
pub const OPEN_WORLD: &str = "open_world";
pub const TO_MODEL: &str = "to_model";
pub const REDACT: &str = "redact";
pub const PANIC_TO_MODEL: &str = "panic_to_model";
pub const ALLOW_LINT: &str = "allow_lint";
pub const CRATE: &str = "crate";
pub const TIMEOUT: &str = "timeout";
pub const BLOCKING: &str = "blocking";

// #[arg(...)]
pub const RANGE: &str = "range";
pub const MIN: &str = "min";
pub const MAX: &str = "max";
pub const LENGTH: &str = "length";
pub const PATTERN: &str = "pattern";
pub const DEFAULT: &str = "default";
pub const EXAMPLE: &str = "example";
pub const UNBOUNDED: &str = "unbounded";
pub const VALIDATE: &str = "validate";

// Attribute names.
pub const ARG: &str = "arg";
pub const CTX: &str = "ctx";
pub const DOC: &str = "doc";
pub const TOOL: &str = "tool";

pub const TOOL_KEYS: &[&str] = &[
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
    CRATE,
];

/// `#[tools(...)]` on an impl block: what every tool of the group shares.
pub const GROUP_KEYS: &[&str] = &[CRATE];

pub const ARG_KEYS: &[&str] = &[
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
pub const CONTAINER_KEYS: &[&str] = &[DESCRIPTION, VALIDATE, ALLOW_LINT, CRATE];

pub fn list(keys: &[&str]) -> String {
    keys.iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
