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
use examples::show::{check, fail};
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
    // A fresh database each run (unless HR_DB names one), so the run shows the same thing
    // every time and checks it.
    let fresh = std::env::temp_dir().join(format!("hr_assistant-{}.sqlite", std::process::id()));
    let path: std::path::PathBuf = std::env::var_os("HR_DB").map_or(fresh.clone(), Into::into);
    let _ = std::fs::remove_file(&fresh);
    let db = Arc::new(Db::open(&path).expect("the HR database opens"));
    println!("database: {}\n", path.display());
    let all = tool_set();

    // (who, session, remaining leave, tools seen)
    let karyawan = [
        "cek-sisa-cuti",
        "cek-riwayat-cuti",
        "cek-status-reimburse",
        "ajukan-cuti",
    ];
    let manajer = [
        "cek-sisa-cuti",
        "cek-riwayat-cuti",
        "cek-status-reimburse",
        "cek-cuti-tim",
        "ajukan-cuti",
    ];
    for (who, session, sisa, sees) in [
        (
            "Sari (karyawan)",
            Session::new("K-001", Peran::Karyawan),
            r#""sisa_cuti":7"#,
            &karyawan[..],
        ),
        (
            "Budi (karyawan)",
            Session::new("K-002", Peran::Karyawan),
            r#""sisa_cuti":0"#,
            &karyawan[..],
        ),
        (
            "Dewi (manajer)",
            Session::new("M-001", Peran::Manajer),
            r#""sisa_cuti":10"#,
            &manajer[..],
        ),
        (
            "sesi dengan NIK tak terdaftar",
            Session::new("K-999", Peran::Karyawan),
            r#""status":"karyawan-tidak-ditemukan""#,
            &karyawan[..],
        ),
    ] {
        let cx = session.context(db.clone());
        let visible = all.visible_to(&cx);
        let names: Vec<&str> = visible.names().collect();
        println!("== {who}: sees {names:?}");
        check(names == sees, format!("{who} sees {sees:?}"));
        ask(
            &visible,
            &cx,
            "sisa cuti saya berapa?",
            "cek-sisa-cuti",
            "{}",
            sisa,
        );
        ask(
            &visible,
            &cx,
            "reimburse saya sudah cair belum?",
            "cek-status-reimburse",
            "{}",
            r#""daftar""#,
        );
        ask(
            &visible,
            &cx,
            "kapan saja saya cuti tahun ini?",
            "cek-riwayat-cuti",
            "{}",
            r#""tahun""#,
        );
        // A model that tries to read someone else's data by passing a NIK.
        ask(
            &visible,
            &cx,
            "sisa cuti NIK K-002?",
            "cek-sisa-cuti",
            r#"{"nik": "K-002"}"#,
            "`nik` is not a known field",
        );
        // A guessed name of a tool this person may not use.
        let team = if sees.contains(&"cek-cuti-tim") {
            r#""anggota""#
        } else {
            "tidak tersedia untuk pengguna ini"
        };
        ask(&all, &cx, "cuti tim saya?", "cek-cuti-tim", "{}", team);
        println!();
    }

    println!("== Sari asks for leave; the request waits for approval");
    let cx = Session::new("K-001", Peran::Karyawan).context(db.clone());
    let Err(ToolError::ApprovalRequired(pending)) = all
        .call(&cx, "ajukan-cuti", r#"{"mulai": "2026-12-21", "hari": 2}"#)
        .blocking()
    else {
        fail("booking leave waits for approval");
    };
    println!("  waiting for approval: {pending}");
    println!("  (a person approves)");
    match all.resume(&cx, &pending.ticket).blocking() {
        Ok(out) => {
            println!("  ran once: {}", out.value());
            check(out.value()["sisa_cuti"] == 5, "7 days less 2");
        }
        Err(e) => fail(format!("the approved request runs: {e}")),
    }
    match all.resume(&cx, &pending.ticket).blocking() {
        Ok(out) => fail(format!("ran AGAIN (must never happen): {}", out.value())),
        Err(e) => {
            println!("  a second approval of the same request: {e}");
            check(matches!(e, ToolError::NotPending { .. }), "it runs once");
        }
    }
    drop(db);
    let _ = std::fs::remove_file(&fresh);
}

/// One question as the call a model would make, and what the answer must contain.
fn ask(tools: &ToolSet, cx: &Context, question: &str, tool: &str, arguments: &str, expect: &str) {
    print!("  \"{question}\" -> {tool} {arguments}\n     ");
    let said = match tools.call(cx, tool, arguments).blocking() {
        Ok(out) => out.json().to_owned(),
        Err(e) => format!(
            "to the model: {}",
            tools.model_message(&e).replace('\n', " ")
        ),
    };
    println!("{said}");
    check(
        said.contains(expect),
        format!("{tool} {arguments}: the answer has {expect:?}"),
    );
}
