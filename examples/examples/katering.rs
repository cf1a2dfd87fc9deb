//! The catering case: a model once sent `"25"` for the number of participants and a
//! string concatenation turned it into 255 portions. Here `"25"` never reaches the business rule.
//!
//! The tool is `examples/src/katering.rs` (shared with the tests and the gateway example):
//!
//! ```text
//! #[tool(
//!     name = "pesan-katering",
//!     description = "Buat pesanan katering untuk sebuah acara ...",
//!     not_for = "mengubah atau membatalkan pesanan yang sudah dibuat"
//! )]
//! pub fn pesan_katering(
//!     #[arg(description = "Jumlah peserta sebagai ANGKA, bukan teks", range = 1..=500, example = 25)]
//!     jumlah_peserta: u32,
//! ) -> Pesanan { ... }
//! ```
//!
//! Its description, its argument's description and its bounds are required by the macro (leave
//! one out and it does not compile). This program prints what a model is shown, calls the tool
//! as a model might, and shows what the model is told when a call is refused.
//!
//! Run with `cargo run -p examples --example katering`.

use examples::katering::pesan_katering;
use examples::show::{self, Expect};
use tool_runtime::{Api, Context, ToolSet};

fn main() {
    let tools = ToolSet::new([pesan_katering::tool()]).expect("valid tool set");
    // The description and schemas, as the tool set holds them.
    show::tools(&tools);
    // What one provider is sent: its dialect of the same schema (OpenAI's strict functions;
    // the `example` moves into the description, the bounds stay).
    let exported = tools.export(Api::OPENAI_CHAT).expect("exportable");
    println!(
        "sent to OpenAI Chat:\n{}\n",
        serde_json::to_string_pretty(&exported).expect("JSON")
    );

    // A call as a model makes it: the arguments are its JSON text, checked against the schema
    // before the function runs.
    let cx = Context::new();
    let ordered = tools
        .call(&cx, "pesan-katering", r#"{"jumlah_peserta": 25}"#)
        .blocking()
        .expect("25 participants is a valid order");
    show::check(
        ordered.value()["total_porsi"] == 30,
        "25 participants make 30 portions",
    );
    // The string "25" never reaches `pesan_katering`: the call is refused, and the model is told
    // which field, what was expected and what it sent, so it can call again.
    let refused = tools
        .call(&cx, "pesan-katering", r#"{"jumlah_peserta": "25"}"#)
        .blocking()
        .expect_err("a string is not a number");
    println!(
        "\"25\" refused; the model is told:\n  {}\n",
        refused.model_message()
    );

    // More calls as a model might make them, each with what it must come to.
    let calls = [
        (
            r#"{"jumlah_peserta": 25}"#,
            Expect::Ok(r#""total_porsi":30"#),
        ),
        (
            r#"{"jumlah_peserta": "25"}"#,
            Expect::Refused("expected an integer from 1 to 500, received \"25\" (a string)"),
        ),
        // 25.0 is the integer 25 by JSON Schema's rules (a number with a zero fraction), so it is
        // accepted; 25.5 would not be.
        (
            r#"{"jumlah_peserta": 25.0}"#,
            Expect::Ok(r#""total_porsi":30"#),
        ),
        (
            r#"{"jumlah_peserta": 0}"#,
            Expect::Refused("from 1 to 500, received 0"),
        ),
        (
            r#"{"peserta": 25}"#,
            Expect::Refused("did you mean `jumlah_peserta`?"),
        ),
    ];
    show::calls(&tools, &cx, "pesan-katering", &calls);
}
