//! Code generation for `#[tool]` functions and `#[tools]` impl groups, from the checked model.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{FnArg, Ident, ImplItem, ItemFn, ItemImpl, Pat, ReturnType, Signature, Type};

use crate::ast::{Arg, Presence, Shape, is_option, shape, unraw};
use crate::attr::{self, NumLit, ToolAttr};
use crate::check;
use crate::ctxt::Ctxt;

/// Tools with more arguments than this should group them in a `#[derive(ToolArg)]` struct.
const MAX_ARGS: usize = 12;

enum Output {
    Plain(Type),
    Result(Type),
    Unit,
}

/// One `#[tool]` function or method, parsed and checked.
struct ToolFn<'a> {
    attr: ToolAttr,
    name: String,
    ident: &'a Ident,
    is_async: bool,
    args: Vec<Arg<'a>>,
    /// `#[ctx] name: &T` parameters: supplied by the host from the call's Context.
    ctx: Vec<(&'a Ident, &'a Type)>,
    /// Every parameter in declaration order, for the call.
    params: Vec<&'a Ident>,
    output: Output,
}

pub fn runtime_path(attr: &ToolAttr) -> TokenStream {
    match &attr.krate {
        Some(p) => quote!(#p),
        None => quote!(::tool_runtime),
    }
}

/// The item the attribute is on, or the item unchanged with an error saying what it applies to.
fn parse_item<T: syn::parse::Parse>(item: TokenStream, message: &str) -> Result<T, TokenStream> {
    syn::parse2(item.clone()).map_err(|_| {
        let error = syn::Error::new(Span::call_site(), message).to_compile_error();
        quote!(#item #error)
    })
}

/// `#[tool(...)] fn ...`
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut func: ItemFn = match parse_item(
        item,
        "#[tool] applies to functions (and to methods inside a #[tools] impl block)",
    ) {
        Ok(f) => f,
        Err(e) => return e,
    };
    let mut cx = Ctxt::default();
    let attr = attr::parse_tool_attr(&mut cx, args);
    let rt = runtime_path(&attr);
    if let Some(r) = func.sig.receiver() {
        // Inside an impl block nothing but the method may be emitted.
        cx.error_spanned_by(r, "a tool method needs #[tools] on its impl block, so the tool can find `self` in the call's Context");
        strip_params(&mut func.sig);
        let errors = cx.to_compile_errors();
        return quote!(#func #errors);
    }
    let sig = func.sig.clone();
    let model = parse_fn(&mut cx, attr, &sig, false);
    strip_params(&mut func.sig);
    let ident = &func.sig.ident;
    let vis = &func.vis;
    let doc = handle_doc(&model);
    let handle = quote! {
        #[doc = #doc]
        #[allow(non_camel_case_types)]
        #vis struct #ident {
            _private: (),
        }
    };
    if cx.has_errors() {
        let errors = cx.to_compile_errors();
        return quote! {
            #func
            #handle
            impl #ident {
                /// The tool (not available: the definition has errors).
                pub fn tool() -> &'static #rt::Tool {
                    ::core::unreachable!()
                }
            }
            #errors
        };
    }
    let parts = expand_parts(&rt, &model, None);
    let static_name = static_ident(ident);
    let unique = unique_name_marker(&model);
    quote! {
        #func
        #handle
        const _: () = {
            #parts
            #[automatically_derived]
            impl #ident {
                /// The tool this function defines, for building a [`ToolSet`](::tool_runtime::ToolSet).
                pub fn tool() -> &'static #rt::Tool {
                    &#static_name
                }
            }
        };
        #unique
    }
}

