//! `#[derive(ToolArg)]`: the schema of an argument type, agreeing with its `Deserialize`.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{Data, DeriveInput, Fields};

use crate::ast::{Arg, Presence, unraw};
use crate::attr::{self, SerdeAttr};
use crate::check;
use crate::ctxt::Ctxt;
use crate::expand::{expand_assertions, expand_field};

pub fn derive(input: TokenStream) -> TokenStream {
    let input: DeriveInput = match syn::parse2(input) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error(),
    };
    let mut cx = Ctxt::default();
    let rt = quote!(::tool_runtime);
    let ident = &input.ident;
    let serde = attr::parse_serde_attrs(&mut cx, &input.attrs);
    let own = attr::parse_arg_attrs(&mut cx, &input.attrs);
    let description = own.description_text().map(|(d, _)| d).unwrap_or_default();
    reject_unsupported(&mut cx, &serde);
    if !input.generics.params.is_empty() {
        cx.error_spanned_by(&input.generics, "#[derive(ToolArg)] does not support generic types yet: the model needs one concrete schema");
    }
    let body = match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(named) => {
                let args = field_args(
                    &mut cx,
                    named.named.iter(),
                    serde.rename_all.as_ref().map(|r| r.0.as_str()),
                    "field",
                );
                let fields = args.iter().map(|a| expand_field(&rt, a));
                let assertions = args.iter().map(|a| expand_assertions(&rt, a));
                quote! {
                    #(#assertions)*
                    #rt::__private::object(g, ::core::option::Option::Some(#description), &[#(#fields),*])
                }
            }
            Fields::Unnamed(un) if un.unnamed.len() == 1 => {
                // A newtype: serde reads it as its single field.
                let f = &un.unnamed[0];
                let a = attr::parse_arg_attrs(&mut cx, &f.attrs);
                let arg = Arg {
                    what: "field",
                    ident,
                    name: unraw(ident),
                    ty: &f.ty,
                    attr: a,
                    serde_default: false,
                    skip_de: false,
                    output: Presence::Required,
                };
                check::check_bounds(&mut cx, &arg);
                check::check_values(&mut cx, &arg);
                let field = expand_field(&rt, &arg);
                let assertions = expand_assertions(&rt, &arg);
                quote! {
                    #assertions
                    let f = #field;
                    let s = (f.schema)(g, &f.spec);
                    #rt::__private::describe(s, #description)
                }
            }
            _ => {
                cx.error_spanned_by(
                    ident,
                    "#[derive(ToolArg)] needs a struct with named fields, or a newtype struct",
                );
                quote!(::core::default::Default::default())
            }
        },
        Data::Enum(e) => expand_enum(&mut cx, &rt, &serde, &description, e),
        Data::Union(_) => {
            cx.error_spanned_by(ident, "#[derive(ToolArg)] does not support unions");
            quote!(::core::default::Default::default())
        }
    };
    let rules = match &own.validate {
        Some(path) => quote! {
            #[automatically_derived]
            impl #rt::Rules for #ident {
                fn check(&self) -> ::std::vec::Vec<#rt::Violation> {
                    #path(self)
                }
            }
        },
        None => quote! {
            #[automatically_derived]
            impl #rt::Rules for #ident {}
        },
    };
    let name = ident.to_string();
    let errors = cx.to_compile_errors();
    let body = if cx.has_errors() {
        quote!(::core::default::Default::default())
    } else {
        body
    };
    quote! {
        #errors
        #[automatically_derived]
        impl #rt::__private::schemars::JsonSchema for #ident {
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                ::std::borrow::Cow::Borrowed(#name)
            }
            fn schema_id() -> ::std::borrow::Cow<'static, str> {
                ::std::borrow::Cow::Borrowed(::core::concat!(::core::module_path!(), "::", #name))
            }
            fn json_schema(g: &mut #rt::__private::schemars::SchemaGenerator) -> #rt::__private::schemars::Schema {
                #body
            }
        }
        #[automatically_derived]
        impl #rt::__private::ToolArg for #ident {}
        #rules
    }
}

