//! What the HTTP tests share: a plain HTTP/1.1 client on one kept-alive connection, an MCP
//! session over it, and an authorization server's keys made in the test to mint tokens with.
#![allow(dead_code)] // each test file uses part of it

use std::net::SocketAddr;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use jsonwebtoken::{Algorithm, EncodingKey, Header, jwk::Jwk};
use serde_json::{Value, json};

// The tests' prerequisites beyond Rust: the same helpers as the tests crate's.
#[path = "../../../../tests/tests/core/provision.rs"]
mod provision;
pub use provision::{provision, python};

pub mod hr;

/// Runs `tests/<script>` with the pinned Python packages and `args`; fails the test with its
/// output unless it exits successfully.
/// Whether this is the test's own process: for a measure that is per process (threads, peak
/// memory), which the other tests of this binary would raise or hide, the test `name` runs again
/// alone in a process of its own (with `var` set), and this asserts it passed there. The caller
/// goes on only when this returns `true`.
pub async fn alone(var: &str, name: &str) -> bool {
    if std::env::var_os(var).is_some() {
        return true;
    }
    let out = tokio::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--test-threads=1", "--nocapture"])
        .env(var, "1")
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    false
}

pub fn run_python_script(script: &str, args: &[&str]) {
    let out = python()
        .arg(script_path(script))
        .args(args)
        .output()
        .expect("python3 runs");
    ran(script, &out);
}

/// [`run_python_script`] without blocking the test's runtime (for a server in this process).
pub async fn run_python_script_async(script: &str, args: &[&str]) {
    let out = tokio::process::Command::from(python())
        .arg(script_path(script))
        .args(args)
        .output()
        .await
        .expect("python3 runs");
    ran(script, &out);
}

fn script_path(script: &str) -> String {
    format!("{}/tests/{script}", env!("CARGO_MANIFEST_DIR"))
}

/// Fails the test with the script's output unless it exited successfully.
fn ran(script: &str, out: &std::process::Output) {
    assert!(
        out.status.success(),
        "{script} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
}

/// One HTTP/1.1 connection to a server.
pub struct Conn {
    sender: SendRequest<Full<Bytes>>,
    pub addr: SocketAddr,
}

/// An answer: its status, headers and whole body.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: http::HeaderMap,
    pub body: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The JSON-RPC message of the body: plain JSON, or the last `data:` event of a stream
    /// that carries an answer (`result` or `error`).
    pub fn json(&self) -> Value {
        if let Ok(v) = serde_json::from_str(&self.body) {
            return v;
        }
        self.events()
            .into_iter()
            .rev()
            .find(|m| m.get("result").is_some() || m.get("error").is_some())
            .unwrap_or_else(|| panic!("no JSON-RPC answer in {:?}", self.body))
    }

    /// Every `data:` event of an event-stream body, parsed.
    pub fn events(&self) -> Vec<Value> {
        self.body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect()
    }
}

impl Conn {
    pub async fn open(addr: SocketAddr) -> Conn {
        let stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .expect("HTTP handshake");
        tokio::spawn(connection);
        Conn { sender, addr }
    }

    /// Sends one request; `Host` names the server's address unless `headers` name one.
    pub async fn send(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Reply {
        let mut request = http::Request::builder().method(method).uri(path);
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
            request = request.header("host", self.addr.to_string());
        }
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        let request = request
            .body(Full::new(Bytes::from(body.to_owned())))
            .unwrap();
        // The connection takes the next request once it has finished the last.
        self.sender.ready().await.expect("the connection is open");
        let response = self.sender.send_request(request).await.expect("an answer");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response
            .into_body()
            .collect()
            .await
            .expect("a body")
            .to_bytes();
        Reply {
            status,
            headers,
            body: String::from_utf8_lossy(&body).into_owned(),
        }
    }

    /// POSTs a JSON-RPC message to `/mcp` as an MCP client does.
    pub async fn post(&mut self, extra: &[(&str, &str)], message: &Value) -> Reply {
        let mut headers = vec![
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
        ];
        headers.extend_from_slice(extra);
        self.send("POST", "/mcp", &headers, &message.to_string())
            .await
    }
}

