//! Remote MCP servers' tools imported into a tool set (`tool_runtime_mcp::remote`), with real
//! processes: this project's HR server over stdio and over Streamable HTTP (with a token), and
//! the official reference server `@modelcontextprotocol/server-everything` (npm), which no one
//! here wrote. Arguments are checked here before anything is sent: the remote's own log shows
//! that a bad call never reached it.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tool_runtime::{Context, Grants, Progress, ToolError, ToolSet};
use tool_runtime_mcp::remote::{Remote, RemoteOptions};

use crate::common::{Issuer, free_addr, provision, wait_for};

/// A fresh directory for one test's HR database and the server's log.
fn workdir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hr-remote-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The HR server over stdio for employee K-001; its log (every call's arguments, as the
/// toolkit traces them) goes to `server.log` in `dir`, its process id to `pid`. While a file
/// `down` is in `dir`, the server cannot start (it exits at once).
fn hr_stdio(dir: &std::path::Path) -> impl Fn() -> tokio::process::Command + Send + Sync + 'static {
    let (db, log) = (dir.join("hr.sqlite"), dir.join("server.log"));
    let (down, pid) = (dir.join("down"), dir.join("pid"));
    move || {
        let script = format!(
            "[ -e '{}' ] && exit 1; echo $$ > '{}'; exec '{}' 2>>'{}'",
            down.display(),
            pid.display(),
            env!("CARGO_BIN_EXE_hr-mcp"),
            log.display()
        );
        let mut cmd = tokio::process::Command::new("sh");
        cmd.arg("-c")
            .arg(script)
            .env("HR_NIK", "K-001")
            .env("HR_PERAN", "karyawan")
            .env("HR_DB", &db)
            .env("RUST_LOG", "warn,tool_runtime::values=trace");
        cmd
    }
}

fn read_log(dir: &std::path::Path) -> String {
    std::fs::read_to_string(dir.join("server.log")).unwrap_or_default()
}

async fn call(set: &ToolSet, cx: &Context, name: &str, args: Value) -> Result<Value, ToolError> {
    set.call(cx, name, args).await.map(|o| o.into_value())
}

fn grants() -> Context {
    Context::new().with(Grants::new(["hr"]))
}

#[tokio::test]
async fn hr_tools_over_stdio_are_checked_here_before_anything_is_sent() {
    let dir = workdir("stdio");
    let options = RemoteOptions {
        requires: vec!["hr".into()],
        ..RemoteOptions::prefixed("hr")
    };
    let remote = Remote::stdio("hr", hr_stdio(&dir), options).await.unwrap();
    let imported = remote.tools().await.unwrap();
    assert!(imported.refused.is_empty(), "{:?}", imported.refused);
    let set = ToolSet::new(imported.tools).unwrap();
    let names: Vec<&str> = set.names().collect();
    assert!(names.contains(&"hr_cek-riwayat-cuti"), "{names:?}");

    // The host's grants apply to remote tools: without `hr`, nothing is visible or callable.
    assert!(set.visible_to(&Context::new()).is_empty());
    let cx = grants();
    let ok = call(&set, &cx, "hr_cek-riwayat-cuti", json!({"tahun": 2031}))
        .await
        .unwrap();
    assert_eq!(ok["tahun"], 2031, "{ok}");

    // A string for a number, a year out of range, an unknown field: refused here, with the
    // toolkit's messages, and never sent (the remote logs every call it receives).
    for bad in [
        json!({"tahun": "2032"}),
        json!({"tahun": 1999}),
        json!({"tahun": 2033, "x": 1}),
    ] {
        let err = call(&set, &cx, "hr_cek-riwayat-cuti", bad.clone())
            .await
            .unwrap_err();
        assert!(
            matches!(err, ToolError::InvalidArguments(_)),
            "{bad}: {err:?}"
        );
    }
    let log = read_log(&dir);
    assert!(
        log.contains("2031"),
        "the good call reached the remote: {log}"
    );
    for never in ["2032", "1999", "2033"] {
        assert!(!log.contains(never), "{never} reached the remote: {log}");
    }

    // A tool that does not say it is read-only (`ajukan-cuti` is destructive) is held here for
    // approval; rejected, it never reaches the remote.
    let hold = call(
        &set,
        &cx,
        "hr_ajukan-cuti",
        json!({"mulai": "2031-03-02", "hari": 2}),
    )
    .await
    .unwrap_err();
    let ToolError::ApprovalRequired(pending) = hold else {
        panic!("{hold:?}")
    };
    assert!(set.reject(&pending.ticket).await.unwrap());
    assert!(
        !read_log(&dir).contains("2031-03-02"),
        "a held call reached the remote"
    );
}

