//! Serve a [`tool_runtime`] tool set over MCP with the official Rust SDK (`rmcp`): stdio, and with
//! the `http` feature MCP's Streamable HTTP transport ([`http`]), as an OAuth 2.1 resource
//! server with the `oauth` feature ([`oauth`]).
//!
//! `tools/list` shows the tools the caller may see (their MCP export: description with the
//! boundary sentence, `inputSchema`, `outputSchema`, annotations), page by page; `tools/call`
//! runs the call through the tool set (middleware, permissions, validation, approval) and
//! answers with `structuredContent` plus the same JSON as text (or the tool's `to_model`
//! summary). Invalid arguments, tool failures and panics come back as `isError: true` results
//! with the message the model can act on (a protocol error would hide it from the model); an
//! unknown tool is a JSON-RPC error.
//!
//! Who is calling comes from the request, never from the arguments: each request's
//! [`Context`](tool_runtime::Context) is made by the host's function from the [`Caller`] (the
//! authenticated principal and the HTTP request on HTTP; nothing on stdio, where the process is
//! started for one user).
//!
//! Work is bounded: at most [`Limits::concurrent_calls`] calls run at once, and
//! [`Limits::calls_per_caller`] for one caller; a call that outlives its time limit is stopped
//! with an error result; a cancelled request's tool is dropped; sync tools run on threads where
//! blocking is allowed, never on the async workers.
//!
//! A call that needs approval is held in the tool set's approval store and the person at the
//! client is asked through MCP elicitation: inside the open call for 2025-11-25 sessions, as a
//! Multi Round-Trip Request with a signed `requestState` for 2026-07-28 requests, which any
//! replica sharing the store and the key ([`McpServer::with_state_key`]) can finish.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! use tool_runtime::{Context, Grants, ToolSet};
//! use tool_runtime_mcp::McpServer;
//! let tools = ToolSet::from_module(module_path!())?;
//! McpServer::new(tools)
//!     .with_context(|_caller| async { Ok(Context::new().with(Grants::new(["hr.leave.read"]))) })
//!     .serve_stdio()
//!     .await?;
//! # Ok(()) }
//! ```

#![warn(missing_docs, unreachable_pub)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

mod approval;
mod arguments;
mod ask;
mod call;
mod caller;
mod desk;
pub mod export;
mod extension;
#[cfg(feature = "client")]
pub mod gateway;
mod handler;
#[cfg(feature = "http")]
pub mod http;
mod incoming;
mod kept;
mod limits;
#[cfg(feature = "oauth")]
pub mod oauth;
mod pace;
mod progress;
#[cfg(feature = "client")]
pub mod remote;
mod run;
mod running;
mod server;
mod stdio;
mod task;
mod telemetry;
pub mod trace;
mod update;
#[cfg(any(feature = "oauth", feature = "client-http"))]
mod uri;

pub use caller::{Caller, PeerAddr, Principal, REFUSED, Refusal};
pub use desk::{ApprovalDesk, Decided, DeskError, Waiting};
pub use limits::Limits;
pub use server::{ApproverError, McpServer, StateKeyError};

#[cfg(feature = "http")]
pub use axum;
/// The crates whose types this crate's API takes or returns, re-exported so that a program
/// names the very versions this crate was built with: Tokio (the stdio transport's readers and
/// writers, [`gateway::Gateway::keep_current`]'s task, [`remote::Remote::changed`]), and with
/// the `http` feature axum and its `http` types ([`Caller`]'s request parts,
/// [`http::Authenticate`]).
pub use tokio;
