//! The HR assistant: three people log in, and each asks what a model would turn into
//! tool calls. The employee comes from the session; what each may call comes from their role;
//! booking leave waits for a person's approval.
//!
//! Run with `cargo run -p examples --example hr_assistant` (the database is created and seeded in
//! the system's temp directory on first run; `HR_DB=path` picks another file).
//! `cargo run -p examples --example hr_assistant -- mcp` serves the same tools over MCP on stdio
//! for the session in `HR_NIK`/`HR_PERAN` (see `examples::hr::serve_mcp`).

use std::sync::Arc;

use examples::hr::domain::Db;
use examples::hr::{Peran, Session, tool_set};
use tool_runtime::{Context, ToolError, ToolSet};

fn main() {
    if tool_runtime::docs::print_tool_docs(&tool_set()) {
        return;
    }
    if std::env::args().nth(1).as_deref() == Some("mcp") {
        let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
        let args: Vec<String> = std::env::args().collect();
        if let Err(e) = runtime.block_on(examples::hr::serve_mcp(&args)) {
            eprintln!("hr mcp server: {e}");
            std::process::exit(1);
        }
        return;
    }
    let path = std::env::var_os("HR_DB")
        .map(Into::into)
        .unwrap_or_else(|| std::env::temp_dir().join("hr_assistant.sqlite"));
    let db = Arc::new(Db::open(&path).expect("the HR database opens"));
    println!("database: {}\n", path.display());
    let all = tool_set();

    for (who, session) in [
        ("Sari (karyawan)", Session::new("K-001", Peran::Karyawan)),
        ("Budi (karyawan)", Session::new("K-002", Peran::Karyawan)),
        ("Dewi (manajer)", Session::new("M-001", Peran::Manajer)),
        (
            "sesi dengan NIK tak terdaftar",
            Session::new("K-999", Peran::Karyawan),
        ),
    ] {
        let cx = session.context(db.clone());
        let visible = all.visible_to(&cx);
        println!("== {who}: sees {:?}", visible.names().collect::<Vec<_>>());
        ask(
            &visible,
            &cx,
            "sisa cuti saya berapa?",
            "cek-sisa-cuti",
            "{}",
        );
        ask(
            &visible,
            &cx,
            "reimburse saya sudah cair belum?",
            "cek-status-reimburse",
            "{}",
        );
        ask(
            &visible,
            &cx,
            "kapan saja saya cuti tahun ini?",
            "cek-riwayat-cuti",
            "{}",
        );
        // A model that tries to read someone else's data by passing a NIK.
        ask(
            &visible,
            &cx,
            "sisa cuti NIK K-002?",
            "cek-sisa-cuti",
            r#"{"nik": "K-002"}"#,
        );
        // A guessed name of a tool this person may not use.
        ask(&all, &cx, "cuti tim saya?", "cek-cuti-tim", "{}");
        println!();
    }

    println!("== Sari asks for leave; the request waits for approval");
    let cx = Session::new("K-001", Peran::Karyawan).context(db.clone());
    match all
        .call(&cx, "ajukan-cuti", r#"{"mulai": "2026-12-21", "hari": 2}"#)
        .blocking()
    {
        Err(ToolError::ApprovalRequired(pending)) => {
            println!("  waiting for approval: {pending}");
            println!("  (a person approves)");
            match all.resume(&cx, pending.clone()).blocking() {
                Ok(out) => println!("  ran once: {}", out.value()),
                Err(e) => println!("  refused: {e}"),
            }
            match all.resume(&cx, pending).blocking() {
                Ok(out) => println!("  ran AGAIN (must never happen): {}", out.value()),
                Err(e) => println!("  a second approval of the same request: {e}"),
            }
        }
        other => println!("  unexpected: {other:?}"),
    }
}

fn ask(tools: &ToolSet, cx: &Context, question: &str, tool: &str, arguments: &str) {
    print!("  \"{question}\" -> {tool} {arguments}\n     ");
    match tools.call(cx, tool, arguments).blocking() {
        Ok(out) => println!("{}", out.value()),
        Err(e) => println!("to the model: {}", e.model_message().replace('\n', " ")),
    }
}