fn reject_unsupported(cx: &mut Ctxt, serde: &SerdeAttr) {
    for (key, span) in &serde.unsupported {
        cx.error_at(
            *span,
            format!("`#[serde({key})]` is not supported with #[derive(ToolArg)]: the schema could not match what serde accepts"),
        );
    }
}

fn field_args<'a>(
    cx: &mut Ctxt,
    fields: impl Iterator<Item = &'a syn::Field>,
    rename_all: Option<&str>,
    what: &'static str,
) -> Vec<Arg<'a>> {
    let mut args = Vec::new();
    for f in fields {
        let Some(ident) = &f.ident else { continue };
        let serde = attr::parse_serde_attrs(cx, &f.attrs);
        reject_unsupported(cx, &serde);
        if serde.skip_de && serde.skip_ser {
            continue;
        }
        let name = serde
            .rename
            .clone()
            .unwrap_or_else(|| rename_field(&unraw(ident), rename_all));
        let arg = Arg {
            what,
            ident,
            name,
            ty: &f.ty,
            attr: attr::parse_arg_attrs(cx, &f.attrs),
            serde_default: serde.default,
            skip_de: serde.skip_de,
            output: if serde.skip_ser {
                Presence::Absent
            } else if serde.skip_ser_if {
                Presence::Optional
            } else {
                Presence::Required
            },
        };
        check::check_arg(cx, &arg);
        args.push(arg);
    }
    args
}

