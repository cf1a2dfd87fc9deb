//! A result larger than its tool's bound (`max_result_chars`), over MCP: the official clients
//! get the bound's worth of text, the notice and a `resource_link`, and read the whole through
//! the link, at their default settings, in both protocol eras, on either replica of a server over
//! one PostgreSQL store; another caller reads nothing; the listing declares no `outputSchema` for
//! such a tool.

use crate::common;

use serde::Serialize;
use tool_runtime::{ToolSet, tool};
use tool_runtime_mcp::McpServer;
use tool_runtime_mcp::http::HttpServer;

/// One line of the attendance log.
#[derive(Serialize, schemars::JsonSchema)]
struct Kehadiran {
    nik: String,
    tanggal: String,
    masuk: String,
    pulang: String,
}

/// A year of attendance, 28 days of it for each employee: about 2 KB of JSON an employee (2 MB
/// for 1,000, 5 MB for 2,500).
#[tool(
    name = "ekspor-kehadiran",
    description = "Ekspor seluruh catatan kehadiran karyawan setahun sebagai daftar JSON; pakai saat HR minta data mentah kehadiran.",
    max_result_chars = 20_000,
    read_only
)]
fn ekspor_kehadiran(
    #[arg(description = "Tahun catatan", range = 2000..=2100)] tahun: u16,
    #[arg(description = "Jumlah karyawan", range = 1..=2_500)] karyawan: u32,
) -> Vec<Kehadiran> {
    (0..karyawan * 28)
        .map(|i| Kehadiran {
            nik: format!("K-{:04}", i % karyawan),
            tanggal: format!("{tahun}-{:02}-{:02}", 1 + (i / karyawan) % 12, 1 + i % 28),
            masuk: "08:0".to_owned() + &(i % 10).to_string(),
            pulang: "17:0".to_owned() + &(i % 10).to_string(),
        })
        .collect()
}

#[tokio::test]
async fn the_python_client_reads_the_whole_of_a_cut_result_through_its_link() {
    let tools = ToolSet::new([ekspor_kehadiran::tool()]).unwrap();
    let whole = serde_json::to_string(&ekspor_kehadiran(2026, 1_000)).unwrap();
    assert!(whole.len() > 2_000_000, "{}", whole.len());
    let bound = HttpServer::new(McpServer::new(tools))
        .bind("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let url = format!("http://{}/mcp", bound.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(bound.serve_until(async {
        let _ = stopped.await;
    }));
    common::run_python_script_async(
        "python_kept_result_client.py",
        &[&url, "20000", &whole.len().to_string()],
    )
    .await;
    let _ = stop.send(());
    served.await.unwrap().unwrap();
}

/// A 5 MB result, over two replicas sharing one PostgreSQL store: its link, made on one, reads
/// whole on the other, with the official Python client's current release and the TypeScript
/// client (v2) at their default settings, in the 2025-11-25 session and in 2026-07-28; another
/// caller's read of it is "not found" on both replicas.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_five_megabyte_result_reads_whole_on_either_replica_in_both_eras() {
    const EMPLOYEES: u32 = 2_500;
    let pg = common::Postgres::start();
    let store = std::sync::Arc::new(
        tool_runtime_postgres::PostgresApprovals::connect(&pg.url)
            .await
            .unwrap(),
    );
    let whole = serde_json::to_string(&ekspor_kehadiran(2026, EMPLOYEES)).unwrap();
    assert!(whole.len() > 5_000_000, "{}", whole.len());
    let mut replicas = Vec::new();
    let mut stops = Vec::new();
    for _ in 0..2 {
        let tools = ToolSet::new([ekspor_kehadiran::tool()]).unwrap();
        let mcp = McpServer::new(tools).with_tasks(tool_runtime::Tasks::shared(store.clone()));
        let bound = HttpServer::new(mcp)
            .bind("127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
        replicas.push(bound.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        stops.push(stop);
        tokio::spawn(bound.serve_until(async {
            let _ = stopped.await;
        }));
    }
    let url = |i: usize| format!("http://{}/mcp", replicas[i]);
    let (length, employees) = (whole.len().to_string(), EMPLOYEES.to_string());
    for mode in ["legacy", "2026-07-28"] {
        let out = tokio::process::Command::new("python3")
            .env("PYTHONPATH", common::provision("python-mcp2"))
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/python_kept_result_client_v2.py"
            ))
            .args([mode, &url(0), &url(1), "20000", &length, &employees])
            .output()
            .await
            .expect("python3 runs");
        assert!(
            out.status.success(),
            "the Python client 2.x ({mode}):\n{}\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        // The TypeScript client, from its own directory (an ES module finds its packages there).
        let modules = common::provision("typescript-client");
        let script = std::path::Path::new(&modules)
            .parent()
            .unwrap()
            .join("typescript_kept_result_client.mjs");
        std::fs::copy(
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/typescript_kept_result_client.mjs"
            ),
            &script,
        )
        .unwrap();
        let out = tokio::process::Command::new("node")
            .arg(&script)
            .args([mode, &url(1), &url(0), "20000", &length, &employees])
            .output()
            .await
            .expect("node runs");
        assert!(
            out.status.success(),
            "the TypeScript client ({mode}):\n{}\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
    }
    // Another caller (another address: no one signs in here) gets nothing on either replica.
    let made = call_from(replicas[0], "127.0.0.1", "tools/call",
        serde_json::json!({"name": "ekspor-kehadiran", "arguments": {"tahun": 2026, "karyawan": 1_000}})).await;
    let uri = made["result"]["content"][1]["uri"]
        .as_str()
        .unwrap_or_else(|| panic!("{made}"))
        .to_owned();
    for at in &replicas {
        let theirs = call_from(
            *at,
            "127.0.0.2",
            "resources/read",
            serde_json::json!({"uri": uri}),
        )
        .await;
        assert!(
            theirs["error"]["message"]
                .as_str()
                .unwrap_or("")
                .contains("no result is kept"),
            "{theirs}"
        );
        let mine = call_from(
            *at,
            "127.0.0.1",
            "resources/read",
            serde_json::json!({"uri": uri}),
        )
        .await;
        assert_eq!(
            mine["result"]["contents"][0]["text"].as_str().map(str::len),
            Some(
                serde_json::to_string(&ekspor_kehadiran(2026, 1_000))
                    .unwrap()
                    .len()
            ),
            "the owner reads it on either replica"
        );
    }
    for stop in stops {
        let _ = stop.send(());
    }
}

/// One stateless 2026-07-28 request from the address `from`; its JSON-RPC answer.
async fn call_from(
    to: std::net::SocketAddr,
    from: &str,
    method: &str,
    params: serde_json::Value,
) -> serde_json::Value {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut params = params;
    params["_meta"] = serde_json::json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}});
    let name = params["name"]
        .as_str()
        .or(params["uri"].as_str())
        .unwrap_or("")
        .to_owned();
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\nMcp-Name: {name}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        to.port(),
        body.len()
    );
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket
        .bind(std::net::SocketAddr::new(from.parse().unwrap(), 0))
        .unwrap();
    let mut stream = socket.connect(to).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8(answer).unwrap();
    let body = answer.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
    let json = body
        .lines()
        .find_map(|l| {
            l.strip_prefix("data:")
                .map(str::trim)
                .filter(|d| d.starts_with('{'))
        })
        .unwrap_or(body);
    serde_json::from_str(json)
        .unwrap_or_else(|e| panic!("{e}: {}", &answer[..answer.len().min(500)]))
}
