//! Collects every error of one item so a single build shows them all. A collector must be
//! turned into compile errors with [`Ctxt::check`] before it is dropped: dropping one unchecked
//! would lose errors silently, so it panics (a bug in this crate, never in the user's code).

use proc_macro2::TokenStream;
use quote::ToTokens;
use std::fmt::Display;

pub(crate) struct Ctxt {
    /// `None` once checked.
    errors: Option<Vec<syn::Error>>,
}

impl Ctxt {
    pub(crate) fn new() -> Self {
        Ctxt {
            errors: Some(Vec::new()),
        }
    }

    fn push(&mut self, error: syn::Error) {
        self.errors
            .as_mut()
            .expect("errors added to a checked Ctxt")
            .push(error);
    }

    pub(crate) fn error_spanned_by(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    pub(crate) fn error_at(&mut self, span: proc_macro2::Span, message: impl Display) {
        self.push(syn::Error::new(span, message));
    }

    pub(crate) fn syn_error(&mut self, error: syn::Error) {
        self.push(error);
    }

    /// Every error collected, as compile errors (empty when there are none). Consumes the
    /// collector.
    pub(crate) fn check(mut self) -> Result<(), TokenStream> {
        let errors = self.errors.take().unwrap_or_default();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.iter().map(syn::Error::to_compile_error).collect())
        }
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if self.errors.is_some() && !std::thread::panicking() {
            panic!("a Ctxt was dropped without `check`: its errors would be lost");
        }
    }
}
