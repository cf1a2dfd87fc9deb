//! One trace across every hop, with real processes and a real OTLP receiver: FastMCP's client
//! (PyPI, traced by OpenTelemetry's Python SDK) calls the gateway, which calls the HR server over
//! stdio and another HR server over HTTP; every process exports OTLP/HTTP (the gateway and the
//! HR servers through `tool-runtime-otel`, configured only by `OTEL_*`) to a receiver built on
//! OpenTelemetry's protobuf types (`otlp_receiver.py`), which writes the decoded spans and
//! metric points to a file. The assertions read that file.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::common::{free_addr, provision, wait_for};

/// A child process stopped when the test ends: asked with SIGINT first (the servers export what
/// they buffered on the way out), killed if it lingers.
struct Process(Child);

impl Process {
    fn stop(&mut self) {
        let _ = Command::new("kill")
            .args(["-INT", &self.0.id().to_string()])
            .status();
        for _ in 0..100 {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn python_otel() -> Command {
    let mut python = Command::new("python3");
    python.env("PYTHONPATH", provision("python-otel"));
    python
}

fn script(name: &str) -> String {
    format!("{}/tests/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Every process's telemetry settings: the standard variables.
fn otel(cmd: &mut Command, endpoint: &str, service: &str) {
    cmd.env("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
        .env("OTEL_SERVICE_NAME", service)
        .env("OTEL_BSP_SCHEDULE_DELAY", "100")
        .env("OTEL_METRIC_EXPORT_INTERVAL", "500");
}

struct Spans(Vec<Value>);

impl Spans {
    fn find(&self, service: &str, name: &str) -> &Value {
        self.0
            .iter()
            .find(|s| s["service"] == service && s["name"] == name)
            .unwrap_or_else(|| panic!("no span {name:?} from {service}: {}", self.names()))
    }

    fn by_id(&self, id: &Value) -> &Value {
        self.0
            .iter()
            .find(|s| &s["span_id"] == id)
            .unwrap_or_else(|| panic!("no span with id {id}: {}", self.names()))
    }

    /// The span's ancestors up to the trace's root (nearest first).
    fn ancestors(&self, span: &Value) -> Vec<&Value> {
        let mut chain = Vec::new();
        let mut parent = &span["parent_span_id"];
        while parent != "" {
            let next = self.by_id(parent);
            chain.push(next);
            parent = &next["parent_span_id"];
        }
        chain
    }

    fn names(&self) -> String {
        self.0
            .iter()
            .map(|s| format!("{}: {} ({})", s["service"], s["name"], s["kind"]))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn one_trace_runs_from_a_foreign_client_through_the_gateway_to_both_remotes() {
    let dir = std::env::temp_dir().join(format!("telemetry-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let received = dir.join("received.jsonl");

    // The receiver says which port it took.
    let mut receiver = Process(
        python_otel()
            .args([script("otlp_receiver.py"), received.display().to_string()])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap(),
    );
    let mut first = String::new();
    BufReader::new(receiver.0.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let port = first.trim().strip_prefix("port ").expect(&first).to_owned();
    let endpoint = format!("http://127.0.0.1:{port}");

    // The HTTP remote: the HR server on Streamable HTTP.
    let remote_addr = free_addr();
    let mut remote = Command::new(env!("CARGO_BIN_EXE_hr-mcp"));
    remote
        .args(["--http", &remote_addr.to_string(), "--local-session"])
        .env("HR_DB", dir.join("remote.sqlite"))
        .env("HR_NIK", "K-001")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    otel(&mut remote, &endpoint, "hr-http");
    // The HTTP remote records each call on its `tools/call` span (one span per call); the
    // gateway and its stdio child, as by default, give each call an `execute_tool` span of its
    // own under that span.
    remote.env("TOOL_RUNTIME_OTEL_ONE_SPAN_PER_CALL", "true");
    let mut remote = Process(remote.spawn().unwrap());
    wait_for(remote_addr).await;

    // The gateway, with the HR server as its stdio child (named by its own variable).
    let addr = free_addr();
    let hr = format!(
        "OTEL_SERVICE_NAME=hr-stdio HR_DB='{}' HR_NIK=K-001 exec '{}'",
        dir.join("hr.sqlite").display(),
        env!("CARGO_BIN_EXE_hr-mcp")
    );
    let mut gateway = Command::new(env!("CARGO_BIN_EXE_gateway"));
    gateway
        .args(["--http", &addr.to_string(), "--local-session"])
        .env("GATEWAY_HR_COMMAND", hr)
        .env("GATEWAY_REMOTE_URL", format!("http://{remote_addr}/mcp"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    otel(&mut gateway, &endpoint, "gateway");
    let mut gateway = Process(gateway.spawn().unwrap());
    wait_for(addr).await;

    let out = python_otel()
        .args([
            script("fastmcp_otel_client.py"),
            format!("http://{addr}/mcp"),
            endpoint.clone(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the FastMCP client failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    let client: Value = serde_json::from_slice(&out.stdout).unwrap();

    // The gateway stops its stdio child on the way out; each exports what it buffered.
    gateway.stop();
    remote.stop();
    let read = || -> Vec<Value> {
        std::fs::read_to_string(&received)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let mut records = read();
    for _ in 0..100 {
        let has = |service: &str| {
            records
                .iter()
                .any(|r| r["signal"] == "span" && r["service"] == service)
        };
        if has("hr-stdio") && has("hr-http") && has("gateway") {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
        records = read();
    }
    let trace_id = &client["trace_id"];
    let spans = Spans(
        records
            .iter()
            .filter(|r| r["signal"] == "span" && &r["trace_id"] == trace_id)
            .cloned()
            .collect(),
    );

    // Every process's spans of the calls are in the client's trace.
    for service in ["fastmcp-client", "gateway", "hr-stdio", "hr-http"] {
        assert!(
            spans.0.iter().any(|s| s["service"] == service),
            "nothing from {service} in the client's trace:\n{}",
            spans.names()
        );
    }

    // The gateway's server span is a child of FastMCP's client span, and both are the
    // conventions' `tools/call {tool}`; below it the tool's `execute_tool`, the gateway's own
    // client span, and the remote's server span, each the child of the one before.
    for (tool, service, transport) in [
        ("cek-sisa-cuti", "hr-stdio", "pipe"),
        ("cek-sisa-cuti", "hr-http", "tcp"),
    ] {
        let prefix = if service == "hr-stdio" {
            "hr"
        } else {
            "remote"
        };
        let remote_server = spans
            .0
            .iter()
            .find(|s| s["service"] == service && s["name"] == format!("tools/call {tool}"))
            .unwrap_or_else(|| panic!("no server span from {service}:\n{}", spans.names()));
        assert_eq!(remote_server["kind"], "SERVER");
        let a = &remote_server["attributes"];
        assert_eq!(a["mcp.method.name"], "tools/call", "{a}");
        assert_eq!(a["gen_ai.tool.name"], tool, "{a}");
        assert_eq!(a["network.transport"], transport, "{a}");
        assert!(a["jsonrpc.request.id"].is_string(), "{a}");
        let own_span = spans
            .0
            .iter()
            .any(|s| s["service"] == service && s["name"] == format!("execute_tool {tool}"));
        assert_eq!(own_span, service == "hr-stdio", "{}", spans.names());
        if service == "hr-http" {
            assert_eq!(a["outcome"], "ok", "{a}");
            assert!(a["duration_us"].is_number(), "{a}");
        }
        let chain = spans.ancestors(remote_server);
        let described: Vec<String> = chain
            .iter()
            .map(|s| format!("{} {} {}", s["service"], s["kind"], s["name"]))
            .collect();
        let full = format!("{prefix}_{tool}");
        assert!(
            described.len() >= 5,
            "{service}'s server span is not under the client's calls: {described:?}"
        );
        assert_eq!(
            described[..3],
            [
                format!("\"gateway\" \"CLIENT\" \"tools/call {tool}\""),
                format!("\"gateway\" \"INTERNAL\" \"execute_tool {full}\""),
                format!("\"gateway\" \"SERVER\" \"tools/call {full}\""),
            ],
            "{described:?}"
        );
        // The caller's side: the MCP SDK's send span inside FastMCP's `tools/call` span.
        assert!(
            chain[3]["service"] == "fastmcp-client"
                && chain[3]["kind"] == "CLIENT"
                && chain[3]["name"]
                    .as_str()
                    .unwrap()
                    .ends_with(&format!("tools/call {full}")),
            "{described:?}"
        );
        assert_eq!(
            chain.last().unwrap()["span_id"],
            client["root"],
            "{described:?}"
        );
        let gateway_client = chain[0];
        assert_eq!(
            gateway_client["attributes"]["mcp.method.name"],
            "tools/call"
        );
        assert_eq!(gateway_client["attributes"]["gen_ai.tool.name"], tool);
        // The id the gateway's request went out with: the remote server's span has the same.
        assert_eq!(
            gateway_client["attributes"]["jsonrpc.request.id"], a["jsonrpc.request.id"],
            "{gateway_client}"
        );
        let execute = &chain[1]["attributes"];
        assert_eq!(
            execute["gen_ai.operation.name"], "execute_tool",
            "{execute}"
        );
        assert_eq!(execute["gen_ai.tool.name"], full, "{execute}");
        assert_eq!(chain[2]["attributes"]["network.transport"], "tcp");
    }

    // A call the gateway refuses (a string for a number) is a result with `isError`: its server
    // span says `tool_error` and ERROR. An unknown tool is a JSON-RPC error (invalid params),
    // which the conventions' server side records by its code and does not count as a failure.
    let refused = spans.find("gateway", "tools/call pesan-katering");
    assert_eq!(
        refused["attributes"]["error.type"], "tool_error",
        "{refused}"
    );
    assert_eq!(refused["status"], "ERROR", "{refused}");
    let unknown = spans.find("gateway", "tools/call tidak-ada");
    assert_eq!(
        unknown["attributes"]["rpc.response.status_code"], "-32602",
        "{unknown}"
    );
    assert!(
        unknown["attributes"].get("error.type").is_none(),
        "{unknown}"
    );
    assert_eq!(unknown["status"], "UNSET", "{unknown}");
    let ok = spans.find("gateway", "tools/call hr_cek-sisa-cuti");
    assert_eq!(ok["status"], "UNSET", "{ok}");
    assert!(ok["attributes"].get("error.type").is_none(), "{ok}");

    // Neither arguments nor results leave a process unless the host opts in.
    for span in &spans.0 {
        for key in ["gen_ai.tool.call.arguments", "gen_ai.tool.call.result"] {
            assert!(
                span["attributes"].get(key).is_none(),
                "{key} exported: {span}"
            );
        }
    }
    let sent = std::fs::read_to_string(&received).unwrap();
    assert!(!sent.contains("\"25\""), "an argument's value was exported");

    // The conventions' duration histograms, from the gateway and from both remotes.
    let metric = |service: &str, name: &str| {
        records
            .iter()
            .any(|r| r["signal"] == "metric" && r["service"] == service && r["name"] == name)
    };
    for (service, name) in [
        ("gateway", "gen_ai.execute_tool.duration"),
        ("gateway", "mcp.server.operation.duration"),
        ("gateway", "mcp.client.operation.duration"),
        ("hr-stdio", "mcp.server.operation.duration"),
        ("hr-http", "gen_ai.execute_tool.duration"),
    ] {
        assert!(metric(service, name), "no {name} from {service}");
    }
    // In seconds, with the conventions' advised bucket boundaries (GenAI's for a tool's
    // execution, MCP's for an operation).
    let gen_ai = [
        0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
    ];
    let mcp = [
        0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
    ];
    for r in records.iter().filter(|r| r["signal"] == "metric") {
        let name = r["name"].as_str().unwrap_or_default();
        let bounds: &[f64] = match name {
            "gen_ai.execute_tool.duration" => &gen_ai,
            "mcp.server.operation.duration" | "mcp.client.operation.duration" => &mcp,
            _ => continue,
        };
        assert_eq!(r["unit"], "s", "{r}");
        assert_eq!(r["bounds"], serde_json::json!(bounds), "{r}");
    }

    // Names, kinds, attributes and their types as OpenTelemetry's own registry defines them
    // (vendored in `examples/tests/semconv`, its versions in its SOURCE.md).
    let check = python_otel()
        .args([
            script("semconv_check.py"),
            received.display().to_string(),
            script("semconv"),
            "gateway,hr-stdio,hr-http".into(),
        ])
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&check.stdout);
    assert!(
        check.status.success(),
        "{report}{}",
        String::from_utf8_lossy(&check.stderr)
    );
    let checked: Value = serde_json::from_str(report.lines().next().unwrap()).unwrap();
    for definition in [
        "mcp.server",
        "mcp.client",
        "gen_ai.execute_tool.internal",
        "gen_ai.execute_tool.duration",
        "mcp.server.operation.duration",
        "mcp.client.operation.duration",
    ] {
        assert!(
            checked[definition].as_u64() > Some(0),
            "{definition}: {report}"
        );
    }
    receiver.stop();
    let _ = std::fs::remove_dir_all(&dir);
}
