//! The MCP server: one tool set, the caller's context per request, paging, and `tools/call`
//! through the set (with the approval flows of [`approval`](crate::approval)).

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, RwLock};

use rmcp::RoleServer;
use rmcp::model::{ErrorCode, ErrorData, RequestStateCodec};
use rmcp::service::Peer;
use tokio::sync::watch;
use tool_runtime::{BoxFuture, Context, TaskSupport, Tasks, ToolSet};

use crate::caller::{Caller, REFUSED, Refusal};
use crate::incoming::Incoming;
use crate::limits::{Gates, Limits};
use crate::pace::Pace;
use crate::trace::Propagator;

/// Makes the [`Context`] of one request.
type ContextFn = dyn Fn(Caller) -> BoxFuture<'static, Result<Context, Refusal>> + Send + Sync;

/// A `requestState` key that cannot sign (shorter than 32 bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateKeyError {
    message: String,
}

impl std::fmt::Display for StateKeyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the requestState key cannot be used: {}", self.message)
    }
}

impl std::error::Error for StateKeyError {}

/// Why [`McpServer::with_approver`] refused a tool.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ApproverError {
    /// The server has no tool of that name.
    UnknownTool {
        /// The name given.
        tool: String,
    },
    /// The tool's calls need no approval (`#[tool(needs_approval)]`), so nobody approves them.
    NoApproval {
        /// The tool.
        tool: String,
    },
    /// The tool never runs as a task (`#[tool(task = "optional")]`), the only way a call can
    /// wait for someone else.
    NotATask {
        /// The tool.
        tool: String,
    },
}

impl std::fmt::Display for ApproverError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ApproverError::UnknownTool { tool } => {
                write!(f, "no tool named `{tool}` to name an approver for")
            }
            ApproverError::NoApproval { tool } => write!(
                f,
                "`{tool}` needs no approval, so nobody approves it: add `needs_approval` to the tool"
            ),
            ApproverError::NotATask { tool } => write!(
                f,
                "`{tool}` never runs as a task, and a call approved by someone else waits as a task: give the tool `task = \"optional\"` (or \"required\")"
            ),
        }
    }
}

impl std::error::Error for ApproverError {}

/// Which tools' calls are approved by whom: tool name to the approvers' grant.
pub(crate) type Approvers = HashMap<String, String>;

/// An MCP server for one tool set.
#[derive(Clone)]
pub struct McpServer {
    tools: Arc<RwLock<Arc<ToolSet>>>,
    /// Clients connected over sessions (stdio, and 2025-11-25 HTTP sessions), told when the
    /// tool set changes; a closed one is dropped at the next change or connection.
    pub(crate) peers: Arc<Mutex<Vec<Peer<RoleServer>>>>,
    pub(crate) context: Arc<ContextFn>,
    pub(crate) limits: Limits,
    pub(crate) gates: Arc<Gates>,
    /// Where sync tools' calls run.
    pub(crate) pace: Arc<Pace>,
    pub(crate) page_size: usize,
    pub(crate) name: String,
    pub(crate) version: String,
    /// Signs and checks `requestState`; `None` when no key could be made.
    pub(crate) state_codec: Option<Arc<RequestStateCodec>>,
    /// Bumped by `replace_tools`: what `subscriptions/listen` streams wait on.
    pub(crate) tool_changes: Arc<watch::Sender<u64>>,
    /// Set when the server shuts down: open `subscriptions/listen` streams end with their result.
    pub(crate) stopping: Arc<watch::Sender<bool>>,
    /// Makes the trace context a request carried its span's parent.
    pub(crate) propagator: Option<Arc<dyn Propagator>>,
    /// Where tasks are kept, and their rules (this process's memory unless told otherwise).
    pub(crate) tasks: Tasks,
    /// The tasks running in this process.
    pub(crate) running: Arc<crate::running::Running>,
    /// Tools whose calls someone other than the caller approves, with the approvers' grant.
    pub(crate) approvers: Arc<Approvers>,
}

impl McpServer {
    /// A server for `tools`, with an empty context for every request, [`Limits::default`] and
    /// pages of 50 tools.
    pub fn new(tools: ToolSet) -> Self {
        let limits = Limits::default();
        McpServer {
            tools: Arc::new(RwLock::new(Arc::new(tools))),
            peers: Arc::default(),
            context: Arc::new(|_| Box::pin(async { Ok(Context::new()) })),
            gates: Arc::new(Gates::new(&limits)),
            pace: Arc::new(Pace::new(&limits)),
            limits,
            page_size: 50,
            name: "tool-runtime".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            state_codec: random_key().map(|k| Arc::new(RequestStateCodec::new_unchecked(k))),
            tool_changes: Arc::new(watch::channel(0).0),
            stopping: Arc::new(watch::channel(false).0),
            propagator: None,
            tasks: Tasks::default(),
            running: Arc::default(),
            approvers: Arc::default(),
        }
    }

