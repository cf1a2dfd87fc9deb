//! The HR tools as an MCP server on stdio (or Streamable HTTP with `--http 127.0.0.1:8000`), for
//! MCP clients' configuration files and the tests: the same server as
//! `cargo run -p examples --example hr_assistant -- mcp`.

#[tokio::main]
async fn main() {
    // Logs go to stderr (stdout carries the protocol), filtered by `RUST_LOG`.
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
    let served = examples::hr::serve_mcp(&args).await;
    drop(telemetry); // exports what is buffered
    if let Err(e) = served {
        eprintln!("hr mcp server: {e}");
        std::process::exit(1);
    }
}
