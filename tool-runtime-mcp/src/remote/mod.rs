//! Tools of another MCP server, imported as tools of a [`ToolSet`](tool_runtime::ToolSet) (on
//! rmcp's client): every rule of the toolkit applies to them as to its own.
//!
//! - Arguments are validated here, against the remote's `inputSchema`, before anything is sent:
//!   a bad call never reaches the remote, and the model gets the toolkit's repair message.
//! - A remote `inputSchema` or `outputSchema` the validator cannot enforce exactly, a tool
//!   without a description, a duplicate name: that tool is refused at import, with the reason
//!   ([`Imported::refused`]); the others are imported.
//! - Results are checked against the remote's `outputSchema`; an `isError` result is a
//!   [`ToolError::Failed`](tool_runtime::ToolError::Failed) with the remote's text.
//! - A remote tool that does not say it is read-only (`readOnlyHint: true`) needs a person's
//!   approval by default, as MCP's defaults make it possibly destructive
//!   ([`RemoteOptions::approval`] changes that per tool).
//! - The host grants permissions per server and per tool ([`RemoteOptions::requires`],
//!   [`RemoteOptions::tool_requires`]); names can be prefixed per server.
//! - A call has a time limit; when it ends (or the call is dropped) the remote is sent
//!   `notifications/cancelled`. A caller that follows a call's progress (a
//!   [`Progress`](tool_runtime::Progress) in its context: an MCP request with a
//!   `progressToken`, a streamed agent run) gets the remote's progress reports. A server that went away makes its tools answer a clear error,
//!   and the next call after a pause reconnects.
//! - `notifications/tools/list_changed` is followed (on a `subscriptions/listen` stream with a
//!   2026-07-28 server): [`Remote::changed`] ticks, and [`Remote::tools`] lists again.
//! - Both protocol eras: `server/discover` and stateless requests with a server that has
//!   2026-07-28, the `initialize` handshake and a session with an earlier one.
//! - The caller's identity is never forwarded: the remote sees only the credentials the host
//!   gave this connection.

mod call;
mod connection;
#[cfg(feature = "client-http")]
mod credentials;
mod options;
mod progress;
mod stdio;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::watch;
use tool_runtime::{Annotations, DefineError, Tool};

use call::RemoteTool;
use connection::{Connect, Inner, Live, list_all, up};
#[cfg(feature = "client-http")]
pub use credentials::ClientCredentials;
pub use options::{RemoteError, RemoteOptions};

/// What [`Remote::tools`] imported: the tools, and each tool refused with the reason.
#[derive(Debug)]
pub struct Imported {
    /// The remote's tools as the toolkit's, in the server's order.
    pub tools: Vec<Tool>,
    /// The tools that were not imported, and why.
    pub refused: Vec<DefineError>,
}

/// One remote MCP server, connected: list its tools as the toolkit's with [`Remote::tools`].
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use tool_runtime::ToolSet;
/// use tool_runtime_mcp::remote::{Remote, RemoteOptions};
///
/// let hr = Remote::stdio("hr", || tokio::process::Command::new("hr-mcp"), RemoteOptions::prefixed("hr"))
///     .await?;
/// let imported = hr.tools().await?;
/// for refused in &imported.refused {
///     eprintln!("not imported: {refused}");
/// }
/// let tools = ToolSet::new(imported.tools)?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Remote {
    inner: Arc<Inner>,
}

impl fmt::Debug for Remote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Remote")
            .field("label", &self.inner.label)
            .finish_non_exhaustive()
    }
}

impl Remote {
    /// A server started as a child process (`command` is called again to restart it after it
    /// went away), spoken to over its stdin and stdout; its stderr is this process's. `label`
    /// names it in errors and logs.
    pub async fn stdio(
        label: impl Into<String>,
        command: impl Fn() -> tokio::process::Command + Send + Sync + 'static,
        options: RemoteOptions,
    ) -> Result<Remote, RemoteError> {
        Remote::start(label.into(), Connect::Stdio(Box::new(command)), options).await
    }

    /// A server over MCP's Streamable HTTP at `url`, with `authorization` sent as the
    /// `Authorization` header's value (`"Bearer …"`) when given: the host's credentials for
    /// this server, never a caller's.
    #[cfg(feature = "client-http")]
    pub async fn http(
        label: impl Into<String>,
        url: impl Into<String>,
        authorization: Option<String>,
        options: RemoteOptions,
    ) -> Result<Remote, RemoteError> {
        let connect = Connect::Http {
            url: url.into(),
            authorization,
            credentials: None,
        };
        Remote::start(label.into(), connect, options).await
    }

    /// A server over Streamable HTTP that asks for an OAuth access token (a 401 with
    /// `WWW-Authenticate: Bearer resource_metadata=…`): the token comes from the authorization
    /// server its metadata names, with the client-credentials grant (RFC 6749 §4.4, the client
    /// authenticated with HTTP Basic, `resource` per RFC 8707); it is asked for again when the
    /// server refuses it (expired).
    #[cfg(feature = "client-http")]
    pub async fn http_client_credentials(
        label: impl Into<String>,
        url: impl Into<String>,
        credentials: ClientCredentials,
        options: RemoteOptions,
    ) -> Result<Remote, RemoteError> {
        let connect = Connect::Http {
            url: url.into(),
            authorization: None,
            credentials: Some((credentials, Mutex::new(None))),
        };
        Remote::start(label.into(), connect, options).await
    }