/// `#[tools] impl Type { #[tool(...)] fn ...(&self, ...) }`
pub fn tools(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut imp: ItemImpl = match parse_item(
        item,
        "#[tools] applies to an `impl` block whose methods carry #[tool(...)]",
    ) {
        Ok(i) => i,
        Err(e) => return e,
    };
    let mut cx = Ctxt::default();
    let group_attr = attr::parse_tool_attr(&mut Ctxt::default(), args);
    let rt = runtime_path(&group_attr);
    if !imp.generics.params.is_empty() {
        cx.error_spanned_by(&imp.generics, "a #[tools] impl block cannot be generic");
    }
    if let Some((path, _)) = &imp.trait_ {
        cx.error_spanned_by(
            path,
            "#[tools] applies to inherent impl blocks, not trait impls",
        );
    }
    let self_ty = (*imp.self_ty).clone();
    let mut found = Vec::new();
    for item in &mut imp.items {
        let ImplItem::Fn(f) = item else { continue };
        let Some(pos) = f
            .attrs
            .iter()
            .position(|a| a.path().segments.last().is_some_and(|s| s.ident == "tool"))
        else {
            continue;
        };
        let tool_attr = f.attrs.remove(pos);
        let args = match &tool_attr.meta {
            syn::Meta::List(l) => l.tokens.clone(),
            _ => TokenStream::new(),
        };
        found.push((args, f.sig.clone(), tool_attr.span()));
        strip_params(&mut f.sig);
    }
    if found.is_empty() {
        cx.error_at(
            Span::call_site(),
            "this #[tools] impl block has no #[tool(...)] method",
        );
    }
    let sigs: Vec<Signature> = found.iter().map(|(_, s, _)| s.clone()).collect();
    let mut models = Vec::new();
    for ((args, _, span), sig) in found.iter().zip(&sigs) {
        let mut attr = attr::parse_tool_attr(&mut cx, args.clone());
        if attr.krate.is_none() {
            attr.krate = group_attr.krate.clone();
        }
        if attr.description.is_none() {
            cx.error_at(*span, "missing `description`: add #[tool(description = \"...\")] saying what the tool returns and when to use it");
            attr.description = Some(syn::LitStr::new("-", *span));
        }
        models.push(parse_fn(&mut cx, attr, sig, true));
    }
    if cx.has_errors() {
        let errors = cx.to_compile_errors();
        return quote! {
            #imp
            impl #self_ty {
                /// The tools of this group (not available: the definitions have errors).
                pub fn tools() -> &'static [&'static #rt::Tool] {
                    ::core::unreachable!()
                }
            }
            #errors
        };
    }
    let parts = models.iter().map(|m| expand_parts(&rt, m, Some(&self_ty)));
    let statics: Vec<Ident> = models.iter().map(|m| static_ident(m.ident)).collect();
    let uniques = models.iter().map(unique_name_marker);
    let n = models.len();
    quote! {
        #imp
        const _: () = {
            #(#parts)*
            #[automatically_derived]
            impl #self_ty {
                /// The tools of this group, in declaration order. Their `&self` is the value of
                /// this type in the call's [`Context`](::tool_runtime::Context).
                pub fn tools() -> &'static [&'static #rt::Tool] {
                    static TOOLS: [&#rt::Tool; #n] = [#(&#statics),*];
                    &TOOLS
                }
            }
        };
        #(#uniques)*
    }
}

fn static_ident(ident: &Ident) -> Ident {
    format_ident!("__TOOL_{}", unraw(ident).to_uppercase())
}

