//! Implementation detail of `tool-runtime`: use these macros through `tool_runtime`, which
//! documents them in full.

mod ast;
mod attr;
mod check;
mod ctxt;
mod derive;
mod expand;
mod symbol;

use proc_macro::TokenStream;

/// Turns a function into an LLM tool. Documented on `tool_runtime::tool`.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::tool(attr.into(), item.into()).into()
}

/// Registers the `#[tool]` methods of an `impl` block as a group. Documented on `tool_runtime::tools`.
#[proc_macro_attribute]
pub fn tools(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::tools(attr.into(), item.into()).into()
}

/// Derives the schema of an argument type. Documented on `tool_runtime::ToolArg`.
#[proc_macro_derive(ToolArg, attributes(arg))]
pub fn derive_tool_arg(input: TokenStream) -> TokenStream {
    derive::derive(input.into()).into()
}
