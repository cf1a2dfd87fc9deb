//! MCP Tasks over real HTTP between two replicas (two servers sharing one task store and one
//! approval store, as replicas on one database do): a task made on one is polled, answered and
//! cancelled on the other; another caller's task is unknown; an approval answered a score of
//! times at once runs once; a replica that dies leaves its task failed, not working.
//! The callers are two loopback addresses (127.0.0.1 and 127.0.0.2): without authentication,
//! the server's caller is the peer's address.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tool_runtime::task::{MemoryTasks, TaskStore};
use tool_runtime::{
    Answer, Answers, ApprovalStore, Context, Grants, MemoryApprovals, Progress, Question, Tasks,
    ToolSet, Unanswered, tool,
};
use tool_runtime_mcp::http::HttpServer;
use tool_runtime_mcp::{ApprovalDesk, ApproverError, DeskError, McpServer, Refusal};

/// Bookings by the days asked (each test books its own number of days: tests run at once).
static BOOKED: [AtomicUsize; 13] = [const { AtomicUsize::new(0) }; 13];
/// The exports stopped before they finished (their future dropped), by how long they were to
/// take: each test asks for its own duration (tests run at once).
static EXPORTS_DROPPED: std::sync::Mutex<Vec<u64>> = std::sync::Mutex::new(Vec::new());

fn dropped(ms: u64) -> bool {
    EXPORTS_DROPPED.lock().unwrap().contains(&ms)
}

#[tool(description = "Return a greeting for a name.")]
fn sapa(#[arg(description = "The name", length = 1..=20)] nama: String) -> String {
    format!("Halo, {nama}")
}

/// Records an export stopped before it finished (its future dropped).
struct Dropped(bool, u64);

impl Drop for Dropped {
    fn drop(&mut self) {
        if !self.0 {
            EXPORTS_DROPPED.lock().unwrap().push(self.1);
        }
    }
}

#[tool(
    description = "Export the payroll of a month; takes a while. Changes nothing.",
    read_only,
    task = "optional"
)]
async fn ekspor_gaji(
    #[arg(description = "How long the export takes, in milliseconds", range = 0..=60_000)] ms: u64,
    #[ctx] progress: &Progress,
) -> String {
    let mut guard = Dropped(false, ms);
    progress.report(0.0, Some(1.0), Some("menghitung gaji"));
    tokio::time::sleep(Duration::from_millis(ms)).await;
    guard.0 = true;
    format!("exported in {ms} ms")
}

/// Payslips being sent and sent, by how long sending was to take (each test its own
/// duration).
static SLIPS_STARTED: std::sync::Mutex<Vec<u64>> = std::sync::Mutex::new(Vec::new());
static SLIPS_SENT: std::sync::Mutex<Vec<u64>> = std::sync::Mutex::new(Vec::new());

#[tool(
    description = "Send this month's payslips to every employee; takes a while, and changes what they received.",
    task = "optional"
)]
async fn kirim_slip(
    #[arg(description = "How long sending takes, in milliseconds", range = 0..=60_000)] ms: u64,
) -> String {
    SLIPS_STARTED.lock().unwrap().push(ms);
    tokio::time::sleep(Duration::from_millis(ms)).await;
    SLIPS_SENT.lock().unwrap().push(ms);
    format!("sent in {ms} ms")
}

#[tool(
    description = "Rebuild every report; runs only as a task.",
    task = "required"
)]
async fn bangun_laporan() -> String {
    "rebuilt".into()
}

#[tool(
    description = "Book a day of leave; a person approves it first.",
    needs_approval,
    task = "optional"
)]
fn ajukan_cuti(#[arg(description = "Days of leave", range = 1..=12)] hari: u8) -> String {
    BOOKED[usize::from(hari)].fetch_add(1, Ordering::SeqCst);
    format!("booked {hari} days")
}

#[tool(
    description = "Close the month's books; breaks on a bad row.",
    task = "optional"
)]
async fn tutup_buku() -> String {
    panic!("row 7 of the ledger is not a number")
}

#[tool(
    description = "Delete the caller's data; a person approves it first.",
    needs_approval
)]
fn hapus_data() -> String {
    "deleted".into()
}

/// Runs of `dua_pertanyaan`, by label (tests run at once).
static ASKING_RUNS: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

#[tool(
    description = "Ask the person for a name and a colour at once, then answer with both.",
    task = "optional"
)]
fn dua_pertanyaan(
    #[arg(description = "A label echoed back", length = 1..=20)] label: String,
    #[ctx] answers: &Answers,
) -> Result<String, Unanswered> {
    ASKING_RUNS.lock().unwrap().push(label.clone());
    let [nama, warna] = answers.ask([
        Question::text("nama", "Siapa nama Anda?"),
        Question::text("warna", "Warna kesukaan Anda?"),
    ])?;
    let said = |a: &Answer| {
        a.accepted()
            .and_then(|c| c["value"].as_str())
            .unwrap_or("-")
            .to_owned()
    };
    Ok(format!("{label}: {} likes {}", said(&nama), said(&warna)))
}

fn nama_dulu() -> Vec<Question> {
    vec![Question::text("nama", "Nama Anda?")]
}

#[tool(
    description = "Greet the person by the name they give before it runs.",
    task = "optional",
    ask_first = nama_dulu
)]
fn sapa_dulu(
    #[arg(description = "A label echoed back", length = 1..=20)] label: String,
    #[ctx] answers: &Answers,
) -> String {
    ASKING_RUNS.lock().unwrap().push(label.clone());
    let nama = answers.get("nama");
    let nama = nama.as_ref().and_then(|a| a.accepted());
    format!(
        "{label}: Halo, {}",
        nama.map_or("?", |f| f["value"].as_str().unwrap_or("?"))
    )
}

fn runs(label: &str) -> usize {
    ASKING_RUNS
        .lock()
        .unwrap()
        .iter()
        .filter(|l| *l == label)
        .count()
}

fn said(value: &str) -> Value {
    json!({"action": "accept", "content": {"value": value}})
}

