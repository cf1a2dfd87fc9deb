//! The code for one argument or field, the same for `#[tool]` parameters and the fields of
//! `#[derive(ToolArg)]` types: its `Field` (name, presence, schema, bounds, default, examples)
//! and the trait-bound assertions for what the macro cannot see.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::Type;
use syn::spanned::Spanned;

use crate::internals::ast::{Arg, Presence};
use crate::internals::attr::NumLit;
use crate::internals::types::{Shape, is_option, shape};

fn num(rt: &TokenStream, n: Option<NumLit>, integer_exclusive_max: bool) -> TokenStream {
    match n {
        None => quote!(::core::option::Option::None),
        Some(NumLit { int: Some(i), .. }) => {
            let i = if integer_exclusive_max { i - 1 } else { i };
            if i < 0 {
                let v = i as i64;
                quote!(::core::option::Option::Some(#rt::__private::Num::Int(#v)))
            } else {
                let v = i as u64;
                quote!(::core::option::Option::Some(#rt::__private::Num::UInt(#v)))
            }
        }
        Some(NumLit { value, .. }) => {
            quote!(::core::option::Option::Some(#rt::__private::Num::Float(#value)))
        }
    }
}

fn opt_u64(v: Option<u64>) -> TokenStream {
    match v {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    }
}

/// The `Field` describing one argument or struct field.
pub(crate) fn field(rt: &TokenStream, arg: &Arg) -> TokenStream {
    let a = &arg.attr;
    let (name, output_name) = (&arg.name, &arg.output_name);
    let ty = arg.ty;
    let presence = |p: Presence| match p {
        Presence::Required => quote!(#rt::__private::Presence::Required),
        Presence::Optional => quote!(#rt::__private::Presence::Optional),
        Presence::Absent => quote!(#rt::__private::Presence::Absent),
    };
    let input = presence(arg.input());
    let output = presence(arg.output);
    let desc = a.description_text().map(|(d, _)| d).unwrap_or_default();
    let integer = arg.is_integer();
    // `1..501` on an integer is shown to the model as `maximum: 500`.
    let integer_exclusive = a.exclusive_max && integer && a.max.is_some_and(|m| m.is_int());
    // Only what the argument sets; the rest comes from `ArgSpec::described`.
    let mut spec = Vec::new();
    if a.min.is_some() {
        let min = num(rt, a.min, false);
        spec.push(quote!(min: #min,));
    }
    if a.max.is_some() {
        let max = num(rt, a.max, integer_exclusive);
        spec.push(quote!(max: #max,));
    }
    if a.exclusive_max && !integer_exclusive {
        spec.push(quote!(exclusive_max: true,));
    }
    if let Some((lo, hi, _)) = a.length {
        let (lo, hi) = (opt_u64(lo), opt_u64(hi));
        spec.push(quote!(min_length: #lo, max_length: #hi,));
    }
    if let Some(p) = &a.pattern {
        spec.push(quote!(pattern: ::core::option::Option::Some(#p),));
    }
    if let Some((first, last)) = &a.dates {
        let day = |d: &Option<syn::LitStr>| match d {
            Some(d) => quote!(::core::option::Option::Some(#d)),
            None => quote!(::core::option::Option::None),
        };
        let (first, last) = (day(first), day(last));
        spec.push(quote!(first_day: #first, last_day: #last,));
    }
    let numeric = (a.min.is_some() || a.max.is_some()) || a.unbounded.is_some();
    let tspan = ty.span();
    let schema = if numeric {
        quote_spanned!(tspan=> #rt::__private::FieldSchema::Ranged(<#ty as #rt::__private::RangeArg>::ranged_schema))
    } else {
        quote_spanned!(tspan=> #rt::__private::FieldSchema::Plain(<#ty as #rt::__private::ToolArg>::__schema))
    };
    let default = match &a.default {
        Some(e) => {
            let d = value_json(rt, ty, e);
            let in_range = range_assertion(arg, "default", e);
            quote!({
                #in_range
                fn __default() -> #rt::__private::serde_json::Value { #d }
                ::core::option::Option::Some(__default as fn() -> #rt::__private::serde_json::Value)
            })
        }
        None => quote!(::core::option::Option::None),
    };
    let example_fns = a.examples.iter().enumerate().map(|(i, e)| {
        let f = format_ident!("__example_{}", i);
        let body = value_json(rt, ty, e);
        let in_range = range_assertion(arg, "example", e);
        quote!(#in_range fn #f() -> #rt::__private::serde_json::Value { #body })
    });
    let example_names = (0..a.examples.len()).map(|i| format_ident!("__example_{}", i));
    let examples = if a.examples.is_empty() {
        quote!(&[])
    } else {
        quote!({
            #(#example_fns)*
            const EXAMPLES: &[fn() -> #rt::__private::serde_json::Value] = &[#(#example_names),*];
            EXAMPLES
        })
    };
    quote! {
        #rt::__private::Field {
            name: #name,
            output_name: #output_name,
            input: #input,
            output: #output,
            schema: #schema,
            spec: #rt::__private::ArgSpec {
                #(#spec)*
                ..#rt::__private::ArgSpec::described(#desc)
            },
            default: #default,
            examples: #examples,
        }
    }
}

/// A `default` or `example` of a number written with constants (`BATAS`, `40 + 20`,
/// `Self::MAX / 2`) is checked against the range by the compiler: a `const` assertion. A literal
/// is checked by the macro itself (`check_values`); any other expression when the tool is
/// built, with its schema (`Validator::compile`).
fn range_assertion(arg: &Arg, key: &str, e: &syn::Expr) -> TokenStream {
    let a = &arg.attr;
    let (Shape::Number(n), false) = (shape(arg.ty), literal(e)) else {
        return TokenStream::new();
    };
    if (a.min.is_none() && a.max.is_none()) || !const_like(e) {
        return TokenStream::new();
    }
    let ty = format_ident!("{}", n);
    let bound = |n: NumLit| match n.int {
        Some(i) if i < 0 => {
            let abs = proc_macro2::Literal::u128_unsuffixed(i.unsigned_abs());
            quote!((-#abs as #ty))
        }
        Some(i) => {
            let v = proc_macro2::Literal::u128_unsuffixed(i as u128);
            quote!((#v as #ty))
        }
        None => {
            let v = proc_macro2::Literal::f64_unsuffixed(n.value);
            quote!((#v as #ty))
        }
    };
    let mut checks = Vec::new();
    if let Some(min) = a.min {
        let min = bound(min);
        checks.push(quote!(v >= #min));
    }
    if let Some(max) = a.max {
        let max = bound(max);
        checks.push(if a.exclusive_max {
            quote!(v < #max)
        } else {
            quote!(v <= #max)
        });
    }
    let shown = quote!(#e).to_string();
    let range = format!(
        "{}{}{}",
        a.min.map(|m| m.show()).unwrap_or_default(),
        if a.exclusive_max { ".." } else { "..=" },
        a.max.map(|m| m.show()).unwrap_or_default()
    );
    let message = format!(
        "the {key} `{shown}` of {} `{}` is outside its range {range}",
        arg.what, arg.name
    );
    quote_spanned! {e.span()=>
        const _: () = {
            let v: #ty = #e;
            ::core::assert!(#(#checks)&&*, #message);
        };
    }
}

fn literal(e: &syn::Expr) -> bool {
    match e {
        syn::Expr::Lit(_) => true,
        syn::Expr::Unary(u) => matches!(u.op, syn::UnOp::Neg(_)) && literal(&u.expr),
        syn::Expr::Group(g) => literal(&g.expr),
        _ => false,
    }
}

/// An expression of number literals and constants (paths in upper case), which a `const` item
/// can evaluate: no call, no variable, no `static` by convention.
fn const_like(e: &syn::Expr) -> bool {
    use syn::Expr;
    match e {
        Expr::Lit(l) => matches!(l.lit, syn::Lit::Int(_) | syn::Lit::Float(_)),
        Expr::Path(p) => {
            p.qself.is_none()
                && p.path.segments.last().is_some_and(|s| {
                    let name = s.ident.to_string();
                    s.arguments.is_none()
                        && name.chars().any(|c| c.is_ascii_uppercase())
                        && name
                            .chars()
                            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                })
        }
        Expr::Binary(b) => const_like(&b.left) && const_like(&b.right),
        Expr::Unary(u) => !matches!(u.op, syn::UnOp::Deref(_)) && const_like(&u.expr),
        Expr::Paren(p) => const_like(&p.expr),
        Expr::Group(g) => const_like(&g.expr),
        Expr::Cast(c) => const_like(&c.expr),
        _ => false,
    }
}

/// The JSON of a `default` or `example` as the argument's type; a string literal is read as a
/// `String` (or `Option<String>`) and refused, with a clear message, for any other type.
fn value_json(rt: &TokenStream, ty: &Type, e: &syn::Expr) -> TokenStream {
    let is_str = matches!(
        e,
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(_),
            ..
        })
    );
    if is_str {
        // The type is re-spanned to the literal, so a mismatch points at the literal.
        let ty_here = respan(quote!(#ty), e.span());
        quote_spanned!(e.span()=> #rt::__private::to_json::<#ty>(<#ty_here as #rt::__private::StrLiteral>::from_literal(#e)))
    } else {
        quote_spanned!(e.span()=> #rt::__private::to_json::<#ty>(#e))
    }
}

/// `tokens` with every span set to `span`.
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut tt| {
            if let proc_macro2::TokenTree::Group(g) = &tt {
                let mut group = proc_macro2::Group::new(g.delimiter(), respan(g.stream(), span));
                group.set_span(span);
                tt = proc_macro2::TokenTree::Group(group);
            } else {
                tt.set_span(span);
            }
            tt
        })
        .collect()
}

/// Trait-bound checks for what the macro cannot see: `length` and `pattern` on an alias, and a
/// `range` that may not fit an aliased number type.
pub(crate) fn assertions(rt: &TokenStream, arg: &Arg) -> TokenStream {
    let a = &arg.attr;
    let ty = arg.ty;
    let unknown = shape(ty) == Shape::Unknown && !is_option(ty);
    let mut out = TokenStream::new();
    // A range check is a constant item of its own: evaluated by `cargo check` too (an inline
    // `const` in a function body is evaluated only when code is generated).
    let mut consts = TokenStream::new();
    if let Some((_, _, span)) = a.length
        && unknown
    {
        out.extend(quote_spanned!(span=> let _ = <#ty as #rt::__private::LengthArg>::__IS;));
    }
    if let Some(p) = &a.pattern
        && unknown
    {
        out.extend(quote_spanned!(p.span()=> let _ = <#ty as #rt::__private::PatternArg>::__IS;));
    }
    if a.dates.is_some() {
        let span = a.bound_span().unwrap_or_else(|| ty.span());
        out.extend(quote_spanned!(span=> let _ = <#ty as #rt::__private::DateArg>::__IS;));
    } else if a.has_range() && crate::internals::types::number_inside(ty).is_none() {
        let span = a.bound_span().unwrap_or_else(|| ty.span());
        let min = num(rt, a.min, false);
        let max = num(rt, a.max, false);
        let msg = format!(
            "the `range` of {} `{}` does not fit its number type",
            arg.what, arg.name
        );
        consts.extend(quote_spanned! {span=>
            const _: () = #rt::__private::check_range::<<#ty as #rt::__private::RangeArg>::Number>(#min, #max, #msg);
        });
    }
    if out.is_empty() && consts.is_empty() {
        return out;
    }
    let lets = (!out.is_empty()).then(|| {
        quote! {
            #[allow(dead_code)]
            fn __assertions() { #out }
        }
    });
    quote! {
        const _: () = {
            #lets
            #consts
        };
    }
}
