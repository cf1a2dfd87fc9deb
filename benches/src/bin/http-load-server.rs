//! One tool, `tambah` (add two numbers), served over MCP for the load script
//! (`scripts/load.sh`); this toolkit also serves `tambah_cepat`, the same sum declared
//! `blocking = false` (run on the async worker rather than a blocking thread):
//!
//! - `http-load-server toolkit ADDR`: this toolkit's `HttpServer` with its defaults, but for the
//!   share of one caller's requests in progress, raised to the connection cap: every load
//!   generator connects from one address, which the server counts as one caller;
//! - `http-load-server rmcp ADDR`: rmcp's own Streamable HTTP setup as its documentation shows
//!   it (`StreamableHttpService` in an axum router, `axum::serve`) plus `TCP_NODELAY`, the same
//!   tool with rmcp's macros;
//! - `http-load-server gateway ADDR URL`: a gateway ([`tool_runtime_mcp::gateway`]) with no tools
//!   of its own, serving the tools of the MCP server at `URL` (prefixed `remote_`) with the same
//!   `HttpServer` settings (built with `--features gateway`);
//! - `http-load-server stdio`: this toolkit on stdio.

use axum::serve::ListenerExt;
use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use serde::Deserialize;
use tool_runtime::ToolSet;
use tool_runtime_mcp::{McpServer, http::HttpServer};

/// Add two whole numbers and return the sum.
#[tool_runtime::tool(
    name = "tambah",
    description = "Jumlahkan dua bilangan bulat dan kembalikan hasilnya; alat uji beban.",
    read_only
)]
fn tambah(
    #[arg(description = "Bilangan pertama", range = -1_000_000..=1_000_000)] a: i64,
    #[arg(description = "Bilangan kedua", range = -1_000_000..=1_000_000)] b: i64,
) -> i64 {
    a + b
}

/// The same sum, declared not to block: the server runs it on the async worker.
#[tool_runtime::tool(
    name = "tambah_cepat",
    description = "Jumlahkan dua bilangan bulat tanpa memblokir dan kembalikan hasilnya; alat uji beban.",
    blocking = false,
    read_only
)]
fn tambah_cepat(
    #[arg(description = "Bilangan pertama", range = -1_000_000..=1_000_000)] a: i64,
    #[arg(description = "Bilangan kedua", range = -1_000_000..=1_000_000)] b: i64,
) -> i64 {
    a + b
}

#[derive(Deserialize, schemars::JsonSchema)]
struct TambahArgs {
    /// Bilangan pertama
    #[schemars(range(min = -1_000_000, max = 1_000_000))]
    a: i64,
    /// Bilangan kedua
    #[schemars(range(min = -1_000_000, max = 1_000_000))]
    b: i64,
}

#[derive(Clone)]
struct RmcpServer {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl RmcpServer {
    /// Jumlahkan dua bilangan bulat dan kembalikan hasilnya; alat uji beban.
    #[tool(name = "tambah")]
    fn tambah(&self, Parameters(args): Parameters<TambahArgs>) -> String {
        (args.a + args.b).to_string()
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for RmcpServer {}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let args: Vec<String> = std::env::args().collect();
    // With `--features otel`: the toolkit's spans and metrics exported as `OTEL_*` says
    // (`scripts/otel-overhead.sh`), through `tool-runtime-otel`'s usual subscriber.
    #[cfg(feature = "otel")]
    let _telemetry = tool_runtime_otel::init("error")?;
    let addr = || -> Result<std::net::SocketAddr, Box<dyn std::error::Error + Send + Sync>> {
        Ok(args
            .get(2)
            .ok_or("an address, e.g. 127.0.0.1:8080")?
            .parse()?)
    };
    let toolkit = || {
        let server = McpServer::new(
            ToolSet::new([tambah::tool(), tambah_cepat::tool()]).expect("one valid tool"),
        );
        // As a deployment that joins its callers' traces has it (W3C trace context).
        #[cfg(feature = "otel")]
        let server = server.with_propagator(tool_runtime_otel::W3c);
        server
    };
    match args.get(1).map(String::as_str) {
        Some("toolkit") => Ok(HttpServer::new(toolkit())
            .configure(|c| c.requests_per_caller = c.max_connections)
            .bind(addr()?)
            .await?
            .serve()
            .await?),
        Some("rmcp") => {
            use rmcp::transport::streamable_http_server::{
                StreamableHttpServerConfig, StreamableHttpService,
                session::local::LocalSessionManager,
            };
            let service = StreamableHttpService::new(
                || {
                    Ok(RmcpServer {
                        tool_router: RmcpServer::tool_router(),
                    })
                },
                LocalSessionManager::default().into(),
                StreamableHttpServerConfig::default(),
            );
            let router = axum::Router::new().nest_service("/mcp", service);
            // With TCP_NODELAY, as a fair setup has it: without, each answer on a kept-alive
            // connection waits for the client's delayed ACK (about 40 calls/s).
            let listener = tokio::net::TcpListener::bind(addr()?).await?.tap_io(|s| {
                let _ = s.set_nodelay(true);
            });
            Ok(axum::serve(listener, router).await?)
        }
        #[cfg(feature = "gateway")]
        Some("gateway") => {
            use tool_runtime_mcp::gateway::Gateway;
            use tool_runtime_mcp::remote::{Remote, RemoteOptions};
            let url = args.get(3).ok_or("the remote server's URL")?;
            let remote =
                Remote::http("remote", url, None, RemoteOptions::prefixed("remote")).await?;
            let gateway = Gateway::new(ToolSet::new(Vec::<&'static tool_runtime::Tool>::new())?)
                .with_remote(remote);
            Ok(HttpServer::new(McpServer::new(gateway.tool_set().await?))
                .configure(|c| c.requests_per_caller = c.max_connections)
                .bind(addr()?)
                .await?
                .serve()
                .await?)
        }
        Some("stdio") => toolkit().serve_stdio().await,
        _ => Err(
            "usage: http-load-server toolkit|rmcp ADDR | http-load-server gateway ADDR URL (with --features gateway) | http-load-server stdio"
                .into(),
        ),
    }
}
