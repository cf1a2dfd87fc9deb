//! The fixture tools the official MCP conformance suite (`@modelcontextprotocol/conformance`)
//! calls by name, defined with this toolkit and served over Streamable HTTP:
//! `mcp-conformance 127.0.0.1:8001`. `scripts/mcp-conformance.sh` runs the suite against it.

use tool_runtime::mcp::{McpServer, http::HttpServer};
use tool_runtime::{ModelOutput, ToolSet, tool};

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

#[tokio::main]
async fn main() {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8001".into());
    let tools =
        ToolSet::new([test_simple_text::tool(), test_error_handling::tool()]).expect("valid tools");
    let addr = addr.parse().expect("an address such as 127.0.0.1:8001");
    let served = match HttpServer::new(McpServer::new(tools)).bind(addr).await {
        Ok(bound) => bound.serve().await,
        Err(e) => Err(e),
    };
    if let Err(e) = served {
        eprintln!("mcp-conformance: {e}");
        std::process::exit(1);
    }
}
