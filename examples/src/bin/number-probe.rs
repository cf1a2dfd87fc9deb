//! The probe tools (`examples::probe`: every integer type, a float, a defaulted field, each
//! echoing exactly what it got) as an MCP server on stdio (`number-probe`) or Streamable HTTP
//! (`number-probe 127.0.0.1:8002`), for the Python differential client
//! (`scripts/number-differential.py`).

use tool_runtime_mcp::{McpServer, http::HttpServer};

#[tokio::main]
async fn main() {
    let server = McpServer::new(examples::probe::tool_set());
    let served = match std::env::args().nth(1) {
        None => server.serve_stdio().await,
        Some(addr) => {
            let Ok(addr) = addr.parse() else {
                eprintln!("number-probe: expected an address such as 127.0.0.1:8002, got {addr}");
                std::process::exit(2);
            };
            match HttpServer::new(server).bind(addr).await {
                Ok(bound) => bound.serve().await.map_err(Into::into),
                Err(e) => Err(e.into()),
            }
        }
    };
    if let Err(e) = served {
        eprintln!("number-probe: {e}");
        std::process::exit(1);
    }
}
