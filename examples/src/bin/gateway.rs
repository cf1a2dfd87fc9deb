//! An MCP gateway: local tools, the HR server (stdio) and another MCP server (HTTP) as one set
//! behind OAuth (see `examples::gateway`). `gateway --http 127.0.0.1:8000`.

#[tokio::main]
async fn main() {
    // Logs to stderr, filtered by `RUST_LOG`; spans and metrics over OTLP when the standard
    // `OTEL_*` variables ask for them (`OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318`).
    let telemetry = match tool_runtime_otel::init("warn,rmcp::service=error") {
        Ok(telemetry) => telemetry,
        Err(e) => {
            eprintln!("telemetry: {e}");
            std::process::exit(2);
        }
    };
    let args: Vec<String> = std::env::args().collect();
    let served = examples::gateway::serve(&args).await;
    drop(telemetry); // exports what is buffered
    if let Err(e) = served {
        eprintln!("gateway: {e}");
        std::process::exit(1);
    }
}