#[tokio::test]
async fn a_remote_that_goes_away_answers_a_clear_error_and_the_next_call_reconnects() {
    let dir = workdir("restart");
    let options = RemoteOptions {
        retry_after: Duration::from_millis(100),
        ..RemoteOptions::default()
    };
    let remote = Remote::stdio("hr", hr_stdio(&dir), options).await.unwrap();
    let set = ToolSet::new(remote.tools().await.unwrap().tools).unwrap();
    let cx = Context::new();
    assert!(call(&set, &cx, "cek-riwayat-cuti", json!({})).await.is_ok());

    // The server dies and cannot start again: calls fail at once, naming the server.
    std::fs::write(dir.join("down"), "").unwrap();
    kill_server(&dir);
    tokio::time::sleep(Duration::from_millis(200)).await;
    for _ in 0..3 {
        let err = call(&set, &cx, "cek-riwayat-cuti", json!({}))
            .await
            .unwrap_err();
        let ToolError::Failed { message, .. } = &err else {
            panic!("{err:?}")
        };
        assert!(message.contains("`hr` is unreachable"), "{message}");
        assert!(
            !message.contains("::") && !message.contains('<'),
            "a Rust type name: {message}"
        );
        assert!(!remote.is_connected().await);
    }
    // It can start again: after `retry_after`, the next call reconnects and is answered.
    std::fs::remove_file(dir.join("down")).unwrap();
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert!(call(&set, &cx, "cek-riwayat-cuti", json!({})).await.is_ok());
    assert!(remote.is_connected().await);
}

/// Kills the HR server process started last for `dir`.
fn kill_server(dir: &std::path::Path) {
    let pid = std::fs::read_to_string(dir.join("pid")).unwrap();
    let killed = std::process::Command::new("kill")
        .args(["-9", pid.trim()])
        .status()
        .unwrap();
    assert!(killed.success());
}

#[tokio::test]
async fn hr_tools_over_http_with_a_token() {
    let dir = workdir("http");
    let issuer = Issuer::new("https://login.remote.test");
    let jwks = dir.join("jwks.json");
    std::fs::write(&jwks, issuer.jwks()).unwrap();
    let addr = free_addr();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_hr-mcp"))
        .args(["--http", &addr.to_string()])
        .env("HR_DB", dir.join("hr.sqlite"))
        .env("HR_OAUTH_ISSUER", &issuer.issuer)
        .env("HR_OAUTH_JWKS", &jwks)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(addr).await;
    let url = format!("http://{addr}/mcp");
    let token = issuer.token(&url, "K-001", "hr hr.cuti.baca hr.cuti.ajukan", json!({}));

    // Without the host's credentials the server refuses the connection.
    assert!(
        Remote::http("hr", &url, None, RemoteOptions::default())
            .await
            .is_err()
    );

    let remote = Remote::http(
        "hr",
        &url,
        Some(format!("Bearer {token}")),
        RemoteOptions::prefixed("hr"),
    )
    .await
    .unwrap();
    let set = ToolSet::new(remote.tools().await.unwrap().tools).unwrap();
    let cx = Context::new();
    let ok = call(&set, &cx, "hr_cek-sisa-cuti", json!({}))
        .await
        .unwrap();
    assert!(ok.get("status").is_some(), "{ok}");
    let err = call(&set, &cx, "hr_cek-riwayat-cuti", json!({"tahun": "2030"}))
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::InvalidArguments(_)), "{err:?}");
    let _ = child.kill();
    let _ = child.wait();
}

/// The official reference server, started with node from its npm package.
fn everything() -> impl Fn() -> tokio::process::Command + Send + Sync + 'static {
    let script = provision("everything");
    move || {
        // Its log (and its complaint when the pipe closes at the end) is not the test's.
        let mut cmd = tokio::process::Command::new("sh");
        cmd.args(["-c", &format!("exec node '{script}' stdio 2>/dev/null")]);
        cmd
    }
}

