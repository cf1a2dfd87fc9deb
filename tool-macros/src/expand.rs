//! Code generation for `#[tool]` functions and `#[tools]` impl groups, from the checked model:
//! the handle type, the static `Tool` and its spec, the schema functions, the output hooks, the
//! invoker, the registration and the crate-unique name marker. One function per job.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{FnArg, Ident, ImplItem, ItemFn, ItemImpl, Signature, Type};

use crate::doc;
use crate::field;
use crate::internals::ast::{Output, Tool};
use crate::internals::attr;
use crate::internals::check;
use crate::internals::ctxt::Ctxt;
use crate::internals::symbol::TOOL;
use crate::internals::types::unraw;

/// The path generated code names the runtime by: `::tool_runtime`, or `crate = "..."`.
pub(crate) fn runtime_path(krate: Option<&syn::Path>) -> TokenStream {
    match krate {
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
pub(crate) fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut func: ItemFn = match parse_item(
        item,
        "#[tool] applies to functions (and to methods inside a #[tools] impl block)",
    ) {
        Ok(f) => f,
        Err(e) => return e,
    };
    let mut cx = Ctxt::new();
    let mut attr = attr::parse_tool_attr(&mut cx, args);
    attr.doc = attr::doc_comment(&func.attrs);
    let rt = runtime_path(attr.krate.as_ref());
    if let Some(r) = func.sig.receiver() {
        // Inside an impl block nothing but the method may be emitted.
        cx.error_spanned_by(r, "a tool method needs #[tools] on its impl block, so the tool can find `self` in the call's Context");
        strip_params(&mut func.sig);
        let errors = cx.check().err();
        return quote!(#func #errors);
    }
    let sig = func.sig.clone();
    let model = Tool::from_signature(&mut cx, attr, &sig, false);
    check::check_tool(&mut cx, &model);
    strip_params(&mut func.sig);
    let ident = &func.sig.ident;
    let vis = &func.vis;
    let doc = doc::handle(&model);
    let handle = quote! {
        #[doc = #doc]
        #[allow(non_camel_case_types)]
        #vis struct #ident {
            _private: (),
        }
    };
    if let Err(errors) = cx.check() {
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
    let parts = parts(&rt, &model, None);
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
pub(crate) fn tools(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut imp: ItemImpl = match parse_item(
        item,
        "#[tools] applies to an `impl` block whose methods carry #[tool(...)]",
    ) {
        Ok(i) => i,
        Err(e) => return e,
    };
    let mut cx = Ctxt::new();
    let group_crate = attr::parse_group_attr(&mut cx, args);
    let rt = runtime_path(group_crate.as_ref());
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
    // Each method's #[tool] arguments, signature and doc comment, taken off the method.
    let mut found = Vec::new();
    for item in &mut imp.items {
        let ImplItem::Fn(f) = item else { continue };
        let Some(pos) = f
            .attrs
            .iter()
            .position(|a| a.path().segments.last().is_some_and(|s| s.ident == TOOL))
        else {
            continue;
        };
        let tool_attr = f.attrs.remove(pos);
        let args = match &tool_attr.meta {
            syn::Meta::List(l) => l.tokens.clone(),
            _ => TokenStream::new(),
        };
        found.push((args, f.sig.clone(), attr::doc_comment(&f.attrs)));
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
    for ((args, _, doc), sig) in found.into_iter().zip(&sigs) {
        let mut attr = attr::parse_tool_attr(&mut cx, args);
        attr.doc = doc;
        if attr.krate.is_none() {
            attr.krate = group_crate.clone();
        }
        let model = Tool::from_signature(&mut cx, attr, sig, true);
        check::check_tool(&mut cx, &model);
        models.push(model);
    }
    if let Err(errors) = cx.check() {
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
    let parts = models.iter().map(|m| {
        let rt = runtime_path(m.attr.krate.as_ref());
        parts(&rt, m, Some(&self_ty))
    });
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

/// The names of one tool's generated items.
struct Names {
    static_name: Ident,
    input: Ident,
    output: Ident,
    invoke: Ident,
    hooks: Ident,
    fns: Ident,
    redact: Ident,
}

impl Names {
    fn of(ident: &Ident) -> Names {
        let base = unraw(ident);
        Names {
            static_name: static_ident(ident),
            input: format_ident!("__input_{}", base),
            output: format_ident!("__output_{}", base),
            invoke: format_ident!("__invoke_{}", base),
            hooks: format_ident!("__HOOKS_{}", base.to_uppercase()),
            fns: format_ident!("__OUTPUT_{}", base.to_uppercase()),
            redact: format_ident!("__redact_{}", base),
        }
    }
}

/// Everything one tool adds, inside the `const _` block of its handle or group.
fn parts(rt: &TokenStream, model: &Tool, self_ty: Option<&Type>) -> TokenStream {
    let names = Names::of(model.ident);
    let spec = spec_static(rt, model, &names);
    let input = input_schema_fn(rt, model, &names);
    let output = output_fns(rt, model, &names);
    let invoke = invoke_fn(rt, model, &names, self_ty);
    let assertions = model.args.iter().map(|a| field::assertions(rt, a));
    let static_name = &names.static_name;
    quote! {
        #spec
        #input
        #output
        #invoke
        #rt::__private::inventory::submit! {
            #rt::__private::Registration::new(&#static_name, ::core::module_path!())
        }
        #(#assertions)*
    }
}

/// `static __TOOL_X: Tool = Tool::__new(Spec { .. })`: what the tool declares.
fn spec_static(rt: &TokenStream, model: &Tool, names: &Names) -> TokenStream {
    let a = &model.attr;
    let name = &model.name;
    let desc = model.description();
    let opt_str = |v: Option<String>| match v {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    };
    let not_for = opt_str(a.not_for.as_ref().map(|n| n.value()));
    let title = match a.title.as_ref().map(|t| t.value()) {
        Some(v) => quote!(::core::option::Option::Some(::std::borrow::Cow::Borrowed(#v))),
        None => quote!(::core::option::Option::None),
    };
    let flag = |f: &Option<syn::LitBool>| match f {
        Some(b) => {
            let v = b.value;
            quote!(::core::option::Option::Some(#v))
        }
        None => quote!(::core::option::Option::None),
    };
    let (read_only, destructive, idempotent, open_world) = (
        flag(&a.read_only),
        flag(&a.destructive),
        flag(&a.idempotent),
        flag(&a.open_world),
    );
    let panic_to_model = a.panic_to_model.as_ref().is_some_and(|b| b.value);
    let is_async = model.is_async;
    // A sync fn blocks unless it says otherwise; an async fn must never block.
    let blocking = !is_async && a.blocking.as_ref().is_none_or(|b| b.value);
    let timeout_ms = match a
        .timeout
        .as_ref()
        .and_then(|t| check::timeout_ms(&t.value()))
    {
        Some(ms) => quote!(::core::option::Option::Some(#ms)),
        None => quote!(::core::option::Option::None),
    };
    let max_result_chars = match a
        .max_result_chars
        .as_ref()
        .and_then(check::max_result_chars)
    {
        Some(n) => quote!(::core::option::Option::Some(#n)),
        None => quote!(::core::option::Option::None),
    };
    let needs_approval = model.needs_approval();
    let task = syn::Ident::new(
        a.task
            .as_ref()
            .and_then(|t| check::task_support(&t.value()))
            .unwrap_or("Forbidden"),
        proc_macro2::Span::call_site(),
    );
    let checks = model.args.iter().any(|a| a.attr.validate.is_some());
    let asks = model.takes_answers();
    let commits = model.takes_commit();
    let ask_first = match &a.ask_first {
        Some(p) => {
            quote_spanned!(p.span()=> ::core::option::Option::Some(#p as fn() -> ::std::vec::Vec<#rt::__private::Question>))
        }
        None => quote!(::core::option::Option::None),
    };
    let requires = &a.requires;
    let allow_lints = check::allow_lint_pairs(&a.allow_lints)
        .into_iter()
        .map(|(id, why)| quote!((#id, #why)));
    let Names {
        static_name,
        input,
        output,
        invoke,
        ..
    } = names;
    quote! {
        static #static_name: #rt::__private::Tool = #rt::__private::Tool::__new(#rt::__private::Spec {
            name: #name,
            description: #desc,
            not_for: #not_for,
            panic_to_model: #panic_to_model,
            is_async: #is_async,
            blocking: #blocking,
            timeout_ms: #timeout_ms,
            max_result_chars: #max_result_chars,
            requires: &[#(#requires),*],
            needs_approval: #needs_approval,
            task: #rt::__private::TaskSupport::#task,
            asks: #asks,
            commits: #commits,
            ask_first: #ask_first,
            checks: #checks,
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
    }
}

/// The input schema function: an object of the tool's arguments.
fn input_schema_fn(rt: &TokenStream, model: &Tool, names: &Names) -> TokenStream {
    let fields = model.args.iter().map(|a| field::field(rt, a));
    let input = &names.input;
    quote! {
        fn #input(g: &mut #rt::__private::schemars::SchemaGenerator) -> #rt::__private::schemars::Schema {
            #rt::__private::object(g, ::core::option::Option::None, &[#(#fields),*])
        }
    }
}

/// The output's type: `()` for a tool that returns nothing.
fn output_type(model: &Tool) -> TokenStream {
    match model.output.ty() {
        Some(t) => quote!(#t),
        None => quote!(()),
    }
}

/// The output schema function and the output hooks (`to_model`, `redact`).
fn output_fns(rt: &TokenStream, model: &Tool, names: &Names) -> TokenStream {
    let out_ty = output_type(model);
    let out_span = model
        .output
        .ty()
        .map_or_else(Span::call_site, Spanned::span);
    let Names {
        output,
        hooks,
        redact,
        ..
    } = names;
    let to_model = match &model.attr.to_model {
        Some(p) => {
            quote_spanned!(p.span()=> ::core::option::Option::Some(#p as fn(&#out_ty) -> #rt::__private::ModelOutput))
        }
        None => quote!(::core::option::Option::None),
    };
    let (redact_hook, redact_fn) = match &model.attr.redact {
        Some(p) => (
            quote!(::core::option::Option::Some(#redact as #rt::__private::RedactFn<#out_ty>)),
            quote_spanned! {p.span()=>
                fn #redact(v: &#out_ty) -> ::core::result::Result<#rt::__private::serde_json::Value, ::std::string::String> {
                    #rt::__private::redacted(#p(v))
                }
            },
        ),
        None => (quote!(::core::option::Option::None), quote!()),
    };
    let fns = &names.fns;
    // The one use that needs the type to be an output; everything else goes through `#fns`.
    let output_fns = quote_spanned!(out_span=> #rt::__private::output_fns::<#out_ty>());
    quote! {
        #redact_fn
        const #hooks: #rt::__private::Hooks<#out_ty> = #rt::__private::Hooks {
            to_model: #to_model,
            redact: #redact_hook,
        };
        const #fns: #rt::__private::OutputFns<#out_ty> = #output_fns;
        fn #output(g: &mut #rt::__private::schemars::SchemaGenerator) -> #rt::__private::schemars::Schema {
            (#fns.schema)(g)
        }
    }
}

/// The invoker: host values from the Context, the arguments decoded into one slot per
/// parameter, then the call and its output.
fn invoke_fn(rt: &TokenStream, model: &Tool, names: &Names, self_ty: Option<&Type>) -> TokenStream {
    let ident = model.ident;
    let idents: Vec<&Ident> = model.args.iter().map(|a| a.ident).collect();
    let tys: Vec<&Type> = model.args.iter().map(|a| a.ty).collect();
    let arg_names: Vec<&String> = model.args.iter().map(|a| &a.name).collect();
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
    let host_value = |name: &Ident, ty: &dyn quote::ToTokens, span: Span| {
        quote_spanned! {span=>
            let #name: &#ty = match #rt::__private::state::<#ty>(__cx) {
                ::core::result::Result::Ok(s) => s,
                ::core::result::Result::Err(e) => return #rt::__private::Invocation::Ready(::core::result::Result::Err(e)),
            };
        }
    };
    let this = format_ident!("__this");
    let (state, callee) = match self_ty {
        Some(t) => (
            host_value(&this, t, Span::call_site()),
            quote!(#this.#ident),
        ),
        None => (quote!(), quote!(#ident)),
    };
    let ctx_params = model
        .ctx
        .iter()
        .map(|(id, ty)| host_value(id, ty, ty.span()));
    let params = &model.params;
    let (hooks, fns) = (&names.hooks, &names.fns);
    let convert = |value: TokenStream| match &model.output {
        Output::Result(_) => quote! {
            match #value {
                ::core::result::Result::Ok(v) => (#fns.ok)(v, &#hooks),
                ::core::result::Result::Err(e) => {
                    #[allow(unused_imports)]
                    use #rt::__private::{KeepsBoxedKind as _, KeepsErrorKind as _, TextOnlyKind as _};
                    (&e).tool_failure().failed(e)
                }
            }
        },
        _ => quote!((#fns.ok)(#value, &#hooks)),
    };
    let call = if model.is_async {
        let convert = convert(quote!(#callee(#(#params),*).await));
        quote! {
            #rt::__private::boxed(async move { #convert })
        }
    } else {
        let convert = convert(quote!(#callee(#(#params),*)));
        quote! {
            #rt::__private::Invocation::Ready(#convert)
        }
    };
    // Parameters with rules of their own: checked once decoded, and alone (nothing run)
    // before a call is held for approval.
    let rules: Vec<TokenStream> = model
        .args
        .iter()
        .filter_map(|a| {
            let path = a.attr.validate.as_ref()?;
            let (ident, name) = (a.ident, &a.name);
            Some(quote_spanned! {path.span()=>
                __broken.extend(#rt::__private::rules_of(#name, #path(&#ident)));
            })
        })
        .collect();
    let (check_only, check) = if rules.is_empty() {
        (quote!(), quote!())
    } else {
        (
            quote!(let __check_only = __input.check_only();),
            quote! {
                let mut __broken = ::std::vec::Vec::new();
                #(#rules)*
                if !__broken.is_empty() {
                    return #rt::__private::rules_broken(__broken);
                }
                if __check_only {
                    return #rt::__private::checked();
                }
            },
        )
    };
    let invoke = &names.invoke;
    quote! {
        #[allow(unused_variables, unused_mut)]
        fn #invoke<'a>(
            __cx: &'a #rt::__private::Context,
            __input: #rt::__private::Input<'_>,
        ) -> #rt::__private::Invocation<'a> {
            #state
            #(#ctx_params)*
            #check_only
            #(let mut #slots: ::core::option::Option<#tys> = ::core::option::Option::None;)*
            if let ::core::result::Result::Err(e) = #rt::__private::decode(__input, &[#(#arg_names),*], &mut [#(#slot_refs),*]) {
                return #rt::__private::Invocation::Ready(::core::result::Result::Err(e));
            }
            #unwrap_slots
            #check
            #call
        }
    }
}

fn strip_params(sig: &mut Signature) {
    for input in &mut sig.inputs {
        match input {
            FnArg::Typed(pt) => attr::strip_inert_attrs(&mut pt.attrs),
            FnArg::Receiver(r) => attr::strip_inert_attrs(&mut r.attrs),
        }
    }
}

/// A crate-unique item per tool name: a second tool with the same name in the crate is an
/// error at compile time.
fn unique_name_marker(model: &Tool) -> TokenStream {
    let span = model.name_span();
    let marker = Ident::new(
        &format!("duplicate_tool_name_{}", encode_name(&model.name)),
        span,
    );
    quote_spanned! {span=>
        #[doc(hidden)]
        #[macro_export]
        #[allow(non_local_definitions)]
        macro_rules! #marker { () => {} }
    }
}

/// A tool name as identifier characters, one-to-one: `_` is written `__` and `-` is `_d`, so
/// `a-b` (`a_db`) and `a_2d_b` (`a__2d__b`) stay apart.
fn encode_name(name: &str) -> String {
    let mut s = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        match c {
            '_' => s.push_str("__"),
            '-' => s.push_str("_d"),
            c => s.push(c),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::encode_name;

    #[test]
    fn distinct_names_encode_apart() {
        let names = ["a-b", "a_2d_b", "a_db", "a__b", "a_-b", "a-_b", "ab", "a_b"];
        let mut encoded: Vec<String> = names.iter().map(|n| encode_name(n)).collect();
        encoded.sort();
        encoded.dedup();
        assert_eq!(encoded.len(), names.len(), "{encoded:?}");
    }
}
