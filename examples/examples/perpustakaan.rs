//! The library exercise: three neighbouring tools that each say when they are not the
//! right one, `detail-buku` giving the model a one-line summary while the application gets the
//! whole record, and the fine looked up for the member in the session.
//!
//! Run with `cargo run -p examples --example perpustakaan`; add `--print-tool-docs` (`=json`,
//! `=html`) to print the catalog instead.

use examples::perpustakaan::{Anggota, tool_set};
use examples::show::check;
use tool_runtime::{Context, docs, lint};

fn main() {
    let tools = tool_set();
    if docs::print_tool_docs(&tools) {
        return;
    }
    println!(
        "lints: {}",
        if lint::check(&tools).is_empty() {
            "none"
        } else {
            "see below"
        }
    );
    for l in lint::check(&tools) {
        println!("  {l}");
    }
    let cx = Context::new().with(Anggota { id: "A-001".into() });
    check(
        lint::check(&tools).is_empty(),
        "the library's tools are lint-clean",
    );
    // (tool, arguments, what the model reads)
    for (tool, args, model) in [
        ("cari-buku", r#"{"kata_kunci": "laskar"}"#, "Laskar Pelangi"),
        (
            "detail-buku",
            r#"{"isbn": "978-979-3062-79-2"}"#,
            "Laskar Pelangi oleh Andrea Hirata (2005), tersedia",
        ),
        (
            "detail-buku",
            r#"{"isbn": "978-000-0000-00-0"}"#,
            "Tidak ada buku dengan ISBN",
        ),
        ("cek-denda", "{}", "Bumi Manusia"),
        (
            "cari-buku",
            r#"{"kata_kunci": ""}"#,
            "expected a string of 2 to 100 characters",
        ),
    ] {
        println!("\n{tool} {args}");
        let said = match tools.call(&cx, tool, args).blocking() {
            Ok(out) => {
                println!("  for the application: {}", out.value());
                let model = serde_json::to_string(&out.model()).unwrap_or_default();
                println!("  for the model:       {model}");
                // The application always gets the whole record, shelf included.
                if tool == "detail-buku" && out.value()["ditemukan"] == true {
                    check(
                        out.value()["lokasi_rak"] == "F-12",
                        "the application gets the shelf",
                    );
                    check(!model.contains("F-12"), "the model does not");
                }
                model
            }
            Err(e) => {
                let message = tools.model_message(&e);
                println!("  to the model: {}", message.replace('\n', " "));
                message
            }
        };
        check(
            said.contains(model),
            format!("{tool} {args}: the model reads {model:?}"),
        );
    }
}
