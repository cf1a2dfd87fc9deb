//! What a Rust type is, as far as the schema is concerned: an `Option`, a number of which
//! kind and limits, a string, a collection; read from the type as written.

use proc_macro2::{Ident, Span};
use syn::spanned::Spanned;
use syn::{GenericArgument, PathArguments, Type};

/// The last path segment of `ty` and its single generic type argument, if any.
pub(crate) fn single_generic<'t>(ty: &'t Type, names: &[&str]) -> Option<&'t Type> {
    let Type::Path(p) = ty else { return None };
    if p.qself.is_some() {
        return None;
    }
    let seg = p.path.segments.last()?;
    if !names.iter().any(|n| seg.ident == n) {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &seg.arguments else {
        return None;
    };
    match args.args.first() {
        Some(GenericArgument::Type(t)) if args.args.len() == 1 => Some(t),
        _ => None,
    }
}

pub(crate) fn is_option(ty: &Type) -> bool {
    single_generic(ty, &["Option"]).is_some()
}

pub(crate) fn ident_of(ty: &Type) -> Option<String> {
    match ty {
        Type::Path(p) if p.qself.is_none() => {
            let seg = p.path.segments.last()?;
            matches!(seg.arguments, PathArguments::None).then(|| seg.ident.to_string())
        }
        Type::Group(g) => ident_of(&g.elem),
        Type::Paren(p) => ident_of(&p.elem),
        _ => None,
    }
}

/// What the macro can see of a type without resolving it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Shape {
    /// A primitive number, by name.
    Number(&'static str),
    String,
    Bool,
    List,
    /// Anything else: an alias, a derived type, a type from another crate.
    Unknown,
}

pub(crate) const NUMBERS: &[&str] = &[
    "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize", "f32",
    "f64",
];

/// The shape of `ty` once `Option` and `Box` are looked through.
pub(crate) fn shape(ty: &Type) -> Shape {
    if let Some(inner) = single_generic(ty, &["Option", "Box"]) {
        return shape(inner);
    }
    if single_generic(ty, &["Vec"]).is_some() {
        return Shape::List;
    }
    match ident_of(ty).as_deref() {
        Some(n) => match NUMBERS.iter().find(|x| **x == n) {
            Some(num) => Shape::Number(num),
            None if n == "String" => Shape::String,
            None if n == "bool" => Shape::Bool,
            None => Shape::Unknown,
        },
        None => match ty {
            Type::Reference(r) if ident_of(&r.elem).as_deref() == Some("str") => Shape::String,
            _ => Shape::Unknown,
        },
    }
}

/// The primitive number inside `ty`, looking through `Option`, `Box` and `Vec` (a `Vec<u32>` is
/// a list of unbounded numbers unless `range` bounds its items).
pub(crate) fn number_inside(ty: &Type) -> Option<&'static str> {
    if let Some(inner) = single_generic(ty, &["Option", "Box", "Vec"]) {
        return number_inside(inner);
    }
    match shape(ty) {
        Shape::Number(n) => Some(n),
        _ => None,
    }
}

/// `(min, max, integer)` of a primitive number type.
pub(crate) fn limits(num: &str) -> (f64, f64, bool) {
    match num {
        "i8" => (i8::MIN as f64, i8::MAX as f64, true),
        "i16" => (i16::MIN as f64, i16::MAX as f64, true),
        "i32" => (i32::MIN as f64, i32::MAX as f64, true),
        "i64" | "isize" => (i64::MIN as f64, i64::MAX as f64, true),
        "i128" => (i128::MIN as f64, i128::MAX as f64, true),
        "u8" => (0.0, u8::MAX as f64, true),
        "u16" => (0.0, u16::MAX as f64, true),
        "u32" => (0.0, u32::MAX as f64, true),
        "u64" | "usize" => (0.0, u64::MAX as f64, true),
        "u128" => (0.0, u128::MAX as f64, true),
        "f32" => (f32::MIN as f64, f32::MAX as f64, false),
        _ => (f64::MIN, f64::MAX, false),
    }
}

/// The span to blame for a type: the type itself.
pub(crate) fn type_span(ty: &Type) -> Span {
    ty.span()
}

/// A tool or field name as serde reads it: `r#type` is `type`.
pub(crate) fn unraw(ident: &Ident) -> String {
    let s = ident.to_string();
    s.strip_prefix("r#").map(str::to_owned).unwrap_or(s)
}
