//! What a `#[tool]`, a `#[tools]` group or a `#[derive(ToolArg)]` says, as a model the code
//! generation works on: the keys parsed with their spans ([`attr`], every key's name in
//! [`symbol`]), one model built from them ([`ast`]: tools, arguments, derived types, with the
//! Rust types read by [`types`] and serde's attributes by [`serde`]), the cross-item rules
//! ([`check`]), and the errors collected on the way ([`ctxt`]). Nothing here emits code: the
//! crate's other modules do, from the checked model only.

pub(crate) mod ast;
pub(crate) mod attr;
pub(crate) mod check;
pub(crate) mod ctxt;
pub(crate) mod serde;
pub(crate) mod symbol;
pub(crate) mod types;
