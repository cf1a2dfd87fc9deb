//! An MCP gateway: the catering and weather tools of this crate, the HR server's tools (a child
//! process over stdio) and another MCP server's tools (over Streamable HTTP), served as one set
//! behind the HTTP server with OAuth, per-user grants, approval and limits.
//!
//! - Names are prefixed per server (`hr_…`, `remote_…`), so they cannot collide.
//! - A caller's token scopes are its grants: `gw.hr` for the HR tools, `gw.remote` for the
//!   other server's; the local tools need none. The gateway itself needs `gw`.
//! - Arguments are checked at the gateway; a remote tool that is not read-only waits for the
//!   person's approval (asked through MCP elicitation, as for local tools).
//! - The remotes see the gateway's own credentials (`GATEWAY_REMOTE_AUTHORIZATION`), never a
//!   caller's token.
//! - A leave booking (`hr_ajukan-cuti`) runs as a task of the gateway's own for a caller that
//!   follows tasks: it waits for the person's approval in `input_required` as long as the task
//!   is kept, and the approval given here is handed to the HR server's own task.
//! - A remote that goes away makes its tools answer that it is unreachable; the rest keep
//!   working, and the next call after it is back reconnects. Its `tools/list_changed` reaches
//!   the gateway's clients.
//!
//! Configuration (environment): `GATEWAY_OAUTH_*` as in [`crate::oauth_from_env`];
//! `GATEWAY_HR_COMMAND`, the HR server's command line (default: `hr-mcp` next to this program,
//! for employee `HR_NIK`); `GATEWAY_REMOTE_URL` and `GATEWAY_REMOTE_AUTHORIZATION` for the HTTP
//! server (left out when no URL is set).

use std::net::SocketAddr;
use std::sync::Arc;

use tool_runtime::{Context, Grants, ToolSet};
use tool_runtime_mcp::gateway::Gateway;
use tool_runtime_mcp::http::HttpServer;
use tool_runtime_mcp::remote::{Remote, RemoteOptions};
use tool_runtime_mcp::{Caller, McpServer, Refusal};

type Error = Box<dyn std::error::Error + Send + Sync>;

/// The tools the gateway serves itself.
pub fn local_tools() -> ToolSet {
    ToolSet::new([
        crate::katering::pesan_katering::tool(),
        crate::cuaca::cuaca_terkini::tool(),
    ])
    .expect("two tools with distinct names")
}

/// The HR server's command: `GATEWAY_HR_COMMAND` run by `sh -c`, or `hr-mcp` beside this
/// program.
fn hr_command() -> Result<impl Fn() -> tokio::process::Command + Send + Sync + 'static, Error> {
    let line = match std::env::var("GATEWAY_HR_COMMAND") {
        Ok(line) if !line.is_empty() => line,
        _ => {
            let exe = std::env::current_exe()?;
            let hr = exe.with_file_name("hr-mcp");
            format!("exec '{}'", hr.display())
        }
    };
    Ok(move || {
        let mut cmd = tokio::process::Command::new("sh");
        cmd.args(["-c", &line]);
        cmd
    })
}

/// The gateway's tool set: local tools, the HR server's, and the HTTP server's when
/// `GATEWAY_REMOTE_URL` is set.
pub async fn gateway() -> Result<Gateway, Error> {
    let hr_options = RemoteOptions {
        requires: vec!["gw.hr".into()],
        propagator: Some(Arc::new(tool_runtime_otel::W3c)),
        tasks: [("ajukan-cuti".into(), tool_runtime::TaskSupport::Optional)].into(),
        ..RemoteOptions::prefixed("hr")
    };
    let hr = Remote::stdio("hr", hr_command()?, hr_options).await?;
    let mut gateway = Gateway::new(local_tools()).with_remote(hr);
    if let Ok(url) = std::env::var("GATEWAY_REMOTE_URL")
        && !url.is_empty()
    {
        let authorization = std::env::var("GATEWAY_REMOTE_AUTHORIZATION")
            .ok()
            .filter(|a| !a.is_empty());
        let options = RemoteOptions {
            requires: vec!["gw.remote".into()],
            propagator: Some(Arc::new(tool_runtime_otel::W3c)),
            ..RemoteOptions::prefixed("remote")
        };
        gateway = gateway.with_remote(Remote::http("remote", url, authorization, options).await?);
    }
    Ok(gateway)
}

/// A caller's context: its token's scopes as its grants. Without a token (only with
/// `--local-session`), every grant.
async fn context_for(caller: Caller) -> Result<Context, Refusal> {
    Ok(match caller.principal {
        Some(p) => Context::new().with(Grants::new(p.scopes)),
        None => Context::new().with(Grants::new(["gw", "gw.hr", "gw.remote"])),
    })
}

/// Serves the gateway on `--http ADDR` (tokens checked, unless `--local-session` on a loopback
/// address), until Ctrl-C.
pub async fn serve(args: &[String]) -> Result<(), Error> {
    let addr: SocketAddr = args
        .iter()
        .position(|a| a == "--http")
        .and_then(|i| args.get(i + 1))
        .ok_or("usage: gateway --http 127.0.0.1:8000 [--local-session]")?
        .parse()?;
    let gateway = Arc::new(gateway().await?);
    let server = McpServer::new(gateway.tool_set().await?)
        .with_server_info("tool-runtime-gateway", env!("CARGO_PKG_VERSION"))
        .with_propagator(tool_runtime_otel::W3c)
        .with_context(context_for);
    gateway.clone().keep_current(server.clone());
    let http = if args.iter().any(|a| a == "--local-session") {
        HttpServer::new(server)
    } else {
        let auth = crate::oauth_from_env("GATEWAY", addr)
            .await?
            .with_required_scopes(["gw"])
            .with_scopes_supported(["gw", "gw.hr", "gw.remote"]);
        HttpServer::new(server).with_auth(auth)
    };
    let bound = http.bind(addr).await?;
    eprintln!("MCP gateway on http://{}/mcp", bound.local_addr()?);
    let stop = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    Ok(bound.serve_until(stop).await?)
}
