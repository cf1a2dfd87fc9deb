//! Collects every error of one item so a single build shows them all.

use proc_macro2::TokenStream;
use quote::ToTokens;
use std::fmt::Display;

#[derive(Default)]
pub struct Ctxt {
    errors: Vec<syn::Error>,
}

impl Ctxt {
    pub fn error_spanned_by(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.errors.push(syn::Error::new_spanned(tokens, message));
    }

    pub fn error_at(&mut self, span: proc_macro2::Span, message: impl Display) {
        self.errors.push(syn::Error::new(span, message));
    }

    pub fn syn_error(&mut self, error: syn::Error) {
        self.errors.push(error);
    }

    pub fn has_errors(&self) -> bool {
        !self.errors.is_empty()
    }

    pub fn to_compile_errors(&self) -> TokenStream {
        self.errors
            .iter()
            .map(syn::Error::to_compile_error)
            .collect()
    }
}