fn parse_fn<'a>(cx: &mut Ctxt, attr: ToolAttr, sig: &'a Signature, in_group: bool) -> ToolFn<'a> {
    check::check_tool_description(cx, &attr);
    check::check_tool_flags(cx, &attr);
    let name = match &attr.name {
        Some(n) => {
            check::check_tool_name(cx, &n.value(), n.span());
            n.value()
        }
        None => {
            let n = unraw(&sig.ident);
            check::check_tool_name(cx, &n, sig.ident.span());
            n
        }
    };
    if !sig.generics.params.is_empty() {
        cx.error_spanned_by(
            &sig.generics,
            "a tool cannot be generic: the model needs one concrete schema",
        );
    }
    if let Some(c) = &sig.constness {
        cx.error_spanned_by(c, "a tool cannot be a `const fn`");
    }
    if sig.variadic.is_some() || sig.abi.is_some() {
        cx.error_spanned_by(&sig.ident, "a tool must be a plain Rust function");
    }
    let mut args = Vec::new();
    let mut ctx = Vec::new();
    let mut params = Vec::new();
    for input in &sig.inputs {
        match input {
            FnArg::Receiver(r) => {
                if !in_group {
                    cx.error_spanned_by(r, "a tool method needs #[tools] on its impl block, so the tool can find `self` in the call's Context");
                } else if !matches!(r.kind, syn::ReceiverKind::Reference(_, _, None)) {
                    cx.error_spanned_by(
                        r,
                        "a tool method takes `&self`: the host shares one value between calls",
                    );
                }
            }
            FnArg::Typed(pt) => {
                let Pat::Ident(pi) = &*pt.pat else {
                    cx.error_spanned_by(
                        &pt.pat,
                        "a tool argument needs a plain name: the name is what the model fills in",
                    );
                    continue;
                };
                params.push(&pi.ident);
                if let Some(ctx_attr) = pt.attrs.iter().find(|a| a.path().is_ident("ctx")) {
                    // #[ctx] session: &Session
                    if pt.attrs.iter().any(|a| a.path().is_ident("arg")) {
                        cx.error_spanned_by(ctx_attr, "a `#[ctx]` parameter comes from the host, not the model: it takes no #[arg(...)]");
                    }
                    match &*pt.ty {
                        Type::Reference(r) if r.mutability.is_none() => ctx.push((&pi.ident, &*r.elem)),
                        _ => cx.error_spanned_by(
                            &pt.ty,
                            "a `#[ctx]` parameter borrows a value the host put in the Context: write it as a shared reference, such as `&Session`",
                        ),
                    }
                    continue;
                }
                if matches!(&*pt.ty, Type::ImplTrait(_) | Type::Reference(_)) {
                    cx.error_spanned_by(&pt.ty, "a tool argument needs an owned, concrete type such as `String` or a #[derive(ToolArg)] type (host values take `#[ctx]`)");
                    continue;
                }
                let a = attr::parse_arg_attrs(cx, &pt.attrs);
                let arg = Arg {
                    what: "argument",
                    ident: &pi.ident,
                    name: unraw(&pi.ident),
                    ty: &pt.ty,
                    attr: a,
                    serde_default: false,
                    skip_de: false,
                    output: Presence::Required,
                };
                check::check_arg(cx, &arg);
                args.push(arg);
            }
        }
    }
    if in_group && sig.receiver().is_none() {
        cx.error_spanned_by(&sig.ident, "a tool in a #[tools] block takes `&self`; make a free function a tool with #[tool] outside the block");
    }
    if args.len() > MAX_ARGS {
        cx.error_spanned_by(
            &sig.inputs,
            format!("a tool takes at most {MAX_ARGS} arguments: group related ones in a #[derive(ToolArg)] struct"),
        );
    }
    let output = match &sig.output {
        ReturnType::Default => Output::Unit,
        ReturnType::Type(_, ty) => match result_ok_type(ty) {
            Some(ok) => Output::Result(ok.clone()),
            None => Output::Plain((**ty).clone()),
        },
    };
    ToolFn {
        attr,
        name,
        ident: &sig.ident,
        is_async: sig.asyncness.is_some(),
        args,
        ctx,
        params,
        output,
    }
}

/// `Result<T, E>` (or a one-argument alias such as `anyhow::Result<T>`): `T`.
fn result_ok_type(ty: &Type) -> Option<&Type> {
    let Type::Path(p) = ty else { return None };
    let seg = p.path.segments.last()?;
    if seg.ident != "Result" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(a) = &seg.arguments else {
        return None;
    };
    match a.args.first() {
        Some(syn::GenericArgument::Type(t)) => Some(t),
        _ => None,
    }
}

fn strip_params(sig: &mut Signature) {
    for input in &mut sig.inputs {
        match input {
            FnArg::Typed(pt) => attr::strip_arg_attrs(&mut pt.attrs),
            FnArg::Receiver(r) => attr::strip_arg_attrs(&mut r.attrs),
        }
    }
}

