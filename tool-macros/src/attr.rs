//! Parses `#[tool(...)]`, `#[arg(...)]`, doc comments and the `#[serde(...)]` keys that change a
//! schema into plain structs. Errors are recorded and parsing goes on.

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, ExprRange, ExprUnary, Lit, LitStr, RangeLimits, UnOp};

use crate::ctxt::Ctxt;
use crate::symbol::{self, ARG_KEYS, TOOL_KEYS};

/// `#[tool(...)]`
#[derive(Default)]
pub struct ToolAttr {
    pub description: Option<LitStr>,
    pub not_for: Option<LitStr>,
    pub name: Option<LitStr>,
    pub panic_to_model: Option<syn::LitBool>,
    pub title: Option<LitStr>,
    pub requires: Vec<LitStr>,
    pub needs_approval: Option<syn::LitBool>,
    pub read_only: Option<syn::LitBool>,
    pub destructive: Option<syn::LitBool>,
    pub idempotent: Option<syn::LitBool>,
    pub open_world: Option<syn::LitBool>,
    pub to_model: Option<syn::Path>,
    pub redact: Option<syn::Path>,
    pub allow_lints: Vec<LitStr>,
    pub krate: Option<syn::Path>,
}

/// A flag written bare (`read_only`) or with a value (`read_only = false`).
fn flag(meta: &ParseNestedMeta) -> syn::Result<syn::LitBool> {
    if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse()
    } else {
        Ok(syn::LitBool::new(true, meta.path.span()))
    }
}

/// A number as written in an attribute, with its span.
#[derive(Clone, Copy)]
pub struct NumLit {
    pub value: f64,
    pub int: Option<i128>,
    pub span: Span,
}

impl NumLit {
    pub fn is_int(&self) -> bool {
        self.int.is_some()
    }

    pub fn show(&self) -> String {
        match self.int {
            Some(i) => i.to_string(),
            None => format!("{:?}", self.value),
        }
    }
}

/// `#[arg(...)]` on a parameter, field or variant, plus its doc comment.
#[derive(Default)]
pub struct ArgAttr {
    pub description: Option<LitStr>,
    pub doc: Option<(String, Span)>,
    pub min: Option<NumLit>,
    pub max: Option<NumLit>,
    pub exclusive_max: bool,
    /// Span of `range = ..`, `min` or `max`, for errors about the bounds as a whole.
    pub range_span: Option<Span>,
    pub length: Option<(Option<u64>, Option<u64>, Span)>,
    pub pattern: Option<LitStr>,
    pub default: Option<Expr>,
    pub examples: Vec<Expr>,
    pub unbounded: Option<LitStr>,
    /// `validate = path`: business rules of a whole derived type.
    pub validate: Option<syn::Path>,
}

impl ArgAttr {
    /// The description the model reads: `description = ..` wins over the doc comment.
    pub fn description_text(&self) -> Option<(String, Span)> {
        match &self.description {
            Some(d) => Some((d.value(), d.span())),
            None => self.doc.clone(),
        }
    }

    pub fn has_range(&self) -> bool {
        self.min.is_some() || self.max.is_some()
    }
}

/// The `#[serde(...)]` keys that change what serde accepts.
#[derive(Default)]
pub struct SerdeAttr {
    pub rename: Option<String>,
    pub rename_all: Option<(String, Span)>,
    pub tag: Option<String>,
    pub content: Option<String>,
    pub default: bool,
    /// `skip` / `skip_deserializing`: never read from input.
    pub skip_de: bool,
    /// `skip` / `skip_serializing`: never written to output.
    pub skip_ser: bool,
    /// `skip_serializing_if`: sometimes left out of output.
    pub skip_ser_if: bool,
    /// Keys this crate cannot mirror in a schema (`flatten`, `untagged`, ...).
    pub unsupported: Vec<(String, Span)>,
}

fn set_once<T>(cx: &mut Ctxt, slot: &mut Option<T>, value: T, meta: &ParseNestedMeta, key: &str) {
    if slot.is_some() {
        cx.error_spanned_by(&meta.path, format!("duplicate `{key}`"));
    } else {
        *slot = Some(value);
    }
}

