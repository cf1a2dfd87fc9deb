//! LLM tools that are correct by construction.
//!
//! A model picks a tool from its description and fills its arguments from its schema; whatever it
//! sends is untrusted. `#[tool]` turns a Rust function into a tool whose description, schema and
//! argument checks cannot be written badly: a missing description, an unbounded number or a
//! default outside its range is a compile error (a default computed by a call is checked when
//! the [`ToolSet`] is built), and at run time `"25"` is never `25`.
//!
//! ```
//! use tool_runtime::{tool, Context, ToolArg, ToolSet};
//!
//! #[derive(ToolArg, serde::Deserialize, serde::Serialize)]
//! #[serde(rename_all = "snake_case")]
//! enum Menu {
//!     /// Boxed lunches
//!     BoxedLunch,
//!     /// A buffet
//!     Buffet,
//! }
//!
//! #[derive(serde::Serialize, schemars::JsonSchema)]
//! struct Order {
//!     total_portions: u32,
//!     cost: u64,
//! }
//!
//! // No `name` key: the tool is called by its function's name, `order_catering`.
//! #[tool(
//!     description = "Compute the total portions and cost of a catering order.",
//!     not_for = "changing an order that was already placed",
//! )]
//! fn order_catering(
//!     #[arg(description = "Number of guests, as a number", range = 1..=500)] guests: u32,
//!     #[arg(description = "Kind of menu; use boxed_lunch when the user names none", default = Menu::BoxedLunch)]
//!     menu: Menu,
//! ) -> Order {
//!     let total_portions = guests + 5;
//!     Order { total_portions, cost: total_portions as u64 * 50_000 }
//! }
//!
//! let tools = ToolSet::new([order_catering::tool()]).unwrap();
//! let cx = Context::new();
//! let ok = tools.call(&cx, "order_catering", r#"{"guests": 25}"#).blocking().unwrap();
//! assert_eq!(ok.value()["total_portions"], 30);
//! let err = tools.call(&cx, "order_catering", r#"{"guests": "25"}"#).blocking().unwrap_err();
//! assert!(err.model_message().contains("expected an integer from 1 to 500"));
//! ```
//!
//! See [`tool`] for every attribute key and the checks each one makes.
//!
//! # Where to go next
//!
//! - [`ToolSet`]: calls, approval, middleware, permissions; [`ToolSet::export`] writes the tool
//!   list in a provider's dialect, and [`provider`] whole requests for the five built-in
//!   APIs ([`Api`]).
//! - [`agent`]: the agent loop, from a model's response to its tool calls' results, with run
//!   budgets and conversations that only append.
//! - [`structured`]: a model's structured output, validated and repaired.
//! - [`task`] and [`approval`]: calls that wait for a person or outlive a request.
//! - Features: `preserve_order` (keep properties in declaration order, which models fill in),
//!   `chrono` (`NaiveDate` arguments), `tokens` (what a tool set costs in tokens), `search`
//!   and `semantic` (finding tools in a large catalog, by words or by meaning), `testing`
//!   (stand-in models in each API's wire format), `aws-event-stream` (Bedrock's streamed
//!   bodies). The MCP server is the `tool-runtime-mcp` crate.