#[tokio::test]
async fn the_official_reference_server_is_imported_and_held_to_the_same_rules() {
    let options = RemoteOptions {
        call_timeout: Duration::from_secs(2),
        ..RemoteOptions::prefixed("ev")
    };
    let remote = Remote::stdio("everything", everything(), options)
        .await
        .unwrap();
    let imported = remote.tools().await.unwrap();
    for refused in &imported.refused {
        eprintln!("refused: {refused}");
    }
    let set = ToolSet::new(imported.tools).unwrap();
    let cx = Context::new();

    let echoed = call(&set, &cx, "ev_echo", json!({"message": "halo"}))
        .await
        .unwrap();
    assert!(echoed.to_string().contains("halo"), "{echoed}");
    let sum = call(&set, &cx, "ev_get-sum", json!({"a": 25, "b": 5}))
        .await
        .unwrap();
    assert!(sum.to_string().contains("30"), "{sum}");
    // "25" + 5 is refused here, with the toolkit's message, not concatenated anywhere.
    let err = call(&set, &cx, "ev_get-sum", json!({"a": "25", "b": 5}))
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::InvalidArguments(_)), "{err:?}");
    assert!(
        set.model_message(&err).contains('a'),
        "{}",
        set.model_message(&err)
    );

    // A tool with an output schema: its structured result is checked and passed on.
    let weather = call(
        &set,
        &cx,
        "ev_get-structured-content",
        json!({"location": "Chicago"}),
    )
    .await
    .unwrap();
    assert!(weather.is_object(), "{weather}");

    // Not read-only: held for approval here, and run once approved.
    let held = call(&set, &cx, "ev_toggle-simulated-logging", json!({}))
        .await
        .unwrap_err();
    let ToolError::ApprovalRequired(pending) = held else {
        panic!("{held:?}")
    };
    let ran = set.resume(&cx, &pending.ticket).await.unwrap();
    assert!(
        ran.value().to_string().to_lowercase().contains("logging"),
        "{}",
        ran.value()
    );

    // A call longer than the time limit is stopped (and the remote told to cancel it).
    let slow = call(
        &set,
        &cx,
        "ev_trigger-long-running-operation",
        json!({"duration": 10, "steps": 2}),
    )
    .await
    .unwrap_err();
    assert!(matches!(slow, ToolError::TimedOut { .. }), "{slow:?}");
}

#[tokio::test]
async fn a_remote_http_server_restarted_between_calls_is_used_again() {
    let dir = workdir("http-restart");
    let addr = free_addr();
    let start = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_hr-mcp"))
            .args(["--http", &addr.to_string(), "--local-session"])
            .env("HR_DB", dir.join("hr.sqlite"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    let mut server = start();
    wait_for(addr).await;
    let (_remote, set) = over_http("hr", addr, Duration::from_secs(2)).await;
    let cx = Context::new();
    assert!(call(&set, &cx, "cek-sisa-cuti", json!({})).await.is_ok());

    // A new process on the same address knows nothing of the old session.
    let _ = server.kill();
    let _ = server.wait();
    server = start();
    wait_for(addr).await;
    let mut answered = false;
    for _ in 0..10 {
        match call(&set, &cx, "cek-sisa-cuti", json!({})).await {
            Ok(_) => {
                answered = true;
                break;
            }
            Err(e) => eprintln!("while the session is stale: {e}"),
        }
    }
    let _ = server.kill();
    let _ = server.wait();
    assert!(answered, "the restarted server was not used again");
}

/// The server at `addr` over Streamable HTTP, retried soon after it failed, and its tools.
async fn over_http(
    label: &str,
    addr: std::net::SocketAddr,
    call_timeout: Duration,
) -> (Remote, ToolSet) {
    let options = RemoteOptions {
        call_timeout,
        retry_after: Duration::from_millis(100),
        ..RemoteOptions::default()
    };
    let remote = Remote::http(label, format!("http://{addr}/mcp"), None, options)
        .await
        .unwrap();
    let set = ToolSet::new(remote.tools().await.unwrap().tools).unwrap();
    (remote, set)
}

/// This toolkit's fixture server (the conformance suite's tools) over stdio.
fn fixture() -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp-conformance"));
    cmd.arg("--stdio");
    cmd
}

/// The fixture server imported, with `tool` (which does not say it is read-only) let to run
/// unasked.
async fn fixture_running(tool: &str) -> Remote {
    let options = RemoteOptions {
        approval: [(tool.to_owned(), false)].into(),
        ..RemoteOptions::default()
    };
    Remote::stdio("fixture", fixture, options).await.unwrap()
}

#[tokio::test]
async fn both_eras_are_spoken_and_a_changed_tool_list_is_followed() {
    let modern = fixture_running("test_trigger_tool_change").await;
    assert_eq!(
        modern.protocol_version().await.as_deref(),
        Some("2026-07-28")
    );
    let set = ToolSet::new(modern.tools().await.unwrap().tools).unwrap();
    let mut changed = modern.changed();
    changed.borrow_and_update();
    let cx = Context::new();
    call(&set, &cx, "test_trigger_tool_change", json!({}))
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(20), changed.changed())
        .await
        .expect("notifications/tools/list_changed was followed")
        .unwrap();

    // The reference server has only the earlier era: the handshake falls back to it.
    let legacy = Remote::stdio("everything", everything(), RemoteOptions::default())
        .await
        .unwrap();
    let version = legacy.protocol_version().await.unwrap();
    assert!(version.as_str() < "2026-07-28", "{version}");
}

