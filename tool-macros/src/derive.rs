//! `#[derive(ToolArg)]`: the schema of an argument type, agreeing with its `Deserialize`.

use proc_macro2::TokenStream;
use quote::quote;
use syn::DeriveInput;

use crate::expand::runtime_path;
use crate::field;
use crate::internals::ast::{Body, Container, Variant, VariantShape};
use crate::internals::check;
use crate::internals::ctxt::Ctxt;
use crate::internals::serde::Tagging;

pub(crate) fn derive(input: TokenStream) -> TokenStream {
    let input: DeriveInput = match syn::parse2(input) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error(),
    };
    let mut cx = Ctxt::new();
    let container = Container::from_derive(&mut cx, &input);
    check::check_container(&mut cx, &container);
    let rt = runtime_path(container.attr.krate.as_ref());
    let ident = container.ident;
    let name = ident.to_string();
    let (body, errors) = match cx.check() {
        Ok(()) => (schema_body(&rt, &container), quote!()),
        Err(errors) => (quote!(::core::default::Default::default()), errors),
    };
    let rules = match &container.attr.validate {
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
    let allows = check::allow_lint_pairs(&container.attr.allow_lints);
    let silences = (!allows.is_empty()).then(|| {
        let (ids, reasons): (Vec<_>, Vec<_>) = allows.into_iter().unzip();
        quote! {
            fn silences_lint(id: &str) -> ::core::option::Option<&'static str> {
                match id {
                    #(#ids => ::core::option::Option::Some(#reasons),)*
                    _ => ::core::option::Option::None,
                }
            }
        }
    });
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
        impl #rt::__private::ToolArg for #ident {
            #silences
        }
        #rules
    }
}

/// The body of `json_schema`.
fn schema_body(rt: &TokenStream, c: &Container) -> TokenStream {
    let description = c.description();
    match &c.body {
        Body::Struct(args) => {
            let fields = args.iter().map(|a| field::field(rt, a));
            let assertions = args.iter().map(|a| field::assertions(rt, a));
            quote! {
                #(#assertions)*
                #rt::__private::object(g, ::core::option::Option::Some(#description), &[#(#fields),*])
            }
        }
        Body::Newtype(arg) => {
            let field = field::field(rt, arg);
            let assertions = field::assertions(rt, arg);
            quote! {
                #assertions
                let f = #field;
                let s = f.schema.make(g, &f.spec);
                #rt::__private::describe(s, #description)
            }
        }
        Body::Enum(variants) => {
            let variants = variants.iter().map(|v| variant(rt, v));
            let tagging = match &c.tagging {
                Tagging::Adjacent { tag, content } => {
                    quote!(#rt::__private::Tagging::Adjacent { tag: #tag, content: #content })
                }
                Tagging::Internal { tag } => {
                    quote!(#rt::__private::Tagging::Internal { tag: #tag })
                }
                Tagging::External => quote!(#rt::__private::Tagging::External),
            };
            quote! {
                let variants = ::std::vec![#(#variants),*];
                #rt::__private::enum_schema(g, #description, #tagging, variants)
            }
        }
        Body::Unsupported => quote!(::core::default::Default::default()),
    }
}

fn variant(rt: &TokenStream, v: &Variant) -> TokenStream {
    let (name, output_name, read, written) = (&v.name, &v.output_name, v.read, v.written);
    let description = v
        .attr
        .description_text()
        .map(|(d, _)| d)
        .unwrap_or_default();
    let body = match &v.shape {
        VariantShape::Unit => quote!(#rt::__private::VariantBody::Unit),
        VariantShape::Fields(args) => {
            let fields = args.iter().map(|a| field::field(rt, a));
            let assertions = args.iter().map(|a| field::assertions(rt, a));
            quote!({
                #(#assertions)*
                #rt::__private::VariantBody::Fields(::std::vec![#(#fields),*])
            })
        }
        VariantShape::Newtype(ty) => {
            quote!(#rt::__private::VariantBody::Newtype(#rt::__private::FieldSchema::Plain(<#ty as #rt::__private::ToolArg>::__schema).make(g, &#rt::__private::ArgSpec::described(""))))
        }
    };
    quote!(#rt::__private::Variant {
        name: #name,
        output_name: #output_name,
        read: #read,
        written: #written,
        description: #description,
        body: #body,
    })
}
