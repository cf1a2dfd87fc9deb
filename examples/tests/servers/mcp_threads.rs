//! Where a tool's call runs: a sync tool on a blocking thread, never on the async worker that
//! serves the requests; a sync tool that says `blocking = false`, and an async one, on the worker.

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tool_runtime::{ToolSet, tool};
use tool_runtime_mcp::McpServer;

fn here() -> String {
    format!("{:?}", std::thread::current().id())
}

#[tool(description = "Kembalikan nama utas tempat alat ini berjalan; alat uji.")]
fn utas_blokir() -> String {
    here()
}

#[tool(
    description = "Kembalikan nama utas tempat alat ini berjalan, tanpa memblokir; alat uji.",
    blocking = false
)]
fn utas_pekerja() -> String {
    here()
}

#[tool(description = "Kembalikan nama utas tempat alat async ini berjalan; alat uji.")]
async fn utas_async() -> String {
    here()
}

/// The thread each tool ran on, called over stdio on a current-thread runtime (whose one worker
/// is this test's thread).
async fn threads() -> Vec<String> {
    let set = ToolSet::new([
        utas_blokir::tool(),
        utas_pekerja::tool(),
        utas_async::tool(),
    ])
    .unwrap();
    let (client, server) = tokio::io::duplex(1 << 16);
    let (server_in, server_out) = tokio::io::split(server);
    tokio::spawn(McpServer::new(set).serve_lines(server_in, server_out));
    let (client_in, mut client_out) = tokio::io::split(client);
    let mut lines = BufReader::new(client_in).lines();
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    client_out
        .write_all(format!("{init}\n").as_bytes())
        .await
        .unwrap();
    lines.next_line().await.unwrap().unwrap();
    let mut out = Vec::new();
    for (id, name) in ["utas_blokir", "utas_pekerja", "utas_async"]
        .iter()
        .enumerate()
    {
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"{name}","arguments":{{}}}}}}"#,
            id + 1
        );
        client_out
            .write_all(format!("{call}\n").as_bytes())
            .await
            .unwrap();
        let answer: Value =
            serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
        let thread = answer["result"]["structuredContent"]["result"].as_str();
        out.push(thread.unwrap_or_else(|| panic!("{answer}")).to_owned());
    }
    out
}

#[tokio::test]
async fn a_sync_tool_runs_off_the_worker_unless_it_says_it_does_not_block() {
    let worker = here();
    let ran = threads().await;
    assert_ne!(
        ran[0], worker,
        "a sync tool ran on the async worker: {ran:?}"
    );
    assert!(!ran[0].is_empty(), "{ran:?}");
    assert_eq!(
        ran[1], worker,
        "a `blocking = false` tool was handed to another thread: {ran:?}"
    );
    assert_eq!(ran[2], worker, "{ran:?}");
}

#[test]
fn the_flag_is_on_the_tool() {
    assert!(utas_blokir::tool().blocks());
    assert!(!utas_pekerja::tool().blocks());
    assert!(!utas_async::tool().blocks());
}