/// A server that lies (the Python SDK's low-level server, `tests/lying_server.py`), logging
/// every call it receives to `log`.
fn liar(
    mode: &'static str,
    log: PathBuf,
) -> impl Fn() -> tokio::process::Command + Send + Sync + 'static {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/lying_server.py");
    let python = crate::common::python();
    let pythonpath = python
        .get_envs()
        .find(|(k, _)| *k == "PYTHONPATH")
        .and_then(|(_, v)| v)
        .map(|v| v.to_owned())
        .unwrap();
    move || {
        let mut cmd = tokio::process::Command::new("python3");
        cmd.args([script, mode])
            .arg(&log)
            .env("PYTHONPATH", &pythonpath)
            .stderr(Stdio::null());
        cmd
    }
}

/// A remote tool named like a tool before it in a gateway (here a local one, the remote
/// unprefixed) is left out; the gateway's other tools are all served, and the name stays the
/// local tool's.
#[tokio::test]
async fn a_remote_tool_named_like_a_local_one_is_left_out_not_the_gateway() {
    #[tool_runtime::tool(description = "The local tool named like the remote's.", read_only)]
    fn good() -> String {
        "local".into()
    }
    let log = workdir("clash").join("calls.log");
    let remote = Remote::stdio("liar", liar("mixed", log), RemoteOptions::default())
        .await
        .unwrap();
    let gateway = tool_runtime_mcp::gateway::Gateway::new(ToolSet::new([good::tool()]).unwrap())
        .with_remote(remote);
    let set = gateway.tool_set().await.unwrap();
    let names: Vec<&str> = set.names().collect();
    assert_eq!(names, ["good", "wrong_output", "huge", "hang_up", "slow"]);
    let out = set.call(&Context::new(), "good", json!({})).await.unwrap();
    assert_eq!(
        out.value(),
        &json!("local"),
        "the name stays the local tool's"
    );
}

#[tokio::test]
async fn a_server_listing_ten_thousand_tools_is_refused() {
    let log = workdir("many").join("calls.log");
    let remote = Remote::stdio("liar", liar("many", log), RemoteOptions::default())
        .await
        .unwrap();
    let err = remote.tools().await.unwrap_err();
    assert!(
        matches!(
            err,
            tool_runtime_mcp::remote::RemoteError::TooManyTools {
                listed: 10_001,
                max: 1_000,
                ..
            }
        ),
        "{err}"
    );
}

/// A server is not trusted to end its tool list: pages without end, or a list never answered,
/// are refused within the listing's time, and nothing hangs.
#[tokio::test]
async fn a_tool_list_without_end_or_answer_is_refused_in_time() {
    // (At most `max_tools` pages: 50 here, so the endless list reaches its bound well within
    // its time on a loaded machine.)
    for (mode, says) in [
        ("endless", "goes on past 50 pages"),
        ("silent", "took longer than 2s"),
    ] {
        let log = workdir(mode).join("calls.log");
        let options = RemoteOptions {
            connect_timeout: std::time::Duration::from_secs(2),
            max_tools: 50,
            ..RemoteOptions::default()
        };
        let remote = Remote::stdio("liar", liar(mode, log), options)
            .await
            .unwrap();
        let started = std::time::Instant::now();
        let err = remote.tools().await.unwrap_err();
        assert!(
            matches!(err, tool_runtime_mcp::remote::RemoteError::List { .. }),
            "{mode}: {err}"
        );
        let source = std::error::Error::source(&err)
            .map(|s| s.to_string())
            .unwrap_or_default();
        assert!(source.contains(says), "{mode}: {err}: {source}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{mode}"
        );
    }
}

