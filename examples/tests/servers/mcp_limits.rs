//! Bounded work and safe HTTP, on servers built here with tools made to be slow: time limits,
//! cancellation, sync tools off the async workers, per-server and per-caller limits, strict
//! approval answers, and the HTTP server's caps (sessions, bodies, headers, connections),
//! malformed JSON and shutdown. Stdio runs over in-memory pipes; HTTP over real sockets.

use crate::common;

use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::{Conn, Session};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tool_runtime::{ToolSet, tool};
use tool_runtime_mcp::http::{HttpConfig, HttpServer};
use tool_runtime_mcp::{Limits, McpServer};

/// Tags of `tunggu` calls that started, and of those whose future was dropped unfinished.
static STARTED: Mutex<Vec<String>> = Mutex::new(Vec::new());
static DROPPED: Mutex<Vec<String>> = Mutex::new(Vec::new());
static APPROVED_RUNS: AtomicUsize = AtomicUsize::new(0);
/// `tidur` calls sleeping right now.
static SLEEPING: AtomicUsize = AtomicUsize::new(0);
/// `kerja` calls working right now.
static WORKING: AtomicUsize = AtomicUsize::new(0);

struct OnDrop(String, bool);

impl Drop for OnDrop {
    fn drop(&mut self) {
        if !self.1 {
            DROPPED.lock().unwrap().push(self.0.clone());
        }
    }
}

#[tool(
    name = "tunggu",
    description = "Tunggu beberapa milidetik lalu kembalikan true; alat uji untuk batas waktu dan pembatalan."
)]
async fn tunggu(
    #[arg(description = "Lama menunggu dalam milidetik", range = 0..=60_000)] ms: u64,
    #[arg(description = "Penanda panggilan untuk pengujian")] tag: String,
) -> bool {
    STARTED.lock().unwrap().push(tag.clone());
    let mut guard = OnDrop(tag, false);
    tokio::time::sleep(Duration::from_millis(ms)).await;
    guard.1 = true;
    true
}

#[tool(
    name = "tidur",
    description = "Tidur (memblokir thread) beberapa milidetik lalu kembalikan true; alat uji untuk alat sinkron."
)]
fn tidur(#[arg(description = "Lama tidur dalam milidetik", range = 0..=60_000)] ms: u64) -> bool {
    SLEEPING.fetch_add(1, Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(ms));
    SLEEPING.fetch_sub(1, Ordering::SeqCst);
    true
}

#[tool(
    name = "kerja",
    description = "Bekerja (memblokir thread) beberapa milidetik; alat uji untuk alat sinkron yang biasanya cepat."
)]
fn kerja(#[arg(description = "Lama bekerja dalam milidetik", range = 0..=60_000)] ms: u64) -> bool {
    WORKING.fetch_add(1, Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(ms));
    WORKING.fetch_sub(1, Ordering::SeqCst);
    true
}

#[tool(
    name = "lambat",
    description = "Selalu lebih lama dari batas waktunya; alat uji untuk batas waktu per alat.",
    timeout = "200ms"
)]
async fn lambat() -> bool {
    tokio::time::sleep(Duration::from_secs(30)).await;
    true
}

#[tool(
    name = "hapus-data",
    description = "Hapus data uji; menunggu persetujuan seseorang sebelum dijalankan.",
    needs_approval,
    destructive
)]
fn hapus_data() -> bool {
    APPROVED_RUNS.fetch_add(1, Ordering::SeqCst);
    true
}

fn tools() -> ToolSet {
    ToolSet::new([
        tunggu::tool(),
        tidur::tool(),
        kerja::tool(),
        lambat::tool(),
        hapus_data::tool(),
    ])
    .unwrap()
}

/// A stdio client on in-memory pipes: writes lines, reads the server's lines.
struct Client {
    to_server: Option<tokio::io::DuplexStream>,
    from_server: tokio::io::Lines<BufReader<tokio::io::DuplexStream>>,
    served: tokio::task::JoinHandle<()>,
}

impl Client {
    async fn start(server: McpServer, elicitation: bool) -> Client {
        let (to_server, server_in) = tokio::io::duplex(1 << 16);
        let (server_out, from_server) = tokio::io::duplex(1 << 16);
        let served = tokio::spawn(async move {
            server.serve_lines(server_in, server_out).await.unwrap();
        });
        let mut client = Client {
            to_server: Some(to_server),
            from_server: BufReader::new(from_server).lines(),
            served,
        };
        let capabilities = if elicitation {
            json!({"elicitation": {"form": {}}})
        } else {
            json!({})
        };
        client
            .send(
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": capabilities,
                "clientInfo": {"name": "limits", "version": "0"}}}),
            )
            .await;
        client.next().await;
        client
            .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        client
    }

    async fn send(&mut self, message: Value) {
        self.send_text(&message.to_string()).await;
    }

    async fn send_text(&mut self, line: &str) {
        let w = self.to_server.as_mut().unwrap();
        w.write_all(line.as_bytes()).await.unwrap();
        w.write_all(b"\n").await.unwrap();
    }

    async fn call(&mut self, id: u64, tool: &str, arguments: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}))
            .await;
    }

    /// The server's next line (within 20 s).
    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(20), self.from_server.next_line())
            .await
            .expect("the server answers in time")
            .unwrap()
            .expect("the server is still writing");
        serde_json::from_str(&line).unwrap()
    }

    /// Closes the input and returns every line the server still writes.
    async fn close(mut self) -> Vec<Value> {
        self.to_server = None;
        let mut rest = Vec::new();
        while let Ok(Ok(Some(line))) =
            tokio::time::timeout(Duration::from_secs(20), self.from_server.next_line()).await
        {
            rest.push(serde_json::from_str(&line).unwrap());
        }
        self.served.await.unwrap();
        rest
    }
}

fn limits(f: impl FnOnce(&mut Limits)) -> Limits {
    let mut limits = Limits::default();
    f(&mut limits);
    limits
}

