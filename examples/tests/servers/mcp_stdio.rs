//! The HR MCP server as a child process, driven over stdio by rmcp's own client.

use rmcp::model::{CallToolRequestParams, PaginatedRequestParams};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

fn server(nik: &str, peran: &str, page_size: usize, tag: &str) -> TokioChildProcess {
    let dir = std::env::temp_dir().join(format!("hr-mcp-test-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_hr-mcp"));
    cmd.env("HR_NIK", nik)
        .env("HR_PERAN", peran)
        .env("HR_DB", dir.join("hr.sqlite"))
        .env("HR_MCP_PAGE_SIZE", page_size.to_string());
    TokioChildProcess::new(cmd).unwrap()
}

async fn start(nik: &str, peran: &str, page_size: usize) -> RunningService<RoleClient, ()> {
    let tag = format!("{nik}-{page_size}");
    ().serve(server(nik, peran, page_size, &tag))
        .await
        .expect("handshake")
}

/// A client whose user approves (or declines) every elicitation.
struct Approver {
    approve: bool,
}

impl rmcp::ClientHandler for Approver {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        serde_json::from_value(json!({
            "protocolVersion": "2025-11-25",
            "capabilities": { "elicitation": { "form": {} } },
            "clientInfo": { "name": "approver", "version": "0" }
        }))
        .unwrap()
    }

    async fn create_elicitation(
        &self,
        _request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::model::ErrorData> {
        use rmcp::model::{ElicitResult, ElicitationAction};
        Ok(if self.approve {
            ElicitResult::new(ElicitationAction::Accept).with_content(json!({ "approve": true }))
        } else {
            ElicitResult::new(ElicitationAction::Decline)
        })
    }
}

#[tokio::test]
async fn approval_is_asked_through_elicitation() {
    let request = || {
        CallToolRequestParams::new("ajukan-cuti")
            .with_arguments(args(json!({"mulai": "2026-12-21", "hari": 2})))
    };
    let yes = Approver { approve: true }
        .serve(server("K-001", "karyawan", 50, "approve"))
        .await
        .unwrap();
    let done = yes.call_tool(request()).await.unwrap();
    assert_eq!(done.is_error, Some(false), "{done:?}");
    assert_eq!(
        done.structured_content,
        Some(json!({"status": "diajukan", "sisa_cuti": 5, "bentrok": null}))
    );
    yes.cancel().await.unwrap();

    let no = Approver { approve: false }
        .serve(server("K-001", "karyawan", 50, "decline"))
        .await
        .unwrap();
    let refused = no.call_tool(request()).await.unwrap();
    assert_eq!(refused.is_error, Some(true));
    let balance = no
        .call_tool(CallToolRequestParams::new("cek-sisa-cuti"))
        .await
        .unwrap();
    assert_eq!(
        balance.structured_content.unwrap()["sisa_cuti"],
        7,
        "nothing changed"
    );
    no.cancel().await.unwrap();
}

fn args(v: Value) -> serde_json::Map<String, Value> {
    v.as_object().unwrap().clone()
}