/// Who is calling: the test's context function names the caller from its address.
#[derive(Clone)]
struct Siapa(&'static str);

/// Leave booked by `cuti_atasan`: the days and whom for.
static BOOKED_FOR: std::sync::Mutex<Vec<(u8, &'static str)>> = std::sync::Mutex::new(Vec::new());

#[tool(
    description = "Book leave for the caller; their manager approves it first.",
    needs_approval,
    task = "optional"
)]
fn cuti_atasan(
    #[arg(description = "Days of leave", range = 1..=12)] hari: u8,
    #[ctx] siapa: &Siapa,
) -> String {
    BOOKED_FOR.lock().unwrap().push((hari, siapa.0));
    format!("booked {hari} days for {}", siapa.0)
}

#[tool(
    description = "List the leave bookings waiting for your approval.",
    requires = "cuti.setujui",
    read_only
)]
async fn daftar(#[ctx] desk: &ApprovalDesk) -> Result<Vec<String>, DeskError> {
    Ok(desk
        .waiting()
        .await?
        .into_iter()
        .map(|w| format!("{} {} {}", w.task, w.tool, w.arguments))
        .collect())
}

#[tool(
    description = "Approve or reject a leave booking waiting for your approval.",
    requires = "cuti.setujui"
)]
async fn putuskan(
    #[arg(description = "The booking's task id", length = 1..=64)] task: String,
    #[arg(description = "Whether to approve it")] setuju: bool,
    #[ctx] desk: &ApprovalDesk,
) -> Result<String, DeskError> {
    Ok(format!("{:?}", desk.decide(&task, setuju).await?))
}

/// Budi's decision on the task `id` through his desk (`putuskan`), at `to`.
async fn decide(to: SocketAddr, id: &str, approve: bool) -> Value {
    let decision = json!({"task": id, "setuju": approve});
    call(to, BUDI, "putuskan", decision, false).await
}

/// Whether a decision was answered that no call of that id waits for one.
fn not_waiting(decided: &Value) -> bool {
    decided["result"]["content"][0]["text"]
        .as_str()
        .is_some_and(|t| t.contains("waits for your decision"))
}

/// A replica of a server where Budi (127.0.0.2, holding `cuti.setujui`) approves the leave
/// Sari (127.0.0.1) books.
async fn approver_replica(
    tasks: &Arc<dyn TaskStore>,
    approvals: &Arc<dyn ApprovalStore>,
) -> SocketAddr {
    let set = ToolSet::new([cuti_atasan::tool(), daftar::tool(), putuskan::tool()])
        .unwrap()
        .with_approvals(approvals.clone());
    let tasks = Tasks::shared(tasks.clone()).with_poll_interval(Duration::from_millis(50));
    let mcp = McpServer::new(set)
        .with_tasks(tasks)
        .with_context(|caller| async move {
            let (siapa, grants) = match caller.peer.map(|p| p.ip().to_string()).as_deref() {
                Some(BUDI) => (Siapa("budi"), vec!["cuti.setujui"]),
                Some(SARI) => (Siapa("sari"), vec![]),
                _ => return Err(Refusal::new("who is calling?")),
            };
            Ok(Context::new().with(siapa).with(Grants::new(grants)))
        })
        .with_approver("cuti_atasan", "cuti.setujui")
        .unwrap();
    serve(mcp).await
}

/// One replica: a server on its own port, over the shared stores.
async fn replica(
    tasks: &Arc<dyn TaskStore>,
    approvals: &Arc<dyn ApprovalStore>,
    lease: Duration,
) -> SocketAddr {
    let set = ToolSet::new([
        sapa::tool(),
        ekspor_gaji::tool(),
        kirim_slip::tool(),
        bangun_laporan::tool(),
        ajukan_cuti::tool(),
        tutup_buku::tool(),
        dua_pertanyaan::tool(),
        sapa_dulu::tool(),
    ])
    .unwrap()
    .with_approvals(approvals.clone());
    let tasks = Tasks::shared(tasks.clone())
        .with_lease(lease)
        .with_poll_interval(Duration::from_millis(50));
    serve(McpServer::new(set).with_tasks(tasks)).await
}

/// `mcp` over HTTP on a loopback port of its own, until the test ends.
async fn serve(mcp: McpServer) -> SocketAddr {
    let bound = HttpServer::new(mcp)
        .bind("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let addr = bound.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = bound.serve_until(std::future::pending()).await;
    });
    addr
}

/// The tools of the server at `at`, imported with `options` as a host's only tools.
async fn imported(at: SocketAddr, options: tool_runtime_mcp::remote::RemoteOptions) -> ToolSet {
    let remote =
        tool_runtime_mcp::remote::Remote::http("hr", format!("http://{at}/mcp"), None, options)
            .await
            .unwrap();
    ToolSet::new(Vec::<&tool_runtime::Tool>::new())
        .unwrap()
        .with_tools(remote.tools().await.unwrap().tools)
        .unwrap()
}

/// Two replicas over one task store and one approval store.
async fn two_replicas() -> (SocketAddr, SocketAddr) {
    let tasks: Arc<dyn TaskStore> = Arc::new(MemoryTasks::new());
    let approvals: Arc<dyn ApprovalStore> = Arc::new(MemoryApprovals::new());
    let lease = Duration::from_millis(600);
    (
        replica(&tasks, &approvals, lease).await,
        replica(&tasks, &approvals, lease).await,
    )
}

const SARI: &str = "127.0.0.1";
const BUDI: &str = "127.0.0.2";

/// One stateless 2026-07-28 request from `from`, declaring the tasks extension when `tasks`;
/// the JSON-RPC answer.
async fn rpc(to: SocketAddr, from: &str, method: &str, params: Value, tasks: bool) -> Value {
    let name = params["name"]
        .as_str()
        .or(params["taskId"].as_str())
        .map(str::to_owned);
    rpc_named(to, from, method, params, tasks, name.as_deref()).await
}

/// The same, with the `Mcp-Name` header given (or left out).
async fn rpc_named(
    to: SocketAddr,
    from: &str,
    method: &str,
    mut params: Value,
    tasks: bool,
    name: Option<&str>,
) -> Value {
    let capabilities = if tasks {
        json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}})
    } else {
        json!({"elicitation": {}})
    };
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    });
    let name = name
        .map(|n| format!("Mcp-Name: {n}\r\n"))
        .unwrap_or_default();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n{name}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        to.port(),
        body.len()
    );
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket
        .bind(SocketAddr::new(from.parse::<IpAddr>().unwrap(), 0))
        .unwrap();
    let mut stream = socket.connect(to).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8(answer).unwrap();
    let body = answer.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
    // JSON, or one SSE event carrying it.
    let json = body
        .lines()
        .find_map(|l| {
            l.strip_prefix("data:")
                .map(str::trim)
                .filter(|d| d.starts_with('{'))
        })
        .unwrap_or(body);
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {answer}"))
}