fn is_error_saying(answer: &Value, words: &str) -> bool {
    answer["result"]["isError"] == true
        && answer["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains(words))
}

async fn until(what: &str, done: impl Fn() -> bool) {
    for _ in 0..400 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("never happened: {what}");
}

#[tokio::test]
async fn a_call_past_its_time_limit_is_a_tool_error() {
    let limits = limits(|l| {
        l.call_timeout = Duration::from_millis(300);
    });
    let mut c = Client::start(McpServer::new(tools()).with_limits(limits), false).await;
    c.call(1, "lambat", json!({})).await;
    let by_attribute = c.next().await;
    assert!(is_error_saying(&by_attribute, "0.2 s"), "{by_attribute}");
    c.call(2, "tunggu", json!({"ms": 10_000, "tag": "timeout"}))
        .await;
    let by_default = c.next().await;
    assert!(is_error_saying(&by_default, "0.3 s"), "{by_default}");
    assert!(DROPPED.lock().unwrap().contains(&"timeout".to_owned()));
    c.close().await;
}

#[tokio::test]
async fn a_cancelled_call_drops_the_tools_future() {
    let mut c = Client::start(McpServer::new(tools()), false).await;
    c.call(7, "tunggu", json!({"ms": 30_000, "tag": "cancel-me"}))
        .await;
    until("the call started", || {
        STARTED.lock().unwrap().contains(&"cancel-me".to_owned())
    })
    .await;
    c.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 7, "reason": "user pressed stop"}}),
    )
    .await;
    until("the tool's future was dropped", || {
        DROPPED.lock().unwrap().contains(&"cancel-me".to_owned())
    })
    .await;
    c.send(json!({"jsonrpc": "2.0", "id": 8, "method": "ping"}))
        .await;
    let next = c.next().await;
    assert_eq!(next["id"], 8, "a cancelled request is not answered: {next}");
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn sync_tools_do_not_hold_the_async_workers() {
    let mut c = Client::start(McpServer::new(tools()), false).await;
    for id in 1..=4 {
        c.call(id, "tidur", json!({"ms": 1500})).await;
    }
    until("a sync tool sleeps", || SLEEPING.load(Ordering::SeqCst) > 0).await;
    c.send(json!({"jsonrpc": "2.0", "id": 99, "method": "ping"}))
        .await;
    let first = c.next().await;
    assert_eq!(
        first["id"], 99,
        "the ping is answered while sync tools sleep on a one-worker runtime: {first}"
    );
    // On the blocking threads they overlap (each sleeps 1.5 s); on the worker they could not.
    // A loaded machine may start the last ones a moment later: wait for them, not for luck.
    until("all four sleep at once, none of them on the worker", || {
        SLEEPING.load(Ordering::SeqCst) == 4
    })
    .await;
    let mut rest: Vec<u64> = Vec::new();
    for _ in 0..4 {
        let a = c.next().await;
        assert_eq!(
            a["result"]["structuredContent"],
            json!({"result": true}),
            "{a}"
        );
        rest.push(a["id"].as_u64().unwrap());
    }
    rest.sort();
    assert_eq!(rest, [1, 2, 3, 4]);
    c.close().await;
}

/// A sync tool whose calls have proven fast runs on the worker that received the call, but a
/// worker always stays free: when it turns slow, its calls sleep on the blocking pool beside the
/// one on a worker, and a ping is answered meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fast_sync_tool_turned_slow_holds_at_most_all_workers_but_one() {
    let mut c = Client::start(McpServer::new(tools()), false).await;
    for id in 1..=80 {
        c.call(id, "kerja", json!({"ms": 0})).await;
        assert_eq!(c.next().await["result"]["isError"], false);
    }
    for id in 101..=104 {
        c.call(id, "kerja", json!({"ms": 1500})).await;
    }
    until("all four work at once: at most one on a worker", || {
        WORKING.load(Ordering::SeqCst) == 4
    })
    .await;
    c.send(json!({"jsonrpc": "2.0", "id": 99, "method": "ping"}))
        .await;
    let first = c.next().await;
    assert_eq!(first["id"], 99, "the ping waits for no call: {first}");
    for _ in 0..4 {
        assert_eq!(c.next().await["result"]["isError"], false);
    }
    c.close().await;
}

#[tokio::test]
async fn calls_beyond_the_limits_wait_then_are_refused_as_busy() {
    for limits in [
        limits(|l| {
            l.calls_per_caller = 1;
            l.queue_wait = Duration::from_millis(100);
        }),
        limits(|l| {
            l.concurrent_calls = 1;
            l.queue_wait = Duration::from_millis(100);
        }),
    ] {
        let mut c = Client::start(McpServer::new(tools()).with_limits(limits), false).await;
        c.call(1, "tunggu", json!({"ms": 1000, "tag": "busy-1"}))
            .await;
        c.call(2, "tunggu", json!({"ms": 1000, "tag": "busy-2"}))
            .await;
        let first = c.next().await;
        assert_eq!(first["id"], 2, "{first}");
        assert!(is_error_saying(&first, "busy"), "{first}");
        let second = c.next().await;
        assert_eq!(second["result"]["isError"], false, "{second}");
        c.close().await;
    }
}

/// Answers the server's elicitation with `answer` (a raw line), and returns the call's answer.
async fn approve_with(answer: impl Fn(&Value) -> String) -> Value {
    let mut c = Client::start(McpServer::new(tools()), true).await;
    c.call(1, "hapus-data", json!({})).await;
    let asked = c.next().await;
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    c.send_text(&answer(&asked["id"])).await;
    let answered = c.next().await;
    c.close().await;
    answered
}

#[tokio::test]
async fn only_exactly_approve_true_approves() {
    let before = APPROVED_RUNS.load(Ordering::SeqCst);
    let accept = |content: &str| {
        let content = content.to_owned();
        move |id: &Value| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"action":"accept","content":{content}}}}}"#
            )
        }
    };
    for content in [
        "[true]",
        r#"{"approve":"true"}"#,
        r#"{"approve":1}"#,
        r#"{"approve":false}"#,
        r#"{"approve":false,"approve":true}"#,
        r#"{"approve":true,"approve":true}"#,
        r#"{"approve":true,"and":"more"}"#,
    ] {
        let answered = approve_with(accept(content)).await;
        assert_eq!(answered["result"]["isError"], true, "{content}: {answered}");
        assert_eq!(
            APPROVED_RUNS.load(Ordering::SeqCst),
            before,
            "{content} ran the tool"
        );
    }
    let answered = approve_with(accept(r#"{"approve":true}"#)).await;
    assert_eq!(answered["result"]["isError"], false, "{answered}");
    assert_eq!(APPROVED_RUNS.load(Ordering::SeqCst), before + 1);
}

#[tokio::test]
async fn a_call_waiting_for_approval_is_answered_when_the_input_closes() {
    let held = std::sync::Arc::new(tool_runtime::MemoryApprovals::new());
    let server = McpServer::new(tools().with_approvals(held.clone()));
    let mut c = Client::start(server, true).await;
    c.call(5, "hapus-data", json!({})).await;
    let asked = c.next().await;
    assert_eq!(asked["method"], "elicitation/create");
    let rest = c.close().await;
    let answers: Vec<&Value> = rest.iter().filter(|m| m["id"] == 5).collect();
    assert_eq!(answers.len(), 1, "exactly one answer: {rest:?}");
    // The client is gone: the transport answers for the server, saying nothing more happens.
    assert!(
        answers[0]["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("stopped before this request finished")),
        "{rest:?}"
    );
    // And nothing more can: the call held for the approval was dropped, not left to expire.
    assert!(held.is_empty(), "{} calls still held", held.len());
}

/// A stdio session that began without `initialize` (2026-07-28: each request carries its
/// version and capabilities in `_meta`) keeps its requests on rmcp even after a later
/// `initialize`: a call without `_meta` is refused as rmcp refuses it, not run.
#[tokio::test]
async fn a_call_without_meta_in_a_session_begun_without_initialize_is_refused() {
    let (mut to_server, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, from_server) = tokio::io::duplex(1 << 16);
    let served = tokio::spawn(async move {
        let _ = McpServer::new(tools())
            .serve_lines(server_in, server_out)
            .await;
    });
    let mut lines = BufReader::new(from_server).lines();
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "inline", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "tunggu", "arguments": {"ms": 0, "tag": "inline"}, "_meta": meta}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "late", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "tunggu", "arguments": {"ms": 0, "tag": "inline-bare"}}}),
    ] {
        to_server
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
        let line = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        let answer: Value = serde_json::from_str(&line).unwrap();
        match message["id"].as_u64() {
            Some(1) => assert_eq!(answer["result"]["isError"], false, "{answer}"),
            Some(3) => assert_eq!(answer["error"]["code"], -32602, "{answer}"),
            _ => {}
        }
    }
    drop(to_server);
    served.await.unwrap();
}

