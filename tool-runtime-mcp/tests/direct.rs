//! Stateless 2026-07-28 requests the HTTP server answers itself (`http/direct.rs`) get the
//! answer rmcp's endpoint gives, byte for byte: each request is sent twice, once plainly and
//! once with an allowed `Origin` header (which sends it through rmcp's endpoint), and the
//! statuses and bodies compared. The tasks alive while a tool runs show which path answered.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tool_runtime::{ToolSet, tool};
use tool_runtime_mcp::McpServer;
use tool_runtime_mcp::http::HttpServer;

/// The runtime's tasks alive during the last call of `tasks_alive`.
static TASKS: AtomicUsize = AtomicUsize::new(0);

#[tool(description = "Count the runtime's tasks alive while the call runs.")]
async fn tasks_alive() -> u8 {
    TASKS.store(
        tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks(),
        Ordering::SeqCst,
    );
    1
}

#[tool(description = "Return the leave days left of an employee.")]
fn leave_left(#[arg(description = "The employee's number", length = 5..=5)] nik: String) -> u8 {
    nik.len() as u8 + 2
}

#[tool(
    description = "Book a day of leave; a person approves it first.",
    needs_approval
)]
fn book_leave() -> String {
    "booked".into()
}

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}"#;

/// A `tools/call` of `name` with `arguments`.
fn call(name: &str, arguments: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{{META},"name":"{name}","arguments":{arguments}}}}}"#
    )
}

