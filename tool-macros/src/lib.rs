//! Implementation detail of `tool-runtime`: use these macros through `tool_runtime`, which
//! documents them in full.

mod ast;
mod attr;
mod check;
mod ctxt;
mod derive;
mod doc;
mod expand;
mod field;
mod symbol;
mod table;

use proc_macro::TokenStream;

/// Turns a function into an LLM tool whose description and schema cannot be written badly.
///
/// ```ignore
/// #[tool(
///     description = "Hasilkan laporan penjualan untuk satu periode dan satu wilayah.",
///     not_for = "prakiraan penjualan",           // rendered as "Not for: ..." in the description
///     name = "buat-laporan-penjualan",             // optional; default: the function's name
/// )]
/// async fn buat_laporan(
///     #[arg(description = "Rentang waktu laporan")] periode: Periode,
///     #[arg(description = "Wilayah; semua bila tidak disebut", default = Wilayah::Semua)] wilayah: Wilayah,
///     #[arg(description = "Jumlah peserta", range = 1..=500, example = 25)] jumlah_peserta: u32,
/// ) -> Laporan { /* ... */ }
/// ```
///
/// Tool keys: `description` (required, non-empty), `not_for`, `name` (must match
/// `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`, unique in the crate), `title`, `requires = "permission"`
/// (repeatable; checked against the caller's `Grants`), `needs_approval` (default for
/// `destructive` tools), the MCP hints `read_only`, `destructive`, `idempotent`, `open_world`
/// (never trusted for security; `read_only` with `destructive` is an error), `to_model = path`
/// (`fn(&Output) -> ModelOutput`: what the model receives), `redact = path`
/// (`fn(&Output) -> Result<impl Serialize, impl Display>`: what a UI may show; fails closed),
/// `panic_to_model = true` (show a panic's message to the model), `timeout = "5s"`,
/// `allow_lint = "id: reason"` (repeatable: silences a lint of `lint::check` for this tool),
/// `crate = "path"`.
///
/// A parameter marked `#[ctx]` (`#[ctx] session: &Session`) is supplied by the host from the
/// call's `Context`; it is not part of the schema and the model cannot set it.
///
/// Argument keys (`#[arg(...)]`, also on fields of `#[derive(ToolArg)]` types):
/// - `description = ".."`, or a doc comment; required for every argument and field;
/// - `range = a..=b` (also `a..b`, `a..`, `..=b`), or `min = a` / `max = b`: required for every
///   number, also inside `Option` and `Vec` (where it bounds the items); must fit the type;
/// - `unbounded = "reason"`: the one explicit way to leave a number unbounded;
/// - `length = a..=b`: characters of a string, items of a list;
/// - `pattern = "regex"`: strings;
/// - `default = expr`: shown in the schema and filled in when the model leaves the argument out
///   (the type must be `serde::Serialize`); must satisfy `range` and `length`;
/// - `example = expr`: repeatable, shown as `examples`.
///
/// The function may be sync or `async`, and may return any `Serialize + JsonSchema` type or a
/// `Result<T, E: Display>` whose `Err` becomes `ToolError::Failed`. The macro leaves the function
/// as written and adds a same-named handle type with `tool()`, which returns the `&'static Tool`.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::tool(attr.into(), item.into()).into()
}

/// Makes the `#[tool(...)]` methods of an `impl` block tools whose `&self` is the value of that
/// type in the call's `Context` (a database handle, a session), never something the model sends.
///
/// ```ignore
/// #[tools]
/// impl Hr {
///     #[tool(name = "cek-sisa-cuti", description = "Ambil sisa kuota cuti karyawan yang sedang login.")]
///     fn cek_sisa_cuti(&self) -> HasilCuti { /* ... */ }
/// }
/// let set = ToolSet::new(Hr::tools().iter().copied())?;
/// let cx = Context::new().with(hr);
/// ```
#[proc_macro_attribute]
pub fn tools(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::tools(attr.into(), item.into()).into()
}

/// Derives the schema (`schemars::JsonSchema`) of an argument type, agreeing with its
/// `serde::Deserialize`: structs with named fields (nested argument objects), newtypes, and enums
/// (unit variants become a string `enum`; data-carrying variants become `oneOf`, tagged as serde
/// tags them: external, `tag`, or `tag` + `content`). Fields take the same `#[arg(...)]` keys as
/// tool arguments and follow the same rules; doc comments are descriptions.
///
/// Keys on the type itself (`#[arg(...)]` above the struct or enum): `description`,
/// `validate = path` (business rules, `fn(&Self) -> Vec<Violation>`, checked after the schema),
/// `allow_lint = "id: reason"` (repeatable: silences a lint of `lint::check_output` for this
/// type), `crate = "path"`.
#[proc_macro_derive(ToolArg, attributes(arg))]
pub fn derive_tool_arg(input: TokenStream) -> TokenStream {
    derive::derive(input.into()).into()
}
