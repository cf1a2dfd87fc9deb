//! The catering case: a model once sent `"25"` for the number of participants and a
//! string concatenation turned it into 255 portions. Here `"25"` never reaches the business rule.
//!
//! Run with `cargo run -p examples --example katering`.

use examples::katering::*;
use examples::show;
use tool_runtime::{Context, ToolSet};

fn main() {
    let tools = ToolSet::new([pesan_katering::tool()]).expect("valid tool set");
    show::tools(&tools);
    let calls = [
        r#"{"jumlah_peserta": 25}"#,
        r#"{"jumlah_peserta": "25"}"#,
        r#"{"jumlah_peserta": 25.0}"#,
        r#"{"jumlah_peserta": 0}"#,
        r#"{"peserta": 25}"#,
    ];
    show::calls(&tools, &Context::new(), "pesan-katering", &calls);
}
