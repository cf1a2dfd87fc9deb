//! Attribute values made from the strings `tracing` hands a layer.

use std::cell::RefCell;
use std::sync::Arc;

use opentelemetry::{StringValue, Value};

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

/// How many strings each thread keeps shared (see [`Recent`]).
const RECENT: usize = 64;

/// The longest string kept shared: a tool's description fits; an opted-in argument or result
/// is copied and not kept.
const LONGEST_SHARED: usize = 4096;

/// The strings a thread turned into values last, each under the address and length `tracing`
/// handed it from: a tool's name and description live in its `Tool` for
/// the program's life, so each of its spans hands the same address, and the value is shared
/// (a reference count) rather than copied and freed with every span. The text is compared too,
/// so an address reused for other text gets a value of its own.
struct Recent {
    slots: [Option<(usize, Arc<str>)>; RECENT],
}

thread_local! {
    static SHARED: RefCell<Recent> = const {
        RefCell::new(Recent {
            slots: [const { None }; RECENT],
        })
    };
}

/// A string as an attribute's value: one of [`COMMON`] without copying it, one this thread
/// shared recently from the same address, else a copy.
pub(crate) fn text(value: &str) -> Value {
    if let Some(common) = COMMON.iter().find(|c| **c == value) {
        return Value::from(*common);
    }
    if value.len() > LONGEST_SHARED || value.is_empty() {
        return Value::from(value.to_owned());
    }
    let address = value.as_ptr() as usize;
    // The low bits of an address are alignment, the same for most strings.
    let slot = (address >> 4 ^ value.len()) % RECENT;
    let shared = SHARED.try_with(|recent| {
        let Ok(mut recent) = recent.try_borrow_mut() else {
            return Arc::from(value);
        };
        match &recent.slots[slot] {
            Some((at, kept)) if *at == address && **kept == *value => kept.clone(),
            _ => {
                let kept: Arc<str> = Arc::from(value);
                recent.slots[slot] = Some((address, kept.clone()));
                kept
            }
        }
    });
    match shared {
        Ok(kept) => Value::String(StringValue::from(kept)),
        // The thread is ending: nothing to keep.
        Err(_) => Value::from(value.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_text_from_the_same_place_is_shared_and_other_text_is_not() {
        let name = String::from("pesan-katering");
        let (Value::String(first), Value::String(second)) = (text(&name), text(&name)) else {
            panic!("a string value");
        };
        assert_eq!(first.as_str(), "pesan-katering");
        assert!(
            std::ptr::eq(first.as_str(), second.as_str()),
            "shared, not copied"
        );

        // The same address, other text (as when a string is freed and its memory reused).
        let mut reused = name;
        reused.replace_range(.., "pesan-kateriNG");
        let Value::String(third) = text(&reused) else {
            panic!("a string value");
        };
        assert_eq!(third.as_str(), "pesan-kateriNG");

        // A copy of the text elsewhere is a value of its own, equal to it.
        let elsewhere = String::from("pesan-kateriNG");
        let Value::String(fourth) = text(&elsewhere) else {
            panic!("a string value");
        };
        assert_eq!(fourth.as_str(), third.as_str());

        // Too long to keep: copied each time.
        let long = "x".repeat(LONGEST_SHARED + 1);
        let (Value::String(a), Value::String(b)) = (text(&long), text(&long)) else {
            panic!("a string value");
        };
        assert!(!std::ptr::eq(a.as_str(), b.as_str()));
        assert_eq!(a.as_str(), long);
    }
}