#[tokio::test]
async fn lists_only_the_callers_tools_with_schemas_and_annotations() {
    let client = start("K-001", "karyawan", 50).await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "cek-sisa-cuti",
            "cek-riwayat-cuti",
            "cek-status-reimburse",
            "ajukan-cuti"
        ]
    );
    let sisa = &tools[0];
    // The HR set words its boundary sentence in Indonesian (`Wording::indonesian`).
    assert!(
        sisa.description
            .as_deref()
            .unwrap()
            .contains("Bukan untuk: ")
    );
    assert!(sisa.output_schema.is_some());
    assert_eq!(
        sisa.annotations.as_ref().unwrap().read_only_hint,
        Some(true)
    );
    assert_eq!(sisa.title.as_deref(), Some("Sisa cuti"));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn pages_through_tools_with_an_opaque_cursor() {
    let client = start("M-001", "manajer", 2).await;
    let first = client.list_tools(None).await.unwrap();
    assert_eq!(first.tools.len(), 2);
    let cursor = first.next_cursor.clone().expect("more pages");
    let second = client
        .list_tools(Some(
            PaginatedRequestParams::default().with_cursor(Some(cursor)),
        ))
        .await
        .unwrap();
    assert_eq!(second.tools.len(), 2);
    assert_ne!(first.tools[0].name, second.tools[0].name);
    let all = client.list_all_tools().await.unwrap();
    assert_eq!(all.len(), 5, "a manager sees the team tool too");
    let bad = client
        .list_tools(Some(
            PaginatedRequestParams::default().with_cursor(Some("not-a-cursor".into())),
        ))
        .await;
    assert!(bad.is_err(), "an invalid cursor is a clear error");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn calls_return_structured_content_and_errors_as_data() {
    let client = start("K-001", "karyawan", 50).await;
    let ok = client
        .call_tool(CallToolRequestParams::new("cek-sisa-cuti"))
        .await
        .unwrap();
    assert_eq!(ok.is_error, Some(false));
    let expected = json!({"status": "ok", "nama": "Sari", "sisa_cuti": 7, "cuti_terpakai": 5});
    assert_eq!(ok.structured_content, Some(expected.clone()));
    let text = serde_json::to_value(&ok.content[0]).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(text["text"].as_str().unwrap()).unwrap(),
        expected
    );

    // The model tries to name another employee: a tool error it can read, not a protocol error.
    let bad = client
        .call_tool(
            CallToolRequestParams::new("cek-sisa-cuti")
                .with_arguments(args(json!({"nik": "K-002"}))),
        )
        .await
        .unwrap();
    assert_eq!(bad.is_error, Some(true));
    let msg = serde_json::to_value(&bad.content[0]).unwrap()["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(msg.starts_with("Argumen tidak valid:"), "{msg}");
    assert!(msg.contains("`nik` is not a known field"), "{msg}");

    // Booking leave needs a person's approval; without elicitation it is a clear tool error
    // that says nothing was done (the held call is dropped).
    let ajukan = client
        .call_tool(
            CallToolRequestParams::new("ajukan-cuti")
                .with_arguments(args(json!({"mulai": "2026-12-21", "hari": 2}))),
        )
        .await
        .unwrap();
    assert_eq!(ajukan.is_error, Some(true));
    let msg = serde_json::to_value(&ajukan.content[0]).unwrap()["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(msg.contains("tidak bisa memintanya"), "{msg}");
    assert!(msg.contains("tidak ada yang diubah"), "{msg}");

    // Unknown tools, and tools this caller may not see, are JSON-RPC errors.
    assert!(
        client
            .call_tool(CallToolRequestParams::new("hapus-semua"))
            .await
            .is_err()
    );
    assert!(
        client
            .call_tool(CallToolRequestParams::new("cek-cuti-tim"))
            .await
            .is_err()
    );
    client.cancel().await.unwrap();
}

/// The same server driven by the official Python SDK (`mcp`, installed on first use).
#[test]
fn the_python_sdk_client_agrees() {
    crate::common::run_python_script("python_client.py", &[env!("CARGO_BIN_EXE_hr-mcp")]);
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"probe","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// Runs the server binary on `lines`, closes its input, and returns what it wrote.
fn exchange(lines: &[Vec<u8>]) -> (Vec<Value>, std::process::ExitStatus) {
    let (values, status, _) = exchange_with(lines, &[]);
    (values, status)
}

/// [`exchange`] with more environment, returning also what the server logged on stderr.
fn exchange_with(
    lines: &[Vec<u8>],
    env: &[(&str, &str)],
) -> (Vec<Value>, std::process::ExitStatus, String) {
    use std::io::Write;
    let dir = std::env::temp_dir().join(format!("hr-mcp-raw-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_hr-mcp"))
        .env("HR_DB", dir.join("hr.sqlite"))
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let lines = lines.to_vec();
    let writer = std::thread::spawn(move || {
        for l in lines {
            let _ = stdin.write_all(&l);
            let _ = stdin.write_all(b"\n");
        }
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let values = text
        .lines()
        .map(|l| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("stdout holds only protocol messages: {e}: {l}"))
        })
        .collect();
    (
        values,
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_hidden_tool_is_unknown_to_the_caller_and_logged_for_the_host() {
    let call = |id: u32, name: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{{}}}}}}"#)
            .into_bytes()
    };
    let lines = [
        INIT.as_bytes().to_vec(),
        INITIALIZED.as_bytes().to_vec(),
        br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#.to_vec(),
        call(3, "cek-cuti-tim"),
        call(4, "cek-sisa-cuty"),
        call(5, "cek-cuti-tm"),
    ];
    let env = [
        ("HR_PERAN", "karyawan"),
        ("RUST_LOG", "tool_runtime_mcp=debug"),
    ];
    let (answers, _, log) = exchange_with(&lines, &env);
    let message = |id: u32| {
        let answer = answers.iter().find(|a| a["id"] == id).unwrap();
        answer["error"]["message"].as_str().unwrap().to_owned()
    };
    // The caller learns nothing of the hidden tool, not even as a suggestion.
    assert!(
        message(3).starts_with("Tidak ada tool bernama `cek-cuti-tim`.")
            && !message(3).contains("hr.tim"),
        "{}",
        message(3)
    );
    assert!(!message(5).contains("cek-cuti-tim"), "{}", message(5));
    // A close name among the tools it may see is suggested.
    assert!(message(4).contains("`cek-sisa-cuti`?"), "{}", message(4));
    // The host sees why: the tool, the grant it needs, and the caller, for the list and the call.
    let hidden: Vec<&str> = log.lines().filter(|l| l.contains("tool hidden")).collect();
    assert_eq!(hidden.len(), 2, "{log}");
    for line in hidden {
        assert!(line.contains("cek-cuti-tim"), "{line}");
        assert!(line.contains("hr.tim.cuti.baca"), "{line}");
        assert!(
            line.contains("caller=\"local\"") || line.contains("caller=local"),
            "{line}"
        );
    }
}

