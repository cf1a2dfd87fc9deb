//! How the host imports one server's tools, and why it could not.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::trace::Propagator;

/// How the host imports one server's tools: names, permissions, approval, limits. Set the
/// fields it needs and take the rest from `..RemoteOptions::default()`.
#[derive(Clone)]
pub struct RemoteOptions {
    /// Put before every imported name as `{prefix}_{name}`, so two servers' tools cannot
    /// collide (and a name tells the model which server it belongs to).
    pub prefix: Option<String>,
    /// Permissions a caller needs for every tool of this server.
    pub requires: Vec<String>,
    /// Permissions a caller needs for one tool, by its remote name, on top of `requires`.
    pub tool_requires: HashMap<String, Vec<String>>,
    /// Whether a tool, by its remote name, needs approval, whatever its annotations say.
    pub approval: HashMap<String, bool>,
    /// Whether a tool, by its remote name, runs as an MCP task when this host serves it to a
    /// client that follows tasks (a long remote tool then holds no request of that client's
    /// open); by default it does not (`TaskSupport::Forbidden`). Whether the remote server
    /// makes a task of the call is its own choice, followed either way.
    pub tasks: HashMap<String, tool_runtime::TaskSupport>,
    /// How long one call may take (the server's own limit may be shorter).
    pub call_timeout: Duration,
    /// How long connecting (and the handshake) may take; listing the server's tools, every
    /// page, has as long again.
    pub connect_timeout: Duration,
    /// The most tools one server may list; a server that lists more is refused.
    pub max_tools: usize,
    /// How long after a failed connection the next call waits before trying again.
    pub retry_after: Duration,
    /// How many characters of one result the model receives (see
    /// [`Tool::max_result_chars`](tool_runtime::Tool::max_result_chars)): beyond them a cut
    /// result and a notice, the whole kept for the caller. By default 40,000 (about 10,000
    /// tokens, where Claude Code starts warning); `None`: whole results.
    pub max_result_chars: Option<u32>,
    /// Writes the current span's trace context into every call's `params._meta`, so the
    /// remote server's spans join the caller's trace (see [`trace`](crate::trace)).
    pub propagator: Option<Arc<dyn Propagator>>,
}

impl fmt::Debug for RemoteOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteOptions")
            .field("prefix", &self.prefix)
            .field("requires", &self.requires)
            .field("tool_requires", &self.tool_requires)
            .field("approval", &self.approval)
            .field("tasks", &self.tasks)
            .field("call_timeout", &self.call_timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("max_tools", &self.max_tools)
            .field("retry_after", &self.retry_after)
            .field("max_result_chars", &self.max_result_chars)
            .field("propagator", &self.propagator.as_ref().map(|_| "set"))
            .finish()
    }
}

impl Default for RemoteOptions {
    fn default() -> Self {
        RemoteOptions {
            prefix: None,
            requires: Vec::new(),
            tool_requires: HashMap::new(),
            approval: HashMap::new(),
            tasks: HashMap::new(),
            call_timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(10),
            max_tools: 1_000,
            retry_after: Duration::from_secs(1),
            max_result_chars: Some(40_000),
            propagator: None,
        }
    }
}

impl RemoteOptions {
    /// Options with this name prefix.
    pub fn prefixed(prefix: impl Into<String>) -> Self {
        RemoteOptions {
            prefix: Some(prefix.into()),
            ..RemoteOptions::default()
        }
    }
}

/// Why a remote server could not be reached or its tools listed. Where a library's error is the
/// cause, it is the [`source`](std::error::Error::source).
#[derive(Debug)]
#[non_exhaustive]
pub enum RemoteError {
    /// The server could not be started or reached, or the handshake failed.
    Connect {
        /// The server's label.
        server: String,
        /// Why.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The handshake got no answer within [`RemoteOptions::connect_timeout`].
    ConnectTimeout {
        /// The server's label.
        server: String,
        /// The time waited.
        after: Duration,
    },
    /// The server asked for an access token, and the client credentials did not get one.
    Credentials {
        /// The server's label.
        server: String,
        /// What failed: the metadata, the token endpoint, its answer.
        problem: String,
    },
    /// `tools/list` failed.
    List {
        /// The server's label.
        server: String,
        /// Why.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The server listed more tools than [`RemoteOptions::max_tools`].
    TooManyTools {
        /// The server's label.
        server: String,
        /// How many it listed.
        listed: usize,
        /// The limit.
        max: usize,
    },
}

impl fmt::Display for RemoteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RemoteError::Connect { server, .. } => {
                write!(f, "cannot connect to the MCP server `{server}`")
            }
            RemoteError::ConnectTimeout { server, after } => write!(
                f,
                "the MCP server `{server}` did not answer the handshake within {after:?}"
            ),
            RemoteError::Credentials { server, problem } => write!(
                f,
                "no access token for the MCP server `{server}`: {problem}"
            ),
            RemoteError::List { server, .. } => {
                write!(f, "the MCP server `{server}`'s tools/list failed")
            }
            RemoteError::TooManyTools {
                server,
                listed,
                max,
            } => write!(
                f,
                "the MCP server `{server}` lists {listed} tools, more than the {max} allowed (RemoteOptions::max_tools)"
            ),
        }
    }
}

impl std::error::Error for RemoteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RemoteError::Connect { source, .. } | RemoteError::List { source, .. } => {
                Some(&**source)
            }
            _ => None,
        }
    }
}