fn key_of(meta: &ParseNestedMeta) -> String {
    meta.path
        .get_ident()
        .map(|i| i.to_string())
        .unwrap_or_else(|| {
            let path = &meta.path;
            quote::quote!(#path).to_string()
        })
}

/// Consumes the value of a key this parser does not interpret.
fn skip_value(meta: &ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse::<Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|m| skip_value(&m))?;
    }
    Ok(())
}

// #[tool(description = "...", not_for = "...", name = "...", crate = "path")]
pub fn parse_tool_attr(cx: &mut Ctxt, args: proc_macro2::TokenStream) -> ToolAttr {
    let mut attr = ToolAttr::default();
    let parser = syn::meta::parser(|meta| {
        let key = key_of(&meta);
        match key.as_str() {
            "description" => {
                let v: LitStr = meta.value()?.parse()?;
                set_once(cx, &mut attr.description, v, &meta, "description");
            }
            "not_for" => {
                let v: LitStr = meta.value()?.parse()?;
                set_once(cx, &mut attr.not_for, v, &meta, "not_for");
            }
            "name" => {
                let v: LitStr = meta.value()?.parse()?;
                set_once(cx, &mut attr.name, v, &meta, "name");
            }
            // #[tool(panic_to_model = true)]
            "panic_to_model" => {
                let v = flag(&meta)?;
                set_once(cx, &mut attr.panic_to_model, v, &meta, "panic_to_model");
            }
            // #[tool(allow_lint = "overlap: the two tools are alternatives on purpose")], repeatable
            "allow_lint" => attr.allow_lints.push(meta.value()?.parse()?),
            // #[tool(title = "Cek sisa cuti")]
            "title" => {
                let v: LitStr = meta.value()?.parse()?;
                set_once(cx, &mut attr.title, v, &meta, "title");
            }
            // #[tool(requires = "hr.leave.read")], repeatable
            "requires" => attr.requires.push(meta.value()?.parse()?),
            // #[tool(needs_approval)] or #[tool(needs_approval = false)]
            "needs_approval" => {
                let v = flag(&meta)?;
                set_once(cx, &mut attr.needs_approval, v, &meta, "needs_approval");
            }
            // #[tool(read_only)], #[tool(destructive)], #[tool(idempotent)], #[tool(open_world)]
            "read_only" => {
                let v = flag(&meta)?;
                set_once(cx, &mut attr.read_only, v, &meta, "read_only");
            }
            "destructive" => {
                let v = flag(&meta)?;
                set_once(cx, &mut attr.destructive, v, &meta, "destructive");
            }
            "idempotent" => {
                let v = flag(&meta)?;
                set_once(cx, &mut attr.idempotent, v, &meta, "idempotent");
            }
            "open_world" => {
                let v = flag(&meta)?;
                set_once(cx, &mut attr.open_world, v, &meta, "open_world");
            }
            // #[tool(to_model = ringkas_cuaca)]
            "to_model" => {
                let v: syn::Path = meta.value()?.parse()?;
                set_once(cx, &mut attr.to_model, v, &meta, "to_model");
            }
            // #[tool(redact = sensor_cuaca)]
            "redact" => {
                let v: syn::Path = meta.value()?.parse()?;
                set_once(cx, &mut attr.redact, v, &meta, "redact");
            }
            "crate" => {
                let v: LitStr = meta.value()?.parse()?;
                let path = v.parse::<syn::Path>()?;
                set_once(cx, &mut attr.krate, path, &meta, "crate");
            }
            other => {
                cx.error_spanned_by(
                    &meta.path,
                    format!(
                        "unknown tool attribute `{other}`; expected one of {}",
                        symbol::list(TOOL_KEYS)
                    ),
                );
                skip_value(&meta)?;
            }
        }
        Ok(())
    });
    if let Err(e) = syn::parse::Parser::parse2(parser, args) {
        cx.syn_error(e);
    }
    attr
}