/// The status and body of one POST of `body` with the headers a 2026-07-28 client sends, and
/// `extra` headers.
async fn post(addr: SocketAddr, body: &str, extra: &str) -> (u16, String) {
    let envelope: serde_json::Value = serde_json::from_str(body).unwrap();
    let method = envelope["method"].as_str().unwrap();
    // The name from the body, unless `extra` gives its own.
    let name = envelope["params"]["name"]
        .as_str()
        .filter(|_| !extra.contains("Mcp-Name"))
        .map(|n| format!("Mcp-Name: {n}\r\n"))
        .unwrap_or_default();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n{name}{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        addr.port(),
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8(answer).unwrap();
    let status = answer[9..12].parse().unwrap();
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

/// Sent through rmcp's endpoint: a browser's `Origin` (an allowed one) is left to rmcp.
const THROUGH_RMCP: &str = "Origin: http://localhost:3000\r\n";

async fn server() -> SocketAddr {
    let tools =
        ToolSet::new([tasks_alive::tool(), leave_left::tool(), book_leave::tool()]).unwrap();
    let bound = HttpServer::new(McpServer::new(tools).with_page_size(2))
        .bind("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let addr = bound.local_addr().unwrap();
    tokio::spawn(bound.serve());
    addr
}

/// The answer without what differs between two answers of one request (a new `requestState`).
fn comparable(body: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(body) {
        Ok(mut v) => {
            if let Some(state) = v.pointer_mut("/result/requestState") {
                *state = "…".into();
            }
            v.to_string()
        }
        Err(_) => body.to_owned(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn direct_answers_are_the_ones_rmcp_gives() {
    let addr = server().await;
    let list = |extra: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{{{META}{extra}}}}}"#)
    };
    let requests = [
        ("tools/list", list("")),
        ("tools/list, second page", list(r#","cursor":"o2""#)),
        (
            "tools/list, a cursor it never gave",
            list(r#","cursor":"zz""#),
        ),
        ("a call", call("leave_left", r#"{"nik":"K-001"}"#)),
        (
            "arguments that break the rules",
            call("leave_left", r#"{"nik":25}"#),
        ),
        ("no arguments", call("leave_left", "{}")),
        ("an unknown tool", call("leave_lef", "{}")),
        ("a call that needs approval", call("book_leave", "{}")),
    ];
    for (what, body) in &requests {
        let direct = post(addr, body, "").await;
        let rmcp = post(addr, body, THROUGH_RMCP).await;
        assert_eq!(direct.0, rmcp.0, "{what}: status");
        assert_eq!(comparable(&direct.1), comparable(&rmcp.1), "{what}: body");
        assert!(direct.1.starts_with('{'), "{what}: {}", direct.1);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_stateless_calls_are_answered_without_rmcps_tasks() {
    let addr = server().await;
    let body = call("tasks_alive", "{}");
    // The fewest tasks alive during a call, over a few calls each way (an earlier request's
    // tasks may still be ending).
    let fewest = |extra: &'static str| {
        let body = body.clone();
        async move {
            let mut fewest = usize::MAX;
            for _ in 0..5 {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                post(addr, &body, extra).await;
                fewest = fewest.min(TASKS.load(Ordering::SeqCst));
            }
            fewest
        }
    };
    let rmcp = fewest(THROUGH_RMCP).await;
    let direct = fewest("").await;
    // rmcp runs a service task for the request, and the handler in a task of its own.
    assert!(
        direct < rmcp,
        "direct: {direct} tasks, through rmcp: {rmcp}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_the_direct_path_does_not_plainly_accept_keep_rmcps_answers() {
    let addr = server().await;
    let body = call("leave_left", r#"{"nik":"K-001"}"#);
    // A header that contradicts the body: rmcp's 400.
    let (status, answer) = post(addr, &body, "Mcp-Name: other\r\n").await;
    assert_eq!(status, 400, "{answer}");
    assert!(answer.contains("does not match"), "{answer}");
    // A host the server does not answer to: rmcp's 403.
    let request = body.clone();
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let raw = format!(
        "POST /mcp HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: leave_left\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{request}",
        request.len()
    );
    stream.write_all(raw.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
    // A progress token: rmcp streams the answer.
    let with_token = body.replace(r#""_meta":{"#, r#""_meta":{"progressToken":"p1","#);
    let (status, answer) = post(addr, &with_token, "").await;
    assert_eq!(status, 200);
    assert!(
        answer.contains(r#""structuredContent""#) || answer.contains("7"),
        "{answer}"
    );
}

/// One raw request: `head` is the request line and headers (without `Content-Length`).
async fn raw(addr: SocketAddr, head: &str, body: &str) -> String {
    let request = format!(
        "{head}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    answer
}

/// The headers of a plain stateless call of `name`, on `path`, with `accept`.
fn head(addr: SocketAddr, path: &str, accept: &str, name: &str) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: {accept}\r\nMcp-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: {name}\r\n",
        addr.port()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_router_or_rmcp_refuses_the_direct_path_refuses_too() {
    let addr = server().await;
    let both = "application/json, text/event-stream";
    let body = call("leave_left", r#"{"nik":"K-001"}"#);
    // Only the endpoint's path is answered: another is the router's 404.
    let answer = raw(addr, &head(addr, "/elsewhere", both, "leave_left"), &body).await;
    assert!(answer.starts_with("HTTP/1.1 404"), "{answer}");
    // A quoted comma in `Accept` is read as rmcp reads it: not both types, 406.
    let quoted = format!("\"x, {both}");
    let answer = raw(addr, &head(addr, "/mcp", &quoted, "leave_left"), &body).await;
    assert!(answer.starts_with("HTTP/1.1 406"), "{answer}");
    // A name that reads as an encoded header value: rmcp decodes the header, which then
    // differs from the body (400).
    let encoded = "=?base64?bGVhdmVfbGVmdA==?=";
    let answer = raw(
        addr,
        &head(addr, "/mcp", both, encoded),
        &call(encoded, "{}"),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");

    // A list of blank host names allows none (an empty list would allow any).
    let tools = ToolSet::new([leave_left::tool()]).unwrap();
    let bound = HttpServer::new(McpServer::new(tools))
        .configure(|c| c.allowed_hosts = vec![" ".into()])
        .bind("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let blank = bound.local_addr().unwrap();
    tokio::spawn(bound.serve());
    let answer = raw(blank, &head(blank, "/mcp", both, "leave_left"), &body).await;
    assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
}
