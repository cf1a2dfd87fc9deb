//! The rules a tool or argument must follow, one `check_*` each. Every rule reports on the
//! narrowest span and names the fix.

use proc_macro2::Span;
use syn::{Expr, ExprLit, Lit, LitStr};

use super::ast::{Arg, Body, Container, Tool, VariantShape};
use super::attr::{NumLit, ToolAttr};
use super::ctxt::Ctxt;
use super::serde::Tagging;
use super::symbol::{DESCRIPTION, MAX, MIN, RANGE, UNBOUNDED};
use super::types::{Shape, limits, number_inside, shape, type_span};

// Every rule of a tool: its description, flags, name, and each argument.
pub(crate) fn check_tool(cx: &mut Ctxt, tool: &Tool) {
    if let Some(n) = &tool.attr.max_result_chars
        && max_result_chars(n).is_none()
    {
        cx.error_spanned_by(
            n,
            format!(
                "`max_result_chars` is how many characters of a result the model receives: a whole number from 1 to 10_000_000 (about 4 characters a token); got {}",
                n.base10_digits()
            ),
        );
    }
    if let Some(t) = &tool.attr.timeout
        && timeout_ms(&t.value()).is_none()
    {
        cx.error_spanned_by(
            t,
            format!(
                "`timeout` is a duration such as \"500ms\", \"30s\" or \"2m\" (more than zero, at most a day); got {:?}",
                t.value()
            ),
        );
    }
    if let Some(b) = &tool.attr.blocking
        && tool.is_async
    {
        cx.error_spanned_by(
            b,
            "`blocking` is for a sync fn: an `async fn` always runs on the async workers and must not block; remove `blocking`",
        );
    }
    if let Some(t) = &tool.attr.task
        && task_support(&t.value()).is_none()
    {
        cx.error_spanned_by(
            t,
            format!(
                "`task` is \"optional\" (a call runs as a task when the caller can follow one) or \"required\" (only as a task); got {:?}",
                t.value()
            ),
        );
    }
    if let Some(first) = &tool.attr.ask_first
        && !tool.takes_answers()
    {
        cx.error_spanned_by(
            first,
            "`ask_first` asks the person before the tool runs, and the tool reads their answers from its context: add a parameter `#[ctx] answers: &Answers`",
        );
    }
    if (tool.attr.ask_first.is_some() || tool.takes_answers()) && tool.needs_approval() {
        let at = tool
            .attr
            .ask_first
            .as_ref()
            .map_or_else(|| tool.name_span(), syn::spanned::Spanned::span);
        cx.error_at(
            at,
            "a tool that asks the person questions (`#[ctx] &Answers`, `ask_first`) cannot need approval yet (`needs_approval`, or `destructive` without `needs_approval = false`): an approved call does not run again with the answers",
        );
    }
    check_tool_description(cx, &tool.attr);
    check_tool_flags(cx, &tool.attr);
    check_tool_name(cx, &tool.name, tool.name_span());
    for arg in &tool.args {
        check_arg(cx, arg, true);
    }
}

// Every rule of a derived type: its fields follow the argument rules, a newtype's value is
// bounded like an argument, a variant takes only a description.
pub(crate) fn check_container(cx: &mut Ctxt, c: &Container) {
    check_allow_lints(cx, &c.attr.allow_lints);
    match &c.body {
        Body::Struct(args) => args.iter().for_each(|a| check_arg(cx, a, false)),
        Body::Newtype(arg) => {
            check_bounds(cx, arg);
            check_values(cx, arg);
        }
        Body::Enum(variants) => {
            for v in variants {
                let va = &v.attr;
                if va.has_range()
                    || va.length.is_some()
                    || va.pattern.is_some()
                    || va.default.is_some()
                    || !va.examples.is_empty()
                    || va.unbounded.is_some()
                    || va.validate.is_some()
                {
                    cx.error_spanned_by(
                        v.ident,
                        "on an enum variant only `description` applies: put bounds on the variant's fields",
                    );
                }
                match &v.shape {
                    VariantShape::Fields(args) => args.iter().for_each(|a| check_arg(cx, a, false)),
                    VariantShape::Newtype(_) if matches!(c.tagging, Tagging::Internal { .. }) => {
                        cx.error_spanned_by(v.ident, "with `#[serde(tag = ..)]`, write this variant with named fields so its schema is one object");
                    }
                    VariantShape::Newtype(_) | VariantShape::Unit => {}
                }
            }
        }
        Body::Unsupported => {}
    }
}

