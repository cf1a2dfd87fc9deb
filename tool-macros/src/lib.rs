//! Implementation detail of `tool-runtime`: use these macros through `tool_runtime`, which
//! documents them in full.

#![warn(unreachable_pub)]

// The model: what a `#[tool]` or `#[derive(ToolArg)]` says, parsed and checked.
mod internals;
// The code generated from the checked model.
mod derive;
mod doc;
mod expand;
mod field;
mod table;

use proc_macro::TokenStream;

/// Turns a function into an LLM tool. The reference, with every key and runnable examples, is
/// on the re-export: `tool_runtime::tool`.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::tool(attr.into(), item.into()).into()
}

/// Makes the `#[tool(...)]` methods of an `impl` block tools. Documented, with a runnable
/// example, on the re-export: `tool_runtime::tools`.
#[proc_macro_attribute]
pub fn tools(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::tools(attr.into(), item.into()).into()
}

/// Derives the schema of an argument type. Documented, with a runnable example, on the
/// re-export: `tool_runtime::ToolArg`.
#[proc_macro_derive(ToolArg, attributes(arg))]
pub fn derive_tool_arg(input: TokenStream) -> TokenStream {
    derive::derive(input.into()).into()
}
