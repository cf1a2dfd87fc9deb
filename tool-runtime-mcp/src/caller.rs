//! Who is calling: what the transport knows of a request's caller, from which the host makes
//! the call's `Context`.

use std::net::SocketAddr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who is calling, as the transport knows it: what a host makes a call's
/// [`Context`](tool_runtime::Context) from.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct Caller {
    /// The principal an access token named, when the HTTP server checks tokens.
    pub principal: Option<Principal>,
    /// On HTTP: the request's method, URI, headers and extensions (shared: a caller is cloned
    /// for each context the host makes).
    #[cfg(feature = "http")]
    pub http: Option<std::sync::Arc<axum::http::request::Parts>>,
    /// On HTTP: the address of the connection's peer.
    pub peer: Option<SocketAddr>,
}

impl Caller {
    /// Who the caller is for the server's shares (calls, connections, sessions, held approvals)
    /// and for binding an approval's state: the principal (issuer and subject), else the peer's
    /// address, else one shared key (stdio: the process serves one user).
    pub fn key(&self) -> String {
        // The HTTP server worked it out when the request arrived (from the same principal and
        // peer): taken from there rather than formatted again.
        #[cfg(feature = "http")]
        if let Some(OwnerKey(key)) = self.http.as_ref().and_then(|p| p.extensions.get()) {
            return key.clone();
        }
        owner_key(self.principal.as_ref(), self.peer)
    }
}

/// A request the application admitted: the caller and the context its function made, put in
/// the request's extensions by the HTTP server's admission layer (which runs the function for
/// every request that opens a session or needs none), so the call reuses them.
#[cfg(feature = "http")]
#[derive(Clone)]
pub(crate) struct Admitted {
    pub(crate) caller: Caller,
    pub(crate) cx: tool_runtime::Context,
}

/// [`Caller::key`] of an HTTP request, put in its extensions by the server's admission layer.
#[cfg(feature = "http")]
#[derive(Clone, Debug)]
pub(crate) struct OwnerKey(pub(crate) String);

/// [`Caller::key`] from its parts.
pub(crate) fn owner_key(principal: Option<&Principal>, peer: Option<SocketAddr>) -> String {
    match (principal, peer) {
        // The issuer and subject as a JSON array: unambiguous whatever they contain.
        (Some(p), _) => format!(
            "principal:{}",
            serde_json::json!([p.issuer.as_deref().unwrap_or(""), p.subject])
        ),
        (None, Some(addr)) => format!("ip:{}", addr.ip()),
        (None, None) => "local".into(),
    }
}

/// An authenticated principal: who an access token was issued to, and what it allows. Kept
/// with a task (as JSON) so a call another person approves runs as its owner.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct Principal {
    /// The token's `sub`.
    pub subject: String,
    /// The token's scopes (`scope`, space-separated, or `scp`).
    pub scopes: Vec<String>,
    /// The token's issuer (`iss`).
    pub issuer: Option<String>,
    /// Every claim of the token, for what the host maps to its own session.
    pub claims: serde_json::Map<String, Value>,
}

impl Principal {
    /// A principal with this subject and these scopes (no issuer, no other claims): for tests,
    /// and for hosts that authenticate callers themselves.
    pub fn new(subject: impl Into<String>, scopes: impl IntoIterator<Item = String>) -> Self {
        Principal {
            subject: subject.into(),
            scopes: scopes.into_iter().collect(),
            ..Principal::default()
        }
    }
}

/// The address of an HTTP connection's peer, as the HTTP server puts it in each request's
/// extensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerAddr(pub SocketAddr);

/// A request the host's context function refuses: answered with a JSON-RPC error carrying
/// `message`, and nothing runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// What the caller is told.
    pub message: String,
}

impl Refusal {
    /// A refusal with this message.
    pub fn new(message: impl Into<String>) -> Self {
        Refusal {
            message: message.into(),
        }
    }
}

/// The JSON-RPC error code of a refused request (implementation-defined range).
pub const REFUSED: i32 = -32001;

/// Who owns a task, as kept with it ([`TaskRecord::caller`]): what the context function is
/// given again when another person approves the owner's call.
#[derive(Default, Serialize, Deserialize)]
struct Owner {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    principal: Option<Principal>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    peer: Option<SocketAddr>,
}

/// What a task keeps of its owner: `None` for a caller with neither a principal nor an address
/// (stdio).
pub(crate) fn owner_of(caller: &Caller) -> Option<Value> {
    if caller.principal.is_none() && caller.peer.is_none() {
        return None;
    }
    serde_json::to_value(Owner {
        principal: caller.principal.clone(),
        peer: caller.peer,
    })
    .ok()
}

/// The owner kept with a task, as a caller without an HTTP request, if it can be read back
/// (and is someone: a principal or an address).
pub(crate) fn owner_from(kept: Option<&Value>) -> Option<Caller> {
    kept.and_then(|v| Owner::deserialize(v).ok())
        .filter(|o| o.principal.is_some() || o.peer.is_some())
        .map(|o| Caller {
            principal: o.principal,
            peer: o.peer,
            ..Caller::default()
        })
}