/// Reads `#[arg(...)]` and doc comments from `attrs`.
pub fn parse_arg_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> ArgAttr {
    let mut arg = ArgAttr::default();
    let mut doc_lines = Vec::new();
    let mut doc_span = None;
    for attr in attrs {
        if attr.path().is_ident("doc") {
            if let syn::Meta::NameValue(nv) = &attr.meta
                && let Expr::Lit(ExprLit {
                    lit: Lit::Str(s), ..
                }) = &nv.value
            {
                doc_lines.push(s.value().trim().to_owned());
                doc_span.get_or_insert(attr.span());
            }
        } else if attr.path().is_ident("arg") {
            let result = attr.parse_nested_meta(|meta| parse_arg_key(cx, &mut arg, &meta));
            if let Err(e) = result {
                cx.syn_error(e);
            }
        }
    }
    let doc = doc_lines
        .into_iter()
        .skip_while(String::is_empty)
        .collect::<Vec<_>>()
        .join(" ")
        .trim()
        .to_owned();
    if let Some(span) = doc_span {
        arg.doc = Some((doc, span));
    }
    arg
}

fn parse_arg_key(cx: &mut Ctxt, arg: &mut ArgAttr, meta: &ParseNestedMeta) -> syn::Result<()> {
    let key = key_of(meta);
    match key.as_str() {
        // #[arg(description = "...")]
        "description" => {
            let v: LitStr = meta.value()?.parse()?;
            set_once(cx, &mut arg.description, v, meta, "description");
        }
        // #[arg(range = 1..=500)], also `1..501`, `0.0..1.0`, `1..`, `..=10`
        "range" => {
            let expr: Expr = meta.value()?.parse()?;
            if arg.has_range() {
                cx.error_spanned_by(
                    &meta.path,
                    "duplicate bounds: use either `range` or `min`/`max`",
                );
                return Ok(());
            }
            let Expr::Range(ExprRange {
                start, limits, end, ..
            }) = &expr
            else {
                cx.error_spanned_by(&expr, "`range` expects a range such as `1..=100`");
                return Ok(());
            };
            arg.min = start.as_deref().and_then(|e| num_lit(cx, e));
            arg.max = end.as_deref().and_then(|e| num_lit(cx, e));
            arg.exclusive_max = matches!(limits, RangeLimits::HalfOpen(_)) && end.is_some();
            arg.range_span = Some(expr.span());
            if start.is_none() && end.is_none() {
                cx.error_spanned_by(
                    &expr,
                    "`range = ..` bounds nothing: give a minimum, a maximum or both",
                );
            }
        }
        // #[arg(min = 1)]
        "min" => {
            let expr: Expr = meta.value()?.parse()?;
            if let Some(n) = num_lit(cx, &expr) {
                arg.range_span.get_or_insert(n.span);
                set_once(cx, &mut arg.min, n, meta, "min");
            }
        }
        // #[arg(max = 500)]
        "max" => {
            let expr: Expr = meta.value()?.parse()?;
            if let Some(n) = num_lit(cx, &expr) {
                arg.range_span.get_or_insert(n.span);
                set_once(cx, &mut arg.max, n, meta, "max");
            }
        }
        // #[arg(length = 1..=64)]
        "length" => {
            let expr: Expr = meta.value()?.parse()?;
            let Expr::Range(ExprRange {
                start, limits, end, ..
            }) = &expr
            else {
                cx.error_spanned_by(&expr, "`length` expects a range of counts such as `1..=64`");
                return Ok(());
            };
            let count = |cx: &mut Ctxt, e: &Expr| match num_lit(cx, e) {
                Some(NumLit { int: Some(i), .. }) if i >= 0 => Some(i as u64),
                _ => {
                    cx.error_spanned_by(e, "`length` bounds are counts: use non-negative integers");
                    None
                }
            };
            let lo = start.as_deref().and_then(|e| count(cx, e));
            let mut hi = end.as_deref().and_then(|e| count(cx, e));
            if matches!(limits, RangeLimits::HalfOpen(_)) {
                hi = hi.map(|h| h.saturating_sub(1));
            }
            set_once(cx, &mut arg.length, (lo, hi, expr.span()), meta, "length");
        }
        // #[arg(pattern = "^K-[0-9]{3}$")]
        "pattern" => {
            let v: LitStr = meta.value()?.parse()?;
            set_once(cx, &mut arg.pattern, v, meta, "pattern");
        }
        // #[arg(default = Wilayah::Semua)]
        "default" => {
            let v: Expr = meta.value()?.parse()?;
            set_once(cx, &mut arg.default, v, meta, "default");
        }
        // #[arg(example = 25)], repeatable
        "example" => {
            arg.examples.push(meta.value()?.parse()?);
        }
        // #[arg(unbounded = "any page number the API returns")]
        "unbounded" => {
            let v: LitStr = meta.value()?.parse()?;
            set_once(cx, &mut arg.unbounded, v, meta, "unbounded");
        }
        // #[arg(validate = aturan_paper)] on a derived type
        "validate" => {
            let v: syn::Path = meta.value()?.parse()?;
            set_once(cx, &mut arg.validate, v, meta, "validate");
        }
        other => {
            cx.error_spanned_by(
                &meta.path,
                format!(
                    "unknown argument attribute `{other}`; expected one of {}",
                    symbol::list(ARG_KEYS)
                ),
            );
            skip_value(meta)?;
        }
    }
    Ok(())
}