    /// Where calls that run as tasks are kept ([`tool_runtime::task`]): give every replica a
    /// [`Tasks`] over the same store (`tool-runtime-sqlite`, `tool-runtime-postgres`), so a task
    /// made on one is polled, answered and cancelled on another. By default each server keeps
    /// its tasks in its own memory, for an hour, at most 32 per caller. A call runs as a task
    /// when its tool allows it (`#[tool(task = "optional")]`) and the caller declared the
    /// `io.modelcontextprotocol/tasks` extension.
    pub fn with_tasks(mut self, tasks: Tasks) -> Self {
        self.tasks = tasks;
        self
    }

    /// Ends every open `subscriptions/listen` stream (each gets its final result), and any
    /// opened later: the server is shutting down.
    pub fn stop_listening(&self) {
        self.stopping.send_replace(true);
    }

    /// The key that signs `requestState` (HMAC-SHA256), at least 32 bytes; every replica needs
    /// the same one. By default each process makes a random key, which is right for one server.
    /// Calls waiting for approval are held in the tool set's approval store
    /// ([`ToolSet::with_approvals`]): replicas share one (`tool-runtime-postgres` across machines,
    /// `tool-runtime-sqlite` on one), which hands each call out once.
    pub fn with_state_key(mut self, key: &[u8]) -> Result<Self, StateKeyError> {
        let codec = RequestStateCodec::try_new(key.to_vec()).map_err(|e| StateKeyError {
            message: e.to_string(),
        })?;
        self.state_codec = Some(Arc::new(codec));
        Ok(self)
    }

    /// Calls of `tool` are approved by another person holding the permission `grant` (in their
    /// [`Grants`](tool_runtime::Grants)), never by the caller, even one who holds it: such a
    /// call waits as a task until a holder decides it through their
    /// [`ApprovalDesk`](crate::ApprovalDesk), and then runs once, as its owner. The tool must
    /// need approval and be able to run as a task.
    pub fn with_approver(
        mut self,
        tool: &str,
        grant: impl Into<String>,
    ) -> Result<Self, ApproverError> {
        let tools = self.current();
        let Some(found) = tools.get(tool) else {
            return Err(ApproverError::UnknownTool { tool: tool.into() });
        };
        if !found.needs_approval() {
            return Err(ApproverError::NoApproval { tool: tool.into() });
        }
        if found.task_support() == TaskSupport::Forbidden {
            return Err(ApproverError::NotATask { tool: tool.into() });
        }
        std::sync::Arc::make_mut(&mut self.approvers).insert(tool.to_owned(), grant.into());
        Ok(self)
    }

    /// The grant whose holders approve `tool`'s calls: someone else than the caller, always
    /// (a holder of the grant does not approve their own call either).
    pub(crate) fn approver_of(&self, tool: &str) -> Option<&str> {
        if self.approvers.is_empty() {
            return None;
        }
        self.approvers.get(tool).map(String::as_str)
    }

    /// The tool set served right now.
    pub(crate) fn current(&self) -> Arc<ToolSet> {
        self.tools.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Replaces the tool set while serving and sends `notifications/tools/list_changed` to every
    /// connected client (clients that have gone away are forgotten) and every open
    /// `subscriptions/listen` stream that asked for `toolsListChanged`. Calls held for approval
    /// stay in the old set's store: give the new set the same store.
    pub async fn replace_tools(&self, tools: ToolSet) {
        *self.tools.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(tools);
        self.tool_changes.send_modify(|n| *n += 1);
        let peers: Vec<Peer<RoleServer>> = self.live_peers();
        for peer in peers {
            let _ = peer.notify_tool_list_changed().await;
        }
    }

    /// How many clients are connected right now (stdio, and HTTP sessions); one that has gone
    /// away is not counted, and nothing of it is kept.
    pub fn connected(&self) -> usize {
        self.live_peers().len()
    }

    /// The connected clients, the closed ones forgotten.
    pub(crate) fn live_peers(&self) -> Vec<Peer<RoleServer>> {
        let mut peers = self.peers.lock().unwrap_or_else(|e| e.into_inner());
        peers.retain(|p| !p.is_transport_closed());
        peers.clone()
    }

    /// How each request's [`Context`] is made: the session, its [`Grants`](tool_runtime::Grants),
    /// shared state, from the [`Caller`] (the principal an access token named, the HTTP
    /// request). It may look things up (`async`) and may refuse the request. Nothing of the
    /// caller's identity ever comes from tool arguments.
    pub fn with_context<F, Fut>(mut self, make: F) -> Self
    where
        F: Fn(Caller) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Context, Refusal>> + Send + 'static,
    {
        self.context = Arc::new(move |caller| Box::pin(make(caller)));
        self
    }

    /// Continues the caller's trace: the W3C trace context a request carries (in `params._meta`,
    /// or on HTTP its headers) becomes its server span's parent through `propagator` (see
    /// [`trace`](crate::trace)).
    pub fn with_propagator(mut self, propagator: impl Propagator) -> Self {
        self.propagator = Some(Arc::new(propagator));
        self
    }

    /// How much work the server takes on (see [`Limits`]).
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.gates = Arc::new(Gates::new(&limits));
        self.pace = Arc::new(Pace::new(&limits));
        self.limits = limits;
        self
    }