/// When the input ends, the calls still running have rmcp's five seconds to finish: a short one
/// is answered with its result, a long one is dropped and answered as unfinished; each once.
#[tokio::test]
async fn calls_running_when_the_input_ends_finish_or_are_answered_unfinished() {
    let mut c = Client::start(McpServer::new(tools()), false).await;
    c.call(1, "tunggu", json!({"ms": 500, "tag": "drain-short"}))
        .await;
    c.call(2, "tunggu", json!({"ms": 60_000, "tag": "drain-long"}))
        .await;
    until("both calls started", || {
        let started = STARTED.lock().unwrap();
        ["drain-short", "drain-long"]
            .iter()
            .all(|t| started.contains(&(*t).to_owned()))
    })
    .await;
    let rest = c.close().await;
    let answers = |id: u64| rest.iter().filter(|m| m["id"] == id).collect::<Vec<_>>();
    let (short, long) = (answers(1), answers(2));
    assert_eq!(
        (short.len(), long.len()),
        (1, 1),
        "one answer each: {rest:?}"
    );
    assert_eq!(
        short[0]["result"]["structuredContent"],
        json!({"result": true}),
        "{rest:?}"
    );
    assert!(
        long[0]["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("stopped before this request finished")),
        "{rest:?}"
    );
    assert!(DROPPED.lock().unwrap().contains(&"drain-long".to_owned()));
}

// --- HTTP ---

/// An HTTP server on a free loopback port, serving until the returned sender is dropped.
async fn http(
    mcp: McpServer,
    config: impl FnOnce(&mut HttpConfig),
) -> (
    std::net::SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
) {
    let bound = HttpServer::new(mcp)
        .configure(config)
        .bind("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let addr = bound.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(async move {
        bound
            .serve_until(async {
                let _ = stopped.await;
            })
            .await
            .unwrap();
    });
    (addr, stop, served)
}

#[tokio::test]
async fn sessions_are_capped_and_nothing_is_kept_once_they_end() {
    let mcp = McpServer::new(tools());
    let (addr, _stop, _) = http(mcp.clone(), |c| c.max_sessions = 2).await;
    let mut one = Session::open(addr, None).await.unwrap();
    let _two = Session::open(addr, None).await.unwrap();
    // Full: the newcomer is not refused; the oldest session of the caller with the most (here
    // the only caller) gives way.
    let mut three = Session::open(addr, None)
        .await
        .expect("a third session opens");
    until("the oldest session is closed", || mcp.connected() == 2).await;
    let gone = one.request("tools/list", json!({})).await;
    assert_eq!(gone.status, 404, "{gone:?}");
    assert_eq!(three.tool_names().await.len(), 5);
    let closed = three.close().await;
    assert!(closed.status < 300, "{closed:?}");
    until("the closed session is forgotten", || mcp.connected() == 1).await;
}

#[tokio::test]
async fn bodies_are_limited_and_malformed_json_is_a_parse_error() {
    let (addr, _stop, _) = http(McpServer::new(tools()), |c| c.max_body_bytes = 1024).await;
    let mut conn = Conn::open(addr).await;
    let big =
        json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x".repeat(2000)}});
    let reply = conn.post(&[], &big).await;
    assert_eq!(reply.status, 413, "{reply:?}");
    let mut conn = Conn::open(addr).await;
    let reply = conn
        .send(
            "POST",
            "/mcp",
            &[
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
            ],
            "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ",
        )
        .await;
    assert_eq!(reply.status, 400, "{reply:?}");
    assert_eq!(reply.json()["error"]["code"], -32700, "{reply:?}");
}

/// A connection that starts a request and never finishes its headers.
async fn slow_connection(addr: std::net::SocketAddr) -> tokio::net::TcpStream {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        .await
        .unwrap();
    s
}

/// Whether the server closes `s` within `within` (end of stream, a reset, or a 408 first).
async fn closed_by_server(s: &mut tokio::net::TcpStream, within: Duration) -> bool {
    use tokio::io::AsyncReadExt;
    let mut buf = [0; 1024];
    match tokio::time::timeout(within, s.read(&mut buf)).await {
        Err(_) => false,
        Ok(Ok(0) | Err(_)) => true,
        Ok(Ok(n)) => String::from_utf8_lossy(&buf[..n]).contains("408"),
    }
}

#[tokio::test]
async fn slow_headers_are_cut_off() {
    let (addr, _stop, _) = http(McpServer::new(tools()), |c| {
        c.header_read_timeout = Duration::from_millis(500);
    })
    .await;
    let mut slow = slow_connection(addr).await;
    assert!(closed_by_server(&mut slow, Duration::from_secs(10)).await);
}