/// A numeric literal, optionally negated.
fn num_lit(cx: &mut Ctxt, e: &Expr) -> Option<NumLit> {
    let (neg, lit) = match e {
        Expr::Lit(ExprLit { lit, .. }) => (false, lit),
        Expr::Unary(ExprUnary {
            op: UnOp::Neg(_),
            expr,
            ..
        }) => match &**expr {
            Expr::Lit(ExprLit { lit, .. }) => (true, lit),
            _ => (false, &Lit::Bool(syn::LitBool::new(false, e.span()))),
        },
        Expr::Group(g) => return num_lit(cx, &g.expr),
        _ => (false, &Lit::Bool(syn::LitBool::new(false, e.span()))),
    };
    let sign = if neg { -1.0 } else { 1.0 };
    let parsed = match lit {
        Lit::Int(i) => i.base10_parse::<i128>().ok().map(|v| NumLit {
            value: sign * v as f64,
            int: Some(if neg { -v } else { v }),
            span: e.span(),
        }),
        Lit::Float(f) => f.base10_parse::<f64>().ok().map(|v| NumLit {
            value: sign * v,
            int: None,
            span: e.span(),
        }),
        _ => None,
    };
    if parsed.is_none() {
        cx.error_spanned_by(e, "expected a number literal such as `1`, `-5` or `0.5`");
    }
    parsed
}

/// Reads the `#[serde(...)]` keys that change the accepted shape.
pub fn parse_serde_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> SerdeAttr {
    let mut s = SerdeAttr::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let result = attr.parse_nested_meta(|meta| {
            let key = key_of(&meta);
            match key.as_str() {
                "rename" => s.rename = Some(de_string(&meta)?),
                "rename_all" => {
                    let span = meta.path.span();
                    s.rename_all = Some((de_string(&meta)?, span));
                }
                "tag" => s.tag = Some(meta.value()?.parse::<LitStr>()?.value()),
                "content" => s.content = Some(meta.value()?.parse::<LitStr>()?.value()),
                "default" => {
                    s.default = true;
                    skip_value(&meta)?;
                }
                "skip" => {
                    s.skip_de = true;
                    s.skip_ser = true;
                }
                "skip_deserializing" => s.skip_de = true,
                "skip_serializing" => s.skip_ser = true,
                "skip_serializing_if" => {
                    s.skip_ser_if = true;
                    skip_value(&meta)?;
                }
                "flatten" | "untagged" | "remote" | "from" | "try_from" | "deserialize_with"
                | "with" | "other" | "borrow" => {
                    s.unsupported.push((key.clone(), meta.path.span()));
                    skip_value(&meta)?;
                }
                _ => skip_value(&meta)?,
            }
            Ok(())
        });
        if let Err(e) = result {
            cx.syn_error(e);
        }
    }
    s
}

/// `rename = "x"` or `rename(deserialize = "x")`: the name serde reads.
fn de_string(meta: &ParseNestedMeta) -> syn::Result<String> {
    if meta.input.peek(syn::Token![=]) {
        return Ok(meta.value()?.parse::<LitStr>()?.value());
    }
    let mut out = None;
    meta.parse_nested_meta(|m| {
        let v: LitStr = m.value()?.parse()?;
        if m.path.is_ident("deserialize") {
            out = Some(v.value());
        }
        Ok(())
    })?;
    out.ok_or_else(|| meta.error("expected `deserialize = \"...\"`"))
}

/// Drops our inert attributes so the item compiles as the user wrote it.
pub fn strip_arg_attrs(attrs: &mut Vec<Attribute>) {
    attrs.retain(|a| !["arg", "doc", "ctx"].iter().any(|k| a.path().is_ident(k)));
}