fn description(model: &ToolFn) -> String {
    model
        .attr
        .description
        .as_ref()
        .map(|d| d.value().trim().to_owned())
        .unwrap_or_default()
}

/// The rustdoc of a tool's handle: the tool as the model sees it, from what the macro knows.
fn handle_doc(model: &ToolFn) -> String {
    let a = &model.attr;
    let code = |t: &dyn quote::ToTokens| {
        let s = quote!(#t)
            .to_string()
            .replace(" < ", "<")
            .replace(" <", "<")
            .replace("< ", "<")
            .replace(" >", ">")
            .replace(" ,", ",");
        format!("`{s}`")
    };
    let mut doc = format!("The tool `{}`", model.name);
    if let Some(t) = &a.title {
        doc.push_str(&format!(" ({})", t.value()));
    }
    doc.push_str(&format!(": {}", description(model)));
    if let Some(n) = &a.not_for {
        doc.push_str(&format!("\n\n**Not for:** {}", n.value()));
    }
    if model.args.is_empty() {
        doc.push_str("\n\nNo arguments.");
    } else {
        doc.push_str("\n\n| argument | type | required | constraints | default | description |\n|---|---|---|---|---|---|");
        for arg in &model.args {
            let x = &arg.attr;
            let mut c = Vec::new();
            match (x.min, x.max) {
                (Some(lo), Some(hi)) => c.push(format!(
                    "{}{}{}",
                    lo.show(),
                    if x.exclusive_max { ".." } else { "..=" },
                    hi.show()
                )),
                (Some(lo), None) => c.push(format!(">= {}", lo.show())),
                (None, Some(hi)) => c.push(format!("<= {}", hi.show())),
                _ => {}
            }
            if let Some((lo, hi, _)) = x.length {
                c.push(format!(
                    "length {}..={}",
                    lo.map(|l| l.to_string()).unwrap_or_default(),
                    hi.map(|h| h.to_string()).unwrap_or_default()
                ));
            }
            if let Some(p) = &x.pattern {
                c.push(format!("pattern `{}`", p.value()));
            }
            if let Some(u) = &x.unbounded {
                c.push(format!("unbounded: {}", u.value()));
            }
            let default = x.default.as_ref().map(|d| code(d)).unwrap_or_default();
            let text = x
                .description_text()
                .map(|(d, _)| d)
                .unwrap_or_default()
                .replace('|', "\\|");
            doc.push_str(&format!(
                "\n| `{}` | {} | {} | {} | {} | {} |",
                arg.name,
                code(arg.ty),
                if arg.input() == crate::ast::Presence::Required {
                    "yes"
                } else {
                    "no"
                },
                c.join(", ").replace('|', "\\|"),
                default,
                text
            ));
        }
    }
    match &model.output {
        Output::Plain(t) | Output::Result(t) => doc.push_str(&format!("\n\nReturns {}.", code(t))),
        Output::Unit => {}
    }
    let mut facts = Vec::new();
    if !a.requires.is_empty() {
        facts.push(format!(
            "requires {}",
            a.requires
                .iter()
                .map(|r| format!("`{}`", r.value()))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let flag = |f: &Option<syn::LitBool>| f.as_ref().is_some_and(|b| b.value);
    if a.needs_approval
        .as_ref()
        .map_or(flag(&a.destructive), |b| b.value)
    {
        facts.push("each call waits for a person's approval".into());
    }
    for (f, label) in [
        (&a.read_only, "read-only"),
        (&a.destructive, "destructive"),
        (&a.idempotent, "idempotent"),
        (&a.open_world, "open world"),
    ] {
        if flag(f) {
            facts.push(label.into());
        }
    }
    if !model.ctx.is_empty() {
        let ctx: Vec<String> = model
            .ctx
            .iter()
            .map(|(id, ty)| format!("`{id}: &{}`", code(ty).trim_matches('`')))
            .collect();
        facts.push(format!(
            "supplied by the host, never the model: {}",
            ctx.join(", ")
        ));
    }
    if !facts.is_empty() {
        doc.push_str(&format!("\n\n{}.", facts.join("; ")));
    }
    doc.push_str("\n\nGenerated by `#[tool]`; get the tool with `tool()`.");
    doc
}

/// The static `Tool`, its schema functions, its invoker and the compile-time assertions.
fn expand_parts(rt: &TokenStream, model: &ToolFn, self_ty: Option<&Type>) -> TokenStream {
    let ident = model.ident;
    let name = &model.name;
    let desc = description(model);
    let not_for = match &model.attr.not_for {
        Some(n) => {
            let v = n.value();
            quote!(::core::option::Option::Some(#v))
        }
        None => quote!(::core::option::Option::None),
    };
    let static_name = static_ident(ident);
    let panic_to_model = model.attr.panic_to_model.as_ref().is_some_and(|b| b.value);
    let input = format_ident!("__input_{}", unraw(ident));
    let output = format_ident!("__output_{}", unraw(ident));
    let invoke = format_ident!("__invoke_{}", unraw(ident));
    let fields = model.args.iter().map(|a| expand_field(rt, a));
    let assertions = model.args.iter().map(|a| expand_assertions(rt, a));
    let out_ty = match &model.output {
        Output::Plain(t) | Output::Result(t) => quote!(#t),
        Output::Unit => quote!(()),
    };
    let idents: Vec<&Ident> = model.args.iter().map(|a| a.ident).collect();
    let tys: Vec<&Type> = model.args.iter().map(|a| a.ty).collect();
    let names: Vec<&String> = model.args.iter().map(|a| &a.name).collect();
    // One `Option<T>` per parameter, filled by the runtime through `&mut dyn Slot`.
    let slots: Vec<Ident> = idents
        .iter()
        .map(|i| format_ident!("__slot_{}", unraw(i)))
        .collect();
    let slot_refs = slots
        .iter()
        .zip(&tys)
        .map(|(s, ty)| quote_spanned!(ty.span()=> &mut #s as &mut dyn #rt::__private::Slot));
    let unwrap_slots = if slots.is_empty() {
        quote!()
    } else {
        quote! {
            let (#(::core::option::Option::Some(#idents),)*) = (#(#slots,)*) else {
                return #rt::__private::Invocation::Ready(::core::result::Result::Err(#rt::__private::unfilled()));
            };
        }
    };
    let (state, callee) = match self_ty {
        Some(t) => (
            quote! {
                let __this: &#t = match #rt::__private::state::<#t>(__cx) {
                    ::core::result::Result::Ok(s) => s,
                    ::core::result::Result::Err(e) => return #rt::__private::Invocation::Ready(::core::result::Result::Err(e)),
                };
            },
            quote!(__this.#ident),
        ),
        None => (quote!(), quote!(#ident)),
    };
    let ctx_params = model.ctx.iter().map(|(id, ty)| {
        quote_spanned! {ty.span()=>
            let #id: &#ty = match #rt::__private::state::<#ty>(__cx) {
                ::core::result::Result::Ok(s) => s,
                ::core::result::Result::Err(e) => return #rt::__private::Invocation::Ready(::core::result::Result::Err(e)),
            };
        }
    });
    let state = quote!(#state #(#ctx_params)*);
    let params = &model.params;
    let convert = match &model.output {
        Output::Result(_) => quote!(#rt::__private::result),
        _ => quote!(#rt::__private::ok),
    };
    let hooks = format_ident!("__HOOKS_{}", unraw(ident).to_uppercase());
    let redact_fn = format_ident!("__redact_{}", unraw(ident));
    let to_model = match &model.attr.to_model {
        Some(p) => {
            quote_spanned!(p.span()=> ::core::option::Option::Some(#p as fn(&#out_ty) -> #rt::__private::ModelOutput))
        }
        None => quote!(::core::option::Option::None),
    };
    let (redact, redact_item) = match &model.attr.redact {
        Some(p) => (
            quote!(::core::option::Option::Some(#redact_fn as #rt::__private::RedactFn<#out_ty>)),
            quote_spanned! {p.span()=>
                fn #redact_fn(v: &#out_ty) -> ::core::result::Result<#rt::__private::serde_json::Value, ::std::string::String> {
                    #rt::__private::redacted(#p(v))
                }
            },
        ),
        None => (quote!(::core::option::Option::None), quote!()),
    };
    let call = if model.is_async {
        quote! {
            #rt::__private::boxed(async move { #convert(#callee(#(#params),*).await, &#hooks) })
        }
    } else {
        quote! {
            #rt::__private::Invocation::Ready(#convert(#callee(#(#params),*), &#hooks))
        }
    };
    let flag = |f: &Option<syn::LitBool>| match f {
        Some(b) => {
            let v = b.value;
            quote!(::core::option::Option::Some(#v))
        }
        None => quote!(::core::option::Option::None),
    };
    let title = match &model.attr.title {
        Some(t) => quote!(::core::option::Option::Some(#t)),
        None => quote!(::core::option::Option::None),
    };
    let (read_only, destructive, idempotent, open_world) = (
        flag(&model.attr.read_only),
        flag(&model.attr.destructive),
        flag(&model.attr.idempotent),
        flag(&model.attr.open_world),
    );
    let requires = &model.attr.requires;
    let allow_lints = model.attr.allow_lints.iter().filter_map(|a| {
        let v = a.value();
        let (id, why) = v.split_once(':')?;
        let (id, why) = (id.trim().to_owned(), why.trim().to_owned());
        Some(quote!((#id, #why)))
    });
    // Approval is the default for destructive tools unless the tool says otherwise.
    let needs_approval = match &model.attr.needs_approval {
        Some(b) => b.value,
        None => model.attr.destructive.as_ref().is_some_and(|b| b.value),
    };
    let out_span = match &model.output {
        Output::Plain(t) | Output::Result(t) => t.span(),
        Output::Unit => Span::call_site(),
    };
    let output_fn = quote_spanned!(out_span=> #rt::__private::output_schema::<#out_ty>);
    quote! {
        static #static_name: #rt::__private::Tool = #rt::__private::Tool::__new(#rt::__private::Spec {
            name: #name,
            description: #desc,
            not_for: #not_for,
            panic_to_model: #panic_to_model,
            requires: &[#(#requires),*],
            needs_approval: #needs_approval,
            allow_lints: &[#(#allow_lints),*],
            annotations: #rt::__private::Annotations {
                title: #title,
                read_only: #read_only,
                destructive: #destructive,
                idempotent: #idempotent,
                open_world: #open_world,
            },
            input: #input,
            output: #output,
            invoke: #invoke,
        });
        fn #input(g: &mut #rt::__private::schemars::SchemaGenerator) -> #rt::__private::schemars::Schema {
            #rt::__private::object(g, ::core::option::Option::None, &[#(#fields),*])
        }
        #redact_item
        const #hooks: #rt::__private::Hooks<#out_ty> = #rt::__private::Hooks {
            to_model: #to_model,
            redact: #redact,
        };
        fn #output(g: &mut #rt::__private::schemars::SchemaGenerator) -> #rt::__private::schemars::Schema {
            #output_fn(g)
        }
        #[allow(unused_variables, unused_mut)]
        fn #invoke<'a>(
            __cx: &'a #rt::__private::Context,
            __input: #rt::__private::Input<'_>,
        ) -> #rt::__private::Invocation<'a> {
            #state
            #(let mut #slots: ::core::option::Option<#tys> = ::core::option::Option::None;)*
            if let ::core::result::Result::Err(e) = #rt::__private::decode(__input, &[#(#names),*], &mut [#(#slot_refs),*]) {
                return #rt::__private::Invocation::Ready(::core::result::Result::Err(e));
            }
            #unwrap_slots
            #call
        }
        #rt::__private::inventory::submit! { #rt::__private::Registration(&#static_name) }
        #(#assertions)*
    }
}

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

/// The `Field` describing one argument or struct field; shared with the derive.
pub fn expand_field(rt: &TokenStream, arg: &Arg) -> TokenStream {
    let a = &arg.attr;
    let name = &arg.name;
    let ty = arg.ty;
    let presence = |p: Presence| match p {
        Presence::Required => quote!(#rt::__private::Presence::Required),
        Presence::Optional => quote!(#rt::__private::Presence::Optional),
        Presence::Absent => quote!(#rt::__private::Presence::Absent),
    };
    let input = presence(arg.input());
    let output = presence(arg.output);
    let desc = a.description_text().map(|(d, _)| d).unwrap_or_default();
    let integer = matches!(
        crate::ast::number_inside(ty).map(crate::ast::limits),
        Some((_, _, true))
    );
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
    let numeric = a.has_range() || a.unbounded.is_some();
    let tspan = ty.span();
    let schema = if numeric {
        quote_spanned!(tspan=> #rt::__private::ranged::<#ty>)
    } else {
        quote_spanned!(tspan=> #rt::__private::plain::<#ty>)
    };
    let default = match &a.default {
        Some(e) => {
            let d = value_json(rt, ty, e);
            quote!({
                fn __default() -> #rt::__private::serde_json::Value { #d }
                ::core::option::Option::Some(__default as fn() -> #rt::__private::serde_json::Value)
            })
        }
        None => quote!(::core::option::Option::None),
    };
    let example_fns = a.examples.iter().enumerate().map(|(i, e)| {
        let f = format_ident!("__example_{}", i);
        let body = value_json(rt, ty, e);
        quote!(fn #f() -> #rt::__private::serde_json::Value { #body })
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
        quote_spanned!(e.span()=> #rt::__private::to_json::<#ty>(#rt::__private::str_literal::<#ty_here>(#e)))
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
pub fn expand_assertions(rt: &TokenStream, arg: &Arg) -> TokenStream {
    let a = &arg.attr;
    let ty = arg.ty;
    let unknown = shape(ty) == Shape::Unknown && !is_option(ty);
    let mut out = TokenStream::new();
    if let Some((_, _, span)) = a.length
        && unknown
    {
        out.extend(quote_spanned!(span=> let _ = #rt::__private::assert_length::<#ty>;));
    }
    if let Some(p) = &a.pattern
        && unknown
    {
        out.extend(quote_spanned!(p.span()=> let _ = #rt::__private::assert_pattern::<#ty>;));
    }
    if a.has_range() && crate::ast::number_inside(ty).is_none() {
        let span = a.range_span.unwrap_or_else(|| ty.span());
        let min = num(rt, a.min, false);
        let max = num(rt, a.max, false);
        let msg = format!(
            "the `range` of {} `{}` does not fit its number type",
            arg.what, arg.name
        );
        out.extend(quote_spanned! {span=>
            const { #rt::__private::check_range::<<#ty as #rt::__private::RangeArg>::Number>(#min, #max, #msg) };
        });
    }
    if out.is_empty() {
        return out;
    }
    quote! {
        const _: () = {
            #[allow(dead_code)]
            fn __assertions() { #out }
        };
    }
}

/// A crate-unique item per tool name: a second tool with the same name in the crate is an
/// error at compile time. Names are encoded so that distinct tool names never collide.
fn unique_name_marker(model: &ToolFn) -> TokenStream {
    let encoded: String = model
        .name
        .chars()
        .map(|c| {
            if c == '-' {
                "_2d_".to_owned()
            } else {
                c.to_string()
            }
        })
        .collect();
    let span = model
        .attr
        .name
        .as_ref()
        .map(|n| n.span())
        .unwrap_or_else(|| model.ident.span());
    let marker = Ident::new(&format!("duplicate_tool_name_{encoded}"), span);
    quote_spanned! {span=>
        #[doc(hidden)]
        #[macro_export]
        #[allow(non_local_definitions)]
        macro_rules! #marker { () => {} }
    }
}
