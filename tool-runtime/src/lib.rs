//! LLM tools that are correct by construction.
//!
//! A model picks a tool from its description and fills its arguments from its schema; whatever it
//! sends is untrusted. `#[tool]` turns a Rust function into a tool whose description, schema and
//! argument checks cannot be written badly: a missing description, an unbounded number or a
//! default outside its range is a compile error, and at run time `"25"` is never `25`.
//!
//! ```
//! use tool_runtime::{tool, Context, ToolArg, ToolSet};
//!
//! #[derive(ToolArg, serde::Deserialize, serde::Serialize)]
//! #[serde(rename_all = "snake_case")]
//! enum Menu {
//!     /// Nasi kotak
//!     NasiKotak,
//!     /// Prasmanan
//!     Prasmanan,
//! }
//!
//! #[derive(serde::Serialize, schemars::JsonSchema)]
//! struct Pesanan {
//!     total_porsi: u32,
//!     biaya: u64,
//! }
//!
//! #[tool(
//!     description = "Hitung total porsi dan biaya pesanan katering.",
//!     not_for = "mengubah pesanan yang sudah dibuat",
//! )]
//! fn pesan_katering(
//!     #[arg(description = "Jumlah peserta sebagai angka", range = 1..=500)] jumlah_peserta: u32,
//!     #[arg(description = "Jenis menu; pakai nasi_kotak bila tidak disebut", default = Menu::NasiKotak)]
//!     menu: Menu,
//! ) -> Pesanan {
//!     let total_porsi = jumlah_peserta + 5;
//!     Pesanan { total_porsi, biaya: total_porsi as u64 * 50_000 }
//! }
//!
//! let tools = ToolSet::new([pesan_katering::tool()]).unwrap();
//! let cx = Context::new();
//! let ok = tools.call(&cx, "pesan_katering", r#"{"jumlah_peserta": 25}"#).blocking().unwrap();
//! assert_eq!(ok.value()["total_porsi"], 30);
//! let err = tools.call(&cx, "pesan_katering", r#"{"jumlah_peserta": "25"}"#).blocking().unwrap_err();
//! assert!(err.model_message().contains("expected an integer from 1 to 500"));
//! ```
//!
//! See [`tool`] for every attribute key and the checks each one makes.

#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

// Each module imports only modules of lower layers: `layers.rs` lists the layers, and its test
// fails on an import that goes up.
pub mod agent;
pub mod approval;
mod arg;
mod arguments;
mod call;
pub mod choice;
mod context;
mod decode;
mod dialect;
pub mod docs;
mod error;
pub mod export;
mod future;
mod host;
pub mod json;
pub mod lint;
mod output;
mod schema;
mod set;
pub mod structured;
mod table;
mod tool;
mod validate;
mod wording;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

#[cfg(test)]
mod layers;

pub use approval::{ApprovalStore, Holder, MemoryApprovals, PendingCall, StoreError};
pub use arg::{LengthArg, Num, Number, PatternArg, RangeArg, ToolArg};
pub use arguments::Arguments;
pub use call::{Call, CallFuture, Middleware, Next};
pub use context::Context;
pub use dialect::Api;
pub use error::ToolError;
pub use future::BoxFuture;
pub use host::{Annotations, Content, Disclosure, Grants, ModelOutput};
pub use output::{CallOutput, ToolOutput};
pub use set::{ToolSet, ToolSetError};
pub use structured::Rules;
pub use tool::Tool;
pub use validate::{Path, SchemaError, Segment, Validator, Violation, ViolationKind, Violations};
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
/// /// Periode laporan.
/// #[derive(ToolArg, serde::Deserialize, Debug, PartialEq)]
/// #[serde(rename_all = "snake_case")]
/// enum Periode {
///     Harian,
///     Mingguan,
/// }
///
/// assert_eq!(structured::schema::<Periode>()["enum"], serde_json::json!(["harian", "mingguan"]));
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
/// struct Hr { sisa_cuti: u8 }
///
/// #[tools]
/// impl Hr {
///     #[tool(name = "cek-sisa-cuti", description = "Ambil sisa kuota cuti karyawan yang sedang login.")]
///     fn cek_sisa_cuti(&self) -> u8 {
///         self.sisa_cuti
///     }
/// }
///
/// let set = ToolSet::new(Hr::tools().iter().copied()).unwrap();
/// let cx = Context::new().with(Hr { sisa_cuti: 9 });
/// assert_eq!(set.call(&cx, "cek-sisa-cuti", "{}").blocking().unwrap().value(), 9);
/// ```
pub use tool_runtime_macros::tools;
