//! A large catalog over MCP: a gateway whose HR server (a child process over stdio) is deferred
//! lists its own tools, the search tool and `call_tool` instead of the HR tools; the official
//! Python client finds an HR tool by searching (with its input schema), calls it through
//! `call_tool` and by its own name; a deferred tool the caller lacks a grant for is never found
//! and never runs.

use crate::common;

use serde_json::json;
use tool_runtime::{Context, Tool, ToolSet};
use tool_runtime_mcp::gateway::Gateway;
use tool_runtime_mcp::http::HttpServer;
use tool_runtime_mcp::remote::{Remote, RemoteOptions};
use tool_runtime_mcp::{Caller, McpServer, Refusal};

#[tokio::test]
async fn the_python_client_finds_and_calls_a_deferred_remote_tool_through_the_search_call_pair() {
    let dir = std::env::temp_dir().join(format!("mcp-catalog-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("hr.sqlite");
    let hr = Remote::stdio(
        "hr",
        move || {
            let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_hr-mcp"));
            cmd.env("HR_NIK", "K-001")
                .env("HR_PERAN", "karyawan")
                .env("HR_DB", &db);
            cmd
        },
        RemoteOptions::prefixed("hr"),
    )
    .await
    .unwrap();
    // A local tool only finance may call, deferred with the HR tools.
    let refund = Tool::define(
        "kembalikan-dana",
        "Refund a customer's payment to their bank account.",
        json!({"type": "object", "properties": {"nomor": {"type": "string",
            "description": "The payment number", "minLength": 3, "maxLength": 20}},
            "required": ["nomor"], "additionalProperties": false}),
    )
    .requires(["keuangan.refund"])
    .build_fn(|_| async { panic!("a refund ran without the grant") })
    .unwrap();
    let local = examples::gateway::local_tools()
        .with_tools([refund])
        .unwrap();
    let gateway = Gateway::new(local).with_deferred_remote(hr);
    let tools: ToolSet = gateway
        .tool_set()
        .await
        .unwrap()
        .defer(|t| t.name() == "kembalikan-dana")
        .unwrap();
    let server =
        McpServer::new(tools).with_context(|_: Caller| async { Ok::<_, Refusal>(Context::new()) });
    let bound = HttpServer::new(server)
        .bind("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let url = format!("http://{}/mcp", bound.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(bound.serve_until(async {
        let _ = stopped.await;
    }));
    common::run_python_script_async("python_catalog_client.py", &[&url]).await;
    let _ = stop.send(());
    served.await.unwrap().unwrap();
}