/// Every kind of bad line the server has met, each with the id and error code of its one answer.
fn bad_lines() -> Vec<(Vec<u8>, Value, i64)> {
    let call = |id: &str, params: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{params}}}"#)
    };
    let deep = call(
        "9",
        &format!(
            r#"{{"name":"cek-sisa-cuti","arguments":{{"x":{}{}}}}}"#,
            "[".repeat(300),
            "]".repeat(300)
        ),
    );
    let huge = call(
        "10",
        &format!(
            r#"{{"name":"cek-sisa-cuti","arguments":{{"x":"{}"}}}}"#,
            "a".repeat(9 * 1024 * 1024)
        ),
    );
    let many = call(
        "11",
        &format!(
            r#"{{"name":"cek-sisa-cuti","arguments":{{"x":[{}]}}}}"#,
            vec!["1"; 100_001].join(",")
        ),
    );
    let mut not_utf8 = call("12", r#"{"name":"cek-sisa-cuti","arguments":{}}"#).into_bytes();
    not_utf8.insert(not_utf8.len() - 20, 0xff);
    let null = Value::Null;
    let text = |(line, id, code): (String, Value, i64)| (line.into_bytes(), id, code);
    let mut lines: Vec<_> = [
        ("this is not json".to_owned(), null.clone(), -32700),
        (
            r#"{"jsonrpc":"2.0","id":2,"method":"no/such"}"#.to_owned(),
            2.into(),
            -32601,
        ),
        (
            call("3", r#"{"name":"cek-sisa-cuti","arguments":[1]}"#),
            3.into(),
            -32602,
        ),
        (
            call("4", r#"{"name":"cek-sisa-cuti","arguments":"{}"}"#),
            4.into(),
            -32602,
        ),
        (call("5", r#"{"arguments":{}}"#), 5.into(), -32602),
        (
            call("6", r#"{"name":"hapus-semua","arguments":{}}"#),
            6.into(),
            -32602,
        ),
        // An id without a method: rmcp's own transport answers it, so must we.
        (
            r#"{"jsonrpc":"2.0","id":7,"params":{}}"#.to_owned(),
            7.into(),
            -32600,
        ),
        (
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/list","params":[1]}"#.to_owned(),
            8.into(),
            -32600,
        ),
        (deep, 9.into(), -32600),
        (huge, 10.into(), -32600),
        (many, 11.into(), -32600),
        (
            call(
                "13",
                r#"{"name":"cek-sisa-cuti","arguments":{"nik":"1","nik":"2"}}"#,
            ),
            13.into(),
            -32600,
        ),
        (
            r#"{"jsonrpc":"1.0","id":14,"method":"tools/list"}"#.to_owned(),
            14.into(),
            -32600,
        ),
        (
            r#"{"id":15,"method":"tools/list"}"#.to_owned(),
            15.into(),
            -32600,
        ),
        (
            r#"{"jsonrpc":"2.0","id":16,"method":5}"#.to_owned(),
            16.into(),
            -32600,
        ),
        ("[]".to_owned(), null.clone(), -32600),
        (
            r#"[{"jsonrpc":"2.0","id":17,"method":"tools/list"}]"#.to_owned(),
            null.clone(),
            -32600,
        ),
        ("42".to_owned(), null.clone(), -32600),
        (
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}"#.to_owned(),
            null.clone(),
            -32600,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}"#.to_owned(),
            null.clone(),
            -32600,
        ),
    ]
    .into_iter()
    .map(text)
    .collect();
    lines.push((not_utf8, 12.into(), -32700));
    lines
}

#[test]
fn every_bad_line_gets_exactly_one_answer_and_the_server_exits_when_input_closes() {
    let bad = bad_lines();
    assert_eq!(bad.len(), 21);
    let mut lines = vec![INIT.as_bytes().to_vec(), INITIALIZED.as_bytes().to_vec()];
    lines.extend(bad.iter().map(|(line, ..)| line.clone()));
    lines.push(
        br#"{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"cek-sisa-cuti","arguments":{}}}"#
            .to_vec(),
    );
    let (answers, status) = exchange(&lines);
    assert!(status.success(), "clean exit when stdin closes: {status}");
    let mut got: Vec<(String, Value)> = answers
        .iter()
        .filter(|a| a["id"] != 1 && a["id"] != 99)
        .map(|a| (a["id"].to_string(), a["error"]["code"].clone()))
        .collect();
    let mut want: Vec<(String, Value)> = bad
        .iter()
        .map(|(_, id, code)| (id.to_string(), Value::from(*code)))
        .collect();
    got.sort_by(|a, b| (&a.0, a.1.to_string()).cmp(&(&b.0, b.1.to_string())));
    want.sort_by(|a, b| (&a.0, a.1.to_string()).cmp(&(&b.0, b.1.to_string())));
    assert_eq!(got, want, "{answers:#?}");
    for answer in &answers {
        if let Some(message) = answer["error"]["message"].as_str() {
            assert!(message.len() > 10, "an error says what was wrong: {answer}");
        }
    }
    assert!(
        answers
            .iter()
            .any(|a| a["id"] == 99 && a["result"]["structuredContent"]["nama"] == "Sari"),
        "a good call after all the bad lines is served"
    );
}

#[tool_runtime::tool(description = "Selalu panik, untuk menguji bahwa server tetap hidup.")]
fn selalu_panik() -> u32 {
    panic!("rahasia internal")
}

#[tokio::test]
async fn a_panicking_tool_is_an_error_result_and_the_server_goes_on() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let (client_in, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, client_out) = tokio::io::duplex(1 << 16);
    let server = tool_runtime_mcp::McpServer::new(
        tool_runtime::ToolSet::new([selalu_panik::tool()]).unwrap(),
    );
    let task = tokio::spawn(server.serve_lines(server_in, server_out));
    let mut client_in = client_in;
    for line in [
        INIT,
        INITIALIZED,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"selalu_panik","arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
    ] {
        client_in
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    }
    let mut lines = tokio::io::BufReader::new(client_out).lines();
    let mut answers = Vec::new();
    while answers.len() < 3 {
        let line = lines.next_line().await.unwrap().expect("an answer");
        answers.push(serde_json::from_str::<Value>(&line).unwrap());
    }
    drop(client_in);
    task.await.unwrap().unwrap();
    let call = answers.iter().find(|a| a["id"] == 2).unwrap();
    assert_eq!(call["result"]["isError"], true);
    assert!(
        !call.to_string().contains("rahasia"),
        "the panic message stays out of the model's view"
    );
    assert!(
        answers
            .iter()
            .any(|a| a["id"] == 3 && a["result"]["tools"][0]["name"] == "selalu_panik")
    );
}

#[tool_runtime::tool(description = "Alat kedua, ditambahkan saat server berjalan.")]
fn alat_baru() -> bool {
    true
}

#[tokio::test]
async fn a_changed_tool_set_is_announced() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let (client_in, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, client_out) = tokio::io::duplex(1 << 16);
    let server = tool_runtime_mcp::McpServer::new(
        tool_runtime::ToolSet::new([selalu_panik::tool()]).unwrap(),
    );
    let handle = server.clone();
    let task = tokio::spawn(server.serve_lines(server_in, server_out));
    let mut client_in = client_in;
    let mut lines = tokio::io::BufReader::new(client_out).lines();
    client_in
        .write_all(format!("{INIT}\n{INITIALIZED}\n").as_bytes())
        .await
        .unwrap();
    let init: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(init["result"]["capabilities"]["tools"]["listChanged"], true);
    // The client is registered once the server has handled `initialized`; until then a change
    // has no one to tell, so announce it again until the notification arrives.
    let replacement =
        || tool_runtime::ToolSet::new([selalu_panik::tool(), alat_baru::tool()]).unwrap();
    let mut note = Value::Null;
    for _ in 0..50 {
        handle.replace_tools(replacement()).await;
        let wait = std::time::Duration::from_millis(200);
        if let Ok(line) = tokio::time::timeout(wait, lines.next_line()).await {
            note = serde_json::from_str(&line.unwrap().unwrap()).unwrap();
            break;
        }
    }
    assert_eq!(note["method"], "notifications/tools/list_changed");
    client_in
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n")
        .await
        .unwrap();
    let list = loop {
        let line: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
        if line["id"] == 2 {
            break line;
        }
    };
    assert_eq!(list["result"]["tools"].as_array().unwrap().len(), 2);
    drop(client_in);
    task.await.unwrap().unwrap();
}

/// Two server processes for one employee on one database file.
async fn two_processes(nik: &str, tag: &str) -> [RunningService<RoleClient, Approver>; 2] {
    let dir = std::env::temp_dir().join(format!("hr-mcp-two-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let start = || {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_hr-mcp"));
        // Each booking holds its transaction 30 ms: bookings from both processes overlap.
        cmd.env("HR_NIK", nik)
            .env("HR_DB", dir.join("hr.sqlite"))
            .env("HR_SLOW_BOOKING_MS", "30");
        Approver { approve: true }.serve(TokioChildProcess::new(cmd).unwrap())
    };
    // The first creates and seeds the file; then the second opens it.
    let first = start().await.unwrap();
    let second = start().await.unwrap();
    [first, second]
}