fn expand_enum(
    cx: &mut Ctxt,
    rt: &TokenStream,
    serde: &SerdeAttr,
    description: &str,
    e: &syn::DataEnum,
) -> TokenStream {
    let rename_all = serde.rename_all.as_ref().map(|r| r.0.as_str());
    if let Some((rule, span)) = &serde.rename_all
        && !RULES.contains(&rule.as_str())
    {
        cx.error_at(*span, format!("unknown `rename_all` rule {rule:?}"));
    }
    if e.variants.is_empty() {
        cx.error_at(
            Span::call_site(),
            "an enum argument needs at least one variant",
        );
    }
    let mut variants = Vec::new();
    for v in &e.variants {
        let vs = attr::parse_serde_attrs(cx, &v.attrs);
        reject_unsupported(cx, &vs);
        if vs.skip_de && vs.skip_ser {
            continue;
        }
        let va = attr::parse_arg_attrs(cx, &v.attrs);
        // #[arg(description = "..")] is the one key a variant takes.
        if va.has_range()
            || va.length.is_some()
            || va.pattern.is_some()
            || va.default.is_some()
            || !va.examples.is_empty()
            || va.unbounded.is_some()
        {
            cx.error_spanned_by(
                &v.ident,
                "on an enum variant only `description` applies: put bounds on the variant's fields",
            );
        }
        let vdesc = va.description_text().map(|(d, _)| d).unwrap_or_default();
        let name = vs
            .rename
            .clone()
            .unwrap_or_else(|| rename_variant(&v.ident.to_string(), rename_all));
        let body = match &v.fields {
            Fields::Unit => quote!(#rt::__private::VariantBody::Unit),
            Fields::Named(named) => {
                let field_rule = vs.rename_all.as_ref().map(|r| r.0.as_str());
                let args = field_args(cx, named.named.iter(), field_rule, "field");
                let fields = args.iter().map(|a| expand_field(rt, a));
                let assertions = args.iter().map(|a| expand_assertions(rt, a));
                quote!({
                    #(#assertions)*
                    #rt::__private::VariantBody::Fields(::std::vec![#(#fields),*])
                })
            }
            Fields::Unnamed(un) if un.unnamed.len() == 1 => {
                if serde.tag.is_some() && serde.content.is_none() {
                    cx.error_spanned_by(&v.ident, "with `#[serde(tag = ..)]`, write this variant with named fields so its schema is one object");
                }
                let ty = &un.unnamed[0].ty;
                quote!(#rt::__private::VariantBody::Newtype(#rt::__private::plain::<#ty>(g, &#rt::__private::ArgSpec::described(""))))
            }
            Fields::Unnamed(_) => {
                cx.error_spanned_by(
                    &v.ident,
                    "a variant with several unnamed fields has no clear schema: name the fields",
                );
                continue;
            }
        };
        variants.push(
            quote!(#rt::__private::Variant { name: #name, description: #vdesc, body: #body }),
        );
    }
    let tagging = match (&serde.tag, &serde.content) {
        (Some(t), Some(c)) => quote!(#rt::__private::Tagging::Adjacent { tag: #t, content: #c }),
        (Some(t), None) => quote!(#rt::__private::Tagging::Internal { tag: #t }),
        (None, _) => quote!(#rt::__private::Tagging::External),
    };
    quote! {
        let variants = ::std::vec![#(#variants),*];
        #rt::__private::enum_schema(g, #description, #tagging, variants)
    }
}

const RULES: &[&str] = &[
    "lowercase",
    "UPPERCASE",
    "PascalCase",
    "camelCase",
    "snake_case",
    "SCREAMING_SNAKE_CASE",
    "kebab-case",
    "SCREAMING-KEBAB-CASE",
];

/// serde's `rename_all` for a variant name (written in PascalCase).
fn rename_variant(name: &str, rule: Option<&str>) -> String {
    let snake = || {
        let mut s = String::new();
        for (i, c) in name.char_indices() {
            if c.is_uppercase() && i > 0 {
                s.push('_');
            }
            s.push(c.to_ascii_lowercase());
        }
        s
    };
    match rule {
        Some("lowercase") => name.to_ascii_lowercase(),
        Some("UPPERCASE") => name.to_ascii_uppercase(),
        Some("camelCase") => name[..1].to_ascii_lowercase() + &name[1..],
        Some("snake_case") => snake(),
        Some("SCREAMING_SNAKE_CASE") => snake().to_ascii_uppercase(),
        Some("kebab-case") => snake().replace('_', "-"),
        Some("SCREAMING-KEBAB-CASE") => snake().replace('_', "-").to_ascii_uppercase(),
        _ => name.to_owned(),
    }
}

/// serde's `rename_all` for a field name (written in snake_case).
fn rename_field(name: &str, rule: Option<&str>) -> String {
    let pascal = || {
        let mut s = String::new();
        let mut up = true;
        for c in name.chars() {
            if c == '_' {
                up = true;
            } else if up {
                s.push(c.to_ascii_uppercase());
                up = false;
            } else {
                s.push(c);
            }
        }
        s
    };
    match rule {
        Some("UPPERCASE") | Some("SCREAMING_SNAKE_CASE") => name.to_ascii_uppercase(),
        Some("PascalCase") => pascal(),
        Some("camelCase") => {
            let p = pascal();
            p[..1].to_ascii_lowercase() + &p[1..]
        }
        Some("kebab-case") => name.replace('_', "-"),
        Some("SCREAMING-KEBAB-CASE") => name.replace('_', "-").to_ascii_uppercase(),
        _ => name.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::{rename_field, rename_variant};

    #[test]
    fn rename_rules_match_serde() {
        let cases = [
            ("lowercase", "karyawantidakditemukan", "sisa_cuti"),
            ("UPPERCASE", "KARYAWANTIDAKDITEMUKAN", "SISA_CUTI"),
            ("PascalCase", "KaryawanTidakDitemukan", "SisaCuti"),
            ("camelCase", "karyawanTidakDitemukan", "sisaCuti"),
            ("snake_case", "karyawan_tidak_ditemukan", "sisa_cuti"),
            (
                "SCREAMING_SNAKE_CASE",
                "KARYAWAN_TIDAK_DITEMUKAN",
                "SISA_CUTI",
            ),
            ("kebab-case", "karyawan-tidak-ditemukan", "sisa-cuti"),
            (
                "SCREAMING-KEBAB-CASE",
                "KARYAWAN-TIDAK-DITEMUKAN",
                "SISA-CUTI",
            ),
        ];
        for (rule, variant, field) in cases {
            assert_eq!(
                rename_variant("KaryawanTidakDitemukan", Some(rule)),
                variant,
                "{rule}"
            );
            assert_eq!(rename_field("sisa_cuti", Some(rule)), field, "{rule}");
        }
    }
}
