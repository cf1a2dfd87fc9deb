//! Arbitrary bytes as the arguments of every example tool: a value or an error the model can act
//! on, never a panic (caught by the toolkit as `ToolError::Panicked`, which fails this target),
//! an internal error, or a hang. Run with `cargo +nightly fuzz run call_text` from the repository
//! root; CI compiles it on stable (`cargo check --manifest-path fuzz/Cargo.toml`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use tool_runtime::{Context, ToolError, ToolSet};

fn tools() -> &'static (ToolSet, Context) {
    static SET: OnceLock<(ToolSet, Context)> = OnceLock::new();
    SET.get_or_init(examples::every_tool)
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (set, cx) = tools();
    for name in set.names() {
        match set.call(cx, name, &text).blocking() {
            Err(e @ (ToolError::Panicked { .. } | ToolError::Schema(_) | ToolError::MissingContext { .. })) => {
                panic!("{name}: the toolkit broke: {e:?}")
            }
            _ => {}
        }
    }
});
