//! serde's attributes, as the model reads them: refused, at the key as written, where no
//! schema could say what serde then accepts; the rest are read by `serde_derive_internals`.

use proc_macro2::Span;
use serde_derive_internals::ast as serde_ast;
use syn::spanned::Spanned;

use serde_derive_internals::attr::TagType;

use super::attr;
use super::ctxt::Ctxt;

/// Where `#[serde(..)]` in `attrs` writes one of `keys`: the key as written and its span.
pub(crate) fn serde_key(attrs: &[syn::Attribute], keys: &[&str]) -> Option<(String, Span)> {
    let mut found = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            if let Some(k) = keys.iter().find(|k| meta.path.is_ident(k))
                && found.is_none()
            {
                found = Some(((*k).to_owned(), meta.path.span()));
            }
            attr::skip_value(&meta)
        });
    }
    found
}

/// A serde attribute whose effect no schema of this type can describe: refused at the key as
/// written in `attrs` (or at `at`), and named.
pub(crate) fn refuse_key(
    cx: &mut Ctxt,
    attrs: &[syn::Attribute],
    at: &dyn quote::ToTokens,
    key: &str,
    spellings: &[&str],
) {
    match serde_key(attrs, spellings) {
        Some((written, span)) => {
            let message = refusal(&written, key);
            cx.error_at(span, message);
        }
        None => refuse(cx, at, key),
    }
}

pub(crate) fn refuse(cx: &mut Ctxt, at: &dyn quote::ToTokens, key: &str) {
    cx.error_spanned_by(at, refusal(key, key));
}

/// Why `key` (written `written`) is refused.
pub(crate) fn refusal(written: &str, key: &str) -> String {
    let why = match key {
        "from" | "try_from" => {
            "serde reads another type and converts it: derive ToolArg on that type and take it as the argument"
        }
        "into" => "serde writes another type: return that type instead",
        "remote" => "the schema would describe the local mirror, not the type serde reads",
        "untagged" => {
            "serde takes the first variant that fits, which no schema can say exactly: tag the enum"
        }
        "other" => "any unknown tag becomes this variant, which the schema cannot list",
        "flatten" => {
            "serde merges the fields of another type, which the schema cannot follow: write the fields out"
        }
        "variant_identifier" | "field_identifier" => {
            "serde also reads an identifier as its index, which the schema cannot say"
        }
        _ => "the function reads or writes another format than the type's schema says",
    };
    format!("`#[serde({written})]` is not supported with #[derive(ToolArg)]: {why}")
}

/// How each refused attribute may be written.
pub(crate) fn spellings(key: &str) -> &'static [&'static str] {
    match key {
        "deserialize_with" => &["deserialize_with", "with"],
        "serialize_with" => &["serialize_with", "with"],
        "from" => &["from"],
        "try_from" => &["try_from"],
        "into" => &["into"],
        "remote" => &["remote"],
        "untagged" => &["untagged"],
        "other" => &["other"],
        "flatten" => &["flatten"],
        "getter" => &["getter"],
        "variant_identifier" => &["variant_identifier"],
        "field_identifier" => &["field_identifier"],
        _ => &[],
    }
}

/// How serde tags an enum's variants.
pub(crate) enum Tagging {
    External,
    Internal { tag: String },
    Adjacent { tag: String, content: String },
}

/// Refuses the container attributes no schema can describe; the tagging of the rest.
pub(crate) fn refuse_container_attrs(cx: &mut Ctxt, c: &serde_ast::Container) -> Tagging {
    let at = &c.original.ident;
    let a = &c.attrs;
    for (present, key) in [
        (a.type_from().is_some(), "from"),
        (a.type_try_from().is_some(), "try_from"),
        (a.type_into().is_some(), "into"),
        (a.remote().is_some(), "remote"),
        (
            matches!(
                a.identifier(),
                serde_derive_internals::attr::Identifier::Variant
            ),
            "variant_identifier",
        ),
        (
            matches!(
                a.identifier(),
                serde_derive_internals::attr::Identifier::Field
            ),
            "field_identifier",
        ),
    ] {
        if present {
            refuse_key(cx, &c.original.attrs, &at, key, spellings(key));
        }
    }
    match a.tag() {
        TagType::External => Tagging::External,
        TagType::Internal { tag } => Tagging::Internal { tag: tag.clone() },
        TagType::Adjacent { tag, content } => Tagging::Adjacent {
            tag: tag.clone(),
            content: content.clone(),
        },
        TagType::None => {
            refuse_key(
                cx,
                &c.original.attrs,
                &at,
                "untagged",
                spellings("untagged"),
            );
            Tagging::External
        }
    }
}

/// Refuses the field attributes no schema can describe.
pub(crate) fn refuse_field_attrs(cx: &mut Ctxt, f: &serde_ast::Field) {
    let a = &f.attrs;
    let at: &dyn quote::ToTokens = match &f.original.ident {
        Some(i) => i,
        None => f.ty,
    };
    for (present, key) in [
        (a.flatten(), "flatten"),
        (a.deserialize_with().is_some(), "deserialize_with"),
        (a.serialize_with().is_some(), "serialize_with"),
        (a.getter().is_some(), "getter"),
    ] {
        if present {
            refuse_key(cx, &f.original.attrs, &at, key, spellings(key));
        }
    }
}