/// Books leave from both processes at once, every request approved; the statuses.
async fn book_at_once(
    servers: &[RunningService<RoleClient, Approver>; 2],
    starts: &[&str],
    days: u32,
) -> Vec<Value> {
    let calls: Vec<_> = starts
        .iter()
        .enumerate()
        .map(|(i, start)| {
            let peer = servers[i % 2].peer().clone();
            let request = CallToolRequestParams::new("ajukan-cuti")
                .with_arguments(args(json!({"mulai": start, "hari": days})));
            tokio::spawn(async move { peer.call_tool(request).await.unwrap() })
        })
        .collect();
    let mut out = Vec::new();
    for c in calls {
        out.push(c.await.unwrap().structured_content.unwrap());
    }
    out
}

#[tokio::test]
async fn concurrent_approved_bookings_from_two_processes_never_overdraw() {
    for round in 0..3 {
        let servers = two_processes("K-001", &format!("overdraw-{round}")).await;
        // Sari has 7 days: eight requests of 2 days, on eight different weeks.
        let starts = [
            "2027-01-04",
            "2027-01-11",
            "2027-01-18",
            "2027-01-25",
            "2027-02-01",
            "2027-02-08",
            "2027-02-15",
            "2027-02-22",
        ];
        let results = book_at_once(&servers, &starts, 2).await;
        let booked = results.iter().filter(|r| r["status"] == "diajukan").count();
        let short = results
            .iter()
            .filter(|r| r["status"] == "kuota-kurang")
            .count();
        assert_eq!((booked, short), (3, 5), "round {round}: {results:?}");
        let balance = servers[1]
            .call_tool(CallToolRequestParams::new("cek-sisa-cuti"))
            .await
            .unwrap()
            .structured_content
            .unwrap();
        assert_eq!(balance["sisa_cuti"], 1, "round {round}");
        let history = servers[0]
            .call_tool(
                CallToolRequestParams::new("cek-riwayat-cuti")
                    .with_arguments(args(json!({"tahun": 2027}))),
            )
            .await
            .unwrap()
            .structured_content
            .unwrap();
        assert_eq!(
            history["tanggal"].as_array().unwrap().len(),
            6,
            "round {round}"
        );
        for s in servers {
            s.cancel().await.unwrap();
        }
    }
}

