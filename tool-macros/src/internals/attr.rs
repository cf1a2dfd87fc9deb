//! Parses `#[tool(...)]`, `#[tools(...)]`, `#[arg(...)]` and doc comments into plain structs
//! (`#[serde(...)]` is read by serde's own parser, in `ast`). Errors are recorded and parsing
//! goes on, so one build reports every mistake of an item.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, ExprRange, ExprUnary, Lit, LitStr, RangeLimits, UnOp};

use super::ctxt::Ctxt;
use super::symbol::*;

/// `#[tool(...)]`, plus the function's doc comment.
#[derive(Default)]
pub(crate) struct ToolAttr {
    pub description: Option<LitStr>,
    /// The function's doc comment: the description when `description` is not given.
    pub doc: Option<(String, Span)>,
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
    /// `ask_first = questions`: a `fn() -> Vec<Question>` the person answers before the tool runs.
    pub ask_first: Option<syn::Path>,
    pub redact: Option<syn::Path>,
    pub allow_lints: Vec<LitStr>,
    /// `timeout = "30s"`: how long one call may run.
    pub timeout: Option<LitStr>,
    /// `blocking = false`: a sync function that never blocks runs on the async worker.
    pub blocking: Option<syn::LitBool>,
    /// `task = "optional"` or `"required"`: a call may (or must) run as a task.
    pub task: Option<LitStr>,
    /// `max_result_chars = 20_000`: how many characters of a result the model receives.
    pub max_result_chars: Option<syn::LitInt>,
    pub krate: Option<syn::Path>,
    /// Keys an unknown key was a likely misspelling of: already reported, so their absence is
    /// not reported again.
    pub misspelt: Vec<&'static str>,
}

impl ToolAttr {
    /// The description the model reads: `description = ..` wins over the doc comment.
    pub(crate) fn description_text(&self) -> Option<(String, Span)> {
        match &self.description {
            Some(d) => Some((d.value(), d.span())),
            None => self.doc.clone(),
        }
    }
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
pub(crate) struct NumLit {
    pub value: f64,
    pub int: Option<i128>,
    pub span: Span,
}

impl NumLit {
    pub(crate) fn is_int(&self) -> bool {
        self.int.is_some()
    }

    pub(crate) fn show(&self) -> String {
        match self.int {
            Some(i) => i.to_string(),
            None => format!("{:?}", self.value),
        }
    }
}

/// `#[arg(...)]` on a parameter, field, variant or derived type, plus its doc comment.
#[derive(Default)]
pub(crate) struct ArgAttr {
    pub description: Option<LitStr>,
    pub doc: Option<(String, Span)>,
    pub min: Option<NumLit>,
    pub max: Option<NumLit>,
    pub exclusive_max: bool,
    /// The whole `range = ..`, `min = ..` or `max = ..`, for errors about the bounds.
    pub range_tokens: Option<TokenStream>,
    /// `range = "2024-01-01"..="2030-12-31"`: the first and last day of a date argument.
    pub dates: Option<(Option<LitStr>, Option<LitStr>)>,
    pub length: Option<(Option<u64>, Option<u64>, Span)>,
    pub pattern: Option<LitStr>,
    pub default: Option<Expr>,
    pub examples: Vec<Expr>,
    pub unbounded: Option<LitStr>,
    /// `validate = path`: business rules of a whole derived type.
    pub validate: Option<syn::Path>,
    /// `crate = "path"` on a derived type: where `tool_runtime` is.
    pub krate: Option<syn::Path>,
    /// `allow_lint = "id: reason"` on a derived type, repeatable.
    pub allow_lints: Vec<LitStr>,
    /// Keys an unknown key was a likely misspelling of (see [`ToolAttr::misspelt`]).
    pub misspelt: Vec<&'static str>,
}

impl ArgAttr {
    /// The description the model reads: `description = ..` wins over the doc comment.
    pub(crate) fn description_text(&self) -> Option<(String, Span)> {
        match &self.description {
            Some(d) => Some((d.value(), d.span())),
            None => self.doc.clone(),
        }
    }

    pub(crate) fn has_range(&self) -> bool {
        self.min.is_some() || self.max.is_some() || self.dates.is_some()
    }

    /// Where the first bound's value starts (after `range =`, `min =` or `max =`).
    pub(crate) fn bound_span(&self) -> Option<Span> {
        let tokens = self.range_tokens.clone()?;
        tokens.into_iter().nth(2).map(|t| t.span())
    }
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
            quote!(#path).to_string()
        })
}

/// Consumes the value of a key this parser does not interpret.
pub(crate) fn skip_value(meta: &ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse::<Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|m| skip_value(&m))?;
    }
    Ok(())
}

