//! Attribute keys, in one place.

pub const TOOL_KEYS: &[&str] = &[
    "description",
    "not_for",
    "name",
    "title",
    "requires",
    "needs_approval",
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
    "to_model",
    "redact",
    "panic_to_model",
    "allow_lint",
    "crate",
];
pub const ARG_KEYS: &[&str] = &[
    "description",
    "range",
    "min",
    "max",
    "length",
    "pattern",
    "default",
    "example",
    "unbounded",
    "validate",
];

pub fn list(keys: &[&str]) -> String {
    keys.iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
