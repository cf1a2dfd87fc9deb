//! Two HR server processes behind no balancer at all (the test alternates between them), one
//! PostgreSQL for held approvals, one SQLite file for the HR data: a 2026-07-28 client's
//! approval starts on one replica and finishes on the other, a forged or replayed
//! `requestState` is refused, and a hundred concurrent resumes run the booking once.

use crate::common;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use common::{Conn, Issuer, Postgres, Reply, free_addr, wait_for};
use examples::hr::domain::Db;
use serde_json::{Value, json};

const ISSUER: &str = "https://login.example.test";
/// The canonical URI both replicas serve: the balancer's, not either process's address.
const RESOURCE: &str = "http://hr.example.test/mcp";
const STATE_KEY: &str = "replicas-share-this-key-0123456789abcdef";

/// An HR server process, killed when dropped.
struct Replica {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The deployment: two replicas sharing the data file, the approval store and the key.
struct Deployment {
    replicas: [Replica; 2],
    data: PathBuf,
    issuer: Issuer,
    pg: Postgres,
}

async fn deploy(tag: &str, approval_timeout_secs: u64) -> Deployment {
    deploy_with(tag, approval_timeout_secs, &[]).await
}

/// The same, with `env` set on both replicas besides.
async fn deploy_with(tag: &str, approval_timeout_secs: u64, env: &[(&str, &str)]) -> Deployment {
    let pg = Postgres::start();
    let dir = std::env::temp_dir().join(format!("hr-replicas-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let issuer = Issuer::new(ISSUER);
    let jwks = dir.join("jwks.json");
    std::fs::write(&jwks, issuer.jwks()).unwrap();
    let data = dir.join("hr.sqlite");
    let replica = || {
        let addr = free_addr();
        let child = Command::new(env!("CARGO_BIN_EXE_hr-mcp"))
            .args(["--http", &addr.to_string()])
            .env("HR_DB", &data)
            .env("HR_OAUTH_ISSUER", ISSUER)
            .env("HR_OAUTH_JWKS", &jwks)
            .env("HR_OAUTH_RESOURCE", RESOURCE)
            .env("HR_APPROVALS", &pg.url)
            .env("HR_STATE_KEY", STATE_KEY)
            .env(
                "HR_APPROVAL_TIMEOUT_SECS",
                approval_timeout_secs.to_string(),
            )
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        Replica { child, addr }
    };
    let replicas = [replica(), replica()];
    for r in &replicas {
        wait_for(r.addr).await;
    }
    Deployment {
        replicas,
        data,
        issuer,
        pg,
    }
}

impl Deployment {
    fn token(&self, nik: &str) -> String {
        self.issuer.token(
            RESOURCE,
            nik,
            "hr hr.cuti.baca hr.reimburse.baca hr.cuti.ajukan",
            json!({}),
        )
    }

    fn leave_left(&self, nik: &str) -> u32 {
        let db = Db::open(&self.data).unwrap();
        db.karyawan(nik).unwrap().unwrap().sisa_cuti
    }
}

/// A 2026-07-28 `tools/call`: no session, the version and capabilities in `_meta` and headers.
fn call_2026(id: u64, tool: &str, arguments: Value, retry: Option<(&Value, &str)>) -> Value {
    let mut params = json!({
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
            "io.modelcontextprotocol/clientInfo": {"name": "replica-test", "version": "1"},
        },
        "name": tool,
        "arguments": arguments,
    });
    if let Some((responses, state)) = retry {
        params["inputResponses"] = responses.clone();
        params["requestState"] = json!(state);
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

async fn post_2026(addr: SocketAddr, token: &str, message: &Value) -> Reply {
    let name = message["params"]["name"].as_str().unwrap_or_default();
    let method = message["method"].as_str().unwrap();
    post_2026_text(addr, token, method, name, &message.to_string()).await
}

/// The same, with the body as text (for bodies `serde_json` would not write, such as a key
/// given twice).
async fn post_2026_text(
    addr: SocketAddr,
    token: &str,
    method: &str,
    name: &str,
    body: &str,
) -> Reply {
    let mut conn = Conn::open(addr).await;
    let bearer = format!("Bearer {token}");
    let headers = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("authorization", bearer.as_str()),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", method),
        ("mcp-name", name),
    ];
    conn.send("POST", "/mcp", &headers, body).await
}

fn approve() -> Value {
    json!({"approval": {"action": "accept", "content": {"approve": true}}})
}

/// Round one on `addr`: the booking is held and the result asks for approval.
async fn ask(addr: SocketAddr, token: &str, arguments: &Value) -> String {
    let reply = post_2026(
        addr,
        token,
        &call_2026(1, "ajukan-cuti", arguments.clone(), None),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    // An answer that is one message comes back as plain JSON, not an event stream.
    assert_eq!(
        reply.header("content-type"),
        Some("application/json"),
        "{}",
        reply.body
    );
    let result = &reply.json()["result"];
    assert_eq!(result["resultType"], "input_required", "{}", reply.body);
    let question = &result["inputRequests"]["approval"];
    assert_eq!(question["method"], "elicitation/create", "{question}");
    assert!(
        question["params"]["message"]
            .as_str()
            .unwrap()
            .contains("ajukan-cuti")
    );
    result["requestState"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_started_on_one_replica_finishes_on_the_other_once() {
    let d = deploy("finish", 600).await;
    let [a, b] = [d.replicas[0].addr, d.replicas[1].addr];
    let sari = d.token("K-001");
    let arguments = json!({"mulai": "2027-03-01", "hari": 2});
    let before = d.leave_left("K-001");
    let state = ask(a, &sari, &arguments).await;
    assert_eq!(
        d.leave_left("K-001"),
        before,
        "nothing runs before approval"
    );

    let refused = |reply: &Reply, why: &str| {
        let error = &reply.json()["error"];
        assert_eq!(error["code"], -32602, "{why}: {}", reply.body);
        assert!(
            error["message"].as_str().unwrap().contains("requestState"),
            "{why}: {error}"
        );
    };
    // A state changed by one character fails its signature.
    let mut tampered = state.clone().into_bytes();
    let i = tampered.len() - 5;
    tampered[i] = if tampered[i] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    let call = call_2026(
        2,
        "ajukan-cuti",
        arguments.clone(),
        Some((&approve(), &tampered)),
    );
    refused(&post_2026(b, &sari, &call).await, "tampered");
    // Another employee replaying Sari's state.
    let budi = d.token("K-002");
    let call = call_2026(
        3,
        "ajukan-cuti",
        arguments.clone(),
        Some((&approve(), &state)),
    );
    refused(&post_2026(b, &budi, &call).await, "another user");
    // The same state for another request (other arguments).
    let other = json!({"mulai": "2027-03-01", "hari": 5});
    let call = call_2026(4, "ajukan-cuti", other, Some((&approve(), &state)));
    refused(&post_2026(b, &sari, &call).await, "another request");
    assert_eq!(d.leave_left("K-001"), before, "nothing ran");

    // A client that cannot be asked (no elicitation capability) is told what it lacks, and
    // nothing is held or run.
    let mut call = call_2026(10, "ajukan-cuti", arguments.clone(), None);
    call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({});
    let reply = post_2026(a, &sari, &call).await;
    assert_eq!(reply.status, 400, "{}", reply.body);
    let error = &reply.json()["error"];
    assert_eq!(error["code"], -32021, "{error}");
    assert_eq!(
        error["data"]["requiredCapabilities"],
        json!({"elicitation": {}})
    );

    // Approved on the other replica: the held booking runs there.
    let call = call_2026(
        5,
        "ajukan-cuti",
        arguments.clone(),
        Some((&approve(), &state)),
    );
    let reply = post_2026(b, &sari, &call).await;
    let result = &reply.json()["result"];
    assert_eq!(result["isError"], false, "{}", reply.body);
    assert_eq!(result["resultType"], "complete", "{result}");
    assert_eq!(d.leave_left("K-001"), before - 2);

    // The same approval again, on either replica: not run twice.
    for addr in [a, b] {
        let reply = post_2026(addr, &sari, &call).await;
        let result = &reply.json()["result"];
        assert_eq!(result["isError"], true, "{}", reply.body);
        assert!(
            reply.body.contains("Tindakan ini tidak dijalankan"),
            "{}",
            reply.body
        );
    }
    assert_eq!(d.leave_left("K-001"), before - 2);

    // Declined: nothing runs, and the held call is gone.
    let state = ask(a, &sari, &arguments).await;
    let decline = json!({"approval": {"action": "accept", "content": {"approve": false}}});
    let call = call_2026(
        6,
        "ajukan-cuti",
        arguments.clone(),
        Some((&decline, &state)),
    );
    let reply = post_2026(b, &sari, &call).await;
    assert_eq!(reply.json()["result"]["isError"], true, "{}", reply.body);
    let call = call_2026(
        7,
        "ajukan-cuti",
        arguments.clone(),
        Some((&approve(), &state)),
    );
    let reply = post_2026(a, &sari, &call).await;
    assert!(
        reply.body.contains("Tindakan ini tidak dijalankan"),
        "{}",
        reply.body
    );
    // An answer that says `approve` twice is refused before anything reads it.
    let state = ask(a, &sari, &arguments).await;
    let call = call_2026(8, "ajukan-cuti", arguments.clone(), Some((&json!({}), &state)))
        .to_string()
        .replace(
            r#""inputResponses":{}"#,
            r#""inputResponses":{"approval":{"action":"accept","content":{"approve":false,"approve":true}}}"#,
        );
    let reply = post_2026_text(b, &sari, "tools/call", "ajukan-cuti", &call).await;
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert_eq!(
        d.leave_left("K-001"),
        before - 2,
        "the ambiguous answer ran nothing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_request_state_is_refused() {
    let d = deploy("expiry", 1).await;
    let sari = d.token("K-001");
    let arguments = json!({"mulai": "2027-04-01", "hari": 1});
    let before = d.leave_left("K-001");
    let state = ask(d.replicas[0].addr, &sari, &arguments).await;
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    let call = call_2026(2, "ajukan-cuti", arguments, Some((&approve(), &state)));
    let reply = post_2026(d.replicas[1].addr, &sari, &call).await;
    assert_eq!(reply.json()["error"]["code"], -32602, "{}", reply.body);
    assert_eq!(d.leave_left("K-001"), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_concurrent_resumes_across_both_replicas_run_the_booking_once() {
    let d = deploy("race", 600).await;
    let sari = d.token("K-001");
    let arguments = json!({"mulai": "2027-05-03", "hari": 1});
    let before = d.leave_left("K-001");
    let state = ask(d.replicas[0].addr, &sari, &arguments).await;
    let call = call_2026(9, "ajukan-cuti", arguments, Some((&approve(), &state)));
    // Collected before any is awaited, so all hundred are in flight at once.
    let resumes: Vec<_> = (0..100)
        .map(|i| {
            let (addr, token, call) = (d.replicas[i % 2].addr, sari.clone(), call.clone());
            tokio::spawn(async move { post_2026(addr, &token, &call).await })
        })
        .collect();
    let (mut ran, mut not_again, mut over_share) = (0, 0, 0);
    for r in resumes {
        let reply = r.await.unwrap();
        // One caller's requests in progress are capped on each replica (32): the rest are
        // refused at the door and never reach the store.
        if reply.status == 429 {
            over_share += 1;
            continue;
        }
        let result = &reply.json()["result"];
        match result["isError"].as_bool() {
            Some(false) => ran += 1,
            Some(true) if reply.body.contains("Tindakan ini tidak dijalankan") => not_again += 1,
            _ => panic!("unexpected answer: {}", reply.body),
        }
    }
    assert_eq!(ran, 1, "{not_again} not again, {over_share} over the share");
    assert_eq!(ran + not_again + over_share, 100);
    assert!(
        not_again >= 50,
        "most resumes raced for the call: {not_again}"
    );
    assert_eq!(d.leave_left("K-001"), before - 1, "booked once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_approval_survives_a_database_restart() {
    let d = deploy("restart", 600).await;
    let sari = d.token("K-001");
    let arguments = json!({"mulai": "2027-09-06", "hari": 1});
    let before = d.leave_left("K-001");
    let state = ask(d.replicas[0].addr, &sari, &arguments).await;
    if !d.pg.restart() {
        eprintln!("TEST_DATABASE_URL names a database this test did not start: not restarted");
        return;
    }
    // Both replicas' connections dropped with the restart; the next call connects again.
    let call = call_2026(2, "ajukan-cuti", arguments, Some((&approve(), &state)));
    let reply = post_2026(d.replicas[1].addr, &sari, &call).await;
    assert_eq!(reply.json()["result"]["isError"], false, "{}", reply.body);
    assert_eq!(d.leave_left("K-001"), before - 1);
}

/// One owner cannot grow the shared store: a replica keeps at most `per_owner` of one caller's
/// calls, forgets what expired, and hands out nothing past its expiry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_postgres_store_stays_bounded_per_owner() {
    use tool_runtime::{ApprovalStore, PendingCall};
    let pg = Postgres::start();
    let store = tool_runtime_postgres::PostgresApprovals::connect(&pg.url)
        .await
        .unwrap()
        .with_per_owner(10);
    for n in 0..200 {
        let call = PendingCall::new(format!("mal-{n}"), "ajukan-cuti", json!({"n": n}))
            .with_owner(Some("sub:mallory".into()));
        store.hold(call).await.unwrap();
    }
    let sari =
        PendingCall::new("sari-1", "ajukan-cuti", json!({})).with_owner(Some("sub:sari".into()));
    store.hold(sari).await.unwrap();
    assert_eq!(
        store.held().await.unwrap(),
        11,
        "mallory's newest ten, and sari's"
    );
    assert!(store.take("mal-199").await.unwrap().is_some());
    assert!(store.take("mal-0").await.unwrap().is_none());
    assert!(store.take("sari-1").await.unwrap().is_some());
    let expired = PendingCall::new("old-1", "ajukan-cuti", json!({})).with_expiry(Some(1));
    store.hold(expired).await.unwrap();
    assert!(
        store.take("old-1").await.unwrap().is_none(),
        "past its expiry"
    );
}

/// A stateless request declaring the tasks extension: `tools/call`, or a `tasks/*` method
/// (whose `Mcp-Name` is the task id).
async fn task_rpc(addr: SocketAddr, token: &str, method: &str, mut params: Value) -> Reply {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {},
            "extensions": {"io.modelcontextprotocol/tasks": {}},
        },
        "io.modelcontextprotocol/clientInfo": {"name": "replica-test", "version": "1"},
    });
    let name = params["name"]
        .as_str()
        .or(params["taskId"].as_str())
        .unwrap_or_default()
        .to_owned();
    let body = json!({"jsonrpc": "2.0", "id": 5, "method": method, "params": params});
    post_2026_text(addr, token, method, &name, &body.to_string()).await
}

/// Polls `tasks/get` on `addr` until the task is `status` (at most 20 s); the task.
async fn task_until(addr: SocketAddr, token: &str, id: &str, status: &str) -> Value {
    let mut last = Value::Null;
    for _ in 0..400 {
        last = task_rpc(addr, token, "tasks/get", json!({"taskId": id}))
            .await
            .json();
        if last["result"]["status"] == status {
            return last["result"].clone();
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("task {id} never reached {status}: {last}");
}

/// The HR case with tasks, as two processes on one PostgreSQL: Sari's booking becomes a task on
/// replica A and waits for approval; replica B answers her `tasks/get`; a hundred approvals at
/// once on both replicas book once; Budi's `tasks/get` of her task is refused as an unknown
/// one, and the result is there on A.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_booking_task_made_on_one_replica_is_approved_on_both_and_runs_once() {
    let d = deploy("tasks", 600).await;
    let (sari, budi) = (d.token("K-001"), d.token("K-002"));
    let (a, b) = (d.replicas[0].addr, d.replicas[1].addr);
    let before = d.leave_left("K-001");
    let arguments = json!({"mulai": "2027-06-07", "hari": 2});
    let created = task_rpc(
        a,
        &sari,
        "tools/call",
        json!({"name": "ajukan-cuti", "arguments": arguments}),
    )
    .await;
    let created = created.json();
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let waiting = task_until(b, &sari, &id, "input_required").await;
    assert_eq!(
        waiting["inputRequests"]["approval"]["method"], "elicitation/create",
        "{waiting}"
    );
    let theirs = task_rpc(b, &budi, "tasks/get", json!({"taskId": id}))
        .await
        .json();
    assert_eq!(
        theirs["error"]["code"], -32602,
        "another employee's poll: {theirs}"
    );
    assert_eq!(
        d.leave_left("K-001"),
        before,
        "nothing booked before the approval"
    );
    let approvals: Vec<_> = (0..100)
        .map(|i| {
            let (addr, token, id) = (d.replicas[i % 2].addr, sari.clone(), id.clone());
            tokio::spawn(async move {
                let params = json!({"taskId": id, "inputResponses": approve()});
                task_rpc(addr, &token, "tasks/update", params).await
            })
        })
        .collect();
    let mut acked = 0;
    for r in approvals {
        let reply = r.await.unwrap();
        // Beyond one caller's share of requests in progress, refused at the door (429).
        if reply.status == 429 {
            continue;
        }
        assert_eq!(
            reply.json()["result"],
            json!({"resultType": "complete"}),
            "{}",
            reply.body
        );
        acked += 1;
    }
    assert!(acked >= 50, "most approvals reached the task: {acked}");
    let done = task_until(a, &sari, &id, "completed").await;
    assert_eq!(done["result"]["isError"], false, "{done}");
    assert_eq!(
        d.leave_left("K-001"),
        before - 2,
        "a hundred approvals, one booking of two days"
    );
}

/// The HR case's manager, as two processes on one PostgreSQL with `HR_PERSETUJUAN=manajer`:
/// Sari's booking waits for her manager as a task made on replica A; she cannot approve it
/// herself (B refuses her `tasks/update`, naming the grant), nor can Budi, whose token asks for
/// the grant his role lacks; Dewi (M-001, who leads Sari's team) finds it on B, decides it
/// twenty times at once on both replicas: one decision books it once, in Sari's name; a
/// rejected booking books nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_manager_approves_a_team_members_booking_from_another_replica_once_in_her_name() {
    let d = deploy_with("manager", 600, &[("HR_PERSETUJUAN", "manajer")]).await;
    let approver_scopes = "hr hr.cuti.baca hr.reimburse.baca hr.cuti.ajukan hr.cuti.setujui";
    let sari = d.token("K-001");
    let dewi = d
        .issuer
        .token(RESOURCE, "M-001", approver_scopes, json!({}));
    let budi = d
        .issuer
        .token(RESOURCE, "K-002", approver_scopes, json!({}));
    let (a, b) = (d.replicas[0].addr, d.replicas[1].addr);
    let (sari_before, dewi_before) = (d.leave_left("K-001"), d.leave_left("M-001"));
    let book =
        |mulai: &str| json!({"name": "ajukan-cuti", "arguments": {"mulai": mulai, "hari": 2}});
    let call = |addr, token: String, tool: &'static str, arguments: Value| async move {
        post_2026(addr, &token, &call_2026(9, tool, arguments, None))
            .await
            .json()
    };
    // A decision changes data: Dewi's client asks her to confirm what her model decided first.
    let decide = move |addr, token: String, id: &str, setujui: bool| {
        let arguments = json!({"id": id, "setujui": setujui});
        async move {
            let asked = call(
                addr,
                token.clone(),
                "putuskan-persetujuan",
                arguments.clone(),
            )
            .await;
            let Some(state) = asked["result"]["requestState"].as_str() else {
                return asked; // refused before asking (busy)
            };
            let retry = call_2026(
                10,
                "putuskan-persetujuan",
                arguments,
                Some((&approve(), state)),
            );
            post_2026(addr, &token, &retry).await.json()
        }
    };

    let created = task_rpc(a, &sari, "tools/call", book("2027-03-01"))
        .await
        .json();
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let waiting = task_until(b, &sari, &id, "input_required").await;
    assert!(
        waiting["statusMessage"]
            .as_str()
            .unwrap()
            .contains("`hr.cuti.setujui`"),
        "{waiting}"
    );
    let own = task_rpc(
        b,
        &sari,
        "tasks/update",
        json!({"taskId": id, "inputResponses": approve()}),
    )
    .await
    .json();
    assert_eq!(own["error"]["code"], -32602, "her own approval: {own}");
    assert!(
        own["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`hr.cuti.setujui`"),
        "{own}"
    );
    for (who, token) in [("Sari", &sari), ("Budi", &budi)] {
        let hidden = call(a, token.clone(), "daftar-persetujuan", json!({})).await;
        assert_eq!(
            hidden["error"]["code"], -32602,
            "{who} sees no desk: {hidden}"
        );
    }
    let theirs = task_rpc(b, &dewi, "tasks/get", json!({"taskId": id}))
        .await
        .json();
    assert_eq!(
        theirs["error"]["code"], -32602,
        "the task stays Sari's: {theirs}"
    );

    // (A database other tests share may hold their bookings too: only this one is looked for.)
    let listed = call(b, dewi.clone(), "daftar-persetujuan", json!({})).await;
    let waiting = listed["result"]["structuredContent"]["menunggu"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .clone();
    assert!(
        waiting.contains(&json!({"id": id, "nik": "K-001", "mulai": "2027-03-01", "hari": 2})),
        "{listed}"
    );
    assert_eq!(d.leave_left("K-001"), sari_before, "nothing booked yet");
    let decisions: Vec<_> = (0..20)
        .map(|i| {
            let (addr, token, id) = (d.replicas[i % 2].addr, dewi.clone(), id.clone());
            tokio::spawn(async move { decide(addr, token, &id, true).await })
        })
        .collect();
    let mut statuses = Vec::new();
    for d in decisions {
        let reply = d.await.unwrap();
        // Beyond one caller's share of calls in progress, refused as busy: not a decision.
        if let Some(status) = reply["result"]["structuredContent"]["status"].as_str() {
            statuses.push(status.to_owned());
        }
    }
    assert!(statuses.len() >= 5, "most decisions ran: {statuses:?}");
    assert_eq!(
        statuses.iter().filter(|s| *s == "disetujui").count(),
        1,
        "{statuses:?}"
    );
    assert!(
        statuses
            .iter()
            .all(|s| s == "disetujui" || s == "tidak-ditemukan"),
        "{statuses:?}"
    );
    let done = task_until(a, &sari, &id, "completed").await;
    assert_eq!(done["result"]["isError"], false, "{done}");
    assert_eq!(
        done["result"]["structuredContent"]["status"], "diajukan",
        "{done}"
    );
    assert_eq!(
        (d.leave_left("K-001"), d.leave_left("M-001")),
        (sari_before - 2, dewi_before),
        "twenty decisions, one booking of two days, in Sari's name"
    );

    let created = task_rpc(b, &sari, "tools/call", book("2027-04-05"))
        .await
        .json();
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    task_until(a, &sari, &id, "input_required").await;
    let rejected = decide(a, dewi.clone(), &id, false).await;
    assert_eq!(
        rejected["result"]["structuredContent"]["status"], "ditolak",
        "{rejected}"
    );
    let done = task_until(b, &sari, &id, "completed").await;
    assert_eq!(done["result"]["isError"], true, "{done}");
    assert_eq!(
        d.leave_left("K-001"),
        sari_before - 2,
        "a rejected booking books nothing"
    );
}

/// Replica A is killed while it runs an approved booking (held open by `HR_SLOW_BOOKING_MS`):
/// replica B answers the task `working` until A's lease ends, then `failed` with the reason;
/// the booking did not run (its transaction died with A) and never runs again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_killed_mid_run_leaves_the_task_failed_and_the_booking_not_run_twice() {
    let mut d = deploy_with(
        "tasks-kill",
        600,
        &[("HR_SLOW_BOOKING_MS", "4000"), ("HR_TASK_LEASE_MS", "900")],
    )
    .await;
    let sari = d.token("K-001");
    let (a, b) = (d.replicas[0].addr, d.replicas[1].addr);
    let before = d.leave_left("K-001");
    let arguments = json!({"mulai": "2027-07-05", "hari": 1});
    let created = task_rpc(
        a,
        &sari,
        "tools/call",
        json!({"name": "ajukan-cuti", "arguments": arguments}),
    )
    .await;
    let id = created.json()["result"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    task_until(b, &sari, &id, "input_required").await;
    // Approved on A: A runs it.
    let ack = task_rpc(
        a,
        &sari,
        "tasks/update",
        json!({"taskId": id, "inputResponses": approve()}),
    )
    .await;
    assert_eq!(
        ack.json()["result"],
        json!({"resultType": "complete"}),
        "{}",
        ack.body
    );
    task_until(b, &sari, &id, "working").await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    d.replicas[0].child.kill().unwrap();
    d.replicas[0].child.wait().unwrap();
    let failed = task_until(b, &sari, &id, "failed").await;
    assert!(
        failed["statusMessage"]
            .as_str()
            .unwrap()
            .contains("stopped before it finished"),
        "{failed}"
    );
    assert_eq!(
        d.leave_left("K-001"),
        before,
        "the booking died with its replica"
    );
    // Answering it again runs nothing: it no longer waits.
    let again = task_rpc(
        b,
        &sari,
        "tasks/update",
        json!({"taskId": id, "inputResponses": approve()}),
    )
    .await;
    assert_eq!(again.json()["result"], json!({"resultType": "complete"}));
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(
        task_until(b, &sari, &id, "failed").await["status"],
        "failed"
    );
    assert_eq!(d.leave_left("K-001"), before, "and never ran again");
}

/// A client nobody here wrote: FastMCP's, with fastmcp-tasks (PyPI), drives the booking task
/// across both replicas (`tests/fastmcp_tasks_client.py`): made on A, parked and approved on B,
/// another employee's poll refused, the result read on A; a plain `call_tool` driven to the end
/// by the client itself; a cancel while it waits. Two bookings ran, once each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcps_tasks_client_drives_a_booking_across_both_replicas() {
    let d = deploy("tasks-fastmcp", 600).await;
    let (sari, budi) = (d.token("K-001"), d.token("K-002"));
    let before = d.leave_left("K-001");
    let url = |r: &Replica| format!("http://{}/mcp", r.addr);
    let out = tokio::process::Command::new("python3")
        .env("PYTHONPATH", common::provision("python-tasks"))
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fastmcp_tasks_client.py"
        ))
        .args([url(&d.replicas[0]), url(&d.replicas[1]), sari, budi])
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: Value = serde_json::from_slice(&out.stdout).unwrap();
    // Its first status: still working, or already waiting for the approval.
    assert!(
        ["working", "input_required"].contains(&seen["created"].as_str().unwrap()),
        "{seen}"
    );
    assert_eq!(seen["parked"], "input_required", "{seen}");
    assert!(
        seen["budi"].as_str().unwrap().contains("unknown task"),
        "{seen}"
    );
    assert_eq!(seen["result_error"], false, "{seen}");
    assert_eq!(seen["result"]["status"], "diajukan", "{seen}");
    assert_eq!(seen["on_a"], "completed", "{seen}");
    assert_eq!(seen["plain_error"], false, "{seen}");
    assert_eq!(seen["cancelled"], "cancelled", "{seen}");
    assert_eq!(
        d.leave_left("K-001"),
        before - 2,
        "two bookings approved, each once"
    );
}

/// What a cancel of a slow booking ended as, at each point of its life, on either replica:
/// the status the task reports always matches the database. A booking held open by
/// `HR_SLOW_BOOKING_MS` is cancelled before its approval, or at a spread of moments after it
/// (while it runs, before its commit point; after it), on the replica running it and on the
/// other; `cancelled` means nothing was booked, `completed` that the booking was made. Each
/// acknowledgement is timed. `HR_CANCEL_TRIALS` trials on each replica (10 by default;
/// `scripts/cancel-race.sh` runs 100).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_at_any_point_of_a_booking_reports_what_the_database_holds_on_either_replica() {
    const BOOKING_MS: u64 = 300;
    let trials: usize = std::env::var("HR_CANCEL_TRIALS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10);
    let d = deploy_with("cancels", 600, &[("HR_SLOW_BOOKING_MS", "300")]).await;
    let sari = d.token("K-001");
    rusqlite::Connection::open(&d.data)
        .unwrap()
        .execute(
            "UPDATE karyawan SET sisa_cuti = 1000 WHERE nik = 'K-001'",
            [],
        )
        .unwrap();
    let year = i32::from(examples::hr::tahun_ini()) + 1;
    let first = chrono::NaiveDate::from_ymd_opt(year, 1, 1).unwrap();
    let booked = |day: chrono::NaiveDate| -> bool {
        rusqlite::Connection::open(&d.data)
            .unwrap()
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM cuti WHERE nik = 'K-001' AND tanggal = ?1)",
                [day.to_string()],
                |r| r.get(0),
            )
            .unwrap()
    };
    // Per replica cancelling (0: the one running the booking, 1: the other): acknowledgement
    // times, and how the trials ended.
    let mut acks: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut ended: [std::collections::BTreeMap<&str, usize>; 2] = Default::default();
    let mut reported = Vec::new();
    for i in 0..2 * trials {
        let day = first + chrono::Days::new(i as u64);
        let runner = d.replicas[i % 2].addr;
        let (on, canceller) = if (i / 2) % 2 == 0 {
            (0, runner)
        } else {
            (1, d.replicas[(i + 1) % 2].addr)
        };
        let created = task_rpc(
            runner,
            &sari,
            "tools/call",
            json!({"name": "ajukan-cuti", "arguments": {"mulai": day.to_string(), "hari": 1}}),
        )
        .await
        .json();
        let id = created["result"]["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("{created}"))
            .to_owned();
        task_until(runner, &sari, &id, "input_required").await;
        // One trial in five is cancelled while it waits for approval; the others at a moment
        // spread over the booking and past it.
        let point = if i % 5 == 0 {
            "before its approval".to_owned()
        } else {
            let ack = task_rpc(
                runner,
                &sari,
                "tasks/update",
                json!({"taskId": id, "inputResponses": approve()}),
            )
            .await;
            assert_eq!(ack.status, 200, "{}", ack.body);
            let wait = (i as u64 * 53) % (3 * BOOKING_MS);
            tokio::time::sleep(std::time::Duration::from_millis(wait)).await;
            format!("{wait} ms after its approval")
        };
        let asked = std::time::Instant::now();
        let ack = task_rpc(canceller, &sari, "tasks/cancel", json!({"taskId": id})).await;
        acks[on].push(asked.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(
            ack.json()["result"],
            json!({"resultType": "complete"}),
            "{}",
            ack.body
        );
        // Its end, then the database's word on it.
        let mut last = Value::Null;
        for _ in 0..200 {
            last = task_rpc(runner, &sari, "tasks/get", json!({"taskId": id}))
                .await
                .json()["result"]
                .clone();
            if ["completed", "cancelled", "failed"].contains(&last["status"].as_str().unwrap_or(""))
            {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
        let status = last["status"].as_str().unwrap_or("none").to_owned();
        let made = booked(day);
        match status.as_str() {
            "cancelled" => assert!(!made, "trial {i}, cancelled {point}: yet booked"),
            "completed" => {
                assert_eq!(last["result"]["isError"], false, "trial {i}: {last}");
                assert!(made, "trial {i}, completed {point}: yet not booked");
            }
            _ => panic!("trial {i}, cancelled {point}: ended {last}"),
        }
        reported.push((i, day, status.clone(), point));
        *ended[on]
            .entry(match (status.as_str(), i % 5 == 0) {
                ("cancelled", true) => "cancelled before its approval",
                ("cancelled", false) => "cancelled while it ran",
                _ => "completed (cancel after its commit)",
            })
            .or_default() += 1;
    }
    // A booking a cancel did not stop would still be running: once every one has had time
    // to end, the database still holds exactly what was reported.
    tokio::time::sleep(std::time::Duration::from_millis(3 * BOOKING_MS)).await;
    for (i, day, status, point) in &reported {
        assert_eq!(
            booked(*day),
            status == "completed",
            "trial {i}, cancelled {point}, reported {status}"
        );
    }
    for (on, name) in ["the replica running it", "the other replica"]
        .iter()
        .enumerate()
    {
        let mut times = acks[on].clone();
        times.sort_by(f64::total_cmp);
        let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize];
        println!(
            "cancels on {name}: {} trials {:?}; acknowledged in p50 {:.1} ms, max {:.1} ms",
            times.len(),
            ended[on],
            at(0.5),
            at(1.0)
        );
        assert!(
            at(1.0) < 1000.0,
            "a cancel on {name} is acknowledged at once, not when the booking ends: {times:?}"
        );
        if trials >= 10 {
            assert_eq!(
                ended[on].len(),
                3,
                "on {name}: cancels won before and during the booking, and lost after it: {:?}",
                ended[on]
            );
        }
    }
}
