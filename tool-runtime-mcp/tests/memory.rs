//! What one request costs in memory on the HTTP server, counted by this binary's allocator: a
//! small multiple of its body, whatever its shape and wherever the values sit (the arguments,
//! `_meta`). A request is sent on a loopback connection by a client that allocates nothing while
//! it waits; the peak of the bytes allocated while it is read, checked and answered is compared
//! with the body's size.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tool_runtime::{ToolSet, tool};
use tool_runtime_mcp::McpServer;
use tool_runtime_mcp::http::HttpServer;

struct Counting;

static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = NOW.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { System.dealloc(p, layout) };
        NOW.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, layout, size) };
        if !q.is_null() {
            if size > layout.size() {
                let now =
                    NOW.fetch_add(size - layout.size(), Ordering::Relaxed) + size - layout.size();
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                NOW.fetch_sub(layout.size() - size, Ordering::Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

#[tool(description = "Return the leave days left of the signed-in employee.")]
fn leave_left() -> u8 {
    7
}

/// A `tools/call` whose `payload` sits in the arguments or in `_meta`.
fn body(payload: &str, in_meta: bool) -> String {
    let meta = r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}"#;
    if in_meta {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"_meta":{{{meta},"pad":{payload}}},"name":"leave_left","arguments":{{}}}}}}"#
        )
    } else {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"_meta":{{{meta}}},"name":"leave_left","arguments":{{"x":{payload}}}}}}}"#
        )
    }
}

/// The peak bytes allocated above the start while one request with `body` is answered, and
/// the answer's status line.
async fn cost(addr: std::net::SocketAddr, body: &str) -> (usize, String) {
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: leave_left\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut answer = vec![0u8; 1 << 16];
    let start = NOW.load(Ordering::Relaxed);
    PEAK.store(start, Ordering::Relaxed);
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut n = 0;
    loop {
        let read = stream.read(&mut answer[n..]).await.unwrap();
        if read == 0 {
            break;
        }
        n += read;
    }
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(start);
    let status = String::from_utf8_lossy(&answer[..n.min(15)]).into_owned();
    (peak, status)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_costs_a_small_multiple_of_its_body() {
    let mcp = McpServer::new(ToolSet::new([leave_left::tool()]).unwrap());
    let bound = HttpServer::new(mcp)
        .bind("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let addr = bound.local_addr().unwrap();
    tokio::spawn(bound.serve());
    // Warm up: the first request builds what every later one shares.
    cost(addr, &body("1", false)).await;
    let shapes = [
        (
            "86,000 numbers",
            format!("[{}]", vec!["0"; 86_000].join(",")),
        ),
        (
            "50,000 keys",
            format!(
                "{{{}}}",
                (0..50_000)
                    .map(|i| format!("\"k{i}\":0"))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        ),
        (
            "depth 120",
            format!(
                "{}{}{}",
                "[".repeat(120),
                vec!["[]"; 40_000].join(","),
                "]".repeat(120)
            ),
        ),
    ];
    for (shape, payload) in &shapes {
        for in_meta in [false, true] {
            let body = body(payload, in_meta);
            let (peak, status) = cost(addr, &body).await;
            let ratio = peak as f64 / body.len() as f64;
            eprintln!(
                "{shape} in {}: body {} bytes, peak {} bytes above the start ({ratio:.1}x), {status}",
                if in_meta { "_meta" } else { "the arguments" },
                body.len(),
                peak
            );
            // Before the arguments were cut out of what rmcp parses (and the complete validator
            // bounded), these cost 50x to 150x their body.
            assert!(ratio < 4.0, "{shape}: {ratio:.1}x the body");
        }
    }
}