/// An MCP session over one connection, with the headers every request carries.
pub struct Session {
    pub conn: Conn,
    pub headers: Vec<(String, String)>,
    next_id: u64,
}

pub fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "http-test", "version": "0"}}})
}

impl Session {
    /// Opens a session (initialize, then initialized); `None` with the reply when refused.
    pub async fn open(addr: SocketAddr, token: Option<&str>) -> Result<Session, Reply> {
        let mut conn = Conn::open(addr).await;
        let mut headers: Vec<(String, String)> = Vec::new();
        if let Some(t) = token {
            headers.push(("authorization".into(), format!("Bearer {t}")));
        }
        let h: Vec<(&str, &str)> = headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let reply = conn.post(&h, &initialize()).await;
        if reply.status != 200 {
            return Err(reply);
        }
        let id = reply
            .header("mcp-session-id")
            .expect("a session id")
            .to_owned();
        headers.push(("mcp-session-id".into(), id));
        headers.push(("mcp-protocol-version".into(), "2025-11-25".into()));
        let mut session = Session {
            conn,
            headers,
            next_id: 1,
        };
        let done = session
            .notify(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        assert_eq!(done.status, 202, "{done:?}");
        Ok(session)
    }

    fn header_refs(&self) -> Vec<(&str, &str)> {
        self.headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect()
    }

    pub async fn notify(&mut self, message: &Value) -> Reply {
        let headers: Vec<(String, String)> = self.headers.clone();
        let h: Vec<(&str, &str)> = headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        self.conn.post(&h, message).await
    }

    /// Sends a request and returns its whole reply.
    pub async fn request(&mut self, method: &str, params: Value) -> Reply {
        self.next_id += 1;
        let message =
            json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        self.notify(&message).await
    }

    /// `tools/call`, returning the JSON-RPC answer.
    pub async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))
            .await
            .json()
    }

    /// The names `tools/list` shows.
    pub async fn tool_names(&mut self) -> Vec<String> {
        let listed = self.request("tools/list", json!({})).await.json();
        listed["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("{listed}"))
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    }

    /// Ends the session (DELETE).
    pub async fn close(mut self) -> Reply {
        let headers: Vec<(String, String)> = self.headers.clone();
        let h: Vec<(&str, &str)> = headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        self.conn.send("DELETE", "/mcp", &h, "").await
    }
}

/// An authorization server for tests: an Ed25519 key made from fresh random bytes, published
/// as a JWK set, and tokens signed with it.
pub struct Issuer {
    pub issuer: String,
    key: EncodingKey,
    pub kid: String,
}

pub fn random_bytes<const N: usize>() -> [u8; N] {
    use std::io::Read;
    let mut bytes = [0; N];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .expect("random bytes");
    bytes
}

pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

impl Issuer {
    pub fn new(issuer: &str) -> Issuer {
        // PKCS#8 DER of an Ed25519 private key: a fixed 16-byte prefix, then the 32-byte seed.
        let mut der = vec![
            0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22,
            0x04, 0x20,
        ];
        der.extend_from_slice(&random_bytes::<32>());
        Issuer {
            issuer: issuer.into(),
            key: EncodingKey::from_ed_der(&der),
            kid: format!("k{:x}", u32::from_le_bytes(random_bytes::<4>())),
        }
    }

    /// The JWK set the resource server is given.
    pub fn jwks(&self) -> String {
        let mut jwk = Jwk::from_encoding_key(&self.key, Algorithm::EdDSA).unwrap();
        jwk.common.key_id = Some(self.kid.clone());
        json!({ "keys": [jwk] }).to_string()
    }

    /// A token for `aud` with these claims added to a valid set (an hour long).
    pub fn token(&self, aud: &str, sub: &str, scope: &str, extra: Value) -> String {
        let mut claims = json!({
            "iss": self.issuer, "aud": aud, "sub": sub, "scope": scope,
            "iat": now(), "exp": now() + 3600,
        });
        for (k, v) in extra.as_object().unwrap() {
            claims[k] = v.clone();
        }
        let mut header = Header::new(Algorithm::EdDSA);
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, &claims, &self.key).unwrap()
    }
}

