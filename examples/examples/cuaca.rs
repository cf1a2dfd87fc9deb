//! The weather tool: the application gets the full output, raw source included; the
//! model gets one sentence and an icon URL; a transcript gets a redacted copy.
//!
//! Run with `cargo run -p examples --example cuaca`.

use examples::cuaca::cuaca_terkini;
use examples::show::check;
use tool_runtime::{Content, Context, ToolSet};

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
    // What this example documents: the raw source for the application only, a sentence and an
    // icon for the model, a copy without the source for the transcript.
    check(
        out.value().get("sumber").is_some(),
        "the application gets the raw source",
    );
    let model = out.model().0;
    check(
        matches!(
            model.as_slice(),
            [Content::Text { .. }, Content::ImageUrl { .. }]
        ),
        "the model gets a sentence and an icon",
    );
    check(
        out.for_display().is_some_and(|v| v.get("sumber").is_none()),
        "the transcript gets a copy without the raw source",
    );
}
