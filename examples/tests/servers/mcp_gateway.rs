//! The gateway example as a process: its own tools, the HR server (a stdio child) and the
//! official reference server over Streamable HTTP, one set behind OAuth. Per-user grants decide
//! what a caller sees; arguments are checked at the gateway; a remote that goes away answers a
//! clear error while the rest keep working, and is used again once it is back.

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{Conn, Issuer, Recorder, Session, free_addr, provision, wait_for};

/// A child process killed when the test ends.
struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The reference server on Streamable HTTP at `addr`.
async fn everything_http(addr: SocketAddr) -> Process {
    let script = provision("everything");
    let child = Command::new("node")
        .args([&script, "streamableHttp"])
        .env("PORT", addr.port().to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(addr).await;
    Process(child)
}

fn text(answer: &Value) -> String {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn is_error(answer: &Value) -> bool {
    answer["result"]["isError"] == true
}

/// A stateless 2026-07-28 request with `token`, from a client that follows tasks (and can be
/// asked); the JSON-RPC answer.
async fn with_tasks(
    conn: &mut Conn,
    token: &str,
    method: &str,
    name: &str,
    params: Value,
) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":
            {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}},
    });
    let bearer = format!("Bearer {token}");
    let headers = [
        ("authorization", bearer.as_str()),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", method),
        ("mcp-name", name),
    ];
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    conn.post(&headers, &message).await.json()
}