// A tool is described (by `description`, or else its doc comment) and, if it says what it is
// not for, says something.
pub(crate) fn check_tool_description(cx: &mut Ctxt, attr: &ToolAttr) {
    match (&attr.description, &attr.doc) {
        // A misspelt `description` is reported where it is written.
        (None, None) if attr.misspelt.contains(&DESCRIPTION) => {}
        (None, None) => cx.error_at(
            Span::call_site(),
            "missing `description`: add #[tool(description = \"...\")] or a doc comment saying what the tool returns and when to use it",
        ),
        (Some(d), _) if d.value().trim().is_empty() => cx.error_spanned_by(
            d,
            "`description` is empty: say what the tool returns and when to use it",
        ),
        (None, Some((d, span))) if d.trim().is_empty() => cx.error_at(
            *span,
            "the doc comment that describes this tool is empty: say what the tool returns and when to use it",
        ),
        _ => {}
    }
    if let Some(n) = &attr.not_for
        && n.value().trim().is_empty()
    {
        cx.error_spanned_by(
                n,
                "`not_for` is empty: name what the tool must not be used for, and the sibling tool to use instead, or remove the key",
            );
    }
}

// Annotations do not contradict each other, and permissions and titles say something.
pub(crate) fn check_tool_flags(cx: &mut Ctxt, attr: &ToolAttr) {
    let on = |f: &Option<syn::LitBool>| f.as_ref().is_some_and(|b| b.value);
    if on(&attr.read_only) && on(&attr.destructive) {
        cx.error_spanned_by(
            &attr.destructive,
            "a tool cannot be both `read_only` and `destructive`: a read-only tool changes nothing; remove one",
        );
    }
    if on(&attr.read_only) && on(&attr.needs_approval) {
        cx.error_spanned_by(
            &attr.needs_approval,
            "a `read_only` tool changes nothing, so there is nothing to approve: remove `needs_approval` or `read_only`",
        );
    }
    for r in &attr.requires {
        let v = r.value();
        if v.trim().is_empty() || v.chars().any(char::is_whitespace) {
            cx.error_spanned_by(
                r,
                "`requires` names one permission, such as \"hr.leave.read\", with no spaces",
            );
        }
    }
    check_allow_lints(cx, &attr.allow_lints);
    if let Some(t) = &attr.title
        && t.value().trim().is_empty()
    {
        cx.error_spanned_by(
            t,
            "`title` is empty: give a short human-readable name, or remove the key",
        );
    }
}

/// `allow_lint = "id: reason"`: a lint silenced says why.
pub(crate) fn check_allow_lints(cx: &mut Ctxt, allows: &[LitStr]) {
    let mut seen = Vec::new();
    for a in allows {
        let v = a.value();
        match v.split_once(':') {
            Some((id, why)) if !id.trim().is_empty() && !why.trim().is_empty() => {
                let id = id.trim().to_owned();
                if seen.contains(&id) {
                    cx.error_spanned_by(a, format!("`allow_lint` for `{id}` is given twice"));
                }
                seen.push(id);
            }
            _ => cx.error_spanned_by(
                a,
                "`allow_lint` takes \"lint-id: the reason it does not apply here\"",
            ),
        }
    }
}

/// The pairs `(id, reason)` of `allow_lint` keys, for the generated code.
pub(crate) fn allow_lint_pairs(allows: &[LitStr]) -> Vec<(String, String)> {
    allows
        .iter()
        .filter_map(|l| {
            let v = l.value();
            let (id, why) = v.split_once(':')?;
            Some((id.trim().to_owned(), why.trim().to_owned()))
        })
        .collect()
}

