//! The example servers as processes and in process: MCP over stdio and Streamable HTTP, the
//! per-caller limits, two replicas on one PostgreSQL, and where rmcp's own transport differs.
//! One binary.

mod common;

mod chat_browser;
mod mcp_catalog;
mod mcp_gateway;
mod mcp_http;
mod mcp_limits;
mod mcp_numbers;
mod mcp_remote;
mod mcp_replicas;
mod mcp_results;
mod mcp_stdio;
mod mcp_threads;
mod oauth_jwks;
mod rmcp_behaviour;
mod telemetry;