#![warn(missing_docs, unreachable_pub)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// Calls `$callback!` with the `serde::Deserializer` methods that the serde adaptors
/// (`decode::Checked`, `json::Distinct`) forward alike, each with its arguments before the
/// visitor; each adaptor writes the others itself.
macro_rules! deserializer_methods {
    ($callback:ident) => {
        $callback! {
            deserialize_any();
            deserialize_bool();
            deserialize_i8();
            deserialize_i16();
            deserialize_i32();
            deserialize_i64();
            deserialize_i128();
            deserialize_u8();
            deserialize_u16();
            deserialize_u32();
            deserialize_u64();
            deserialize_u128();
            deserialize_f64();
            deserialize_char();
            deserialize_str();
            deserialize_string();
            deserialize_bytes();
            deserialize_byte_buf();
            deserialize_option();
            deserialize_unit();
            deserialize_unit_struct(name: &'static str);
            deserialize_newtype_struct(name: &'static str);
            deserialize_seq();
            deserialize_tuple(len: usize);
            deserialize_tuple_struct(name: &'static str, len: usize);
            deserialize_map();
            deserialize_struct(name: &'static str, fields: &'static [&'static str]);
            deserialize_identifier();
        }
    };
}

// Each module imports only modules of lower layers: `tests/tests/layers.rs` lists the layers,
// and its test fails on an import that goes up.
pub mod agent;
pub mod approval;
mod arg;
mod arguments;
mod ask;
mod call;
pub mod choice;
mod commit;
mod context;
mod decode;
mod defer;
mod define;
pub mod docs;
mod error;
pub mod export;
mod future;
mod handler;
mod host;
pub mod json;
pub mod lint;
pub mod observe;
mod output;
mod progress;
pub mod provider;
mod schema;
#[cfg(feature = "search")]
pub mod search;
mod set;
pub mod structured;
mod table;
pub mod task;
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;
#[cfg(feature = "tokens")]
pub mod tokens;
mod tool;
mod validate;
mod wording;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use approval::{ApprovalStore, Holder, MemoryApprovals, PendingCall, StoreError};
pub use arg::{LengthArg, Num, Number, PatternArg, RangeArg, ToolArg};
pub use arguments::Arguments;
pub use ask::{Answer, Answers, Question, Unanswered};
pub use call::{Call, CallFuture, Middleware, Next};
pub use commit::{Cancelled, Commit, CommitHook, CommitNow};
pub use context::Context;
pub use defer::{CALL_TOOL, SchemasInAnswers, unwrap_call_tool};
pub use define::{DefineError, DefineProblem, ToolDef};
pub use error::ToolError;
pub use future::BoxFuture;
pub use handler::Handler;
pub use host::{Annotations, Content, Disclosure, Grants, ModelOutput};
pub use output::{CallOutput, ToolOutput};
pub use progress::{Progress, ProgressReport};
pub use provider::Api;
pub use set::{ToolRef, ToolSet, ToolSetError};
pub use structured::Rules;
pub use task::{TaskStatus, TaskSupport, Tasks};
pub use tool::Tool;
pub use validate::{
    Path, SchemaError, SchemaProblem, Segment, Validator, Violation, ViolationKind, Violations,
};
pub use wording::Wording;

/// Derives the schema of an argument (or structured-output) type, agreeing with its
/// `serde::Deserialize`: structs with named fields, newtypes, and enums (unit variants become a
/// string `enum`, data-carrying variants a `oneOf` tagged as serde tags them). Fields take the
/// argument keys of [`macro@tool`]; the type itself takes `description`, `validate`,
/// `allow_lint` and `crate` (see the same reference).
///
/// `#[serde(...)]` is read by serde's own parser (`serde_derive_internals`), so the schema
/// follows what serde reads and writes:
///
/// | serde attribute | in the schema |
/// |---|---|
/// | `rename`, `rename_all`, `rename_all_fields` (also split `serialize`/`deserialize`) | the names serde reads in the input schema, the names it writes in the output schema |
/// | `tag`, `tag` + `content` | the variants tagged as serde tags them |
/// | `default`, `default = "path"` (field or container) | the field may be left out |
/// | `skip`, `skip_deserializing`, `skip_serializing`, `skip_serializing_if` | left out of the input, the output, or required only where serde always writes it |
/// | `transparent`, a newtype struct | the inner value's schema |
/// | `alias` | not in the schema: a call names each field once, by the name the model was shown; an alias there is refused as an unknown field |
/// | `deny_unknown_fields`, `bound`, `crate`, `expecting` | nothing to describe (every object is closed anyway) |
/// | `flatten`, `untagged` (enum or variant), `other`, `from`, `try_from`, `into`, `remote`, `with`, `deserialize_with`, `serialize_with`, `variant_identifier`, `field_identifier` | a compile error at the attribute, with the reason: no schema could say what serde then accepts |
///
/// ```
/// use tool_runtime::{ToolArg, structured};
///
/// /// The period a report covers.
/// #[derive(ToolArg, serde::Deserialize, Debug, PartialEq)]
/// #[serde(rename_all = "snake_case")]
/// enum Period {
///     Daily,
///     Weekly,
/// }
///
/// assert_eq!(structured::schema::<Period>()["enum"], serde_json::json!(["daily", "weekly"]));
/// ```
pub use tool_runtime_macros::ToolArg;
#[doc = include_str!("reference/tool.md")]
pub use tool_runtime_macros::tool;
/// Makes the `#[tool(...)]` methods of an `impl` block tools whose `&self` is the value of that
/// type in the call's [`Context`], put there by the host (a database handle, a session), never
/// something the model sends. `Type::tools()` lists them. The group takes `crate = "path"`.
///
/// ```
/// use tool_runtime::{tool, tools, Context, ToolSet};
///
/// struct Hr { leave_days_left: u8 }
///
/// #[tools]
/// impl Hr {
///     #[tool(name = "check-leave-left", description = "Return the leave days left of the signed-in employee.")]
///     fn check_leave_left(&self) -> u8 {
///         self.leave_days_left
///     }
/// }
///
/// let set = ToolSet::new(Hr::tools().iter().copied()).unwrap();
/// let cx = Context::new().with(Hr { leave_days_left: 9 });
/// assert_eq!(set.call(&cx, "check-leave-left", "{}").blocking().unwrap().value(), 9);
/// ```
pub use tool_runtime_macros::tools;