// Tool names are what every provider and MCP accept: ^[A-Za-z_][A-Za-z0-9_-]{0,63}$.
pub(crate) fn check_tool_name(cx: &mut Ctxt, name: &str, span: Span) {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !first_ok || !rest_ok || name.len() > 64 {
        cx.error_at(
            span,
            format!(
                "tool name `{name}` is not accepted by every provider: use 1 to 64 letters, digits, `_` or `-`, starting with a letter or `_`"
            ),
        );
    }
}

// Every argument and field has a description (a doc comment counts).
pub(crate) fn check_description(cx: &mut Ctxt, arg: &Arg) {
    match arg.attr.description_text() {
        None if arg.attr.misspelt.contains(&DESCRIPTION) => {}
        None => cx.error_at(
            arg.span(),
            format!(
                "{} `{}` has no description: add #[arg(description = \"...\")] or a doc comment saying what it means and what to do when the user does not say",
                arg.what, arg.name
            ),
        ),
        Some((text, span)) if text.trim().is_empty() => cx.error_at(
            span,
            format!("{} `{}` has an empty description: say what it means", arg.what, arg.name),
        ),
        Some(_) => {}
    }
}

// A number the model fills in has bounds, or says why it has none; bounds fit the type, are
// not empty, and apply to numbers only.
// A date range bounds a date argument, with real days of the calendar, first not after last.
fn check_date_range(
    cx: &mut Ctxt,
    arg: &Arg,
    (first, last): &(Option<LitStr>, Option<LitStr>),
    shape: &Shape,
) {
    if matches!(
        shape,
        Shape::Number(_) | Shape::String | Shape::Bool | Shape::List
    ) {
        cx.error_spanned_by(
            &arg.attr.range_tokens,
            format!(
                "a range of dates applies to a date (`chrono::NaiveDate`), but {} `{}` is not one",
                arg.what, arg.name
            ),
        );
    }
    for day in [first, last].into_iter().flatten() {
        if !is_calendar_date(&day.value()) {
            cx.error_spanned_by(
                day,
                format!(
                    "`{}` is not a day of the calendar: write it YYYY-MM-DD, such as \"2024-02-29\"",
                    day.value()
                ),
            );
        }
    }
    if let (Some(first), Some(last)) = (first, last)
        && first.value() > last.value()
    {
        cx.error_spanned_by(
            &arg.attr.range_tokens,
            format!(
                "the range is empty: the first day {} is after the last day {}",
                first.value(),
                last.value()
            ),
        );
    }
}

/// `YYYY-MM-DD`, a day that exists (29 February only in leap years): the runtime's rule.
fn is_calendar_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num = |r: std::ops::Range<usize>| s.get(r).and_then(|t| t.parse::<u32>().ok());
    let digits = b
        .iter()
        .enumerate()
        .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    let (Some(y), Some(m), Some(d)) = (num(0..4), num(5..7), num(8..10)) else {
        return false;
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    digits && (1..=days).contains(&d)
}

