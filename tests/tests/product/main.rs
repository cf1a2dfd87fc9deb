//! The product around the examples: the agent loop, catalogs, exports and their snapshots, the
//! differential and fuzz checks, lints, structured output, rig. One binary.

mod expect;
#[path = "../core/provision.rs"]
mod provision;

mod agent;
mod any_schema;
mod append_only;
mod big_catalog;
mod bounded;
mod catalog;
mod checked;
mod choice;
mod defaults;
mod deferred;
mod differential;
mod export;
mod fuzz;
mod hr;
mod lint;
mod provider;
mod registry;
mod rig;
mod search;
mod streaming;
mod structured;
mod tokens;