#[tokio::test]
async fn a_full_server_closes_its_oldest_idle_connection_for_a_new_one() {
    let (addr, _stop, _) = http(McpServer::new(tools()), |c| {
        c.header_read_timeout = Duration::from_secs(120);
        c.max_connections = 2;
    })
    .await;
    // Two connections that never finish their headers take both places.
    let mut oldest = slow_connection(addr).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    let mut newer = slow_connection(addr).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    // A real client still gets in, long before the header timeout: the oldest makes room.
    let mut session = tokio::time::timeout(Duration::from_secs(10), Session::open(addr, None))
        .await
        .expect("served without waiting for the slow connections' timeout")
        .unwrap();
    assert!(closed_by_server(&mut oldest, Duration::from_secs(5)).await);
    // Now the newer slow one is the oldest idle: the next connection closes it, not the
    // session's connection while it answers.
    let call = tokio::spawn(async move {
        session
            .call("tunggu", json!({"ms": 500, "tag": "busy-conn"}))
            .await
    });
    until("the call started", || {
        STARTED.lock().unwrap().contains(&"busy-conn".to_owned())
    })
    .await;
    let mut other = Conn::open(addr).await;
    let reply = other.post(&[], &common::initialize()).await;
    assert_eq!(reply.status, 200);
    assert!(closed_by_server(&mut newer, Duration::from_secs(5)).await);
    let answer = call.await.unwrap();
    assert_eq!(
        answer["result"]["isError"], false,
        "the busy connection was kept: {answer}"
    );
}

#[tokio::test]
async fn shutdown_answers_the_calls_in_flight() {
    let mcp = McpServer::new(tools()).with_server_info("shutdown-test", "0");
    let (addr, stop, served) = http(mcp, |_| {}).await;
    let mut s = Session::open(addr, None).await.unwrap();
    let call = tokio::spawn(async move {
        s.call("tunggu", json!({"ms": 800, "tag": "shutdown"}))
            .await
    });
    until("the call started", || {
        STARTED.lock().unwrap().contains(&"shutdown".to_owned())
    })
    .await;
    drop(stop);
    let answer = call.await.unwrap();
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    tokio::time::timeout(Duration::from_secs(15), served)
        .await
        .expect("the server stops")
        .unwrap();
    // No longer accepting: the address is refused, or (the freed port taken meanwhile by
    // another test's server, as happened in CI) whoever answers there is not this server.
    if let Ok(mut other) = tokio::net::TcpStream::connect(addr).await {
        let body = common::initialize().to_string();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let mut answer = Vec::new();
        if other.write_all(request.as_bytes()).await.is_ok() {
            let _ = tokio::time::timeout(
                Duration::from_secs(5),
                tokio::io::AsyncReadExt::read_to_end(&mut other, &mut answer),
            )
            .await;
        }
        let answer = String::from_utf8_lossy(&answer);
        assert!(
            !answer.contains("shutdown-test"),
            "still accepting: {answer}"
        );
    }
}

#[tokio::test]
async fn each_caller_has_its_own_share_over_http() {
    let limits = limits(|l| {
        l.calls_per_caller = 1;
        l.queue_wait = Duration::from_millis(100);
    });
    let (addr, token) = authed(McpServer::new(tools()).with_limits(limits), |_| {}).await;
    let call = |sub: &'static str, tag: &'static str| {
        let token = token(sub);
        tokio::spawn(async move {
            let mut s = Session::open(addr, Some(&token)).await.unwrap();
            s.call("tunggu", json!({"ms": 600, "tag": tag})).await
        })
    };
    let (a1, a2, b) = (
        call("ana", "ana-1"),
        call("ana", "ana-2"),
        call("bo", "bo-1"),
    );
    let (a1, a2, b) = (a1.await.unwrap(), a2.await.unwrap(), b.await.unwrap());
    let busy: HashSet<bool> = [&a1, &a2]
        .iter()
        .map(|a| is_error_saying(a, "busy"))
        .collect();
    assert_eq!(
        busy,
        HashSet::from([true, false]),
        "one of ana's two calls waits too long: {a1} {a2}"
    );
    assert_eq!(
        b["result"]["isError"], false,
        "bo's call is not held up by ana's: {b}"
    );
}

#[tokio::test]
async fn idle_sessions_are_closed() {
    let mcp = McpServer::new(tools());
    let (addr, _stop, _) = http(mcp.clone(), |c| c.session_idle = Duration::from_millis(300)).await;
    let mut s = Session::open(addr, None).await.unwrap();
    assert_eq!(s.tool_names().await.len(), 5, "in use, the session stays");
    until("the idle session is closed", || mcp.connected() == 0).await;
    let gone = s.request("tools/list", json!({})).await;
    assert_eq!(gone.status, 404, "{gone:?}");
}

/// The `data:` events of an open event stream, read as they come.
struct Events {
    body: hyper::body::Incoming,
    buffer: String,
}

impl Events {
    async fn next(&mut self) -> Option<Value> {
        use http_body_util::BodyExt;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let event: String = self.buffer.drain(..end + 2).collect();
                match event.lines().find_map(|l| l.strip_prefix("data:")) {
                    Some(data) if !data.trim().is_empty() => {
                        return serde_json::from_str(data.trim()).ok();
                    }
                    _ => continue,
                }
            }
            let frame = tokio::time::timeout(Duration::from_secs(10), self.body.frame())
                .await
                .expect("an event within 10 s")?
                .ok()?;
            if let Ok(data) = frame.into_data() {
                self.buffer.push_str(&String::from_utf8_lossy(&data));
            }
        }
    }
}

/// A 2026-07-28 `subscriptions/listen` over HTTP, its stream left open.
async fn listen(addr: std::net::SocketAddr, filter: Value) -> Events {
    use hyper_util::rt::TokioIo;
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(connection);
    let body = json!({"jsonrpc": "2.0", "id": 41, "method": "subscriptions/listen", "params": {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        },
        "notifications": filter,
    }});
    let request = http::Request::post("/mcp")
        .header("host", addr.to_string())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "subscriptions/listen")
        .body(http_body_util::Full::new(hyper::body::Bytes::from(
            body.to_string(),
        )))
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    assert_eq!(response.status(), 200);
    Events {
        body: response.into_body(),
        buffer: String::new(),
    }
}

#[tokio::test]
async fn subscriptions_hear_of_tool_changes_and_end_at_shutdown() {
    let mcp = McpServer::new(tools());
    let (addr, stop, served) = http(mcp.clone(), |_| {}).await;
    let mut tools_stream = listen(addr, json!({"toolsListChanged": true})).await;
    let mut prompts_stream = listen(addr, json!({"promptsListChanged": true})).await;
    let ack = tools_stream.next().await.unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        41
    );
    assert_eq!(ack["params"]["notifications"]["toolsListChanged"], true);
    let ack = prompts_stream.next().await.unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");

    mcp.replace_tools(ToolSet::new([tunggu::tool()]).unwrap())
        .await;
    let changed = tools_stream.next().await.unwrap();
    assert_eq!(changed["method"], "notifications/tools/list_changed");
    assert_eq!(
        changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        41
    );
    // Shutdown ends both streams with their result; the prompts stream heard nothing else.
    drop(stop);
    let end = tools_stream.next().await.unwrap();
    assert_eq!(end["id"], 41, "{end}");
    assert!(end.get("result").is_some(), "{end}");
    let end = prompts_stream.next().await.unwrap();
    assert_eq!(end["id"], 41, "the tools change was not sent here: {end}");
    tokio::time::timeout(Duration::from_secs(5), served)
        .await
        .expect("shutdown does not wait for open subscriptions")
        .unwrap();
}