async fn call(to: SocketAddr, from: &str, name: &str, arguments: Value, tasks: bool) -> Value {
    rpc(
        to,
        from,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
        tasks,
    )
    .await
}

async fn get(to: SocketAddr, from: &str, id: &str) -> Value {
    rpc(to, from, "tasks/get", json!({"taskId": id}), true).await
}

/// Polls `tasks/get` on `to` until the task's status is `status` (at most 10 s).
async fn until(to: SocketAddr, from: &str, id: &str, status: &str) -> Value {
    for _ in 0..200 {
        let got = get(to, from, id).await;
        if got["result"]["status"] == status {
            return got["result"].clone();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "task {id} never reached {status}: {}",
        get(to, from, id).await
    );
}

fn task_id(created: &Value) -> String {
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    created["result"]["taskId"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_made_on_one_replica_is_polled_and_finished_on_another() {
    let (a, b) = two_replicas().await;
    let created = call(a, SARI, "ekspor_gaji", json!({"ms": 300}), true).await;
    let id = task_id(&created);
    assert!(id.len() >= 32, "an unguessable id: {id}");
    assert!(
        created["result"]["ttlMs"].as_u64().is_some_and(|t| t > 0),
        "{created}"
    );
    assert_eq!(created["result"]["status"], "working");
    // Found at once on the other replica, working.
    assert_eq!(get(b, SARI, &id).await["result"]["status"], "working");
    let done = until(b, SARI, &id, "completed").await;
    assert_eq!(
        done["result"]["structuredContent"]["result"], "exported in 300 ms",
        "{done}"
    );
    assert_eq!(done["result"]["isError"], false);
    // The result stays for whoever asks again, on either replica.
    assert_eq!(get(a, SARI, &id).await["result"]["status"], "completed");
}

/// A tool that panics in a task did not answer: the task ends `failed` with an internal error
/// (-32603), whose message keeps the panic's text from the model (the tool did not opt in), and
/// the server goes on serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_whose_tool_panics_fails_with_an_internal_error() {
    let (a, b) = two_replicas().await;
    let id = task_id(&call(a, SARI, "tutup_buku", json!({}), true).await);
    let failed = until(b, SARI, &id, "failed").await;
    assert_eq!(failed["error"]["code"], -32603, "{failed}");
    let message = failed["error"]["message"].as_str().unwrap();
    assert!(!message.contains("row 7"), "{failed}");
    assert!(failed.get("result").is_none(), "{failed}");
    let greeted = call(a, SARI, "sapa", json!({"nama": "Sari"}), true).await;
    assert_eq!(
        greeted["result"]["structuredContent"]["result"],
        "Halo, Sari"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_without_the_extension_gets_todays_answer() {
    let (a, _) = two_replicas().await;
    let answer = call(a, SARI, "ekspor_gaji", json!({"ms": 1}), false).await;
    assert_eq!(
        answer["result"]["structuredContent"]["result"], "exported in 1 ms",
        "{answer}"
    );
    assert!(answer["result"].get("taskId").is_none());
    // A tool that runs only as a task names the capability the caller lacks.
    let refused = call(a, SARI, "bangun_laporan", json!({}), false).await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert_eq!(
        refused["error"]["data"]["requiredCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
        json!({}),
        "{refused}"
    );
    // A plain tool answers in its request, extension or not.
    let plain = call(a, SARI, "sapa", json!({"nama": "Sari"}), true).await;
    assert_eq!(
        plain["result"]["structuredContent"]["result"], "Halo, Sari",
        "{plain}"
    );
    // Arguments are checked before a task is made.
    let bad = call(a, SARI, "ekspor_gaji", json!({"ms": "300"}), true).await;
    assert!(bad["result"].get("taskId").is_none(), "{bad}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_callers_task_is_answered_as_an_unknown_one() {
    let (a, b) = two_replicas().await;
    let id = task_id(&call(a, SARI, "ekspor_gaji", json!({"ms": 2000}), true).await);
    let unknown = "0123456789abcdef0123456789abcdef";
    for (method, params) in [
        ("tasks/get", json!({"taskId": id})),
        ("tasks/cancel", json!({"taskId": id})),
        (
            "tasks/update",
            json!({"taskId": id, "inputResponses": {"approval": {"action": "accept", "content": {"approve": true}}}}),
        ),
    ] {
        let theirs = rpc(b, BUDI, method, params.clone(), true).await;
        let mut guessed = params;
        guessed["taskId"] = json!(unknown);
        let none = rpc(b, BUDI, method, guessed, true).await;
        assert_eq!(theirs["error"]["code"], -32602, "{method}: {theirs}");
        assert_eq!(
            theirs["error"]["message"]
                .as_str()
                .unwrap()
                .replace(&id, "ID"),
            none["error"]["message"]
                .as_str()
                .unwrap()
                .replace(unknown, "ID"),
            "{method}: another caller's task reads exactly as an unknown one"
        );
    }
    // Budi's cancel did nothing: Sari's task still runs.
    assert_eq!(get(a, SARI, &id).await["result"]["status"], "working");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_answered_twenty_times_on_two_replicas_runs_once() {
    let (a, b) = two_replicas().await;
    let id = task_id(&call(a, SARI, "ajukan_cuti", json!({"hari": 2}), true).await);
    let waiting = until(b, SARI, &id, "input_required").await;
    let question = &waiting["inputRequests"]["approval"];
    assert_eq!(question["method"], "elicitation/create", "{waiting}");
    assert_eq!(
        BOOKED[2].load(Ordering::SeqCst),
        0,
        "nothing ran before the approval"
    );
    let approve = json!({"taskId": id, "inputResponses": {"approval": {"action": "accept", "content": {"approve": true}}}});
    let answers = (0..20).map(|i| {
        let params = approve.clone();
        tokio::spawn(async move {
            rpc(
                if i % 2 == 0 { a } else { b },
                SARI,
                "tasks/update",
                params,
                true,
            )
            .await
        })
    });
    for answer in futures_join(answers).await {
        assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    }
    let done = until(a, SARI, &id, "completed").await;
    assert_eq!(
        done["result"]["structuredContent"]["result"], "booked 2 days",
        "{done}"
    );
    assert_eq!(
        BOOKED[2].load(Ordering::SeqCst),
        1,
        "twenty approvals, one booking"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declined_approval_completes_with_the_refusal_and_runs_nothing() {
    let (a, b) = two_replicas().await;
    let id = task_id(&call(a, SARI, "ajukan_cuti", json!({"hari": 3}), true).await);
    until(a, SARI, &id, "input_required").await;
    let decline = json!({"taskId": id, "inputResponses": {"approval": {"action": "accept", "content": {"approve": "true"}}}});
    rpc(b, SARI, "tasks/update", decline, true).await;
    let done = until(a, SARI, &id, "completed").await;
    assert_eq!(done["result"]["isError"], true, "{done}");
    assert!(
        done["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("did not approve"),
        "{done}"
    );
    // An answer to a key it does not wait for is ignored.
    let id = task_id(&call(a, SARI, "ajukan_cuti", json!({"hari": 4}), true).await);
    until(a, SARI, &id, "input_required").await;
    let other = json!({"taskId": id, "inputResponses": {"unknown-key": {"ignored": true}}});
    assert_eq!(
        rpc(b, SARI, "tasks/update", other, true).await["result"]["resultType"],
        "complete"
    );
    assert_eq!(
        get(a, SARI, &id).await["result"]["status"],
        "input_required"
    );
    // Cancelled while it waits: the held call is dropped; a late approval runs nothing.
    rpc(b, SARI, "tasks/cancel", json!({"taskId": id}), true).await;
    let approve = json!({"taskId": id, "inputResponses": {"approval": {"action": "accept", "content": {"approve": true}}}});
    rpc(a, SARI, "tasks/update", approve, true).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(get(a, SARI, &id).await["result"]["status"], "cancelled");
    assert_eq!(
        BOOKED[3].load(Ordering::SeqCst) + BOOKED[4].load(Ordering::SeqCst),
        0,
        "nothing was booked"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_another_person_approves_waits_for_them_and_runs_once_as_its_owner() {
    let tasks: Arc<dyn TaskStore> = Arc::new(MemoryTasks::new());
    let approvals: Arc<dyn ApprovalStore> = Arc::new(MemoryApprovals::new());
    let (a, b) = (
        approver_replica(&tasks, &approvals).await,
        approver_replica(&tasks, &approvals).await,
    );
    let booked = |days: u8| {
        BOOKED_FOR
            .lock()
            .unwrap()
            .iter()
            .filter(|(d, _)| *d == days)
            .map(|(_, who)| *who)
            .collect::<Vec<_>>()
    };
    // Sari's client cannot follow a task, which is the only way this call can wait: the
    // capability it lacks (-32021, the extension's rule), saying why; nothing runs.
    let refused = call(a, SARI, "cuti_atasan", json!({"hari": 5}), false).await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert_eq!(
        refused["error"]["data"]["requiredCapabilities"]["extensions"],
        json!({"io.modelcontextprotocol/tasks": {}}),
        "{refused}"
    );
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("approval by someone else (who holds `cuti.setujui`)"),
        "{refused}"
    );
    // As a task it waits for Budi, saying so; Sari cannot approve it herself.
    let id = task_id(&call(a, SARI, "cuti_atasan", json!({"hari": 5}), true).await);
    let waiting = until(b, SARI, &id, "input_required").await;
    assert!(
        waiting["statusMessage"]
            .as_str()
            .unwrap()
            .contains("`cuti.setujui`"),
        "{waiting}"
    );
    let approve = json!({"taskId": id, "inputResponses": {"approval": {"action": "accept", "content": {"approve": true}}}});
    let own = rpc(b, SARI, "tasks/update", approve, true).await;
    assert_eq!(own["error"]["code"], -32602, "{own}");
    assert!(
        own["error"]["message"]
            .as_str()
            .unwrap()
            .contains("holding `cuti.setujui`"),
        "{own}"
    );
    assert_eq!(
        get(a, SARI, &id).await["result"]["status"],
        "input_required"
    );
    // The desk is Budi's: Sari sees neither tool.
    let hidden = call(
        a,
        SARI,
        "putuskan",
        json!({"task": id, "setuju": true}),
        false,
    )
    .await;
    assert_eq!(hidden["error"]["code"], -32602, "{hidden}");
    // Budi finds it on the other replica, with its arguments; her task stays hers.
    let listed = call(b, BUDI, "daftar", json!({}), false).await;
    assert_eq!(
        listed["result"]["structuredContent"]["result"],
        json!([format!("{id} cuti_atasan {{\"hari\":5}}")]),
        "{listed}"
    );
    assert_eq!(get(b, BUDI, &id).await["error"]["code"], -32602);
    // Ten approvals at once on both replicas: one decides, the booking runs once, as Sari's.
    let decisions = (0..10).map(|i| {
        let id = id.clone();
        tokio::spawn(async move {
            let to = if i % 2 == 0 { a } else { b };
            call(
                to,
                BUDI,
                "putuskan",
                json!({"task": id, "setuju": true}),
                false,
            )
            .await
        })
    });
    let decisions = futures_join(decisions).await;
    let approved = decisions
        .iter()
        .filter(|d| d["result"]["structuredContent"]["result"] == "Approved")
        .count();
    assert_eq!(approved, 1, "{decisions:?}");
    for other in decisions
        .iter()
        .filter(|d| d["result"]["structuredContent"]["result"] != "Approved")
    {
        assert!(
            other["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("waits for your decision"),
            "{other}"
        );
    }
    let done = until(a, SARI, &id, "completed").await;
    assert_eq!(
        done["result"]["structuredContent"]["result"], "booked 5 days for sari",
        "{done}"
    );
    assert_eq!(booked(5), ["sari"], "approved once, run once, as its owner");
    // Rejected: the call is dropped and its task says so.
    let id = task_id(&call(b, SARI, "cuti_atasan", json!({"hari": 6}), true).await);
    until(a, SARI, &id, "input_required").await;
    let rejected = call(
        a,
        BUDI,
        "putuskan",
        json!({"task": id, "setuju": false}),
        false,
    )
    .await;
    assert_eq!(
        rejected["result"]["structuredContent"]["result"], "Rejected",
        "{rejected}"
    );
    let done = until(b, SARI, &id, "completed").await;
    assert_eq!(done["result"]["isError"], true, "{done}");
    assert!(booked(6).is_empty(), "a rejected booking never runs");
    assert_eq!(
        call(a, BUDI, "daftar", json!({}), false).await["result"]["structuredContent"]["result"],
        json!([]),
        "nothing waits any more"
    );
    // Budi holds the grant, and still does not approve his own booking: not himself (its
    // task refuses him), not through his desk (it neither shows nor decides it).
    let own = call(a, BUDI, "cuti_atasan", json!({"hari": 7}), false).await;
    assert_eq!(own["error"]["code"], -32021, "{own}");
    let id = task_id(&call(a, BUDI, "cuti_atasan", json!({"hari": 7}), true).await);
    until(b, BUDI, &id, "input_required").await;
    let approve = json!({"taskId": id, "inputResponses": {"approval": {"action": "accept", "content": {"approve": true}}}});
    let himself = rpc(b, BUDI, "tasks/update", approve, true).await;
    assert_eq!(himself["error"]["code"], -32602, "{himself}");
    assert_eq!(
        call(a, BUDI, "daftar", json!({}), false).await["result"]["structuredContent"]["result"],
        json!([]),
        "his own booking is not on his desk"
    );
    let decided = decide(b, &id, true).await;
    assert!(not_waiting(&decided), "{decided}");
    assert_eq!(
        get(a, BUDI, &id).await["result"]["status"],
        "input_required"
    );
    assert!(booked(7).is_empty(), "nobody else approved it");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tasks_questions_are_answered_one_at_a_time_on_any_replica_then_it_runs_again() {
    let (a, b) = two_replicas().await;
    let arguments = json!({"label": "task"});
    let id = task_id(&call(a, SARI, "dua_pertanyaan", arguments, true).await);
    let waiting = until(b, SARI, &id, "input_required").await;
    let asked = |w: &Value| {
        w["inputRequests"]
            .as_object()
            .map(|m| m.keys().cloned().collect::<Vec<_>>())
            .unwrap_or_default()
    };
    assert_eq!(asked(&waiting), ["nama", "warna"], "{waiting}");
    assert_eq!(
        waiting["inputRequests"]["nama"]["params"]["message"], "Siapa nama Anda?",
        "{waiting}"
    );
    let update =
        |key: &str, value: &str| json!({"taskId": id, "inputResponses": {key: said(value)}});
    let ack = rpc(b, SARI, "tasks/update", update("nama", "Sari"), true).await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let partly = get(a, SARI, &id).await["result"].clone();
    assert_eq!(partly["status"], "input_required", "{partly}");
    assert_eq!(asked(&partly), ["warna"], "only the open question is left");
    // Another caller's answer is refused as for an unknown task, and answers nothing.
    let theirs = rpc(a, BUDI, "tasks/update", update("warna", "merah"), true).await;
    assert_eq!(theirs["error"]["code"], -32602, "{theirs}");
    rpc(a, SARI, "tasks/update", update("warna", "hijau"), true).await;
    let done = until(b, SARI, &id, "completed").await;
    assert_eq!(
        done["result"]["structuredContent"]["result"], "task: Sari likes hijau",
        "{done}"
    );
    assert_eq!(
        runs("task"),
        2,
        "asked once, run again once with both answers"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_call_asks_in_its_result_and_the_retries_carry_the_answers() {
    let (a, _) = two_replicas().await;
    let ask = |arguments: Value, responses: Value, state: &Value| {
        let mut params = json!({"name": "dua_pertanyaan", "arguments": arguments});
        if !state.is_null() {
            params["inputResponses"] = responses;
            params["requestState"] = state.clone();
        }
        rpc(a, SARI, "tools/call", params, false)
    };
    let arguments = json!({"label": "mrtr"});
    let first = ask(arguments.clone(), Value::Null, &Value::Null).await["result"].clone();
    assert_eq!(first["resultType"], "input_required", "{first}");
    let state = first["requestState"].clone();
    let second =
        ask(arguments.clone(), json!({"nama": said("Sari")}), &state).await["result"].clone();
    assert_eq!(second["resultType"], "input_required", "{second}");
    assert_eq!(
        second["inputRequests"].as_object().map(|m| m.len()),
        Some(1),
        "only the open question: {second}"
    );
    assert!(second["inputRequests"].get("warna").is_some(), "{second}");
    // The state is bound to the arguments it was given for.
    let other = json!({"label": "other"});
    let moved = ask(
        other,
        json!({"warna": said("biru")}),
        &second["requestState"],
    )
    .await;
    assert_eq!(moved["error"]["code"], -32602, "{moved}");
    let done = ask(
        arguments,
        json!({"warna": said("hijau")}),
        &second["requestState"],
    )
    .await;
    assert_eq!(
        done["result"]["structuredContent"]["result"], "mrtr: Sari likes hijau",
        "the answer of the first round came back in the state: {done}"
    );
    assert_eq!(runs("mrtr"), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn questions_asked_first_come_back_in_the_retry_which_makes_the_task() {
    let (a, _) = two_replicas().await;
    let call = |responses: Value, state: &Value| {
        let mut params = json!({"name": "sapa_dulu", "arguments": {"label": "first"}});
        if !state.is_null() {
            params["inputResponses"] = responses;
            params["requestState"] = state.clone();
        }
        rpc(a, SARI, "tools/call", params, true)
    };
    let asked = call(Value::Null, &Value::Null).await["result"].clone();
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    assert!(
        asked.get("taskId").is_none(),
        "no task before the answers: {asked}"
    );
    assert_eq!(runs("first"), 0, "nothing ran before the answers");
    let state = asked["requestState"].clone();
    // A retry without the answer is asked again; a forged state is refused.
    let again = call(json!({}), &state).await["result"].clone();
    assert_eq!(again["resultType"], "input_required", "{again}");
    let forged = call(json!({"nama": said("Sari")}), &json!("rs1.forged")).await;
    assert_eq!(forged["error"]["code"], -32602, "{forged}");
    let created = call(json!({"nama": said("Sari")}), &state).await;
    let id = task_id(&created);
    assert!(created["result"].get("requestState").is_none(), "{created}");
    let done = until(a, SARI, &id, "completed").await;
    assert_eq!(
        done["result"]["structuredContent"]["result"], "first: Halo, Sari",
        "the task ran with the answer given before it: {done}"
    );
    assert_eq!(runs("first"), 1);
}

#[tokio::test]
async fn a_sessions_call_asks_through_elicitation_and_runs_again() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let (mut client_in, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, client_out) = tokio::io::duplex(1 << 16);
    let set = ToolSet::new([dua_pertanyaan::tool(), sapa_dulu::tool()]).unwrap();
    tokio::spawn(McpServer::new(set).serve_lines(server_in, server_out));
    for line in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"dua_pertanyaan","arguments":{"label":"session"}}}"#,
    ] {
        client_in
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    }
    let mut lines = tokio::io::BufReader::new(client_out).lines();
    let mut asked = Vec::new();
    let answer = loop {
        let line = lines.next_line().await.unwrap().expect("a line");
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["method"] == "elicitation/create" {
            let question = message["params"]["message"].as_str().unwrap().to_owned();
            let value = if question.contains("nama") {
                "Sari"
            } else {
                "hijau"
            };
            asked.push(question);
            let reply = json!({"jsonrpc": "2.0", "id": message["id"], "result": said(value)});
            client_in
                .write_all(format!("{reply}\n").as_bytes())
                .await
                .unwrap();
        } else if message["id"] == 2 {
            break message;
        }
    };
    assert_eq!(asked, ["Siapa nama Anda?", "Warna kesukaan Anda?"]);
    assert_eq!(
        answer["result"]["structuredContent"]["result"], "session: Sari likes hijau",
        "{answer}"
    );
    assert_eq!(runs("session"), 2);

    // A tool that asks first is asked before it runs, once.
    let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"sapa_dulu","arguments":{"label":"session-first"}}}"#;
    client_in
        .write_all(format!("{call}\n").as_bytes())
        .await
        .unwrap();
    let mut asked = Vec::new();
    let answer = loop {
        let line = lines.next_line().await.unwrap().expect("a line");
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["method"] == "elicitation/create" {
            asked.push(message["params"]["message"].as_str().unwrap().to_owned());
            assert_eq!(runs("session-first"), 0, "asked before it runs");
            let reply = json!({"jsonrpc": "2.0", "id": message["id"], "result": said("Budi")});
            client_in
                .write_all(format!("{reply}\n").as_bytes())
                .await
                .unwrap();
        } else if message["id"] == 3 {
            break message;
        }
    };
    assert_eq!(asked, ["Nama Anda?"]);
    assert_eq!(
        answer["result"]["structuredContent"]["result"], "session-first: Halo, Budi",
        "{answer}"
    );
    assert_eq!(runs("session-first"), 1);
}

#[test]
fn an_approver_is_named_only_for_a_tool_that_waits_for_one_as_a_task() {
    let set = ToolSet::new([sapa::tool(), hapus_data::tool(), cuti_atasan::tool()]).unwrap();
    let mcp = McpServer::new(set);
    let err = |tool| mcp.clone().with_approver(tool, "g").err().unwrap();
    assert!(matches!(err("nope"), ApproverError::UnknownTool { .. }));
    assert!(err("sapa").to_string().contains("`sapa` needs no approval"));
    assert!(
        err("hapus_data")
            .to_string()
            .contains("`hapus_data` never runs as a task")
    );
    assert!(mcp.with_approver("cuti_atasan", "g").is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_on_another_replica_stops_the_running_tool() {
    let (a, b) = two_replicas().await;
    let id = task_id(&call(a, SARI, "ekspor_gaji", json!({"ms": 30_002}), true).await);
    // The progress message becomes the task's, at the next renewal.
    let mut said = Value::Null;
    for _ in 0..40 {
        said = get(b, SARI, &id).await["result"]["statusMessage"].clone();
        if said == "menghitung gaji" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(said, "menghitung gaji");
    let ack = rpc(b, SARI, "tasks/cancel", json!({"taskId": id}), true).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    assert_eq!(get(a, SARI, &id).await["result"]["status"], "cancelled");
    // Replica A stops the export at its next renewal (a third of the 600 ms lease).
    for _ in 0..40 {
        if dropped(30_002) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(dropped(30_002), "the running export was stopped");
    // Cancelling a finished task is the same empty answer.
    let again = rpc(a, SARI, "tasks/cancel", json!({"taskId": id}), true).await;
    assert_eq!(again["result"], json!({"resultType": "complete"}));
}

/// A tool that changes something and has no commit point of its own is committed once it
/// starts: a cancel then loses, on either replica, and the task ends with what the tool did
/// (the extension: a cancelled task "MAY ultimately reach a terminal status other than
/// `cancelled` if the work finished before cancellation could take effect").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_after_a_tool_started_its_change_lets_it_finish_and_says_so() {
    let (a, b) = two_replicas().await;
    let id = task_id(&call(a, SARI, "kirim_slip", json!({"ms": 700}), true).await);
    // The task is answered before its tool runs: the cancels come once it has started.
    let started = std::time::Instant::now();
    while !SLIPS_STARTED.lock().unwrap().contains(&700) {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the tool never started"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    for replica in [b, a] {
        let asked = std::time::Instant::now();
        let ack = rpc(replica, SARI, "tasks/cancel", json!({"taskId": id}), true).await;
        assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
        assert!(
            asked.elapsed() < Duration::from_millis(300),
            "acknowledged at once"
        );
        let task = get(replica, SARI, &id).await["result"].clone();
        assert_eq!(task["status"], "working", "{task}");
        assert!(
            task["statusMessage"]
                .as_str()
                .unwrap_or("")
                .contains("runs to its end"),
            "{task}"
        );
    }
    let done = until(b, SARI, &id, "completed").await;
    assert_eq!(
        done["result"]["structuredContent"]["result"], "sent in 700 ms",
        "{done}"
    );
    assert!(SLIPS_SENT.lock().unwrap().contains(&700), "it sent them");
}

/// A replica whose process stops mid-run (here: its runtime dropped, every task of it gone at
/// once) leaves its task `working` only until its lease ends; then the other replica answers it
/// failed, with the reason, and it never runs again.
#[test]
fn a_replica_that_dies_leaves_its_task_failed_not_working() {
    let tasks: Arc<dyn TaskStore> = Arc::new(MemoryTasks::new());
    let approvals: Arc<dyn ApprovalStore> = Arc::new(MemoryApprovals::new());
    let doomed = tokio::runtime::Runtime::new().unwrap();
    let a = doomed.block_on(replica(&tasks, &approvals, Duration::from_millis(600)));
    let survivor = tokio::runtime::Runtime::new().unwrap();
    let b = survivor.block_on(replica(&tasks, &approvals, Duration::from_millis(600)));
    let id = survivor.block_on(async {
        let id = task_id(&call(a, SARI, "ekspor_gaji", json!({"ms": 30_000}), true).await);
        assert_eq!(get(b, SARI, &id).await["result"]["status"], "working");
        id
    });
    drop(doomed);
    survivor.block_on(async {
        let failed = until(b, SARI, &id, "failed").await;
        assert!(
            failed["statusMessage"]
                .as_str()
                .unwrap()
                .contains("stopped before it finished"),
            "{failed}"
        );
        assert!(failed["error"]["code"].is_i64(), "{failed}");
        assert!(failed.get("result").is_none(), "{failed}");
    });
}

/// One caller holds at most so many tasks at once; the next gets a tool error saying so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_caller_cannot_flood_the_task_store() {
    let tasks: Arc<dyn TaskStore> = Arc::new(MemoryTasks::new());
    let approvals: Arc<dyn ApprovalStore> = Arc::new(MemoryApprovals::new());
    let a = replica(&tasks, &approvals, Duration::from_secs(5)).await;
    let mut made = 0;
    let mut refused = Value::Null;
    for _ in 0..(Tasks::PER_OWNER + 5) {
        let answer = call(a, BUDI, "ekspor_gaji", json!({"ms": 5_000}), true).await;
        if answer["result"]["resultType"] == "task" {
            made += 1;
        } else {
            refused = answer;
        }
    }
    assert_eq!(made, Tasks::PER_OWNER);
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert!(
        refused["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("too many tasks"),
        "{refused}"
    );
    // Another caller is not affected.
    let theirs = call(a, SARI, "ekspor_gaji", json!({"ms": 1}), true).await;
    task_id(&theirs);
}

/// `tasks/*` without `Mcp-Name` (as fastmcp-tasks 4.1.4 sends them) are answered: the name is
/// read from the body; one that disagrees with the body is refused (-32020), as the extension
/// asks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_request_without_its_name_header_is_answered_and_a_wrong_one_refused() {
    let (a, _) = two_replicas().await;
    let id = task_id(&call(a, SARI, "ekspor_gaji", json!({"ms": 1}), true).await);
    let got = rpc_named(a, SARI, "tasks/get", json!({"taskId": id}), true, None).await;
    assert!(got["result"]["status"].is_string(), "{got}");
    let wrong = rpc_named(
        a,
        SARI,
        "tasks/get",
        json!({"taskId": id}),
        true,
        Some("0123abcd"),
    )
    .await;
    assert_eq!(wrong["error"]["code"], -32020, "{wrong}");
}

/// A remote tool the server runs as a task (this crate's client declares the extension): the
/// call follows the task to its result; past the call's time limit, the task is cancelled at
/// the server, whose run stops.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_task_is_followed_to_its_result_and_cancelled_when_the_call_gives_up() {
    use tool_runtime::{Context, ToolError};
    use tool_runtime_mcp::remote::RemoteOptions;
    let (a, _) = two_replicas().await;
    let mut options = RemoteOptions::default();
    options.approval.insert("ekspor_gaji".into(), false);
    options.call_timeout = Duration::from_millis(1500);
    let set = imported(a, options).await;
    let cx = Context::new();
    let out = set
        .call(&cx, "ekspor_gaji", r#"{"ms": 300}"#)
        .await
        .unwrap();
    // The remote's structured content, as any remote call of this tool returns it.
    assert_eq!(out.value()["result"], "exported in 300 ms");
    let late = set
        .call(&cx, "ekspor_gaji", r#"{"ms": 30001}"#)
        .await
        .unwrap_err();
    assert!(matches!(late, ToolError::TimedOut { .. }), "{late:?}");
    for _ in 0..40 {
        if dropped(30_001) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        dropped(30_001),
        "the server's run was stopped by tasks/cancel"
    );
}

/// A remote tool that needs approval at the remote too (the remote runs it as a task waiting in
/// `input_required`): the person who approved the call here has approved it, so that approval is
/// handed through and the booking runs once; a call nobody approved here (the host turned this
/// tool's approval off) is not approved on anyone's behalf: it fails saying it waits for input,
/// and nothing is booked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_given_here_is_handed_through_to_the_remote_task_asking_for_it() {
    use tool_runtime::{Context, ToolError};
    use tool_runtime_mcp::remote::RemoteOptions;
    let (a, _) = two_replicas().await;
    let cx = Context::new();

    let set = imported(a, RemoteOptions::default()).await;
    let held = set
        .call(&cx, "ajukan_cuti", r#"{"hari": 9}"#)
        .await
        .unwrap_err();
    let ToolError::ApprovalRequired(pending) = held else {
        panic!("the call waits for the person here first: {held:?}");
    };
    assert_eq!(BOOKED[9].load(Ordering::SeqCst), 0);
    let out = set.resume(&cx, &pending.ticket).await.unwrap();
    assert_eq!(out.value()["result"], "booked 9 days", "{:?}", out.value());
    assert_eq!(BOOKED[9].load(Ordering::SeqCst), 1, "booked once");

    let mut unapproved = RemoteOptions::default();
    unapproved.approval.insert("ajukan_cuti".into(), false);
    let set = imported(a, unapproved).await;
    let refused = set
        .call(&cx, "ajukan_cuti", r#"{"hari": 10}"#)
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, ToolError::Failed { message, .. } if message.contains("waits for input")),
        "{refused:?}"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(BOOKED[10].load(Ordering::SeqCst), 0, "never booked");
}

/// A host serving a remote long tool (a gateway) runs it as a task of its own when its options
/// say so: its client gets a task handle at once and polls it to the remote's result, while the
/// host follows the remote's own task; without the option the same call is answered inline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_long_tool_served_again_runs_as_a_task_of_the_host() {
    use tool_runtime::TaskSupport;
    use tool_runtime_mcp::remote::RemoteOptions;
    let (a, _) = two_replicas().await;
    let gateway = |tasks: Option<TaskSupport>| async move {
        let mut options = RemoteOptions::default();
        options.approval.insert("ekspor_gaji".into(), false);
        if let Some(support) = tasks {
            options.tasks.insert("ekspor_gaji".into(), support);
        }
        let store: Arc<dyn TaskStore> = Arc::new(MemoryTasks::new());
        let tasks = Tasks::shared(store).with_poll_interval(Duration::from_millis(50));
        serve(McpServer::new(imported(a, options).await).with_tasks(tasks)).await
    };

    let host = gateway(Some(TaskSupport::Optional)).await;
    let created = call(host, SARI, "ekspor_gaji", json!({"ms": 400}), true).await;
    let id = task_id(&created);
    assert_eq!(created["result"]["status"], "working", "{created}");
    let done = until(host, SARI, &id, "completed").await;
    assert_eq!(
        done["result"]["structuredContent"]["result"], "exported in 400 ms",
        "{done}"
    );

    let inline = gateway(None).await;
    let answered = call(inline, SARI, "ekspor_gaji", json!({"ms": 401}), true).await;
    assert_eq!(
        answered["result"]["structuredContent"]["result"], "exported in 401 ms",
        "answered inline, not as a task: {answered}"
    );
}

/// Joins spawned requests in order.
async fn futures_join(handles: impl Iterator<Item = tokio::task::JoinHandle<Value>>) -> Vec<Value> {
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

/// The extension's rules, each seen from a raw client: a 2025-11-25 session that declares the
/// extension at `initialize` gets no task (the extension "MUST NOT" enable tasks under
/// 2025-11-25): a tool that may run as one answers in its request, and one that runs only as a
/// task is refused with the capability it lacks.
#[tokio::test]
async fn a_2025_session_declaring_the_extension_gets_no_task() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let (mut client_in, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, client_out) = tokio::io::duplex(1 << 16);
    let set = ToolSet::new([ekspor_gaji::tool(), bangun_laporan::tool()]).unwrap();
    tokio::spawn(McpServer::new(set).serve_lines(server_in, server_out));
    for line in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}},"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ekspor_gaji","arguments":{"ms":5}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"bangun_laporan","arguments":{}}}"#,
    ] {
        client_in
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    }
    let mut lines = tokio::io::BufReader::new(client_out).lines();
    let (mut answered, mut refused) = (None, None);
    while answered.is_none() || refused.is_none() {
        let line = lines.next_line().await.unwrap().expect("a line");
        let message: Value = serde_json::from_str(&line).unwrap();
        match message["id"].as_i64() {
            Some(2) => answered = Some(message),
            Some(3) => refused = Some(message),
            _ => {}
        }
    }
    let answered = answered.unwrap();
    assert_eq!(
        answered["result"]["structuredContent"]["result"], "exported in 5 ms",
        "answered in its request, not as a task: {answered}"
    );
    assert!(answered["result"].get("taskId").is_none(), "{answered}");
    let refused = refused.unwrap();
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
}

/// `subscriptions/listen` asking for task notifications (`taskIds`) from a client that did not
/// declare the extension is refused with -32021 and the capability it lacks (HTTP 400); the
/// same request from a client that declared it is acknowledged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_notifications_asked_without_the_extension_are_refused() {
    let (a, _) = two_replicas().await;
    let listen = |tasks: bool| {
        let capabilities = if tasks {
            json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})
        } else {
            json!({})
        };
        let body = json!({"jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen", "params": {
            "notifications": {"taskIds": ["0123456789abcdef0123456789abcdef"], "toolsListChanged": true},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": capabilities,
            }}})
        .to_string();
        format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2026-07-28\r\nMcp-Method: subscriptions/listen\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            a.port(),
            body.len()
        )
    };
    // Until the answer holds `until` (a listen stream stays open), at most 5 s.
    let exchange = |request: String, until: &'static str| async move {
        let mut stream = tokio::net::TcpStream::connect(a).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut answer = Vec::new();
        let mut buf = [0u8; 4096];
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while !String::from_utf8_lossy(&answer).contains(until) {
            match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
                Ok(Ok(n)) if n > 0 => answer.extend_from_slice(&buf[..n]),
                _ => break,
            }
        }
        String::from_utf8(answer).unwrap()
    };
    let refused = exchange(listen(false), "}}}").await;
    assert!(refused.starts_with("HTTP/1.1 400"), "{refused}");
    let body: Value = serde_json::from_str(refused.split_once("\r\n\r\n").unwrap().1).unwrap();
    assert_eq!(body["id"], 9, "{body}");
    assert_eq!(body["error"]["code"], -32021, "{body}");
    assert_eq!(
        body["error"]["data"]["requiredCapabilities"]["extensions"],
        json!({"io.modelcontextprotocol/tasks": {}}),
        "{body}"
    );
    let acknowledged = exchange(listen(true), "acknowledged").await;
    assert!(acknowledged.starts_with("HTTP/1.1 200"), "{acknowledged}");
    assert!(
        acknowledged.contains("notifications/subscriptions/acknowledged"),
        "{acknowledged}"
    );
}

/// A call whose held arguments left the approval store while its task waited (the store's own
/// age bound, here a second) is not approved: the approver is told it no longer waits, its
/// task ends saying so, and nothing runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_whose_held_call_left_the_store_is_not_approved() {
    let tasks: Arc<dyn TaskStore> = Arc::new(MemoryTasks::new());
    let approvals: Arc<dyn ApprovalStore> =
        Arc::new(MemoryApprovals::bounded(100, Duration::from_secs(1)));
    let a = approver_replica(&tasks, &approvals).await;
    let id = task_id(&call(a, SARI, "cuti_atasan", json!({"hari": 11}), true).await);
    until(a, SARI, &id, "input_required").await;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let decided = decide(a, &id, true).await;
    assert!(not_waiting(&decided), "{decided}");
    let done = until(a, SARI, &id, "completed").await;
    assert_eq!(done["result"]["isError"], true, "{done}");
    assert!(
        done.to_string().contains("no longer waiting for approval"),
        "{done}"
    );
    assert!(
        !BOOKED_FOR.lock().unwrap().iter().any(|(d, _)| *d == 11),
        "nothing ran"
    );
}
