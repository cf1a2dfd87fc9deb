//! The sales-report tool: closed enums instead of free strings, a default for the
//! optional region, a boolean with a default, and an async function.
//!
//! Run with `cargo run -p examples --example laporan_penjualan`.

use examples::laporan_penjualan::*;
use examples::show::{self, Expect};
use tool_runtime::{Context, ToolSet};

fn main() {
    let tools = ToolSet::new([buat_laporan::tool()]).expect("valid tool set");
    show::tools(&tools);
    let calls = [
        (
            r#"{"periode": "mingguan"}"#,
            Expect::Ok(r#""wilayah":"semua""#),
        ),
        (
            r#"{"periode": "bulanan", "wilayah": "medan", "sertakan_grafik": false}"#,
            Expect::Ok(r#""grafik":[]"#),
        ),
        (
            r#"{"periode": "Mingguan", "wilayah": "DKI Jakarta"}"#,
            Expect::Refused(r#"(did you mean "mingguan"?)"#),
        ),
        (
            r#"{"wilayah": "jakarta", "grafik": true}"#,
            Expect::Refused("did you mean `sertakan_grafik`?"),
        ),
    ];
    show::calls(&tools, &Context::new(), "buat-laporan-penjualan", &calls);
}