// --- One caller cannot harm another (HTTP) ---

/// An HTTP server with OAuth (an HMAC secret made here), and a token maker for a subject.
async fn authed(
    mcp: McpServer,
    config: impl FnOnce(&mut HttpConfig),
) -> (std::net::SocketAddr, impl Fn(&str) -> String) {
    use tool_runtime_mcp::oauth::{Keys, ResourceServer};
    let secret = common::random_bytes::<32>();
    let bound = HttpServer::new(mcp)
        .with_auth(ResourceServer::new(
            "http://127.0.0.1/mcp",
            "https://login.example.test",
            Keys::hmac_secret(&secret).unwrap(),
        ))
        .configure(config)
        .bind("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let addr = bound.local_addr().unwrap();
    tokio::spawn(bound.serve());
    let token = move |sub: &str| {
        let claims = json!({"iss": "https://login.example.test", "aud": "http://127.0.0.1/mcp",
            "sub": sub, "exp": common::now() + 600});
        jsonwebtoken::encode(
            &jsonwebtoken::Header::default(),
            &claims,
            &jsonwebtoken::EncodingKey::from_secret(&secret).unwrap(),
        )
        .unwrap()
    };
    (addr, token)
}

#[tokio::test]
async fn a_session_answers_only_the_caller_who_opened_it() {
    let (addr, token) = authed(McpServer::new(tools()), |_| {}).await;
    let mut ana = Session::open(addr, Some(&token("ana"))).await.unwrap();
    let ana_session = ana
        .headers
        .iter()
        .find(|(k, _)| k == "mcp-session-id")
        .unwrap()
        .1
        .clone();
    // Bo, with his own valid token and Ana's session id: as if the session did not exist.
    let bo = format!("Bearer {}", token("bo"));
    let headers = [
        ("authorization", bo.as_str()),
        ("mcp-session-id", ana_session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let mut conn = Conn::open(addr).await;
    let call = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "tunggu", "arguments": {"ms": 0, "tag": "bo-in-ana"}}});
    assert_eq!(conn.post(&headers, &call).await.status, 404);
    let answer = json!({"jsonrpc": "2.0", "id": 0, "result": {"action": "accept", "content": {"approve": true}}});
    assert_eq!(conn.post(&headers, &answer).await.status, 404);
    assert_eq!(conn.send("DELETE", "/mcp", &headers, "").await.status, 404);
    // Ana's session is untouched.
    assert_eq!(ana.tool_names().await.len(), 5);
}

#[tokio::test]
async fn a_callers_own_oldest_session_makes_room_never_another_callers() {
    let mcp = McpServer::new(tools());
    let (addr, token) = authed(mcp.clone(), |c| {
        c.max_sessions_per_caller = 2;
        c.max_sessions = 4;
    })
    .await;
    let mut bo = Session::open(addr, Some(&token("bo"))).await.unwrap();
    let mut ana = Vec::new();
    for _ in 0..5 {
        ana.push(
            Session::open(addr, Some(&token("ana")))
                .await
                .expect("never refused"),
        );
    }
    // Ana keeps her two newest; Bo's session is untouched.
    until("ana has two sessions", || mcp.connected() == 3).await;
    assert_eq!(ana[0].request("tools/list", json!({})).await.status, 404);
    assert_eq!(ana[4].tool_names().await.len(), 5);
    assert_eq!(bo.tool_names().await.len(), 5);
    // The server full: the caller with the most gives way for a newcomer.
    let _carl = Session::open(addr, Some(&token("carl"))).await.unwrap();
    let _dina = Session::open(addr, Some(&token("dina"))).await.unwrap();
    assert_eq!(bo.tool_names().await.len(), 5, "bo had one: not his");
    assert_eq!(ana[3].request("tools/list", json!({})).await.status, 404);
}

#[tokio::test]
async fn a_callers_requests_in_progress_are_capped_and_others_go_on() {
    let (addr, token) = authed(McpServer::new(tools()), |c| c.requests_per_caller = 2).await;
    let ana = token("ana");
    let slow = |tag: &'static str| {
        let ana = ana.clone();
        tokio::spawn(async move {
            let mut s = Session::open(addr, Some(&ana)).await.unwrap();
            s.call("tunggu", json!({"ms": 800, "tag": tag})).await
        })
    };
    let (a1, a2) = (slow("cap-1"), slow("cap-2"));
    until("ana's two calls run", || {
        let started = STARTED.lock().unwrap();
        started.contains(&"cap-1".to_owned()) && started.contains(&"cap-2".to_owned())
    })
    .await;
    let refused = Session::open(addr, Some(&ana))
        .await
        .err()
        .expect("over her share");
    assert_eq!(refused.status, 429, "{refused:?}");
    assert!(refused.header("retry-after").is_some());
    let started = std::time::Instant::now();
    let mut bo = Session::open(addr, Some(&token("bo"))).await.unwrap();
    let answer = bo.call("tunggu", json!({"ms": 0, "tag": "bo-fast"})).await;
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert!(
        started.elapsed() < Duration::from_millis(500),
        "bo did not wait for ana"
    );
    assert_eq!(a1.await.unwrap()["result"]["isError"], false);
    assert_eq!(a2.await.unwrap()["result"]["isError"], false);
}

#[tokio::test]
async fn a_body_that_trickles_is_cut_off() {
    let (addr, _stop, _) = http(McpServer::new(tools()), |c| {
        c.body_read_timeout = Duration::from_millis(300);
        c.min_body_rate = 1_000_000;
    })
    .await;
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{")
        .await
        .unwrap();
    let writer = tokio::spawn(async move {
        for _ in 0..100 {
            tokio::time::sleep(Duration::from_millis(50)).await;
            if s.write_all(b" ").await.is_err() {
                return s;
            }
        }
        s
    });
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let mut s = writer.await.unwrap();
    assert!(closed_by_server(&mut s, Duration::from_secs(2)).await);
}

#[tokio::test]
async fn a_body_is_checked_before_it_is_parsed() {
    let (addr, _stop, _) = http(McpServer::new(tools()), |c| c.max_json_values = 10_000).await;
    let mut session = Session::open(addr, None).await.unwrap();
    let headers: Vec<(String, String)> = session.headers.clone();
    let h: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    // 20,000 empty objects: a small body, a large parsed value.
    let many = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"tunggu","arguments":{{"x":[{}]}}}}}}"#,
        vec!["{}"; 20_000].join(",")
    );
    let reply = session
        .conn
        .send("POST", "/mcp", &h_with_json(&h), &many)
        .await;
    assert_eq!(reply.status, 400, "{reply:?}");
    assert!(reply.body.contains("JSON values"), "{}", reply.body);
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":6,"method":"ping","params":{{"x":{}1{}}}}}"#,
        "[".repeat(130),
        "]".repeat(130)
    );
    let reply = session
        .conn
        .send("POST", "/mcp", &h_with_json(&h), &deep)
        .await;
    assert_eq!(reply.status, 400, "{reply:?}");
    assert_eq!(reply.json()["error"]["code"], -32600);
    // A key given twice, however it is spelled, is refused before anything reads it.
    let twice = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"tunggu","arguments":{"ms":0,"tag":"x"},"input\u0052esponses":{"approval":{"action":"accept","content":{"approve":false,"approve":true}}}}}"#;
    let reply = session
        .conn
        .send("POST", "/mcp", &h_with_json(&h), twice)
        .await;
    assert_eq!(reply.status, 400, "{reply:?}");
    assert!(reply.body.contains("more than once"), "{}", reply.body);
    assert_eq!(session.tool_names().await.len(), 5);
}

