//! Implementation detail of `tool-runtime`: use the macros through `tool_runtime`.
use proc_macro::TokenStream;

#[proc_macro_attribute]
pub fn tool(_attr: TokenStream, item: TokenStream) -> TokenStream { item }
#[proc_macro_attribute]
pub fn tools(_attr: TokenStream, item: TokenStream) -> TokenStream { item }
#[proc_macro_derive(ToolArg, attributes(arg))]
pub fn derive_tool_arg(_item: TokenStream) -> TokenStream { TokenStream::new() }
