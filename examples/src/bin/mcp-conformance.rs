//! The fixture tools the official MCP conformance suite (`@modelcontextprotocol/conformance`)
//! calls by name, defined with this toolkit and served over Streamable HTTP
//! (`mcp-conformance 127.0.0.1:8001`) or stdio (`mcp-conformance --stdio`).
//! `scripts/mcp-conformance.sh` runs the suite and the official TypeScript client against it,
//! the tasks extension's scenarios included.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tool_runtime::{Answers, ModelOutput, Progress, Question, ToolSet, Unanswered, tool};
use tool_runtime_mcp::{McpServer, http::HttpServer};

#[allow(clippy::ptr_arg)] // `to_model` takes `&Output`, and the output is a `String`
fn as_text(s: &String) -> ModelOutput {
    ModelOutput::text(s.clone())
}

#[tool(
    description = "Return a fixed text, for the conformance suite's simple-text scenario.",
    to_model = as_text
)]
fn test_simple_text() -> String {
    "This is a simple text response for testing.".into()
}

#[tool(description = "Always fail, for the conformance suite's error scenario.")]
fn test_error_handling() -> Result<String, String> {
    Err("This tool intentionally returns an error for testing".into())
}

#[tool(
    description = "Return a text and log nothing, for the suite's no-log-without-logLevel check."
)]
fn test_logging_tool() -> String {
    "done".into()
}

#[tool(
    description = "Needs a person's approval before it returns, for the suite's check that a 2026-07-28 response stream carries no server-to-client request.",
    needs_approval
)]
fn test_streaming_elicitation() -> String {
    "approved".into()
}

/// An output of any shape: its `outputSchema` property must still be an object schema (`{}`),
/// or the official TypeScript SDK refuses the whole `tools/list`.
#[tool(
    description = "Read a JSON text and return its value, of any shape, as the structured result."
)]
fn test_json_value(
    #[arg(description = "The JSON text to read", length = 1..=10_000)] json: String,
) -> Result<serde_json::Value, String> {
    serde_json::from_str(&json).map_err(|e| format!("not JSON: {e}"))
}

#[tool(
    description = "Report progress 0, 50 and 100 of 100 about 50 ms apart, then return, for the suite's progress scenario.",
    to_model = as_text
)]
async fn test_tool_with_progress(#[ctx] progress: &Progress) -> String {
    for step in [0.0, 50.0, 100.0] {
        progress.report(step, Some(100.0), Some(&format!("{step}%")));
        if step < 100.0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    "progress reported".into()
}

/// Steps taken by `count_until_cancelled`, in every call.
static COUNTED: AtomicU64 = AtomicU64::new(0);

#[tool(
    description = "Count one step every 10 ms for up to `steps` steps, reporting each, until the caller cancels; returns the steps taken. A sync tool: it stops because it polls its progress handle."
)]
fn count_until_cancelled(
    #[arg(description = "The most steps to take", range = 1..=10_000)] steps: u32,
    #[ctx] progress: &Progress,
) -> u32 {
    let mut taken = 0;
    while taken < steps && !progress.is_cancelled() {
        std::thread::sleep(Duration::from_millis(10));
        taken += 1;
        COUNTED.fetch_add(1, Ordering::SeqCst);
        progress.report(f64::from(taken), Some(f64::from(steps)), None);
    }
    taken
}

#[tool(
    description = "Take `steps` steps of 1 ms once a person approves, stopping early if the caller cancels; returns the steps taken.",
    needs_approval
)]
fn count_after_approval(
    #[arg(description = "The steps to take", range = 1..=1000)] steps: u32,
    #[ctx] progress: &Progress,
) -> u32 {
    let mut taken = 0;
    while taken < steps && !progress.is_cancelled() {
        std::thread::sleep(Duration::from_millis(1));
        taken += 1;
    }
    taken
}

#[tool(description = "Return how many steps `count_until_cancelled` has taken in all its calls.")]
fn counted() -> u64 {
    COUNTED.load(Ordering::SeqCst)
}

// The tasks extension's fixtures (`io.modelcontextprotocol/tasks`, the suite's `tasks-*`
// scenarios): a caller that declares the extension gets a task for these; one that does not
// gets today's answer, or -32021 for a tool that runs only as a task.

#[tool(description = "Greet a person by name; never runs as a task.", to_model = as_text)]
fn greet(#[arg(description = "The name to greet", length = 1..=100)] name: String) -> String {
    format!("Hello, {name}!")
}

