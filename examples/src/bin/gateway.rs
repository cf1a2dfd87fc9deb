//! An MCP gateway: local tools, the HR server (stdio) and another MCP server (HTTP) as one set
//! behind OAuth (see `examples::gateway`). `gateway --http 127.0.0.1:8000`.

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,rmcp::service=error")),
        )
        .init();
    let args: Vec<String> = std::env::args().collect();
    if let Err(e) = examples::gateway::serve(&args).await {
        eprintln!("gateway: {e}");
        std::process::exit(1);
    }
}