fn h_with_json<'a>(h: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut all = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ];
    all.extend_from_slice(h);
    all
}

#[tokio::test]
async fn requests_with_one_id_in_one_session_are_answered_at_once() {
    let (addr, _stop, _) = http(McpServer::new(tools()), |_| {}).await;
    let session = Session::open(addr, None).await.unwrap();
    let headers = session.headers.clone();
    let started = std::time::Instant::now();
    let same: Vec<_> = (0..4)
        .map(|i| {
            let headers = headers.clone();
            tokio::spawn(async move {
                let mut conn = Conn::open(addr).await;
                let h: Vec<(&str, &str)> =
                    headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                    "params": {"name": "tunggu", "arguments": {"ms": 400, "tag": format!("same-{i}")}}});
                let reply = conn.post(&h, &call).await;
                (reply.status, std::time::Instant::now())
            })
        })
        .collect();
    let mut ok = 0;
    let mut refused = 0;
    for r in same {
        let (status, at) = r.await.unwrap();
        assert!(
            at - started < Duration::from_secs(1),
            "answered within a second"
        );
        match status {
            200 => ok += 1,
            409 => refused += 1,
            other => panic!("unexpected status {other}"),
        }
    }
    assert_eq!((ok, refused), (1, 3));
}

#[tokio::test]
async fn when_every_connection_is_busy_the_top_callers_oldest_gives_way() {
    let (addr, token) = authed(McpServer::new(tools()), |c| c.max_connections = 3).await;
    let ana = token("ana");
    let mut calls = Vec::new();
    for i in 0..3 {
        let ana = ana.clone();
        calls.push(tokio::spawn(async move {
            let mut s = Session::open(addr, Some(&ana)).await.unwrap();
            s.call("tunggu", json!({"ms": 3000, "tag": format!("hog-{i}")}))
                .await;
        }));
        until("the call runs", || {
            STARTED.lock().unwrap().contains(&format!("hog-{i}"))
        })
        .await;
    }
    // Every place is busy with Ana's calls: Bo still gets in, at once.
    let started = std::time::Instant::now();
    let mut bo = tokio::time::timeout(
        Duration::from_secs(2),
        Session::open(addr, Some(&token("bo"))),
    )
    .await
    .expect("not kept waiting")
    .unwrap();
    assert!(started.elapsed() < Duration::from_secs(1));
    let answer = bo.call("tunggu", json!({"ms": 0, "tag": "bo-conn"})).await;
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    // Ana's oldest connection was closed under her first call (its reader saw the stream cut).
    until("ana's oldest connection is closed", || {
        calls[0].is_finished()
    })
    .await;
    assert!(!calls[2].is_finished(), "her newest is still served");
}

// --- stdio under pipelining ---

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_line_is_answered_once_however_the_lines_interleave() {
    // A writer and a slow reader on small pipes: the writer queue fills, and the transport's own
    // answers (to lines it refuses) compete with the tools' answers for it.
    let (to_server, server_in) = tokio::io::duplex(4096);
    let (server_out, from_server) = tokio::io::duplex(4096);
    let server = McpServer::new(tools()).with_limits(limits(|l| l.max_in_flight = 64));
    let served = tokio::spawn(async move { server.serve_lines(server_in, server_out).await });
    let lines = 30_000u64;
    let writer = tokio::spawn(async move {
        let mut w = to_server;
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "p", "version": "0"}}});
        w.write_all(
            format!(
                "{init}\n{}\n",
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
            )
            .as_bytes(),
        )
        .await
        .unwrap();
        let mut without_id = 0u64;
        for i in 1..=lines {
            let line = match i % 5 {
                0 => format!(
                    r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"tunggu","arguments":{{"ms":0,"tag":"pipe"}}}}}}"#
                ),
                1 => format!(
                    r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"tunggu","arguments":7}}}}"#
                ),
                2 => format!(r#"{{"jsonrpc":"2.0","id":{i},"method":5}}"#),
                3 => {
                    without_id += 1;
                    "this is not json".to_owned()
                }
                _ => format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"ping"}}"#),
            };
            w.write_all(line.as_bytes()).await.unwrap();
            w.write_all(b"\n").await.unwrap();
        }
        (w, without_id)
    });
    let mut reader = BufReader::new(from_server).lines();
    let mut answered: HashSet<u64> = HashSet::new();
    let mut anonymous = 0u64;
    let expected_ids = lines - lines / 5 + 1;
    let mut read = 0u64;
    while (answered.len() as u64) < expected_ids || anonymous < lines / 5 {
        let line = tokio::time::timeout(Duration::from_secs(20), reader.next_line())
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "stalled: {} of {expected_ids} ids, {anonymous} anonymous",
                    answered.len()
                )
            })
            .unwrap()
            .expect("the server is still writing");
        let v: Value = serde_json::from_str(&line).unwrap();
        match v["id"].as_u64() {
            Some(id) => assert!(answered.insert(id), "id {id} answered twice"),
            None => anonymous += 1,
        }
        read += 1;
        if read.is_multiple_of(512) {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
    let (w, without_id) = writer.await.unwrap();
    assert_eq!(anonymous, without_id);
    drop(w);
    if let Ok(Ok(Some(line))) =
        tokio::time::timeout(Duration::from_secs(5), reader.next_line()).await
    {
        panic!("an extra answer: {line}");
    }
    served.await.unwrap().unwrap();
}

