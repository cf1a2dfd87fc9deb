//! The core's behaviour, checked without the examples or any server: calls, validation,
//! host controls, the providers' SDKs as oracle, tracing. One binary, linking only
//! `tool-runtime` and what it depends on.

mod behaviour;
mod correctness;
mod defined;
mod host;
mod oracle;
mod provision;
mod stores;
mod tracing;
