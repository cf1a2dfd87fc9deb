//! Writes the benchmark's tools three ways into `OUT_DIR`: with this toolkit (`toolkit.rs`), by
//! hand with serde (`floor.rs`) and with rmcp's `#[tool_router]` (`rmcp.rs`). Every tool follows
//! the shared harness's contract (`../shared/bench`): tool `k` is `tool_{k:03}` with `count`
//! (integer 0..=1000), `mode` (alpha|beta|gamma|delta), `label` (string) and `verbose`
//! (optional bool), and returns `{tool, score, label, verbose}`. `BENCH_TOOLS` sets how many (50).

use std::fmt::Write as _;
use std::path::Path;

const COUNT_DOC: &str = "How many items to score (0 to 1000).";
const MODE_DOC: &str = "Scoring mode.";
const LABEL_DOC: &str = "Free-text label echoed in the result.";
const VERBOSE_DOC: &str = "Return verbose output (default false).";

fn description(k: usize, n: usize) -> String {
    format!(
        "Tool {k} of {n}: scores `count` items of batch {k} in the chosen `mode` and echoes `label` back."
    )
}

/// The mode enum and result struct every contender declares per tool, with the contender's own
/// derives added (`""` for none).
fn types(out: &mut String, k: usize, mode_derive: &str, out_derive: &str) {
    writeln!(
        out,
        r#"
/// Scoring mode of `tool_{k:03}`.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize, {mode_derive})]
#[serde(rename_all = "lowercase")]
pub enum Tool{k:03}Mode {{ Alpha, Beta, Gamma, Delta }}

/// Result of `tool_{k:03}`.
#[derive(Debug, serde::Serialize, {out_derive})]
pub struct Tool{k:03}Out {{
    pub tool: &'static str,
    pub score: i64,
    pub label: String,
    pub verbose: bool,
}}"#
    )
    .unwrap();
}

fn body(k: usize, count: &str, mode: &str, label: &str, verbose: &str) -> String {
    format!(
        r#"Tool{k:03}Out {{
        tool: "tool_{k:03}",
        score: {count} * {m} + {mode} as i64,
        label: format!("{{}}:{{}}", {label}, ::benches::MODES[{mode} as usize]),
        verbose: {verbose}.unwrap_or(false),
    }}"#,
        m = k + 1
    )
}

fn toolkit(n: usize) -> String {
    let mut s = String::from("use tool_runtime::{ToolArg, tool};\n");
    for k in 0..n {
        types(&mut s, k, "ToolArg", "schemars::JsonSchema");
        writeln!(
            s,
            r#"
#[tool(description = {desc:?})]
pub fn tool_{k:03}(
    #[arg(description = {COUNT_DOC:?}, range = 0..=1000)] count: i64,
    #[arg(description = {MODE_DOC:?})] mode: Tool{k:03}Mode,
    #[arg(description = {LABEL_DOC:?})] label: String,
    #[arg(description = {VERBOSE_DOC:?})] verbose: Option<bool>,
) -> Tool{k:03}Out {{
    {body}
}}"#,
            desc = description(k, n),
            body = body(k, "count", "mode", "label", "verbose"),
        )
        .unwrap();
    }
    let handles: Vec<String> = (0..n).map(|k| format!("tool_{k:03}::tool()")).collect();
    writeln!(
        s,
        "\n/// The tool set.\npub fn tool_set() -> tool_runtime::ToolSet {{\n    tool_runtime::ToolSet::new([{}]).expect(\"unique names\")\n}}",
        handles.join(", ")
    )
    .unwrap();
    s
}

fn floor(n: usize) -> String {
    let mut s = String::new();
    for k in 0..n {
        types(&mut s, k, "", "");
        writeln!(
            s,
            r#"
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tool{k:03}Args {{
    pub count: i64,
    pub mode: Tool{k:03}Mode,
    pub label: String,
    #[serde(default)]
    pub verbose: Option<bool>,
}}

pub fn tool_{k:03}(a: Tool{k:03}Args) -> Tool{k:03}Out {{
    {body}
}}"#,
            body = body(k, "a.count", "a.mode", "a.label", "a.verbose"),
        )
        .unwrap();
    }
    s.push_str(
        "\n/// Calls tool `name` with `args` (JSON text) and returns the result as JSON text.\n\
         pub fn dispatch(name: &str, args: &str) -> Result<String, String> {\n    match name {\n",
    );
    for k in 0..n {
        writeln!(
            s,
            r#"        "tool_{k:03}" => {{
            let a: Tool{k:03}Args = serde_json::from_str(args).map_err(|e| e.to_string())?;
            if !(0..=1000).contains(&a.count) {{
                return Err("count must be within 0..=1000".into());
            }}
            serde_json::to_string(&tool_{k:03}(a)).map_err(|e| e.to_string())
        }}"#
        )
        .unwrap();
    }
    s.push_str("        _ => Err(format!(\"unknown tool {name}\")),\n    }\n}\n");
    s
}

fn rmcp(n: usize) -> String {
    let mut s = String::from(
        "use rmcp::handler::server::{router::tool::ToolRouter, wrapper::{Json, Parameters}};\n\
         use rmcp::{ErrorData, ServerHandler, tool, tool_handler, tool_router};\n",
    );
    for k in 0..n {
        types(&mut s, k, "schemars::JsonSchema", "schemars::JsonSchema");
        writeln!(
            s,
            r#"
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct Tool{k:03}Args {{
    /// {COUNT_DOC}
    #[schemars(range(min = 0, max = 1000))]
    pub count: i64,
    /// {MODE_DOC}
    pub mode: Tool{k:03}Mode,
    /// {LABEL_DOC}
    pub label: String,
    /// {VERBOSE_DOC}
    #[serde(default)]
    pub verbose: Option<bool>,
}}"#
        )
        .unwrap();
    }
    s.push_str(
        "\n/// The server, with its router built once (the default `#[tool_handler]` rebuilds it per call).\n\
         #[derive(Clone)]\npub struct Server {\n    pub tool_router: ToolRouter<Self>,\n}\n\n\
         impl Default for Server {\n    fn default() -> Self {\n        Server { tool_router: Self::tool_router() }\n    }\n}\n\n\
         #[tool_router(vis = \"pub\")]\nimpl Server {\n",
    );
    for k in 0..n {
        writeln!(
            s,
            r#"    /// {desc}
    #[tool]
    pub fn tool_{k:03}(&self, Parameters(a): Parameters<Tool{k:03}Args>) -> Result<Json<Tool{k:03}Out>, ErrorData> {{
        if !(0..=1000).contains(&a.count) {{
            return Err(ErrorData::invalid_params("count must be within 0..=1000", None));
        }}
        Ok(Json({body}))
    }}
"#,
            desc = description(k, n),
            body = body(k, "a.count", "a.mode", "a.label", "a.verbose"),
        )
        .unwrap();
    }
    s.push_str(
        "}\n\n#[tool_handler(router = self.tool_router)]\nimpl ServerHandler for Server {}\n",
    );
    s
}

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=BENCH_TOOLS");
    let n: usize = match std::env::var("BENCH_TOOLS") {
        Ok(v) => v.parse().expect("BENCH_TOOLS is a number of tools"),
        Err(_) => 50,
    };
    let dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let dir = Path::new(&dir);
    let write = |file: &str, text: String| std::fs::write(dir.join(file), text).expect("OUT_DIR");
    write("toolkit.rs", toolkit(n));
    write("floor.rs", floor(n));
    write("rmcp.rs", rmcp(n));
    write("n.rs", format!("{n}"));
}