/// One caller's slow bodies take its own share of the body budget, counted as the bytes
/// arrive: its excess is refused (429), and another caller's request goes on at once.
#[tokio::test]
async fn a_callers_slow_bodies_take_only_its_own_share() {
    let (addr, token) = authed(McpServer::new(tools()), |c| {
        c.max_body_bytes = 4096;
        c.max_body_bytes_per_caller = 8192;
        c.max_body_bytes_in_flight = 16_384;
        c.body_read_timeout = Duration::from_secs(20);
    })
    .await;
    let mallory = format!("Bearer {}", token("mallory"));
    // Each announces 4,000 bytes and sends 3,000, then nothing.
    let mut stalled = Vec::new();
    let mut refused = 0;
    for _ in 0..4 {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(format!("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: {mallory}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 4000\r\n\r\n").as_bytes())
            .await
            .unwrap();
        s.write_all(&[b' '; 3000]).await.unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut head = [0u8; 12];
        if tokio::time::timeout(
            Duration::from_millis(200),
            tokio::io::AsyncReadExt::read(&mut s, &mut head),
        )
        .await
        .is_ok_and(|n| n.is_ok_and(|n| n > 0) && head.ends_with(b"429"))
        {
            refused += 1;
        }
        stalled.push(s);
    }
    assert_eq!(
        refused, 2,
        "his third and fourth bodies pass his share of 8,192 bytes"
    );
    // Sari is not held up by Mallory's bytes.
    let started = std::time::Instant::now();
    let mut sari = Session::open(addr, Some(&token("sari"))).await.unwrap();
    let answer = sari
        .call("tunggu", json!({"ms": 0, "tag": "sari-body"}))
        .await;
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert!(started.elapsed() < Duration::from_millis(500));
}

/// A caller's large bodies are handled one at a time (their checks and parsing cost CPU in
/// proportion to their size): Ana's second waits for her first, Bo's runs beside them.
#[tokio::test]
async fn a_callers_large_bodies_are_handled_one_at_a_time() {
    let (addr, token) = authed(McpServer::new(tools()), |c| c.large_body_bytes = 2048).await;
    let big = |who: &'static str, n: usize| {
        let bearer = token(who);
        tokio::spawn(async move {
            let mut s = Session::open(addr, Some(&bearer)).await.unwrap();
            let started = std::time::Instant::now();
            let tag = format!("{who}-large-{n}-{}", "x".repeat(4096));
            let answer = s.call("tunggu", json!({"ms": 600, "tag": tag})).await;
            assert_eq!(answer["result"]["isError"], false, "{answer}");
            started.elapsed()
        })
    };
    let (ana1, ana2, bo) = (big("ana", 1), big("ana", 2), big("bo", 1));
    let (ana1, ana2, bo) = (ana1.await.unwrap(), ana2.await.unwrap(), bo.await.unwrap());
    let (first, second) = (ana1.min(ana2), ana1.max(ana2));
    assert!(first < Duration::from_millis(1100), "{first:?}");
    assert!(
        second >= Duration::from_millis(1200),
        "ana's second large call ran beside her first: {second:?}"
    );
    assert!(
        bo < Duration::from_millis(1100),
        "bo waited for ana: {bo:?}"
    );
}

/// The application's context function decides who may open a session, or send a request that
/// needs none: a valid token of someone it does not know opens nothing and runs nothing.
#[tokio::test]
async fn a_token_the_application_refuses_opens_no_session() {
    let mcp = McpServer::new(tools()).with_context(|caller| async move {
        match caller.principal {
            Some(p) if p.subject == "stranger" => {
                Err(tool_runtime_mcp::Refusal::new("not an employee"))
            }
            _ => Ok(tool_runtime::Context::new()),
        }
    });
    let (addr, token) = authed(mcp.clone(), |_| {}).await;
    let refused = Session::open(addr, Some(&token("stranger")))
        .await
        .err()
        .expect("refused at initialize");
    assert_eq!(refused.status, 403, "{refused:?}");
    assert!(format!("{:?}", refused.json()).contains("not an employee"));
    assert_eq!(mcp.connected(), 0, "no session was opened");
    // Nor a request that needs no session.
    let stranger = format!("Bearer {}", token("stranger"));
    let mut conn = Conn::open(addr).await;
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}});
    let headers = [
        ("authorization", stranger.as_str()),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/list"),
    ];
    assert_eq!(conn.post(&headers, &call).await.status, 403);
    // An employee is served.
    let mut ana = Session::open(addr, Some(&token("ana"))).await.unwrap();
    assert_eq!(ana.tool_names().await.len(), 5);
}

/// At the cap, the session that gives way is an idle one (the longest idle of the caller
/// holding the most), never one with a request in progress.
#[tokio::test]
async fn a_busy_session_is_never_closed_to_make_room() {
    let mcp = McpServer::new(tools());
    let (addr, token) = authed(mcp.clone(), |c| c.max_sessions = 2).await;
    let ana = token("ana");
    let mut busy = Session::open(addr, Some(&ana)).await.unwrap();
    let mut idle = Session::open(addr, Some(&ana)).await.unwrap();
    assert_eq!(idle.tool_names().await.len(), 5);
    let running = tokio::spawn(async move {
        let answer = busy
            .call("tunggu", json!({"ms": 1500, "tag": "busy-session"}))
            .await;
        (answer, busy)
    });
    until("the busy session's call runs", || {
        STARTED.lock().unwrap().contains(&"busy-session".to_owned())
    })
    .await;
    // Ana's older session is busy: her idle one makes room for Bo.
    let mut bo = Session::open(addr, Some(&token("bo"))).await.unwrap();
    assert_eq!(bo.tool_names().await.len(), 5);
    assert_eq!(idle.request("tools/list", json!({})).await.status, 404);
    let (answer, mut busy) = running.await.unwrap();
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(
        busy.tool_names().await.len(),
        5,
        "the busy session lives on"
    );
}

/// When other callers' slow calls fill the server's calls in progress, a caller running none
/// still starts at once: the last turns are kept for callers holding nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newcomer_starts_at_once_while_others_fill_the_calls_in_progress() {
    let mcp = McpServer::new(tools()).with_limits(limits(|l| {
        l.concurrent_calls = 16;
        l.calls_per_caller = 4;
    }));
    let (addr, token) = authed(mcp, |c| c.requests_per_caller = 64).await;
    // Five callers, four slow calls each: 20 calls for 16 turns.
    let mut slow = Vec::new();
    for caller in 0..5 {
        let bearer = token(&format!("busy-{caller}"));
        for n in 0..4 {
            let bearer = bearer.clone();
            slow.push(tokio::spawn(async move {
                let mut s = Session::open(addr, Some(&bearer)).await.unwrap();
                s.call(
                    "tunggu",
                    json!({"ms": 3000, "tag": format!("hold-{caller}-{n}")}),
                )
                .await
            }));
        }
    }
    until("the turns are taken", || {
        STARTED
            .lock()
            .unwrap()
            .iter()
            .filter(|t| t.starts_with("hold-"))
            .count()
            >= 14
    })
    .await;
    let started = std::time::Instant::now();
    let mut newcomer = Session::open(addr, Some(&token("newcomer"))).await.unwrap();
    let answer = newcomer
        .call("tunggu", json!({"ms": 0, "tag": "newcomer"}))
        .await;
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "the newcomer waited {:?}",
        started.elapsed()
    );
    for s in slow {
        let answer = s.await.unwrap();
        assert_eq!(answer["result"]["isError"], false, "{answer}");
    }
}

