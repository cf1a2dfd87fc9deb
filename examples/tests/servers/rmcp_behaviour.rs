//! What rmcp's own stdio transport does with lines it cannot serve, next to what this toolkit's
//! transport (`tool-runtime-mcp/src/stdio/mod.rs`) does with the same lines. The rmcp half serves
//! the same two tools written with rmcp's own macros (the toolkit's server is served by its own
//! transports only), and pins the behaviours the toolkit works around: when one of those
//! assertions fails after an rmcp upgrade, rmcp has changed, and the workaround may no longer
//! be needed.

use std::time::Duration;

use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::{ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tool_runtime::{ToolSet, tool};
use tool_runtime_mcp::McpServer;

#[tool(description = "Tunggu sebentar lalu kembalikan berapa lama menunggu.")]
async fn tunggu_sebentar(
    #[arg(description = "Lama menunggu dalam milidetik", range = 0..=2000)] ms: u64,
) -> u64 {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    ms
}

#[tool(description = "Tunggu selamanya; tidak pernah selesai.")]
async fn tunggu_selamanya() -> u64 {
    std::future::pending().await
}

fn server() -> McpServer {
    McpServer::new(ToolSet::new([tunggu_sebentar::tool(), tunggu_selamanya::tool()]).unwrap())
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Ms {
    /// Lama menunggu dalam milidetik
    ms: u64,
}

/// The same two tools on rmcp alone.
#[derive(Clone)]
struct RmcpServer {
    tool_router: ToolRouter<Self>,
}

#[rmcp::tool_router]
impl RmcpServer {
    /// Tunggu sebentar lalu kembalikan berapa lama menunggu.
    #[rmcp::tool(name = "tunggu_sebentar")]
    async fn tunggu_sebentar(&self, Parameters(Ms { ms }): Parameters<Ms>) -> String {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        ms.to_string()
    }

    /// Tunggu selamanya; tidak pernah selesai.
    #[rmcp::tool(name = "tunggu_selamanya")]
    async fn tunggu_selamanya(&self) -> String {
        std::future::pending().await
    }
}

#[rmcp::tool_handler(router = self.tool_router)]
impl ServerHandler for RmcpServer {}

fn rmcp_server() -> RmcpServer {
    RmcpServer {
        tool_router: RmcpServer::tool_router(),
    }
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"probe","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// Which transport serves the lines.
#[derive(Clone, Copy, Debug)]
enum Transport {
    /// rmcp's `AsyncRwTransport`, through `serve((reader, writer))`.
    Rmcp,
    /// This toolkit's, through `McpServer::serve_lines`.
    Toolkit,
}

/// Sends `lines` after the handshake, waits `settle`, and returns every answer the server wrote
/// (the handshake's excluded). The input stays open while waiting.
async fn answers(transport: Transport, lines: &[String], settle: Duration) -> Vec<Value> {
    let (client, server_io) = tokio::io::duplex(64 * 1024 * 1024);
    let (server_read, server_write) = tokio::io::split(server_io);
    let task = tokio::spawn(async move {
        match transport {
            Transport::Rmcp => {
                if let Ok(service) = rmcp_server().serve((server_read, server_write)).await {
                    let _ = service.waiting().await;
                }
            }
            Transport::Toolkit => {
                let _ = server().serve_lines(server_read, server_write).await;
            }
        }
    });
    let (client_read, mut client_write) = tokio::io::split(client);
    let reader = tokio::spawn(read_all(client_read));
    for line in [INIT, INITIALIZED]
        .iter()
        .map(|s| s.to_string())
        .chain(lines.iter().cloned())
    {
        client_write.write_all(line.as_bytes()).await.unwrap();
        client_write.write_all(b"\n").await.unwrap();
    }
    tokio::time::sleep(settle).await;
    // The server reads the end of its input.
    client_write.shutdown().await.unwrap();
    let finished = tokio::time::timeout(Duration::from_secs(10), task).await;
    assert!(
        finished.is_ok(),
        "{transport:?}: the server ends when its input does"
    );
    let mut out = tokio::time::timeout(Duration::from_secs(10), reader)
        .await
        .expect("the server's output ends")
        .unwrap();
    out.retain(|a| a["id"] != 0);
    out
}

async fn read_all(read: tokio::io::ReadHalf<DuplexStream>) -> Vec<Value> {
    let mut lines = BufReader::new(read).lines();
    let mut out = Vec::new();
    while let Ok(Some(l)) = lines.next_line().await {
        out.push(serde_json::from_str(&l).unwrap_or(Value::String(l)));
    }
    out
}

fn call(id: i64, ms: u64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "tunggu_sebentar", "arguments": {"ms": ms}}})
    .to_string()
}

