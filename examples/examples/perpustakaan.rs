//! The library exercise: three neighbouring tools that each say when they are not the
//! right one, `detail-buku` giving the model a one-line summary while the application gets the
//! whole record, and the fine looked up for the member in the session.
//!
//! Run with `cargo run -p examples --example perpustakaan`; add `--print-tool-docs` (`=json`,
//! `=html`) to print the catalog instead.

use examples::perpustakaan::{Anggota, tool_set};
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
    for (tool, args) in [
        ("cari-buku", r#"{"kata_kunci": "laskar"}"#),
        ("detail-buku", r#"{"isbn": "978-979-3062-79-2"}"#),
        ("detail-buku", r#"{"isbn": "978-000-0000-00-0"}"#),
        ("cek-denda", "{}"),
        ("cari-buku", r#"{"kata_kunci": ""}"#),
    ] {
        println!("\n{tool} {args}");
        match tools.call(&cx, tool, args).blocking() {
            Ok(out) => {
                println!("  for the application: {}", out.value());
                println!(
                    "  for the model:       {}",
                    serde_json::to_string(&out.model()).unwrap_or_default()
                );
            }
            Err(e) => println!("  to the model: {}", e.model_message().replace('\n', " ")),
        }
    }
}