pub(crate) fn check_bounds(cx: &mut Ctxt, arg: &Arg) {
    let a = &arg.attr;
    let num = number_inside(arg.ty);
    let shape = shape(arg.ty);
    if let Some(u) = &a.unbounded {
        if u.value().trim().is_empty() {
            cx.error_spanned_by(
                u,
                "`unbounded` needs a reason: say why no bound makes sense",
            );
        }
        if a.has_range() {
            cx.error_spanned_by(u, "`unbounded` contradicts `range`: keep one of them");
        }
        if matches!(shape, Shape::String | Shape::Bool) {
            cx.error_spanned_by(u, "`unbounded` applies to numbers only: remove it");
        }
    }
    if let Some(dates) = &a.dates {
        check_date_range(cx, arg, dates, &shape);
        return;
    }
    if let Some(n) = num {
        let misspelt_bound = [RANGE, MIN, MAX, UNBOUNDED]
            .iter()
            .any(|k| a.misspelt.contains(k));
        if !a.has_range() && a.unbounded.is_none() && !misspelt_bound {
            cx.error_at(
                type_span(arg.ty),
                format!(
                    "numeric {} `{}` has no bounds: add #[arg(range = 1..=100)] (or #[arg(unbounded = \"why\")])",
                    arg.what, arg.name
                ),
            );
        }
        if a.has_range() {
            check_range_fits(cx, a.min, a.max, n);
        }
    } else if a.has_range() && matches!(shape, Shape::String | Shape::Bool | Shape::List) {
        cx.error_spanned_by(
            &a.range_tokens,
            format!(
                "`range` applies to numbers, but {} `{}` is not a number: use `length = a..=b` for strings and lists",
                arg.what, arg.name
            ),
        );
    }
    if let (Some(lo), Some(hi)) = (a.min, a.max) {
        let empty = if a.exclusive_max {
            lo.value >= hi.value
        } else {
            lo.value > hi.value
        };
        if empty {
            cx.error_spanned_by(
                &a.range_tokens,
                format!(
                    "the range is empty: the minimum {} is not below the maximum {}",
                    lo.show(),
                    hi.show()
                ),
            );
        }
    }
    if let Some((lo, hi, span)) = a.length {
        if matches!(shape, Shape::Number(_) | Shape::Bool) {
            cx.error_at(
                span,
                format!(
                    "`length` applies to strings and lists, but {} `{}` is not one: bound a number with `range = a..=b`",
                    arg.what, arg.name
                ),
            );
        }
        if let (Some(lo), Some(hi)) = (lo, hi)
            && lo > hi
        {
            cx.error_at(
                span,
                format!("the length range is empty: {lo} is greater than {hi}"),
            );
        }
    }
    if let Some(p) = &a.pattern
        && matches!(shape, Shape::Number(_) | Shape::Bool | Shape::List)
    {
        cx.error_spanned_by(
            p,
            format!(
                "`pattern` applies to strings, but {} `{}` is not one",
                arg.what, arg.name
            ),
        );
    }
}

fn check_range_fits(cx: &mut Ctxt, min: Option<NumLit>, max: Option<NumLit>, num: &str) {
    let (lo, hi, integer) = limits(num);
    for (key, bound) in [("min", min), ("max", max)] {
        let Some(b) = bound else { continue };
        if integer && !b.is_int() {
            cx.error_at(
                b.span,
                format!(
                    "`{num}` is an integer type: use an integer bound, not `{}`",
                    b.show()
                ),
            );
        } else if b.value < lo || b.value > hi {
            cx.error_at(
                b.span,
                format!(
                    "`{key} = {}` is outside the range of `{num}` ({lo}..={hi})",
                    b.show()
                ),
            );
        }
    }
}

// A pattern is an ECMA-262 regular expression, as JSON Schema's `pattern` is, read with the `u`
// flag: `regress` checks it here, and the runtime matches by the same rules.
fn compiled_pattern(cx: &mut Ctxt, arg: &Arg) -> Option<regress::Regex> {
    let p = arg.attr.pattern.as_ref()?;
    match regress::Regex::with_flags(&p.value(), "u") {
        Ok(re) => Some(re),
        Err(e) => {
            cx.error_spanned_by(
                p,
                format!(
                    "the `pattern` of {} `{}` is not an ECMA-262 regular expression (JSON Schema's dialect, which providers and MCP clients use): {}",
                    arg.what,
                    arg.name,
                    e.text.to_lowercase()
                ),
            );
            None
        }
    }
}

// A default or example is a value the argument accepts: inside its range, its length and its
// pattern.
pub(crate) fn check_values(cx: &mut Ctxt, arg: &Arg) {
    let pattern = compiled_pattern(cx, arg);
    let a = &arg.attr;
    let values = a
        .default
        .iter()
        .map(|d| ("default", d))
        .chain(a.examples.iter().map(|e| ("example", e)));
    for (key, expr) in values {
        if let Some(v) = literal_number(expr) {
            let below = a.min.is_some_and(|m| v < m.value);
            let above = a.max.is_some_and(|m| {
                if a.exclusive_max {
                    v >= m.value
                } else {
                    v > m.value
                }
            });
            if below || above {
                cx.error_spanned_by(
                    expr,
                    format!(
                        "this {key} is outside the {}'s range {}",
                        arg.what,
                        range_text(a.min, a.max, a.exclusive_max)
                    ),
                );
            }
        }
        if let (Some(s), Some(re)) = (literal_string(expr), &pattern)
            && re.find(&s.value()).is_none()
        {
            cx.error_spanned_by(
                expr,
                format!(
                    "this {key} does not match the {}'s `pattern` `{}`",
                    arg.what,
                    a.pattern.as_ref().map(LitStr::value).unwrap_or_default()
                ),
            );
        }
        if let (Some(s), Some((lo, hi, _))) = (literal_string(expr), a.length) {
            let n = s.value().chars().count() as u64;
            if lo.is_some_and(|l| n < l) || hi.is_some_and(|h| n > h) {
                cx.error_spanned_by(
                    expr,
                    format!(
                        "this {key} has {n} characters, outside the {}'s `length`",
                        arg.what
                    ),
                );
            }
        }
    }
}