#[tokio::test]
async fn the_same_day_is_booked_once_across_processes() {
    let servers = two_processes("M-001", "same-day").await;
    let results = book_at_once(&servers, &["2027-03-01", "2027-03-02"], 2).await;
    let mut statuses: Vec<&str> = results
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    statuses.sort();
    assert_eq!(statuses, ["bentrok", "diajukan"], "{results:?}");
    let clash = results.iter().find(|r| r["status"] == "bentrok").unwrap();
    assert_eq!(clash["bentrok"], "2027-03-02", "the day both asked for");
    // Dewi had 10 days; only one request of 2 took effect.
    let balance = servers[0]
        .call_tool(CallToolRequestParams::new("cek-sisa-cuti"))
        .await
        .unwrap()
        .structured_content
        .unwrap();
    assert_eq!(balance["sisa_cuti"], 8);
    for s in servers {
        s.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn impossible_dates_are_refused_before_the_tool_runs() {
    let client = Approver { approve: true }
        .serve(server("K-001", "karyawan", 50, "dates"))
        .await
        .unwrap();
    for bad in ["2026-02-30", "2026-99-99", "2026-2-3", "besok"] {
        let answer = client
            .call_tool(
                CallToolRequestParams::new("ajukan-cuti")
                    .with_arguments(args(json!({"mulai": bad, "hari": 1}))),
            )
            .await
            .unwrap();
        assert_eq!(answer.is_error, Some(true), "{bad}");
        let text = format!("{:?}", answer.content);
        assert!(
            text.contains("`mulai`") && text.contains(bad),
            "{bad}: {text}"
        );
    }
    client.cancel().await.unwrap();
}

/// The resident memory of a process, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[test]
fn a_client_that_stops_reading_stops_being_read_from() {
    use std::io::{BufRead, Write};
    use std::sync::atomic::{AtomicUsize, Ordering};
    const TOTAL: usize = 100_000;
    let dir = std::env::temp_dir().join(format!("hr-mcp-noread-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut child = Killed(
        std::process::Command::new(env!("CARGO_BIN_EXE_hr-mcp"))
            .env("HR_DB", dir.join("hr.sqlite"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut stdin = child.0.stdin.take().unwrap();
    let written = std::sync::Arc::new(AtomicUsize::new(0));
    let count = written.clone();
    let writer = std::thread::spawn(move || {
        let _ = writeln!(stdin, "{INIT}\n{INITIALIZED}");
        // Ids from 100 on: 1 is the initialize request's.
        for id in 100..100 + TOTAL {
            if writeln!(stdin, r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#).is_err() {
                return;
            }
            count.fetch_add(1, Ordering::SeqCst);
        }
    });
    // Nobody reads the answers: the server stops reading once its bounded queues are full, so
    // the writer blocks long before it is done.
    let mut stalled = 0;
    for _ in 0..100 {
        std::thread::sleep(std::time::Duration::from_millis(50));
        let before = written.load(Ordering::SeqCst);
        std::thread::sleep(std::time::Duration::from_millis(50));
        if written.load(Ordering::SeqCst) == before {
            stalled += 1;
            if stalled == 3 {
                break;
            }
        }
    }
    let sent = written.load(Ordering::SeqCst);
    assert!(
        sent < TOTAL / 2,
        "the server kept reading: {sent} of {TOTAL} sent"
    );
    let rss = rss_kib(child.0.id());
    assert!(rss < 64 * 1024, "memory stays bounded: {rss} KiB");
    // Reading again: every request is answered exactly once.
    let stdout = std::io::BufReader::new(child.0.stdout.take().unwrap());
    let mut seen = vec![false; 100 + TOTAL];
    let mut answers = 0;
    for line in stdout.lines() {
        let v: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if let Some(id) = v["id"].as_u64().filter(|&id| id >= 100) {
            assert!(!seen[id as usize], "{id} answered twice");
            seen[id as usize] = true;
            answers += 1;
            if answers == TOTAL {
                break;
            }
        }
    }
    writer.join().unwrap();
    assert_eq!(answers, TOTAL);
}

/// A child process killed when dropped (also when a test fails).
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A 2026-07-28 client on stdio: no `initialize`, each request carries its version and
/// capabilities. Approval is a Multi Round-Trip Request here too: the booking is held, the
/// answer comes back with the signed state, and it runs once.
#[test]
fn a_2026_client_on_stdio_approves_through_a_second_request() {
    use std::io::{BufRead, BufReader, Write};
    let dir = std::env::temp_dir().join(format!("hr-mcp-mrtr-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let _ = std::fs::remove_file(dir.join("hr.sqlite"));
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_hr-mcp"))
        .env("HR_DB", dir.join("hr.sqlite"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut ask = |message: Value| -> Value {
        writeln!(stdin, "{message}").unwrap();
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    };
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    });
    let arguments = json!({"mulai": "2027-08-02", "hari": 1});
    let first = ask(
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "_meta": meta, "name": "ajukan-cuti", "arguments": arguments}}),
    );
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    let state = result["requestState"].as_str().unwrap();
    let retry = |id: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "_meta": meta, "name": "ajukan-cuti", "arguments": arguments,
            "inputResponses": {"approval": {"action": "accept", "content": {"approve": true}}},
            "requestState": state}})
    };
    let second = ask(retry(2));
    assert_eq!(second["result"]["isError"], false, "{second}");
    assert_eq!(
        second["result"]["structuredContent"]["status"], "diajukan",
        "{second}"
    );
    let third = ask(retry(3));
    assert_eq!(third["result"]["isError"], true, "runs once: {third}");
    drop(stdin);
    child.wait().unwrap();
}

/// Progress and cancellation with the official Python SDK: a call with a `progressToken` gets
/// the tool's `notifications/progress` in order (none without one), a blocking tool run after
/// the person's approval is not told it was cancelled, and `notifications/cancelled` stops a
/// running sync tool (it polls its handle: the count it keeps stops moving).
#[test]
fn the_python_sdk_client_gets_progress_and_cancels() {
    crate::common::run_python_script(
        "python_progress_client.py",
        &[env!("CARGO_BIN_EXE_mcp-conformance")],
    );
}

/// A person who approves, but only once the test says so; tells the test when asked.
struct LateApprover {
    asked: tokio::sync::mpsc::Sender<()>,
    decide: std::sync::Arc<tokio::sync::Notify>,
}

impl rmcp::ClientHandler for LateApprover {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        Approver { approve: true }.get_info()
    }

    async fn create_elicitation(
        &self,
        _request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::model::ErrorData> {
        use rmcp::model::{ElicitResult, ElicitationAction};
        let _ = self.asked.send(()).await;
        self.decide.notified().await;
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({ "approve": true })))
    }
}

