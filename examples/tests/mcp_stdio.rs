//! The HR MCP server as a child process, driven over stdio by rmcp's own client.

use rmcp::model::{CallToolRequestParams, PaginatedRequestParams};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

async fn start(nik: &str, peran: &str, page_size: usize) -> RunningService<RoleClient, ()> {
    let dir = std::env::temp_dir().join(format!(
        "hr-mcp-test-{}-{nik}-{page_size}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_hr-mcp"));
    cmd.env("HR_NIK", nik)
        .env("HR_PERAN", peran)
        .env("HR_DB", dir.join("hr.sqlite"))
        .env("HR_MCP_PAGE_SIZE", page_size.to_string());
    ().serve(TokioChildProcess::new(cmd).unwrap())
        .await
        .expect("handshake")
}

fn args(v: Value) -> serde_json::Map<String, Value> {
    v.as_object().unwrap().clone()
}

#[tokio::test]
async fn lists_only_the_callers_tools_with_schemas_and_annotations() {
    let client = start("K-001", "karyawan", 50).await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "cek-sisa-cuti",
            "cek-riwayat-cuti",
            "cek-status-reimburse",
            "ajukan-cuti"
        ]
    );
    let sisa = &tools[0];
    assert!(sisa.description.as_deref().unwrap().contains("Not for: "));
    assert!(sisa.output_schema.is_some());
    assert_eq!(
        sisa.annotations.as_ref().unwrap().read_only_hint,
        Some(true)
    );
    assert_eq!(sisa.title.as_deref(), Some("Sisa cuti"));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn pages_through_tools_with_an_opaque_cursor() {
    let client = start("M-001", "manajer", 2).await;
    let first = client.list_tools(None).await.unwrap();
    assert_eq!(first.tools.len(), 2);
    let cursor = first.next_cursor.clone().expect("more pages");
    let second = client
        .list_tools(Some(
            PaginatedRequestParams::default().with_cursor(Some(cursor)),
        ))
        .await
        .unwrap();
    assert_eq!(second.tools.len(), 2);
    assert_ne!(first.tools[0].name, second.tools[0].name);
    let all = client.list_all_tools().await.unwrap();
    assert_eq!(all.len(), 5, "a manager sees the team tool too");
    let bad = client
        .list_tools(Some(
            PaginatedRequestParams::default().with_cursor(Some("not-a-cursor".into())),
        ))
        .await;
    assert!(bad.is_err(), "an invalid cursor is a clear error");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn calls_return_structured_content_and_errors_as_data() {
    let client = start("K-001", "karyawan", 50).await;
    let ok = client
        .call_tool(CallToolRequestParams::new("cek-sisa-cuti"))
        .await
        .unwrap();
    assert_eq!(ok.is_error, Some(false));
    let expected = json!({"status": "ok", "nama": "Sari", "sisa_cuti": 7, "cuti_terpakai": 5});
    assert_eq!(ok.structured_content, Some(expected.clone()));
    let text = serde_json::to_value(&ok.content[0]).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(text["text"].as_str().unwrap()).unwrap(),
        expected
    );

    // The model tries to name another employee: a tool error it can read, not a protocol error.
    let bad = client
        .call_tool(
            CallToolRequestParams::new("cek-sisa-cuti")
                .with_arguments(args(json!({"nik": "K-002"}))),
        )
        .await
        .unwrap();
    assert_eq!(bad.is_error, Some(true));
    let msg = serde_json::to_value(&bad.content[0]).unwrap()["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(msg.contains("`nik` is not a known field"), "{msg}");

    // Booking leave needs a person's approval; without elicitation it is a clear tool error.
    let ajukan = client
        .call_tool(
            CallToolRequestParams::new("ajukan-cuti")
                .with_arguments(args(json!({"mulai": "2026-12-21", "hari": 2}))),
        )
        .await
        .unwrap();
    assert_eq!(ajukan.is_error, Some(true));

    // Unknown tools, and tools this caller may not see, are JSON-RPC errors.
    assert!(
        client
            .call_tool(CallToolRequestParams::new("hapus-semua"))
            .await
            .is_err()
    );
    assert!(
        client
            .call_tool(CallToolRequestParams::new("cek-cuti-tim"))
            .await
            .is_err()
    );
    client.cancel().await.unwrap();
}

/// The same server driven by the official Python SDK (`pip install mcp`; CI installs it).
#[test]
fn the_python_sdk_client_agrees() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python_client.py");
    let out = std::process::Command::new("python3")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_hr-mcp"))
        .output()
        .expect("python3 runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success()
        && stderr.contains("No module named 'mcp'")
        && std::env::var_os("CI").is_none()
    {
        eprintln!("skipped: the Python `mcp` package is not installed");
        return;
    }
    assert!(
        out.status.success(),
        "python client failed:\n{stderr}\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
