//! Arbitrary bytes as the arguments of every example tool: a value or a `ToolError`, never a
//! panic. Run with `cargo +nightly fuzz run call_text` from the repository root.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use tool_runtime::{Context, ToolSet};

fn tools() -> &'static ToolSet {
    static SET: OnceLock<ToolSet> = OnceLock::new();
    SET.get_or_init(|| {
        ToolSet::new([
            examples::katering::pesan_katering::tool(),
            examples::laporan_penjualan::buat_laporan::tool(),
        ])
        .expect("valid tool set")
    })
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let cx = Context::new();
    for name in tools().names() {
        let _ = tools().call(&cx, name, &text).blocking();
    }
});