/// A request cancelled while its call waits for the person's approval: the held call is
/// dropped, so the approval that comes afterwards runs nothing.
#[tokio::test]
async fn a_call_cancelled_while_waiting_for_approval_never_runs() {
    use rmcp::model::{ClientRequest, Request};
    use rmcp::service::PeerRequestOptions;
    let (asked, mut was_asked) = tokio::sync::mpsc::channel(1);
    let decide = std::sync::Arc::new(tokio::sync::Notify::new());
    let client = LateApprover {
        asked,
        decide: decide.clone(),
    }
    .serve(server("K-001", "karyawan", 50, "late"))
    .await
    .unwrap();
    let request = ClientRequest::CallToolRequest(Request::new(
        CallToolRequestParams::new("ajukan-cuti")
            .with_arguments(args(json!({"mulai": "2026-12-21", "hari": 2}))),
    ));
    let handle = client
        .peer()
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    was_asked.recv().await.expect("the person was asked");
    handle.cancel(Some("the user left".into())).await.unwrap();
    // The server needs a moment to read the cancellation before the approval arrives.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    decide.notify_one();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let balance = client
        .call_tool(CallToolRequestParams::new("cek-sisa-cuti"))
        .await
        .unwrap();
    assert_eq!(
        balance.structured_content.unwrap()["sisa_cuti"],
        7,
        "the cancelled request's leave was not filed"
    );
    client.cancel().await.unwrap();
}
