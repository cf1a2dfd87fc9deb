//! The catering case: a model once sent `"25"` for the number of participants and a
//! string concatenation turned it into 255 portions. Here `"25"` never reaches the business rule.
//!
//! Run with `cargo run -p examples --example katering`.

use examples::katering::*;
use examples::show::{self, Expect};
use tool_runtime::{Context, ToolSet};

fn main() {
    let tools = ToolSet::new([pesan_katering::tool()]).expect("valid tool set");
    show::tools(&tools);
    let calls = [
        (
            r#"{"jumlah_peserta": 25}"#,
            Expect::Ok(r#""total_porsi":30"#),
        ),
        (
            r#"{"jumlah_peserta": "25"}"#,
            Expect::Refused("expected an integer from 1 to 500, received \"25\" (a string)"),
        ),
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
    show::calls(&tools, &Context::new(), "pesan-katering", &calls);
}