    async fn start(
        label: String,
        connect: Connect,
        options: RemoteOptions,
    ) -> Result<Remote, RemoteError> {
        let inner = Arc::new(Inner {
            label,
            connect,
            options,
            link: Mutex::new(None),
            connecting: tokio::sync::Mutex::new(()),
            opened: std::sync::atomic::AtomicU64::new(0),
            failed_at: Mutex::new(None),
            changed: watch::Sender::new(0),
        });
        let link = inner.open().await?;
        *inner.link() = Some((link, 0));
        Ok(Remote { inner })
    }

    /// The label given when connecting.
    pub fn label(&self) -> &str {
        &self.inner.label
    }

    /// Ticks each time the server says its tool list changed: list again with
    /// [`Remote::tools`] and give the new set to the server or agent that uses it.
    pub fn changed(&self) -> watch::Receiver<u64> {
        self.inner.changed.subscribe()
    }

    /// The protocol version the connection speaks (`2026-07-28` when the server has it, else
    /// what the `initialize` handshake agreed); `None` while it is down.
    pub async fn protocol_version(&self) -> Option<String> {
        let link = self.inner.link();
        let (l, _) = link.as_ref()?;
        Some(l.peer().peer_info()?.protocol_version.to_string())
    }

    /// Whether the connection is up right now (a call reconnects when it is not).
    pub async fn is_connected(&self) -> bool {
        self.inner.link().as_ref().is_some_and(|(l, _)| up(l))
    }

    /// Lists the server's tools (every page) and makes each one a tool of the toolkit.
    pub async fn tools(&self) -> Result<Imported, RemoteError> {
        let server = || self.inner.label.clone();
        let Live { peer, .. } = self.inner.peer().await.map_err(|e| RemoteError::Connect {
            server: server(),
            source: Box::new(e),
        })?;
        let max = self.inner.options.max_tools;
        let within = self.inner.options.connect_timeout;
        let listed = list_all(&peer, max, within)
            .await
            .map_err(|source| RemoteError::List {
                server: server(),
                source,
            })?;
        if listed.len() > max {
            return Err(RemoteError::TooManyTools {
                server: server(),
                listed: listed.len(),
                max,
            });
        }
        let mut count: BTreeMap<&str, usize> = BTreeMap::new();
        for t in &listed {
            *count.entry(&t.name).or_default() += 1;
        }
        let mut imported = Imported {
            tools: Vec::new(),
            refused: Vec::new(),
        };
        for t in &listed {
            if count[&*t.name] > 1 {
                imported.refused.push(DefineError {
                    tool: t.name.to_string(),
                    problems: vec![tool_runtime::DefineProblem::Name(format!(
                        "the server lists {} tools of this name; none of them is imported",
                        count[&*t.name]
                    ))],
                });
                continue;
            }
            match self.import(t) {
                Ok(tool) => imported.tools.push(tool),
                Err(e) => imported.refused.push(e),
            }
        }
        Ok(imported)
    }

    fn import(&self, t: &rmcp::model::Tool) -> Result<Tool, DefineError> {
        let options = &self.inner.options;
        let name = match &options.prefix {
            Some(p) => format!("{p}_{}", t.name),
            None => t.name.to_string(),
        };
        let hints = t.annotations.clone().unwrap_or_default();
        let read_only = hints.read_only_hint == Some(true);
        let needs_approval = options
            .approval
            .get(&*t.name)
            .copied()
            .unwrap_or(!read_only);
        let mut requires = options.requires.clone();
        requires.extend(
            options
                .tool_requires
                .get(&*t.name)
                .into_iter()
                .flatten()
                .cloned(),
        );
        let mut def = Tool::define(
            name,
            t.description.as_deref().unwrap_or(""),
            Value::Object((*t.input_schema).clone()),
        )
        .requires(requires)
        .needs_approval(needs_approval)
        .task(
            options
                .tasks
                .get(&*t.name)
                .copied()
                .unwrap_or(tool_runtime::TaskSupport::Forbidden),
        )
        .timeout(options.call_timeout)
        // A remote's schema is not the host's: no pattern a crafted string can keep busy.
        .linear_patterns_only(true)
        .annotations(Annotations {
            title: t.title.clone().or(hints.title).map(Into::into),
            read_only: hints.read_only_hint,
            destructive: hints.destructive_hint,
            idempotent: hints.idempotent_hint,
            open_world: hints.open_world_hint,
        });
        if let Some(output) = &t.output_schema {
            def = def.output_schema(Value::Object((**output).clone()));
        }
        if let Some(max) = options.max_result_chars {
            def = def.max_result_chars(max);
        }
        def.build(RemoteTool {
            remote: self.inner.clone(),
            name: t.name.to_string(),
            // Such a tool runs only once a person approved the call here.
            approved_here: needs_approval,
        })
    }
}
