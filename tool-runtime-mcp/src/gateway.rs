//! A gateway's tool set: the host's own tools and the tools of remote MCP servers in one
//! [`ToolSet`], kept current while an [`McpServer`] serves it. Every rule of the set applies to
//! the remote tools as to the local ones (grants, validation, approval, limits), and behind
//! [`http::HttpServer`](crate::http) with OAuth a caller's identity stays at the gateway: a
//! remote only ever sees the credentials the host gave its connection.

use std::sync::{Arc, Mutex};

use tokio::sync::Notify;
use tool_runtime::{ToolRef, ToolSet, ToolSetError};

use crate::remote::Remote;
use crate::server::McpServer;

/// Local tools plus remote servers' tools (see the module docs).
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// use std::sync::Arc;
/// use tool_runtime::ToolSet;
/// use tool_runtime_mcp::McpServer;
/// use tool_runtime_mcp::gateway::Gateway;
/// use tool_runtime_mcp::remote::{Remote, RemoteOptions};
///
/// let hr = Remote::stdio("hr", || tokio::process::Command::new("hr-mcp"), RemoteOptions::prefixed("hr")).await?;
/// let gateway = Arc::new(Gateway::new(ToolSet::from_module(module_path!())?).with_remote(hr));
/// let server = McpServer::new(gateway.tool_set().await?);
/// gateway.clone().keep_current(server.clone()); // follows the remotes' tools/list_changed
/// server.serve_stdio().await?;
/// # Ok(()) }
/// ```
pub struct Gateway {
    local: ToolSet,
    remotes: Vec<Member>,
}

/// One remote, with the tools it listed last (kept while it cannot be listed).
struct Member {
    remote: Remote,
    last: Mutex<Vec<ToolRef>>,
    /// Its tools are deferred: found with the search tool, not listed.
    deferred: bool,
}

impl Gateway {
    /// A gateway serving `local` (its approval store, middleware and wording are the whole
    /// set's), and no remote yet.
    pub fn new(local: ToolSet) -> Self {
        Gateway {
            local,
            remotes: Vec::new(),
        }
    }

    /// Adds a remote server's tools (give each a [`prefix`](crate::remote::RemoteOptions::prefix)
    /// so names cannot collide).
    pub fn with_remote(mut self, remote: Remote) -> Self {
        self.remotes.push(Member {
            remote,
            last: Mutex::new(Vec::new()),
            deferred: false,
        });
        self
    }

    /// Adds a remote server whose tools are deferred ([`ToolSet::defer`]):
    /// the gateway's clients find them with its search tool and call them through
    /// [`CALL_TOOL`](crate::export::CALL_TOOL) (or by name), and an agent loop over
    /// [`tool_set`](Gateway::tool_set) sends them once found. Every call is checked as any other.
    pub fn with_deferred_remote(mut self, remote: Remote) -> Self {
        self.remotes.push(Member {
            remote,
            last: Mutex::new(Vec::new()),
            deferred: true,
        });
        self
    }

    /// The union as it stands: the local tools, then each remote's in the order they were
    /// added. A remote that cannot be listed right now keeps the tools it listed last, which
    /// answer that it is unreachable until it is back; tools a remote listed but the toolkit
    /// refused are logged and left out, and so is a remote tool whose name a tool before it
    /// already has (a local one, an earlier remote's: give the remote a prefix), so one
    /// remote's new tool never takes the others down.
    pub async fn tool_set(&self) -> Result<ToolSet, ToolSetError> {
        let mut set = self.local.clone();
        let mut deferred = std::collections::HashSet::new();
        for m in &self.remotes {
            let tools = match m.remote.tools().await {
                Ok(imported) => {
                    for refused in &imported.refused {
                        tracing::warn!(
                            server = m.remote.label(),
                            "remote tool not imported: {refused}"
                        );
                    }
                    let tools: Vec<ToolRef> =
                        imported.tools.into_iter().map(ToolRef::from).collect();
                    *m.last.lock().unwrap_or_else(|e| e.into_inner()) = tools.clone();
                    tools
                }
                Err(e) => {
                    tracing::warn!(
                        server = m.remote.label(),
                        "remote tools kept as they were: {e}"
                    );
                    m.last.lock().unwrap_or_else(|e| e.into_inner()).clone()
                }
            };
            // With tools deferred, the search tool's and call_tool's names are the gateway's;
            // every other name is the first tool's that has it.
            let deferring = self.remotes.iter().any(|m| m.deferred);
            let tools: Vec<ToolRef> = tools
                .into_iter()
                .filter(|t| {
                    let reserved = deferring
                        && [tool_runtime::search::SEARCH_TOOL, crate::export::CALL_TOOL]
                            .contains(&t.name());
                    let whose = if reserved {
                        "the gateway's own tool"
                    } else if set.get(t.name()).is_some() {
                        "a tool before it"
                    } else {
                        return true;
                    };
                    tracing::warn!(
                        server = m.remote.label(),
                        "remote tool `{}` not imported: {whose} has that name (give the remote a prefix)",
                        t.name()
                    );
                    false
                })
                .collect();
            if m.deferred {
                deferred.extend(tools.iter().map(|t| t.name().to_owned()));
            }
            set = set.with_tools(tools)?;
        }
        if !deferred.is_empty() {
            set = set.defer(|t| deferred.contains(t.name()))?;
        }
        Ok(set)
    }

    /// Keeps `server`'s tool set current: each time a remote says its tools changed (or comes
    /// back after being away), the union is listed again and given to the server, which tells
    /// its own clients. The task runs until it is aborted (the returned handle) or the runtime
    /// ends.
    pub fn keep_current(self: Arc<Self>, server: McpServer) -> tokio::task::JoinHandle<()> {
        let changed = Arc::new(Notify::new());
        for m in &self.remotes {
            let mut ticks = m.remote.changed();
            let changed = changed.clone();
            tokio::spawn(async move {
                while ticks.changed().await.is_ok() {
                    changed.notify_one();
                }
            });
        }
        tokio::spawn(async move {
            loop {
                changed.notified().await;
                match self.tool_set().await {
                    Ok(set) => server.replace_tools(set).await,
                    Err(e) => tracing::error!("the gateway's tools were not replaced: {e}"),
                }
            }
        })
    }
}
