//! The weather tool: the application gets the full output, raw source included; the
//! model gets one sentence and an icon URL; a transcript gets a redacted copy.
//!
//! Run with `cargo run -p examples --example cuaca`.

use examples::cuaca::cuaca_terkini;
use tool_runtime::{Context, ToolSet};

fn main() {
    let tools = ToolSet::new([cuaca_terkini::tool()]).expect("valid tool set");
    let out = tools
        .call(&Context::new(), "cuaca-terkini", r#"{"kota": "Surabaya"}"#)
        .blocking()
        .expect("the call succeeds");
    println!(
        "for the application:\n{}\n",
        serde_json::to_string_pretty(&out.value()).unwrap()
    );
    println!(
        "for the model:\n{}\n",
        serde_json::to_string_pretty(&out.model()).unwrap()
    );
    match out.for_display() {
        Some(shown) => println!(
            "for the transcript:\n{}",
            serde_json::to_string_pretty(shown).unwrap()
        ),
        None => println!("for the transcript: nothing (redaction failed)"),
    }
}
