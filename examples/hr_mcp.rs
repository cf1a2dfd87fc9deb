//! The HR tools as an MCP server on stdio, for MCP clients' configuration files and the tests:
//! the same server as `cargo run -p examples --example hr_assistant -- mcp`.

#[tokio::main]
async fn main() {
    if let Err(e) = examples::hr::serve_mcp().await {
        eprintln!("hr mcp server: {e}");
        std::process::exit(1);
    }
}