/// Reports an unknown key, with the known key it most likely misspells, and returns that key.
fn unknown(
    cx: &mut Ctxt,
    meta: &ParseNestedMeta,
    what: &str,
    key: &str,
    keys: &[&'static str],
) -> syn::Result<Option<&'static str>> {
    let closest = closest(key, keys);
    let message = match closest {
        Some(k) => format!(
            "unknown {what} `{key}`: did you mean `{k}`? (the keys are {})",
            list(keys)
        ),
        None => format!("unknown {what} `{key}`; expected one of {}", list(keys)),
    };
    cx.error_spanned_by(&meta.path, message);
    skip_value(meta)?;
    Ok(closest)
}

/// The known key closest to `key`, when close enough to be a misspelling (the run time's
/// did-you-mean uses the same measure).
fn closest(key: &str, keys: &[&'static str]) -> Option<&'static str> {
    keys.iter()
        .map(|k| (strsim::jaro_winkler(k, key), *k))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k)
}

/// `crate = "path"`.
fn crate_path(meta: &ParseNestedMeta) -> syn::Result<syn::Path> {
    meta.value()?.parse::<LitStr>()?.parse::<syn::Path>()
}

/// `#[tool(description = "...", not_for = "...", name = "...", ...)]`
pub(crate) fn parse_tool_attr(cx: &mut Ctxt, args: TokenStream) -> ToolAttr {
    let mut attr = ToolAttr::default();
    let parser = syn::meta::parser(|meta| {
        let key = key_of(&meta);
        match key.as_str() {
            DESCRIPTION => {
                let v: LitStr = meta.value()?.parse()?;
                set_once(cx, &mut attr.description, v, &meta, DESCRIPTION);
            }
            NOT_FOR => {
                let v: LitStr = meta.value()?.parse()?;
                set_once(cx, &mut attr.not_for, v, &meta, NOT_FOR);
            }
            NAME => {
                let v: LitStr = meta.value()?.parse()?;
                set_once(cx, &mut attr.name, v, &meta, NAME);
            }
            PANIC_TO_MODEL => {
                let v = flag(&meta)?;
                set_once(cx, &mut attr.panic_to_model, v, &meta, PANIC_TO_MODEL);
            }
            // allow_lint = "overlap: the two tools are alternatives on purpose", repeatable
            ALLOW_LINT => attr.allow_lints.push(meta.value()?.parse()?),
            TITLE => {
                let v: LitStr = meta.value()?.parse()?;
                set_once(cx, &mut attr.title, v, &meta, TITLE);
            }
            // requires = "hr.leave.read", repeatable
            REQUIRES => attr.requires.push(meta.value()?.parse()?),
            NEEDS_APPROVAL => {
                let v = flag(&meta)?;
                set_once(cx, &mut attr.needs_approval, v, &meta, NEEDS_APPROVAL);
            }
            READ_ONLY => {
                let v = flag(&meta)?;
                set_once(cx, &mut attr.read_only, v, &meta, READ_ONLY);
            }
            DESTRUCTIVE => {
                let v = flag(&meta)?;
                set_once(cx, &mut attr.destructive, v, &meta, DESTRUCTIVE);
            }
            IDEMPOTENT => {
                let v = flag(&meta)?;
                set_once(cx, &mut attr.idempotent, v, &meta, IDEMPOTENT);
            }
            OPEN_WORLD => {
                let v = flag(&meta)?;
                set_once(cx, &mut attr.open_world, v, &meta, OPEN_WORLD);
            }
            TO_MODEL => {
                let v: syn::Path = meta.value()?.parse()?;
                set_once(cx, &mut attr.to_model, v, &meta, TO_MODEL);
            }
            REDACT => {
                let v: syn::Path = meta.value()?.parse()?;
                set_once(cx, &mut attr.redact, v, &meta, REDACT);
            }
            TIMEOUT => {
                let v: LitStr = meta.value()?.parse()?;
                set_once(cx, &mut attr.timeout, v, &meta, TIMEOUT);
            }
            BLOCKING => {
                let v = flag(&meta)?;
                set_once(cx, &mut attr.blocking, v, &meta, BLOCKING);
            }
            TASK => {
                let v: LitStr = meta.value()?.parse()?;
                set_once(cx, &mut attr.task, v, &meta, TASK);
            }
            ASK_FIRST => {
                let v: syn::Path = meta.value()?.parse()?;
                set_once(cx, &mut attr.ask_first, v, &meta, ASK_FIRST);
            }
            MAX_RESULT_CHARS => {
                let v = match meta.value()?.parse::<syn::Lit>()? {
                    syn::Lit::Int(n) => n,
                    other => {
                        return Err(syn::Error::new_spanned(
                            other,
                            "`max_result_chars` is a whole number of characters, such as `max_result_chars = 20_000`",
                        ));
                    }
                };
                set_once(cx, &mut attr.max_result_chars, v, &meta, MAX_RESULT_CHARS);
            }
            CRATE => {
                let path = crate_path(&meta)?;
                set_once(cx, &mut attr.krate, path, &meta, CRATE);
            }
            other => {
                if let Some(k) = unknown(cx, &meta, "tool attribute", other, TOOL_KEYS)? {
                    attr.misspelt.push(k);
                }
            }
        }
        Ok(())
    });
    if let Err(e) = syn::parse::Parser::parse2(parser, args) {
        cx.syn_error(e);
    }
    attr
}

/// `#[tools(crate = "path")]` on an impl block.
pub(crate) fn parse_group_attr(cx: &mut Ctxt, args: TokenStream) -> Option<syn::Path> {
    let mut krate = None;
    let parser = syn::meta::parser(|meta| {
        let key = key_of(&meta);
        match key.as_str() {
            CRATE => {
                let path = crate_path(&meta)?;
                set_once(cx, &mut krate, path, &meta, CRATE);
            }
            other => {
                cx.error_spanned_by(
                    &meta.path,
                    format!(
                        "unknown #[tools] attribute `{other}`: the group takes {}; the keys of one tool go on its #[tool(...)]",
                        list(GROUP_KEYS)
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
    krate
}

/// A doc comment as one line of text, and where it is.
pub(crate) fn doc_comment(attrs: &[Attribute]) -> Option<(String, Span)> {
    let mut lines = Vec::new();
    let mut span = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident(DOC)) {
        if let syn::Meta::NameValue(nv) = &attr.meta
            && let Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) = &nv.value
        {
            lines.push(s.value().trim().to_owned());
            span.get_or_insert(attr.span());
        }
    }
    // Paragraphs run together: a description is one piece of text for the model.
    let text = lines
        .into_iter()
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    span.map(|span| (text, span))
}

/// Which `#[arg(...)]` keys a position takes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum ArgPosition {
    /// A tool parameter or a field.
    Value,
    /// A `#[derive(ToolArg)]` type itself.
    Container,
}

/// Reads `#[arg(...)]` and doc comments from `attrs`.
pub(crate) fn parse_arg_attrs(
    cx: &mut Ctxt,
    attrs: &[Attribute],
    position: ArgPosition,
) -> ArgAttr {
    let mut arg = ArgAttr {
        doc: doc_comment(attrs),
        ..ArgAttr::default()
    };
    for attr in attrs.iter().filter(|a| a.path().is_ident(ARG)) {
        let result = attr.parse_nested_meta(|meta| parse_arg_key(cx, &mut arg, &meta, position));
        if let Err(e) = result {
            cx.syn_error(e);
        }
    }
    arg
}

fn parse_arg_key(
    cx: &mut Ctxt,
    arg: &mut ArgAttr,
    meta: &ParseNestedMeta,
    position: ArgPosition,
) -> syn::Result<()> {
    let key = key_of(meta);
    let keys = match position {
        ArgPosition::Value => ARG_KEYS,
        ArgPosition::Container => CONTAINER_KEYS,
    };
    if !keys.contains(&key.as_str()) {
        let what = match position {
            ArgPosition::Value => "argument attribute",
            ArgPosition::Container => "attribute of a #[derive(ToolArg)] type",
        };
        if let Some(k) = unknown(cx, meta, what, &key, keys)? {
            arg.misspelt.push(k);
        }
        return Ok(());
    }
    match key.as_str() {
        DESCRIPTION => {
            let v: LitStr = meta.value()?.parse()?;
            set_once(cx, &mut arg.description, v, meta, DESCRIPTION);
        }
        // range = 1..=500, also `1..501`, `0.0..1.0`, `1..`, `..=10`
        RANGE => {
            let expr: Expr = meta.value()?.parse()?;
            let path = &meta.path;
            let whole = quote!(#path = #expr);
            if arg.has_range() {
                cx.error_spanned_by(whole, "duplicate bounds: use either `range` or `min`/`max`");
                return Ok(());
            }
            let Expr::Range(ExprRange {
                start, limits, end, ..
            }) = &expr
            else {
                cx.error_spanned_by(&expr, "`range` expects a range such as `1..=100`");
                return Ok(());
            };
            let date = |e: &Option<Box<Expr>>| match e.as_deref() {
                Some(Expr::Lit(ExprLit {
                    lit: Lit::Str(s), ..
                })) => Some(s.clone()),
                _ => None,
            };
            if date(start).is_some() || date(end).is_some() {
                // `"2024-01-01"..="2030-12-31"`: a date range, both ends written as dates.
                let numbers = [start, end]
                    .iter()
                    .any(|e| e.is_some() && date(e).is_none());
                if numbers || matches!(limits, RangeLimits::HalfOpen(_)) && end.is_some() {
                    cx.error_spanned_by(
                        &whole,
                        "a date range gives its first and last day as dates: `range = \"2024-01-01\"..=\"2030-12-31\"`",
                    );
                }
                arg.dates = Some((date(start), date(end)));
                arg.range_tokens = Some(whole);
                return Ok(());
            }
            arg.min = start.as_deref().and_then(|e| num_lit(cx, e));
            arg.max = end.as_deref().and_then(|e| num_lit(cx, e));
            arg.exclusive_max = matches!(limits, RangeLimits::HalfOpen(_)) && end.is_some();
            if start.is_none() && end.is_none() {
                cx.error_spanned_by(
                    &whole,
                    "`range = ..` bounds nothing: give a minimum, a maximum or both",
                );
            }
            arg.range_tokens = Some(whole);
        }
        MIN | MAX => {
            let expr: Expr = meta.value()?.parse()?;
            let path = &meta.path;
            let whole = quote!(#path = #expr);
            if let Some(n) = num_lit(cx, &expr) {
                let slot = if key == MIN {
                    &mut arg.min
                } else {
                    &mut arg.max
                };
                set_once(cx, slot, n, meta, &key);
                match &mut arg.range_tokens {
                    Some(tokens) => tokens.extend(whole),
                    None => arg.range_tokens = Some(whole),
                }
            }
        }
        // length = 1..=64
        LENGTH => {
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
            set_once(cx, &mut arg.length, (lo, hi, expr.span()), meta, LENGTH);
        }
        // pattern = "^K-[0-9]{3}$"
        PATTERN => {
            let v: LitStr = meta.value()?.parse()?;
            set_once(cx, &mut arg.pattern, v, meta, PATTERN);
        }
        // default = Wilayah::Semua
        DEFAULT => {
            let v: Expr = meta.value()?.parse()?;
            set_once(cx, &mut arg.default, v, meta, DEFAULT);
        }
        // example = 25, repeatable
        EXAMPLE => arg.examples.push(meta.value()?.parse()?),
        // unbounded = "any page number the API returns"
        UNBOUNDED => {
            let v: LitStr = meta.value()?.parse()?;
            set_once(cx, &mut arg.unbounded, v, meta, UNBOUNDED);
        }
        // validate = aturan_paper, on a derived type
        VALIDATE => {
            let v: syn::Path = meta.value()?.parse()?;
            set_once(cx, &mut arg.validate, v, meta, VALIDATE);
        }
        CRATE => {
            let path = crate_path(meta)?;
            set_once(cx, &mut arg.krate, path, meta, CRATE);
        }
        // allow_lint = "decision-before-reason: the order is the reading order", repeatable
        ALLOW_LINT => arg.allow_lints.push(meta.value()?.parse()?),
        other => unreachable!("`{other}` is in the key list but has no parser"),
    }
    Ok(())
}

/// A numeric literal, optionally negated.
fn num_lit(cx: &mut Ctxt, e: &Expr) -> Option<NumLit> {
    let (neg, lit) = match e {
        Expr::Lit(ExprLit { lit, .. }) => (false, Some(lit)),
        Expr::Unary(ExprUnary {
            op: UnOp::Neg(_),
            expr,
            ..
        }) => match &**expr {
            Expr::Lit(ExprLit { lit, .. }) => (true, Some(lit)),
            _ => (false, None),
        },
        Expr::Group(g) => return num_lit(cx, &g.expr),
        _ => (false, None),
    };
    let sign = if neg { -1.0 } else { 1.0 };
    let parsed = match lit {
        Some(Lit::Int(i)) => i.base10_parse::<i128>().ok().map(|v| NumLit {
            value: sign * v as f64,
            int: Some(if neg { -v } else { v }),
            span: e.span(),
        }),
        Some(Lit::Float(f)) => f.base10_parse::<f64>().ok().map(|v| NumLit {
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

/// Drops the inert attributes this crate reads, so the item compiles as the user wrote it.
pub(crate) fn strip_inert_attrs(attrs: &mut Vec<Attribute>) {
    attrs.retain(|a| ![ARG, DOC, CTX].iter().any(|k| a.path().is_ident(k)));
}
