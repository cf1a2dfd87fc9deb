//! The HR tools as an MCP server on stdio (or Streamable HTTP with `--http 127.0.0.1:8000`), for
//! MCP clients' configuration files and the tests: the same server as
//! `cargo run -p examples --example hr_assistant -- mcp`.

#[tokio::main]
async fn main() {
    // Logs go to stderr (stdout carries the protocol), filtered by `RUST_LOG`.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,rmcp::service=error")),
        )
        .init();
    let args: Vec<String> = std::env::args().collect();
    if let Err(e) = examples::hr::serve_mcp(&args).await {
        eprintln!("hr mcp server: {e}");
        std::process::exit(1);
    }
}