    /// The server's limits.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Tools per `tools/list` page (at least 1).
    pub fn with_page_size(mut self, page_size: usize) -> Self {
        self.page_size = page_size.max(1);
        self
    }

    /// The name and version the server reports in `initialize`.
    pub fn with_server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.name = name.into();
        self.version = version.into();
        self
    }

    /// The request's caller and its context, or the refusal to answer it with.
    pub(crate) async fn context_for(
        &self,
        request: &Incoming,
    ) -> Result<(Caller, Context), ErrorData> {
        // On HTTP the admission layer ran the context function already.
        #[cfg(feature = "http")]
        if let Some(admitted) = request
            .parts()
            .and_then(|p| p.extensions.get::<crate::caller::Admitted>())
        {
            return Ok((admitted.caller.clone(), admitted.cx.clone()));
        }
        let caller = caller_of(request);
        match self.admit(caller.clone()).await {
            Ok(cx) => Ok((caller, cx)),
            Err(refusal) => Err(ErrorData::new(ErrorCode(REFUSED), refusal.message, None)),
        }
    }

    /// The application's answer for `caller`: the context of its request, or its refusal.
    pub(crate) async fn admit(&self, caller: Caller) -> Result<Context, Refusal> {
        (self.context)(caller).await
    }

    /// Puts in `cx` what keeps the whole result of a call of a bounded tool of `tools` when it is
    /// cut, for the caller `key`.
    pub(crate) fn with_keeper(&self, cx: &mut Context, key: &str, tools: &ToolSet) {
        cx.insert(crate::kept::Keeper {
            tasks: self.tasks.clone(),
            owner: key.to_owned(),
            wording: tools.wording().clone(),
        });
    }

    /// The parts a 2026-07-28 approval needs, or `None` without a signing key.
    pub(crate) fn mrtr(&self) -> Option<crate::approval::Mrtr<'_>> {
        Some(crate::approval::Mrtr {
            codec: self.state_codec.as_deref()?,
            limits: &self.limits,
        })
    }
}

/// The caller of a request: the principal and HTTP parts the HTTP server put in the request's
/// extensions (none on stdio).
fn caller_of(request: &Incoming) -> Caller {
    #[cfg(feature = "http")]
    {
        let parts = request.parts();
        Caller {
            principal: parts.and_then(|p| p.extensions.get::<crate::caller::Principal>().cloned()),
            peer: parts.and_then(|p| p.extensions.get::<crate::caller::PeerAddr>().map(|a| a.0)),
            http: parts.cloned().map(std::sync::Arc::new),
        }
    }
    #[cfg(not(feature = "http"))]
    {
        let _ = request;
        Caller::default()
    }
}

/// A fresh 32-byte key from the operating system.
fn random_key() -> Option<Vec<u8>> {
    let mut key = vec![0u8; 32];
    getrandom::fill(&mut key).ok()?;
    Some(key)
}

/// Logs, for the host, why `tool` is hidden from `caller`: the grants it needs that the
/// caller's context lacks.
pub(crate) fn log_hidden(tool: &tool_runtime::Tool, cx: &Context, caller: &str) {
    let missing = match cx.get::<tool_runtime::Grants>() {
        Some(grants) => grants.missing(&tool.requires()),
        None => tool.requires().iter().map(|p| (*p).to_owned()).collect(),
    };
    tracing::debug!(
        tool = tool.name(),
        requires = ?tool.requires(),
        missing = ?missing,
        caller,
        "tool hidden from this caller: it lacks a grant the tool requires"
    );
}