/// A free port on loopback for a server another process starts, never handed out twice in this
/// test binary. Taken below the range the system picks the source ports of outgoing connections
/// from (`net.ipv4.ip_local_port_range`): a port from `bind(0)` is in that range, and another
/// test's connection could take it as its source port before the server binds it.
pub fn free_addr() -> SocketAddr {
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    const LOWEST: u16 = 15_000;
    let ephemeral = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32_768);
    let mut given = GIVEN.lock().unwrap_or_else(|e| e.into_inner());
    if ephemeral > LOWEST + 1_000 {
        for _ in 0..1_000 {
            let port = LOWEST + u16::from_le_bytes(random_bytes()) % (ephemeral - LOWEST);
            if given.contains(&port) {
                continue;
            }
            if let Ok(l) = std::net::TcpListener::bind(("127.0.0.1", port)) {
                given.push(port);
                return l.local_addr().unwrap();
            }
        }
    }
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap()
}

/// Waits until something accepts connections at `addr`.
pub async fn wait_for(addr: SocketAddr) {
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(addr).await.is_ok() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    panic!("nothing listens at {addr}");
}

/// A TCP proxy in front of a server that keeps every byte sent to it: what the server was told.
pub struct Recorder {
    pub addr: SocketAddr,
    sent: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
}

impl Recorder {
    /// Listens on a free loopback port and forwards each connection to `target`.
    pub async fn start(target: SocketAddr) -> Recorder {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let sent = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let record = sent.clone();
        tokio::spawn(async move {
            while let Ok((inbound, _)) = listener.accept().await {
                let record = record.clone();
                tokio::spawn(async move {
                    let Ok(outbound) = tokio::net::TcpStream::connect(target).await else {
                        return; // the server is down: the connection closes
                    };
                    let (mut from_client, mut to_client) = inbound.into_split();
                    let (mut from_server, mut to_server) = outbound.into_split();
                    let up = async {
                        let mut buf = vec![0; 16 << 10];
                        while let Ok(n @ 1..) = from_client.read(&mut buf).await {
                            record.lock().unwrap().extend_from_slice(&buf[..n]);
                            if to_server.write_all(&buf[..n]).await.is_err() {
                                break;
                            }
                        }
                        let _ = to_server.shutdown().await;
                    };
                    let down = async {
                        let _ = tokio::io::copy(&mut from_server, &mut to_client).await;
                        let _ = to_client.shutdown().await;
                    };
                    tokio::join!(up, down);
                });
            }
        });
        Recorder { addr, sent }
    }

    /// Everything sent to the server so far.
    pub fn sent(&self) -> String {
        String::from_utf8_lossy(&self.sent.lock().unwrap()).into_owned()
    }
}

/// A PostgreSQL for the test: `TEST_DATABASE_URL` when CI started one, else one started here
/// with `scripts/pg-start.sh` (Debian's packages) and stopped when dropped.
pub struct Postgres {
    pub url: String,
    dir: Option<String>,
}

impl Postgres {
    pub fn start() -> Postgres {
        if let Ok(url) = std::env::var("TEST_DATABASE_URL") {
            return Postgres { url, dir: None };
        }
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/pg-start.sh");
        let port = free_addr().port().to_string();
        let out = Command::new("bash")
            .args([script, &port])
            .output()
            .expect("bash runs scripts/pg-start.sh");
        assert!(
            out.status.success(),
            "PostgreSQL did not start: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let (url, dir) = text.trim().split_once(' ').expect("url and directory");
        Postgres {
            url: url.into(),
            dir: Some(dir.into()),
        }
    }
}

impl Postgres {
    /// Restarts the server: every connection to it drops. `false` when the test did not start it.
    pub fn restart(&self) -> bool {
        let Some(dir) = &self.dir else { return false };
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/pg-start.sh");
        Command::new("bash")
            .args([script, "--restart", dir])
            .status()
            .unwrap()
            .success()
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if let Some(dir) = &self.dir {
            let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/pg-start.sh");
            let _ = Command::new("bash").args([script, "--stop", dir]).status();
        }
    }
}
