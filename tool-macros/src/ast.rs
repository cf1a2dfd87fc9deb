//! The model the checks and the code generation work on, built once: a tool from a function
//! signature ([`Tool::from_signature`]), an argument from a parameter or a field
//! ([`Arg::param`], [`Arg::field`], [`Arg::newtype`]), a derived type from its definition
//! ([`Container::from_derive`]).

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{FnArg, GenericArgument, Ident, Pat, PathArguments, ReturnType, Signature, Type};

use crate::attr::{self, ArgAttr, ArgPosition, SerdeAttr, ToolAttr};
use crate::ctxt::Ctxt;
use crate::symbol::{ARG, CTX};

/// Tools with more arguments than this should group them in a `#[derive(ToolArg)]` struct.
const MAX_ARGS: usize = 12;

/// One `#[tool]` function or method.
pub struct Tool<'a> {
    pub attr: ToolAttr,
    /// The name the model calls it by.
    pub name: String,
    pub ident: &'a Ident,
    pub is_async: bool,
    pub args: Vec<Arg<'a>>,
    /// `#[ctx] name: &T` parameters: supplied by the host from the call's Context.
    pub ctx: Vec<(&'a Ident, &'a Type)>,
    /// Every parameter in declaration order, for the call.
    pub params: Vec<&'a Ident>,
    pub output: Output,
}

/// What a tool function returns.
pub enum Output {
    Plain(Type),
    /// `Result<T, E>`: `T`, with `E` shown as a tool failure.
    Result(Type),
    Unit,
}

impl Output {
    pub fn ty(&self) -> Option<&Type> {
        match self {
            Output::Plain(t) | Output::Result(t) => Some(t),
            Output::Unit => None,
        }
    }
}