#[tokio::test]
async fn lies_in_tools_list_and_in_results_are_caught_and_lose_nothing() {
    let dir = workdir("liar");
    let log = dir.join("calls.log");
    let options = RemoteOptions {
        call_timeout: Duration::from_secs(3),
        retry_after: Duration::from_millis(100),
        ..RemoteOptions::default()
    };
    let remote = Remote::stdio("liar", liar("mixed", log.clone()), options)
        .await
        .unwrap();
    let imported = remote.tools().await.unwrap();
    let names: Vec<&str> = imported.tools.iter().map(|t| t.name()).collect();
    assert_eq!(names, ["good", "wrong_output", "huge", "hang_up", "slow"]);
    let mut refused: Vec<String> = imported.refused.iter().map(|e| e.tool.clone()).collect();
    refused.sort();
    assert_eq!(
        refused,
        ["all_of", "backtracks", "cycle", "dup", "dup"],
        "{:?}",
        imported.refused
    );
    let why = |name: &str| {
        imported
            .refused
            .iter()
            .find(|e| e.tool == name)
            .unwrap()
            .to_string()
    };
    assert!(
        why("backtracks").contains("needs a backtracking engine"),
        "{}",
        why("backtracks")
    );
    assert!(
        why("cycle").contains("refers to itself"),
        "{}",
        why("cycle")
    );
    assert!(why("all_of").contains("`allOf`"), "{}", why("all_of"));
    assert!(
        why("dup").contains("2 tools of this name"),
        "{}",
        why("dup")
    );

    let set = ToolSet::new(imported.tools).unwrap();
    let cx = Context::new();
    assert_eq!(
        call(&set, &cx, "good", json!({"n": 1})).await.unwrap(),
        json!("2")
    );
    let bad = call(&set, &cx, "good", json!({"n": "41"}))
        .await
        .unwrap_err();
    assert!(matches!(bad, ToolError::InvalidArguments(_)), "{bad:?}");
    assert!(
        !std::fs::read_to_string(&log).unwrap().contains("41"),
        "a bad call was sent"
    );

    // A result that breaks the tool's own output schema is an error, never passed on.
    let wrong = call(&set, &cx, "wrong_output", json!({"n": 1}))
        .await
        .unwrap_err();
    let ToolError::Failed { message, .. } = &wrong else {
        panic!("{wrong:?}")
    };
    assert!(
        message.contains("output schema") && message.contains('n'),
        "{message}"
    );

    // A call that outlives its time limit: the remote is told to cancel it, and does.
    let slow = call(&set, &cx, "slow", json!({"n": 1})).await.unwrap_err();
    assert!(matches!(slow, ToolError::TimedOut { .. }), "{slow:?}");
    let mut cancelled = false;
    for _ in 0..40 {
        if std::fs::read_to_string(&log)
            .unwrap()
            .contains("slow cancelled")
        {
            cancelled = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(cancelled, "the remote was not told to cancel the call");

    // 20 MB in one answer: over the 16 MiB a message may hold, cut there; the call fails
    // with the size as its reason (not at its 3 s time limit, which says "ran too long"; how
    // soon is not timed: the Python server writing 20 MB is slow on a loaded machine), and
    // the connection goes on serving.
    let huge = match call(&set, &cx, "huge", json!({"n": 1})).await {
        Err(e) => e,
        Ok(v) => panic!("20 MB accepted: {} bytes", v.to_string().len()),
    };
    let ToolError::Failed { message, .. } = &huge else {
        panic!("{huge:?}")
    };
    assert!(
        message.contains("`liar`") && message.contains("more than the 16777216"),
        "{message}"
    );
    assert!(!message.contains("::"), "a Rust type name: {message}");
    assert_eq!(
        call(&set, &cx, "good", json!({"n": 5})).await.unwrap(),
        json!("6")
    );

    // The server hangs up in the middle of a call: a clear error naming it, then a new process.
    let dropped = call(&set, &cx, "hang_up", json!({"n": 1}))
        .await
        .unwrap_err();
    let ToolError::Failed { message, .. } = &dropped else {
        panic!("{dropped:?}")
    };
    assert!(message.contains("`liar`"), "{message}");
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(
        call(&set, &cx, "good", json!({"n": 2})).await.unwrap(),
        json!("3")
    );
}

/// The highest resident memory of this process so far, in bytes (`VmHWM`).
fn peak_memory() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kb: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb * 1024
}

#[tokio::test]
async fn a_remote_answering_100_mb_over_http_is_cut_off_and_its_other_tools_keep_working() {
    // Peak memory is per process: measured in a process of its own.
    let name = "mcp_remote::a_remote_answering_100_mb_over_http_is_cut_off_and_its_other_tools_keep_working";
    if !crate::common::alone("HUGE_ANSWER_TEST_ALONE", name).await {
        return;
    }
    let dir = workdir("liar-http");
    let log = dir.join("calls.log");
    let addr = free_addr();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/lying_server.py");
    let mut server = tokio::process::Command::from(crate::common::python());
    server
        .args([script, "mixed"])
        .arg(&log)
        .arg(addr.port().to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    let _server = server.spawn().unwrap();
    wait_for(addr).await;
    let (_remote, set) = over_http("liar", addr, Duration::from_secs(30)).await;
    let cx = Context::new();
    assert_eq!(
        call(&set, &cx, "good", json!({"n": 1})).await.unwrap(),
        json!("2")
    );

    // 100 MB in one answer: the transport stops reading at its 16 MiB limit, and the call
    // ends with an error naming the remote instead of holding 100 MB (and more, parsed).
    let before = peak_memory();
    let huge = match call(&set, &cx, "huge", json!({"n": 1})).await {
        Err(e) => e,
        Ok(v) => panic!("100 MB accepted: {} bytes", v.to_string().len()),
    };
    let grown = peak_memory().saturating_sub(before);
    assert!(matches!(huge, ToolError::Failed { .. }), "{huge:?}");
    let message = huge.to_string();
    assert!(
        message.contains("`liar`") && message.contains("16 MiB"),
        "{message}"
    );
    assert!(grown < 64 << 20, "memory grew by {} MiB", grown >> 20);

    // Nothing else is lost: the next call is answered.
    let mut answered = None;
    for _ in 0..40 {
        match call(&set, &cx, "good", json!({"n": 2})).await {
            Ok(v) => {
                answered = Some(v);
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    assert_eq!(answered, Some(json!("3")));
    let calls = std::fs::read_to_string(&log).unwrap();
    assert!(
        calls.contains("huge {'n': 1}") && calls.contains("good {'n': 2}"),
        "{calls}"
    );
}

/// Calls `name` with a progress handle in the context; returns what it reported.
async fn call_following_progress(set: &ToolSet, name: &str, args: Value) -> Vec<String> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let progress = Progress::new(move |r| {
        sink.lock()
            .unwrap()
            .push(format!("{}/{}", r.progress, r.total.unwrap_or(f64::NAN)))
    });
    let cx = Context::new().with(progress);
    call(set, &cx, name, args).await.unwrap();
    let seen = seen.lock().unwrap().clone();
    // Without a handle to report to, the call still answers.
    call(set, &Context::new(), name, args_again(name))
        .await
        .unwrap();
    seen
}

fn args_again(name: &str) -> Value {
    match name {
        "trigger-long-running-operation" => json!({"duration": 0.1, "steps": 1}),
        _ => json!({}),
    }
}

#[tokio::test]
async fn a_remote_tools_progress_reaches_the_caller_in_both_eras() {
    let modern = fixture_running("test_tool_with_progress").await;
    let set = ToolSet::new(modern.tools().await.unwrap().tools).unwrap();
    assert_eq!(
        call_following_progress(&set, "test_tool_with_progress", json!({})).await,
        ["0/100", "50/100", "100/100"]
    );

    // The reference server (the earlier era) sends its own tool's progress.
    let legacy = Remote::stdio("everything", everything(), RemoteOptions::default())
        .await
        .unwrap();
    let set = ToolSet::new(legacy.tools().await.unwrap().tools).unwrap();
    let seen = call_following_progress(
        &set,
        "trigger-long-running-operation",
        json!({"duration": 0.3, "steps": 3}),
    )
    .await;
    assert_eq!(seen, ["1/3", "2/3", "3/3"]);
}