fn range_text(min: Option<NumLit>, max: Option<NumLit>, exclusive: bool) -> String {
    let lo = min.map(|m| m.show()).unwrap_or_default();
    let hi = max.map(|m| m.show()).unwrap_or_default();
    format!("{lo}{}{hi}", if exclusive { ".." } else { "..=" })
}

fn literal_number(e: &Expr) -> Option<f64> {
    match e {
        Expr::Lit(ExprLit {
            lit: Lit::Int(i), ..
        }) => i.base10_parse::<f64>().ok(),
        Expr::Lit(ExprLit {
            lit: Lit::Float(f), ..
        }) => f.base10_parse::<f64>().ok(),
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => literal_number(&u.expr).map(|v| -v),
        Expr::Group(g) => literal_number(&g.expr),
        _ => None,
    }
}

/// A string literal default, also as `"x".to_string()`, `"x".to_owned()`, `"x".into()` or
/// `String::from("x")`: calls that keep the text as it is. Any other call (`"abc".to_uppercase()`)
/// is checked when the tool is built, on the value it gives.
fn literal_string(e: &Expr) -> Option<LitStr> {
    match e {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Some(s.clone()),
        Expr::MethodCall(m)
            if m.args.is_empty()
                && ["to_string", "to_owned", "into"]
                    .iter()
                    .any(|keeps| m.method == keeps) =>
        {
            literal_string(&m.receiver)
        }
        Expr::Call(c)
            if c.args.len() == 1
                && matches!(&*c.func, Expr::Path(p)
                    if p.path.segments.last().is_some_and(|s| s.ident == "from")) =>
        {
            literal_string(&c.args[0])
        }
        Expr::Group(g) => literal_string(&g.expr),
        _ => None,
    }
}

// The checks every argument and field goes through. A tool's parameter may have rules of its
// own (`validate`); a field's rules are its type's.
pub(crate) fn check_arg(cx: &mut Ctxt, arg: &Arg, parameter: bool) {
    if let Some(v) = &arg.attr.validate
        && !parameter
    {
        cx.error_spanned_by(
            v,
            "`validate` on a field: put the rules on the whole #[derive(ToolArg)] type (struct or enum), which sees every field",
        );
    }
    check_description(cx, arg);
    check_bounds(cx, arg);
    check_values(cx, arg);
}

/// `"500ms"`, `"30s"`, `"2m"` in milliseconds: more than zero, at most a day.
/// The `TaskSupport` variant a `task = ".."` value names.
pub(crate) fn task_support(text: &str) -> Option<&'static str> {
    match text {
        "forbidden" => Some("Forbidden"),
        "optional" => Some("Optional"),
        "required" => Some("Required"),
        _ => None,
    }
}

/// The bound `max_result_chars = n` gives, when it is one (1 to ten million characters).
pub(crate) fn max_result_chars(n: &syn::LitInt) -> Option<u32> {
    let n: u32 = n.base10_parse().ok()?;
    (1..=10_000_000).contains(&n).then_some(n)
}

pub(crate) fn timeout_ms(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, unit) = text.split_at(text.find(|c: char| !c.is_ascii_digit())?);
    let n: u64 = digits.parse().ok()?;
    let ms = match unit {
        "ms" => n,
        "s" => n.checked_mul(1_000)?,
        "m" => n.checked_mul(60_000)?,
        "h" => n.checked_mul(3_600_000)?,
        _ => return None,
    };
    (1..=86_400_000).contains(&ms).then_some(ms)
}