/// Polls the gateway's task until its status is `status` (at most 20 s).
async fn task_until(conn: &mut Conn, token: &str, id: &str, status: &str) -> Value {
    for _ in 0..200 {
        let got = with_tasks(conn, token, "tasks/get", id, json!({"taskId": id})).await;
        if got["result"]["status"] == status {
            return got["result"].clone();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the gateway's task {id} never reached {status}");
}

#[tokio::test]
async fn the_gateway_serves_local_and_remote_tools_under_one_set_of_rules() {
    let dir = std::env::temp_dir().join(format!("gateway-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let issuer = Issuer::new("https://login.gateway.test");
    let jwks = dir.join("jwks.json");
    std::fs::write(&jwks, issuer.jwks()).unwrap();

    let remote_addr = free_addr();
    let mut remote = everything_http(remote_addr).await;
    // What the HTTP remote is sent, recorded on the way.
    let recorder = Recorder::start(remote_addr).await;
    let addr = free_addr();
    let hr = format!(
        "HR_DB='{}' HR_NIK=K-001 exec '{}'",
        dir.join("hr.sqlite").display(),
        env!("CARGO_BIN_EXE_hr-mcp")
    );
    let gateway = Process(
        Command::new(env!("CARGO_BIN_EXE_gateway"))
            .args(["--http", &addr.to_string()])
            .env("GATEWAY_OAUTH_ISSUER", &issuer.issuer)
            .env("GATEWAY_OAUTH_JWKS", &jwks)
            .env("GATEWAY_HR_COMMAND", hr)
            .env(
                "GATEWAY_REMOTE_URL",
                format!("http://{}/mcp", recorder.addr),
            )
            .env(
                "GATEWAY_REMOTE_AUTHORIZATION",
                "Bearer gateway-own-credential",
            )
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_for(addr).await;
    let resource = format!("http://{addr}/mcp");
    let token = |scope: &str| issuer.token(&resource, "user-1", scope, json!({}));

    // No token, no gateway.
    assert_eq!(Session::open(addr, None).await.err().unwrap().status, 401);

    // Grants are per user: `gw` alone sees the local tools only.
    let mut local_only = Session::open(addr, Some(&token("gw"))).await.unwrap();
    let names = local_only.tool_names().await;
    assert_eq!(names, ["pesan-katering", "cuaca-terkini"], "{names:?}");
    let hidden = local_only
        .call("remote_echo", json!({"message": "x"}))
        .await;
    assert!(hidden.get("error").is_some(), "{hidden}");

    let caller = token("gw gw.hr gw.remote");
    let mut all = Session::open(addr, Some(&caller)).await.unwrap();
    let names = all.tool_names().await;
    for expected in [
        "pesan-katering",
        "hr_cek-sisa-cuti",
        "remote_echo",
        "remote_get-sum",
    ] {
        assert!(names.iter().any(|n| n == expected), "{expected}: {names:?}");
    }

    // Calls go through: local, stdio remote, HTTP remote.
    let katering = all
        .call("pesan-katering", json!({"jumlah_peserta": 25}))
        .await;
    assert!(!is_error(&katering), "{katering}");
    let sisa = all.call("hr_cek-sisa-cuti", json!({})).await;
    assert!(!is_error(&sisa), "{sisa}");
    let echo = all
        .call("remote_echo", json!({"message": "halo gateway"}))
        .await;
    assert!(text(&echo).contains("halo gateway"), "{echo}");

    // A booking through the gateway runs as a task of its own: it waits for this person's
    // approval; once approved, the gateway hands the approval to the HR server's task, and the
    // booking runs once.
    let mut conn = Conn::open(addr).await;
    let mulai = format!("{}-03-10", examples::hr::tahun_ini());
    let created = with_tasks(
        &mut conn,
        &caller,
        "tools/call",
        "hr_ajukan-cuti",
        json!({"name": "hr_ajukan-cuti", "arguments": {"mulai": mulai, "hari": 1}}),
    )
    .await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let waiting = task_until(&mut conn, &caller, &id, "input_required").await;
    assert!(
        waiting["inputRequests"]["approval"].is_object(),
        "{waiting}"
    );
    let approve = json!({"taskId": id, "inputResponses":
        {"approval": {"action": "accept", "content": {"approve": true}}}});
    let updated = with_tasks(&mut conn, &caller, "tasks/update", &id, approve).await;
    assert!(updated.get("error").is_none(), "{updated}");
    let done = task_until(&mut conn, &caller, &id, "completed").await;
    assert_eq!(
        done["result"]["structuredContent"]["status"], "diajukan",
        "booked once, at the HR server: {done}"
    );

    // The remote saw the gateway's own credential, never the caller's token.
    let sent = recorder.sent();
    assert!(
        sent.contains("halo gateway"),
        "the call did not pass the recorder"
    );
    assert!(
        sent.to_ascii_lowercase()
            .contains("authorization: bearer gateway-own-credential"),
        "{sent}"
    );
    let signature = caller.rsplit('.').next().unwrap();
    assert!(
        !sent.contains(&caller) && !sent.contains(signature) && !sent.contains("user-1"),
        "the caller's identity reached the remote: {sent}"
    );

    // "25" + 5 is stopped at the gateway with the toolkit's repair message.
    let bad = all.call("remote_get-sum", json!({"a": "25", "b": 5})).await;
    assert!(is_error(&bad), "{bad}");
    assert!(text(&bad).contains('a'), "{bad}");

    // The HTTP remote goes away: its tools say so, the others keep working.
    let _ = remote.0.kill();
    let _ = remote.0.wait();
    let down = all.call("remote_echo", json!({"message": "x"})).await;
    assert!(is_error(&down), "{down}");
    assert!(text(&down).contains("`remote`"), "{down}");
    let still = all.call("hr_cek-sisa-cuti", json!({})).await;
    assert!(!is_error(&still), "{still}");

    // Back on the same address: within a few seconds a call reaches it again.
    let _remote = everything_http(remote_addr).await;
    let mut back = false;
    for _ in 0..40 {
        let echo = all.call("remote_echo", json!({"message": "lagi"})).await;
        if text(&echo).contains("lagi") {
            back = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(back, "the gateway did not reconnect to the remote");

    // The official Python SDK client reads the whole mixed list and every result.
    let token = token("gw gw.hr gw.remote");
    crate::common::run_python_script_async("python_gateway_client.py", &[&resource, &token]).await;
    drop(gateway);
}