// It changes nothing (`read_only`), so a cancel stops it at any point: a tool that changes
// something is committed when it starts unless it declares its commit point (`Commit`).
#[tool(
    description = "Compute for `seconds` seconds, then return the label; a task for a caller that can follow one, stopped when it is cancelled.",
    task = "optional",
    read_only,
    to_model = as_text
)]
async fn slow_compute(
    #[arg(description = "How long the computation takes, in seconds", range = 0..=600)]
    seconds: u32,
    #[arg(description = "A label returned with the result", length = 0..=100)] label: Option<
        String,
    >,
) -> String {
    tokio::time::sleep(Duration::from_secs(u64::from(seconds))).await;
    format!("computed {}", label.unwrap_or_default())
}

#[tool(
    description = "A job that runs only as a task and, after a second, always ends with a tool error.",
    task = "required"
)]
async fn failing_job() -> Result<String, String> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err("the job failed, as this fixture always does".into())
}

#[tool(
    description = "A job that runs only as a task and panics: its task fails with an internal error.",
    task = "required"
)]
async fn protocol_error_job() -> String {
    panic!("the fixture's job broke")
}

#[tool(
    description = "Delete a file once a person approves it; a task waits for the approval.",
    needs_approval,
    task = "optional",
    to_model = as_text
)]
fn confirm_delete(
    #[arg(description = "The file to delete", length = 1..=255)] filename: String,
) -> String {
    format!("deleted {filename}")
}

#[tool(
    description = "Ask the person two things at once (a name and a confirmation) and answer with both; a task waits for the answers, any number at a time.",
    task = "optional",
    to_model = as_text
)]
fn multi_input(#[ctx] answers: &Answers) -> Result<String, Unanswered> {
    let confirm = Question::new(
        "confirm",
        "Confirm?",
        serde_json::json!({
            "type": "object",
            "properties": {"confirm": {"type": "boolean"}},
            "required": ["confirm"],
        }),
    );
    let [name, confirm] = answers.ask([Question::text("name", "Your name?"), confirm])?;
    Ok(format!(
        "name: {}, confirm: {}",
        name.accepted().map_or("-".into(), ToString::to_string),
        confirm.accepted().map_or("-".into(), ToString::to_string)
    ))
}

/// What `test_tool_with_task` asks before it runs.
fn user_name() -> Vec<Question> {
    let form = serde_json::json!({
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
    });
    vec![Question::new("user_name", "What is your name?", form)]
}

#[tool(
    description = "Ask the person's name before it runs (in the request's result), then run as a task that greets them.",
    task = "required",
    ask_first = user_name,
    to_model = as_text
)]
async fn test_tool_with_task(#[ctx] answers: &Answers) -> String {
    let name = answers.get("user_name");
    let name = name
        .as_ref()
        .and_then(|a| a.accepted())
        .and_then(|form| form["name"].as_str())
        .unwrap_or("nobody");
    format!("Hello, {name}!")
}

/// The server, for the tool that changes its tool list.
static SERVER: OnceLock<McpServer> = OnceLock::new();

#[tool(
    description = "Replace the tool list with the same tools, for the suite's list-changed subscription check."
)]
async fn test_trigger_tool_change() -> bool {
    if let Some(server) = SERVER.get() {
        server.replace_tools(tools()).await;
    }
    true
}

fn tools() -> ToolSet {
    ToolSet::new([
        test_simple_text::tool(),
        test_error_handling::tool(),
        test_logging_tool::tool(),
        test_streaming_elicitation::tool(),
        test_trigger_tool_change::tool(),
        test_json_value::tool(),
        test_tool_with_progress::tool(),
        count_until_cancelled::tool(),
        count_after_approval::tool(),
        counted::tool(),
        greet::tool(),
        slow_compute::tool(),
        failing_job::tool(),
        protocol_error_job::tool(),
        confirm_delete::tool(),
        multi_input::tool(),
        test_tool_with_task::tool(),
    ])
    .expect("valid tools")
}

#[tokio::main]
async fn main() {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8001".into());
    let server = SERVER.get_or_init(|| McpServer::new(tools())).clone();
    if addr == "--stdio" {
        if let Err(e) = server.serve_stdio().await {
            eprintln!("mcp-conformance: {e}");
            std::process::exit(1);
        }
        return;
    }
    let addr = addr.parse().expect("an address such as 127.0.0.1:8001");
    let served = match HttpServer::new(server).bind(addr).await {
        Ok(bound) => bound.serve().await,
        Err(e) => Err(e),
    };
    if let Err(e) = served {
        eprintln!("mcp-conformance: {e}");
        std::process::exit(1);
    }
}