/// Threads of this process now (`/proc/self/task`).
fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_calls_read_ahead_start_at_most_two_threads_per_turn() {
    // Threads are per process: counted in a process of its own.
    let name = "mcp_limits::sync_calls_read_ahead_start_at_most_two_threads_per_turn";
    if !common::alone("THREADS_TEST_ALONE", name).await {
        return;
    }
    // 256 sync calls read ahead (the stdio default), each sleeping 20 ms on a blocking thread:
    // a blocking thread holds its call's turn until it returns, so at most `concurrent_calls`
    // run at once. Tokio reuses idle blocking threads, but a thread hands its turn on just
    // before it is idle again, so the next call may start a thread of its own: at most twice
    // the turns, whatever the number of calls read ahead.
    let turns = 16;
    let server = McpServer::new(tools()).with_limits(limits(|l| {
        l.concurrent_calls = turns;
        l.calls_per_caller = turns;
        l.queue_wait = Duration::from_secs(60);
    }));
    let mut c = Client::start(server, false).await;
    let before = threads();
    let peak = std::sync::Arc::new(AtomicUsize::new(before));
    let sampling = {
        let peak = peak.clone();
        tokio::spawn(async move {
            loop {
                peak.fetch_max(threads(), Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        })
    };
    for id in 1..=256 {
        c.call(id, "tidur", json!({"ms": 20})).await;
    }
    let mut answered = 0;
    while answered < 256 {
        let a = c.next().await;
        assert_eq!(a["result"]["isError"], false, "{a}");
        answered += 1;
    }
    sampling.abort();
    let grew = peak.load(Ordering::SeqCst) - before;
    println!("threads before {before}, grew by {grew} for 256 calls with {turns} turns");
    assert!(
        grew <= 2 * turns,
        "{grew} threads started for {turns} turns"
    );
    assert!(
        grew >= turns / 2,
        "the calls did not overlap: {grew} threads"
    );
    c.close().await;
}

/// A span as a subscriber saw it: its name, fields, and parent.
#[derive(Clone, Debug)]
struct SeenSpan {
    id: u64,
    parent: Option<u64>,
    name: String,
    fields: Vec<(String, String)>,
}

impl SeenSpan {
    fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

struct Capture(std::sync::Arc<Mutex<Vec<SeenSpan>>>);

struct Fields<'a>(&'a mut Vec<(String, String)>);

impl tracing::field::Visit for Fields<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push((field.name().into(), format!("{value:?}")));
    }
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.push((field.name().into(), value.into()));
    }
}

impl<S> tracing_subscriber::Layer<S> for Capture
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        id: &tracing::span::Id,
        ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        let mut fields = Vec::new();
        attrs.record(&mut Fields(&mut fields));
        let parent = ctx
            .span(id)
            .and_then(|s| s.parent())
            .map(|p| p.id().into_u64());
        self.0.lock().unwrap().push(SeenSpan {
            id: id.into_u64(),
            parent,
            name: attrs.metadata().name().into(),
            fields,
        });
    }

    fn on_record(
        &self,
        id: &tracing::span::Id,
        values: &tracing::span::Record<'_>,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) {
        let mut seen = self.0.lock().unwrap();
        if let Some(span) = seen.iter_mut().rev().find(|s| s.id == id.into_u64()) {
            values.record(&mut Fields(&mut span.fields));
        }
    }
}

#[tokio::test]
async fn each_request_is_a_server_span_by_the_mcp_conventions_with_the_tools_span_inside() {
    use tracing_subscriber::layer::SubscriberExt;
    let seen = std::sync::Arc::new(Mutex::new(Vec::new()));
    let _subscriber = tracing::subscriber::set_default(
        tracing_subscriber::registry().with(Capture(seen.clone())),
    );
    // Other tests in this process run without a subscriber: a callsite they reached first may
    // have cached "no interest"; ask every callsite again now that this one is set.
    tracing::callsite::rebuild_interest_cache();
    let mut c = Client::start(McpServer::new(tools()), false).await;
    c.call(1, "tidur", json!({"ms": 1})).await;
    assert_eq!(c.next().await["result"]["isError"], false);
    c.call(2, "tidur", json!({"ms": -1})).await;
    assert_eq!(c.next().await["result"]["isError"], true);
    c.call(3, "tiada", json!({})).await;
    assert_eq!(c.next().await["error"]["code"], -32602);
    c.close().await;
    let seen = seen.lock().unwrap().clone();
    let server = |id: &str| {
        seen.iter()
            .find(|s| s.name == "mcp.server" && s.field("jsonrpc.request.id") == Some(id))
            .unwrap_or_else(|| panic!("no server span for request {id}: {seen:#?}"))
    };
    let ok = server("1");
    for (name, value) in [
        ("otel.name", "tools/call tidur"),
        ("otel.kind", "server"),
        ("mcp.method.name", "tools/call"),
        ("mcp.protocol.version", "2025-11-25"),
        ("network.transport", "pipe"),
        ("gen_ai.tool.name", "tidur"),
        ("gen_ai.operation.name", "execute_tool"),
    ] {
        assert_eq!(ok.field(name), Some(value), "{name}: {ok:#?}");
    }
    assert_eq!(ok.field("error.type"), None, "{ok:#?}");
    // The tool's own span (on a blocking thread) is the request span's child.
    let tool = seen
        .iter()
        .find(|s| s.name == "execute_tool" && s.parent == Some(ok.id))
        .unwrap_or_else(|| panic!("no execute_tool span under the request: {seen:#?}"));
    assert_eq!(tool.field("otel.name"), Some("execute_tool tidur"));
    let failed = server("2");
    assert_eq!(failed.field("error.type"), Some("tool_error"));
    assert_eq!(failed.field("otel.status_code"), Some("ERROR"));
    // An unknown tool is the caller's mistake (invalid params), not the server's failure: its
    // code is recorded, but no error.type and no ERROR (the conventions' server side).
    let unknown = server("3");
    assert_eq!(unknown.field("error.type"), None, "{unknown:#?}");
    assert_eq!(unknown.field("otel.status_code"), None, "{unknown:#?}");
    assert_eq!(unknown.field("rpc.response.status_code"), Some("-32602"));
    assert_eq!(unknown.field("otel.name"), Some("tools/call tiada"));
}
