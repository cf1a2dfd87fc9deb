//! Attribute values made from the strings `tracing` hands a layer.

use opentelemetry::Value;

/// Values the toolkit's spans often carry, shared rather than copied for each span.
const COMMON: &[&str] = &[
    "execute_tool",
    "function",
    "tools/call",
    "tools/list",
    "chat",
    "invoke_agent",
    "ok",
    "tool_error",
    "pipe",
    "tcp",
    "2025-11-25",
    "2026-07-28",
];

/// A string as an attribute's value: one of [`COMMON`] without copying it, else a copy.
pub(crate) fn text(value: &str) -> Value {
    match COMMON.iter().find(|c| **c == value) {
        Some(common) => Value::from(*common),
        None => Value::from(value.to_owned()),
    }
}