impl<'a> Tool<'a> {
    pub fn from_signature(
        cx: &mut Ctxt,
        attr: ToolAttr,
        sig: &'a Signature,
        in_group: bool,
    ) -> Tool<'a> {
        let name = match &attr.name {
            Some(n) => n.value(),
            None => unraw(&sig.ident),
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
            let pt = match input {
                FnArg::Receiver(r) => {
                    if !in_group {
                        cx.error_spanned_by(r, "a tool method needs #[tools] on its impl block, so the tool can find `self` in the call's Context");
                    } else if !matches!(r.kind, syn::ReceiverKind::Reference(_, _, None)) {
                        cx.error_spanned_by(
                            r,
                            "a tool method takes `&self`: the host shares one value between calls",
                        );
                    }
                    continue;
                }
                FnArg::Typed(pt) => pt,
            };
            let Pat::Ident(pi) = &*pt.pat else {
                cx.error_spanned_by(
                    &pt.pat,
                    "a tool argument needs a plain name: the name is what the model fills in",
                );
                continue;
            };
            params.push(&pi.ident);
            if let Some(ctx_attr) = pt.attrs.iter().find(|a| a.path().is_ident(CTX)) {
                // #[ctx] session: &Session
                if pt.attrs.iter().any(|a| a.path().is_ident(ARG)) {
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
            args.push(Arg::param(cx, &pi.ident, &pt.ty, &pt.attrs));
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
        Tool {
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

    /// The span of the name: the `name = ".."` literal, or the function's identifier.
    pub fn name_span(&self) -> Span {
        self.attr
            .name
            .as_ref()
            .map_or_else(|| self.ident.span(), |n| n.span())
    }

    /// The description as written (`description = ..`, or else the doc comment), trimmed.
    pub fn description(&self) -> String {
        self.attr
            .description_text()
            .map(|(d, _)| d.trim().to_owned())
            .unwrap_or_default()
    }

    /// Whether each call waits for a person: `needs_approval` when given, otherwise whether
    /// the tool is `destructive`.
    pub fn needs_approval(&self) -> bool {
        let a = &self.attr;
        match &a.needs_approval {
            Some(b) => b.value,
            None => a.destructive.as_ref().is_some_and(|b| b.value),
        }
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

/// One argument of a tool, or one field of a derived struct or struct variant.
pub struct Arg<'a> {
    /// `argument` or `field`, for messages.
    pub what: &'static str,
    pub ident: &'a Ident,
    /// The JSON name serde reads.
    pub name: String,
    pub ty: &'a Type,
    pub attr: ArgAttr,
    /// serde fills it when absent (`#[serde(default)]`), so it is not required.
    pub serde_default: bool,
    /// serde never reads it (`skip_deserializing`): not in the input schema.
    pub skip_de: bool,
    /// How serde writes it: always, sometimes (`skip_serializing_if`) or never.
    pub output: Presence,
}

/// Whether a field is in a schema, and if so whether it is required.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Presence {
    Required,
    Optional,
    Absent,
}

impl<'a> Arg<'a> {
    /// A tool parameter: `name: Type`, with its `#[arg(...)]` and doc comment.
    pub fn param(
        cx: &mut Ctxt,
        ident: &'a Ident,
        ty: &'a Type,
        attrs: &[syn::Attribute],
    ) -> Arg<'a> {
        Arg::new(
            cx,
            "argument",
            ident,
            unraw(ident),
            ty,
            attrs,
            &SerdeAttr::default(),
        )
    }

    /// A named field as serde reads and writes it; `None` when serde skips it both ways.
    pub fn field(cx: &mut Ctxt, f: &'a syn::Field, rename_all: Option<&str>) -> Option<Arg<'a>> {
        let ident = f.ident.as_ref()?;
        let serde = attr::parse_serde_attrs(cx, &f.attrs);
        reject_unsupported(cx, &serde);
        if serde.skip_de && serde.skip_ser {
            return None;
        }
        let name = serde
            .rename
            .clone()
            .unwrap_or_else(|| rename_field(&unraw(ident), rename_all));
        Some(Arg::new(cx, "field", ident, name, &f.ty, &f.attrs, &serde))
    }

    /// The single field of a newtype, named after the type (serde reads the inner value).
    pub fn newtype(cx: &mut Ctxt, ty_ident: &'a Ident, f: &'a syn::Field) -> Arg<'a> {
        let name = unraw(ty_ident);
        Arg::new(
            cx,
            "field",
            ty_ident,
            name,
            &f.ty,
            &f.attrs,
            &SerdeAttr::default(),
        )
    }

    fn new(
        cx: &mut Ctxt,
        what: &'static str,
        ident: &'a Ident,
        name: String,
        ty: &'a Type,
        attrs: &[syn::Attribute],
        serde: &SerdeAttr,
    ) -> Arg<'a> {
        Arg {
            what,
            ident,
            name,
            ty,
            attr: attr::parse_arg_attrs(cx, attrs, ArgPosition::Value),
            serde_default: serde.default,
            skip_de: serde.skip_de,
            output: if serde.skip_ser {
                Presence::Absent
            } else if serde.skip_ser_if {
                Presence::Optional
            } else {
                Presence::Required
            },
        }
    }

    /// Presence in the input schema (what serde reads).
    pub fn input(&self) -> Presence {
        if self.skip_de {
            Presence::Absent
        } else if self.attr.default.is_some() || self.serde_default || is_option(self.ty) {
            Presence::Optional
        } else {
            Presence::Required
        }
    }

    pub fn span(&self) -> Span {
        self.ident.span()
    }

    /// Whether the value is an integer type, looking through `Option`, `Box` and `Vec`.
    pub fn is_integer(&self) -> bool {
        matches!(number_inside(self.ty).map(limits), Some((_, _, true)))
    }
}

/// A `#[derive(ToolArg)]` type.
pub struct Container<'a> {
    pub ident: &'a Ident,
    /// `#[arg(description, validate, crate)]` and the doc comment on the type.
    pub attr: ArgAttr,
    pub serde: SerdeAttr,
    pub body: Body<'a>,
}

pub enum Body<'a> {
    /// A struct with named fields: an object.
    Struct(Vec<Arg<'a>>),
    /// A newtype: the inner value's schema.
    Newtype(Box<Arg<'a>>),
    Enum(Vec<Variant<'a>>),
    /// A shape with no schema (reported already).
    Unsupported,
}

pub struct Variant<'a> {
    pub ident: &'a Ident,
    /// The JSON name serde reads.
    pub name: String,
    pub attr: ArgAttr,
    pub shape: VariantShape<'a>,
}

pub enum VariantShape<'a> {
    Unit,
    Fields(Vec<Arg<'a>>),
    Newtype(&'a Type),
}

impl<'a> Container<'a> {
    pub fn from_derive(cx: &mut Ctxt, input: &'a syn::DeriveInput) -> Container<'a> {
        let ident = &input.ident;
        let serde = attr::parse_serde_attrs(cx, &input.attrs);
        reject_unsupported(cx, &serde);
        let attr = attr::parse_arg_attrs(cx, &input.attrs, ArgPosition::Container);
        if !input.generics.params.is_empty() {
            cx.error_spanned_by(&input.generics, "#[derive(ToolArg)] does not support generic types yet: the model needs one concrete schema");
        }
        let rename_all = serde.rename_all.as_ref().map(|r| r.0.clone());
        let body = match &input.data {
            syn::Data::Struct(s) => match &s.fields {
                syn::Fields::Named(named) => Body::Struct(
                    named
                        .named
                        .iter()
                        .filter_map(|f| Arg::field(cx, f, rename_all.as_deref()))
                        .collect(),
                ),
                syn::Fields::Unnamed(un) if un.unnamed.len() == 1 => {
                    Body::Newtype(Box::new(Arg::newtype(cx, ident, &un.unnamed[0])))
                }
                _ => {
                    cx.error_spanned_by(
                        ident,
                        "#[derive(ToolArg)] needs a struct with named fields, or a newtype struct",
                    );
                    Body::Unsupported
                }
            },
            syn::Data::Enum(e) => {
                if let Some((rule, span)) = &serde.rename_all
                    && !RENAME_RULES.contains(&rule.as_str())
                {
                    cx.error_at(*span, format!("unknown `rename_all` rule {rule:?}"));
                }
                if e.variants.is_empty() {
                    cx.error_at(
                        Span::call_site(),
                        "an enum argument needs at least one variant",
                    );
                }
                Body::Enum(
                    e.variants
                        .iter()
                        .filter_map(|v| Variant::from_syn(cx, v, rename_all.as_deref()))
                        .collect(),
                )
            }
            syn::Data::Union(_) => {
                cx.error_spanned_by(ident, "#[derive(ToolArg)] does not support unions");
                Body::Unsupported
            }
        };
        Container {
            ident,
            attr,
            serde,
            body,
        }
    }

    /// The description the model reads, or empty.
    pub fn description(&self) -> String {
        self.attr
            .description_text()
            .map(|(d, _)| d)
            .unwrap_or_default()
    }
}

impl<'a> Variant<'a> {
    fn from_syn(cx: &mut Ctxt, v: &'a syn::Variant, rename_all: Option<&str>) -> Option<Self> {
        let serde = attr::parse_serde_attrs(cx, &v.attrs);
        reject_unsupported(cx, &serde);
        if serde.skip_de && serde.skip_ser {
            return None;
        }
        let attr = attr::parse_arg_attrs(cx, &v.attrs, ArgPosition::Value);
        let name = serde
            .rename
            .clone()
            .unwrap_or_else(|| rename_variant(&v.ident.to_string(), rename_all));
        let shape = match &v.fields {
            syn::Fields::Unit => VariantShape::Unit,
            syn::Fields::Named(named) => {
                let field_rule = serde.rename_all.as_ref().map(|r| r.0.as_str());
                VariantShape::Fields(
                    named
                        .named
                        .iter()
                        .filter_map(|f| Arg::field(cx, f, field_rule))
                        .collect(),
                )
            }
            syn::Fields::Unnamed(un) if un.unnamed.len() == 1 => {
                VariantShape::Newtype(&un.unnamed[0].ty)
            }
            syn::Fields::Unnamed(_) => {
                cx.error_spanned_by(
                    &v.ident,
                    "a variant with several unnamed fields has no clear schema: name the fields",
                );
                return None;
            }
        };
        Some(Variant {
            ident: &v.ident,
            name,
            attr,
            shape,
        })
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

/// The last path segment of `ty` and its single generic type argument, if any.
fn single_generic<'t>(ty: &'t Type, names: &[&str]) -> Option<&'t Type> {
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

pub fn is_option(ty: &Type) -> bool {
    single_generic(ty, &["Option"]).is_some()
}

fn ident_of(ty: &Type) -> Option<String> {
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
pub enum Shape {
    /// A primitive number, by name.
    Number(&'static str),
    String,
    Bool,
    List,
    /// Anything else: an alias, a derived type, a type from another crate.
    Unknown,
}

pub const NUMBERS: &[&str] = &[
    "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize", "f32",
    "f64",
];

/// The shape of `ty` once `Option` and `Box` are looked through.
pub fn shape(ty: &Type) -> Shape {
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
pub fn number_inside(ty: &Type) -> Option<&'static str> {
    if let Some(inner) = single_generic(ty, &["Option", "Box", "Vec"]) {
        return number_inside(inner);
    }
    match shape(ty) {
        Shape::Number(n) => Some(n),
        _ => None,
    }
}

/// `(min, max, integer)` of a primitive number type.
pub fn limits(num: &str) -> (f64, f64, bool) {
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
pub fn type_span(ty: &Type) -> Span {
    ty.span()
}

/// A tool or field name as serde reads it: `r#type` is `type`.
pub fn unraw(ident: &Ident) -> String {
    let s = ident.to_string();
    s.strip_prefix("r#").map(str::to_owned).unwrap_or(s)
}

pub const RENAME_RULES: &[&str] = &[
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
pub fn rename_variant(name: &str, rule: Option<&str>) -> String {
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
pub fn rename_field(name: &str, rule: Option<&str>) -> String {
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