fn with_id(answers: &[Value], id: Value) -> Vec<&Value> {
    answers.iter().filter(|a| a["id"] == id).collect()
}

#[tokio::test]
async fn a_line_that_is_not_json() {
    let lines = ["this is not json".to_owned(), call(1, 0)];
    // rmcp ignores it (rust-sdk#938): the client gets nothing for that line.
    let rmcp = answers(Transport::Rmcp, &lines, Duration::from_millis(300)).await;
    assert_eq!(rmcp.len(), 1, "{rmcp:#?}");
    let ours = answers(Transport::Toolkit, &lines, Duration::from_millis(300)).await;
    let parse_errors: Vec<_> = with_id(&ours, Value::Null);
    assert_eq!(parse_errors.len(), 1, "{ours:#?}");
    assert_eq!(parse_errors[0]["error"]["code"], -32700);
    assert_eq!(with_id(&ours, json!(1)).len(), 1);
}

#[tokio::test]
async fn a_line_over_the_size_limit() {
    let huge = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "tunggu_sebentar", "arguments": {"pad": "a".repeat(17 * 1024 * 1024)}}})
    .to_string();
    let lines = [huge, call(3, 0)];
    // rmcp drops a line over 16 MiB (`async_rw.rs`, `Step::Oversized`) without an answer.
    let rmcp = answers(Transport::Rmcp, &lines, Duration::from_millis(500)).await;
    assert!(with_id(&rmcp, json!(2)).is_empty(), "{rmcp:#?}");
    let ours = answers(Transport::Toolkit, &lines, Duration::from_millis(500)).await;
    let answer = with_id(&ours, json!(2));
    assert_eq!(answer.len(), 1);
    assert_eq!(answer[0]["error"]["code"], -32600);
}

#[tokio::test]
async fn arguments_that_are_not_an_object() {
    let lines = [json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "tunggu_sebentar", "arguments": [1]}})
    .to_string()];
    // The toolkit's transport answers "invalid params", naming `arguments`.
    for transport in [Transport::Toolkit] {
        let got = answers(transport, &lines, Duration::from_millis(300)).await;
        let error = &with_id(&got, json!(4))[0]["error"];
        assert_eq!(error["code"], -32602, "{got:#?}");
        assert!(
            error["message"].as_str().unwrap().contains("`arguments`"),
            "{got:#?}"
        );
    }
}

#[tokio::test]
async fn two_requests_in_flight_with_one_id() {
    let lines = [call(5, 300), call(5, 0)];
    // rmcp lets the second replace the first: one of the two never gets its own answer.
    let rmcp = answers(Transport::Rmcp, &lines, Duration::from_millis(800)).await;
    assert_eq!(with_id(&rmcp, json!(5)).len(), 1, "{rmcp:#?}");
    // Here the second is refused at once and the first runs to its end: one answer each.
    let ours = answers(Transport::Toolkit, &lines, Duration::from_millis(800)).await;
    let both = with_id(&ours, json!(5));
    assert_eq!(both.len(), 2, "{ours:#?}");
    assert_eq!(both[0]["error"]["code"], -32600);
    assert_eq!(both[1]["result"]["structuredContent"]["result"], 300);
    // A number is not an object: `structuredContent` wraps it, and the text block is that same
    // JSON, as the specification asks.
    let result = &both[1]["result"];
    assert_eq!(
        result["content"][0]["text"].as_str().unwrap(),
        result["structuredContent"].to_string()
    );
}

#[tokio::test]
async fn a_request_still_running_when_input_closes() {
    let forever = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "tunggu_selamanya", "arguments": {}}})
    .to_string();
    let lines = [call(6, 1000), forever];
    let settle = Duration::from_millis(50);
    let (rmcp, ours) = tokio::join!(
        answers(Transport::Rmcp, &lines, settle),
        answers(Transport::Toolkit, &lines, settle)
    );
    // After its input closes, rmcp waits 5 s for answers, then drops the requests still running.
    assert_eq!(with_id(&rmcp, json!(6)).len(), 1, "{rmcp:#?}");
    assert!(with_id(&rmcp, json!(7)).is_empty(), "{rmcp:#?}");
    // This transport answers them when it closes.
    assert_eq!(with_id(&ours, json!(6)).len(), 1, "{ours:#?}");
    let stopped = with_id(&ours, json!(7));
    assert_eq!(stopped.len(), 1, "{ours:#?}");
    assert_eq!(stopped[0]["error"]["code"], -32603);
}
