//! The model the checks and the code generation work on, built once: a tool from a function
//! signature ([`Tool::from_signature`]), an argument from a parameter or a field
//! ([`Arg::param`], [`Arg::field`], [`Arg::newtype`]), a derived type from its definition
//! ([`Container::from_derive`]).

use proc_macro2::Span;
use syn::{FnArg, Ident, Pat, ReturnType, Signature, Type};

use serde_derive_internals::Derive;
use serde_derive_internals::ast as serde_ast;

use super::attr::{self, ArgAttr, ArgPosition, ToolAttr};
use super::ctxt::Ctxt;
use super::serde::{Tagging, refuse_container_attrs, refuse_field_attrs, refuse_key, spellings};
use super::symbol::{ARG, CTX};
use super::types::{is_option, limits, number_inside, unraw};

/// Tools with more arguments than this should group them in a `#[derive(ToolArg)]` struct.
const MAX_ARGS: usize = 12;

/// One `#[tool]` function or method.
pub(crate) struct Tool<'a> {
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
pub(crate) enum Output {
    Plain(Type),
    /// `Result<T, E>`: `T`, with `E` shown as a tool failure.
    Result(Type),
    Unit,
}

impl Output {
    pub(crate) fn ty(&self) -> Option<&Type> {
        match self {
            Output::Plain(t) | Output::Result(t) => Some(t),
            Output::Unit => None,
        }
    }
}

impl<'a> Tool<'a> {
    pub(crate) fn from_signature(
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
    pub(crate) fn name_span(&self) -> Span {
        self.attr
            .name
            .as_ref()
            .map_or_else(|| self.ident.span(), |n| n.span())
    }

    /// The description as written (`description = ..`, or else the doc comment), trimmed.
    pub(crate) fn description(&self) -> String {
        self.attr
            .description_text()
            .map(|(d, _)| d.trim().to_owned())
            .unwrap_or_default()
    }

    /// Whether the tool takes the call's answers (`#[ctx] answers: &Answers`): it asks the
    /// person questions, and a server runs it again with their answers.
    pub(crate) fn takes_answers(&self) -> bool {
        self.ctx.iter().any(|(_, ty)| {
            matches!(ty, Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Answers"))
        })
    }

    /// Whether the tool takes its commit point (`#[ctx] commit: &Commit`): a cancel stops it
    /// until it passes that point.
    pub(crate) fn takes_commit(&self) -> bool {
        self.ctx.iter().any(|(_, ty)| {
            matches!(ty, Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Commit"))
        })
    }

    /// Whether each call waits for a person: `needs_approval` when given, otherwise whether
    /// the tool is `destructive`.
    pub(crate) fn needs_approval(&self) -> bool {
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
pub(crate) struct Arg<'a> {
    /// `argument` or `field`, for messages.
    pub what: &'static str,
    pub ident: &'a Ident,
    /// The JSON name serde reads.
    pub name: String,
    /// The JSON name serde writes (another with `rename(serialize = ..)`).
    pub output_name: String,
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
pub(crate) enum Presence {
    Required,
    Optional,
    Absent,
}

impl<'a> Arg<'a> {
    /// A tool parameter: `name: Type`, with its `#[arg(...)]` and doc comment.
    pub(crate) fn param(
        cx: &mut Ctxt,
        ident: &'a Ident,
        ty: &'a Type,
        attrs: &[syn::Attribute],
    ) -> Arg<'a> {
        let name = unraw(ident);
        Arg {
            what: "argument",
            ident,
            output_name: name.clone(),
            name,
            ty,
            attr: attr::parse_arg_attrs(cx, attrs, ArgPosition::Value),
            serde_default: false,
            skip_de: false,
            output: Presence::Required,
        }
    }

    /// A field as serde reads and writes it (`field` for a named one; `newtype` for the one
    /// field of a newtype or transparent struct, named after the type); `None` when serde skips
    /// it both ways. `container_default`: the struct has `#[serde(default)]`.
    fn from_serde(
        cx: &mut Ctxt,
        what: &'static str,
        ident: &'a Ident,
        f: &serde_ast::Field<'a>,
        container_default: bool,
    ) -> Option<Arg<'a>> {
        let a = &f.attrs;
        refuse_field_attrs(cx, f);
        if a.skip_deserializing() && a.skip_serializing() {
            return None;
        }
        Some(Arg {
            what,
            ident,
            name: a.name().deserialize_name().value.clone(),
            output_name: a.name().serialize_name().value.clone(),
            ty: f.ty,
            attr: attr::parse_arg_attrs(cx, &f.original.attrs, ArgPosition::Value),
            serde_default: container_default || !a.default().is_none(),
            skip_de: a.skip_deserializing(),
            output: if a.skip_serializing() {
                Presence::Absent
            } else if a.skip_serializing_if().is_some() {
                Presence::Optional
            } else {
                Presence::Required
            },
        })
    }

    /// The inner value of a newtype or transparent struct, named after its type in messages.
    fn named_after(self, ty: &Ident) -> Arg<'a> {
        let name = unraw(ty);
        Arg {
            output_name: name.clone(),
            name,
            ..self
        }
    }

    /// Presence in the input schema (what serde reads).
    pub(crate) fn input(&self) -> Presence {
        if self.skip_de {
            Presence::Absent
        } else if self.attr.default.is_some() || self.serde_default || is_option(self.ty) {
            Presence::Optional
        } else {
            Presence::Required
        }
    }

    pub(crate) fn span(&self) -> Span {
        self.ident.span()
    }

    /// Whether the value is an integer type, looking through `Option`, `Box` and `Vec`.
    pub(crate) fn is_integer(&self) -> bool {
        matches!(number_inside(self.ty).map(limits), Some((_, _, true)))
    }
}

/// A `#[derive(ToolArg)]` type, as serde's own reading of its attributes
/// (`serde_derive_internals`, which `serde_derive` is built on) describes it: names after
/// `rename`, `rename_all` and `rename_all_fields`, defaults, skips, tags.
pub(crate) struct Container<'a> {
    pub ident: &'a Ident,
    /// `#[arg(description, validate, crate)]` and the doc comment on the type.
    pub attr: ArgAttr,
    pub tagging: Tagging,
    pub body: Body<'a>,
}

pub(crate) enum Body<'a> {
    /// A struct with named fields: an object.
    Struct(Vec<Arg<'a>>),
    /// A newtype, or a `#[serde(transparent)]` struct: the inner value's schema.
    Newtype(Box<Arg<'a>>),
    Enum(Vec<Variant<'a>>),
    /// A shape with no schema (reported already).
    Unsupported,
}

pub(crate) struct Variant<'a> {
    pub ident: &'a Ident,
    /// The JSON name serde reads.
    pub name: String,
    /// The JSON name serde writes.
    pub output_name: String,
    /// serde reads it (no `skip_deserializing`).
    pub read: bool,
    /// serde writes it (no `skip_serializing`).
    pub written: bool,
    pub attr: ArgAttr,
    pub shape: VariantShape<'a>,
}

pub(crate) enum VariantShape<'a> {
    Unit,
    Fields(Vec<Arg<'a>>),
    Newtype(&'a Type),
}

impl<'a> Container<'a> {
    pub(crate) fn from_derive(cx: &mut Ctxt, input: &'a syn::DeriveInput) -> Container<'a> {
        let ident = &input.ident;
        let attr = attr::parse_arg_attrs(cx, &input.attrs, ArgPosition::Container);
        if !input.generics.params.is_empty() {
            cx.error_spanned_by(&input.generics, "#[derive(ToolArg)] does not support generic types yet: the model needs one concrete schema");
        }
        if let syn::Data::Union(_) = input.data {
            cx.error_spanned_by(ident, "#[derive(ToolArg)] does not support unions");
            return Container::unsupported(ident, attr);
        }
        // serde's reading of its attributes. An attribute serde itself refuses is reported by
        // serde's derive; reporting it here too would be a second error for one mistake.
        let scx = serde_derive_internals::Ctxt::new();
        let private = Ident::new("__private", Span::call_site());
        let parsed = serde_ast::Container::from_ast(&scx, input, Derive::Deserialize, &private);
        let serde_ok = scx.check().is_ok();
        let Some(c) = parsed.filter(|_| serde_ok) else {
            return Container::unsupported(ident, attr);
        };
        let tagging = refuse_container_attrs(cx, &c);
        let container_default = !c.attrs.default().is_none();
        let body = match &c.data {
            serde_ast::Data::Struct(style, fields) => {
                let transparent = c.attrs.transparent();
                match style {
                    _ if transparent => {
                        // The one field serde reads (the others are skipped or defaulted).
                        let inner = fields.iter().find(|f| !f.attrs.skip_deserializing());
                        match inner.and_then(|f| Arg::from_serde(cx, "field", ident, f, false)) {
                            Some(arg) => Body::Newtype(Box::new(arg.named_after(ident))),
                            None => Body::Unsupported,
                        }
                    }
                    serde_ast::Style::Struct => Body::Struct(
                        fields
                            .iter()
                            .filter_map(|f| {
                                let id = f.original.ident.as_ref()?;
                                Arg::from_serde(cx, "field", id, f, container_default)
                            })
                            .collect(),
                    ),
                    serde_ast::Style::Newtype => {
                        match Arg::from_serde(cx, "field", ident, &fields[0], false) {
                            Some(arg) => Body::Newtype(Box::new(arg.named_after(ident))),
                            None => Body::Unsupported,
                        }
                    }
                    serde_ast::Style::Tuple | serde_ast::Style::Unit => {
                        cx.error_spanned_by(
                            ident,
                            "#[derive(ToolArg)] needs a struct with named fields, or a newtype struct",
                        );
                        Body::Unsupported
                    }
                }
            }
            serde_ast::Data::Enum(variants) => {
                if variants.is_empty() {
                    cx.error_at(
                        Span::call_site(),
                        "an enum argument needs at least one variant",
                    );
                }
                Body::Enum(
                    variants
                        .iter()
                        .filter_map(|v| Variant::from_serde(cx, v))
                        .collect(),
                )
            }
        };
        Container {
            ident,
            attr,
            tagging,
            body,
        }
    }

    fn unsupported(ident: &'a Ident, attr: ArgAttr) -> Container<'a> {
        Container {
            ident,
            attr,
            tagging: Tagging::External,
            body: Body::Unsupported,
        }
    }

    /// The description the model reads, or empty.
    pub(crate) fn description(&self) -> String {
        self.attr
            .description_text()
            .map(|(d, _)| d)
            .unwrap_or_default()
    }
}

impl<'a> Variant<'a> {
    fn from_serde(cx: &mut Ctxt, v: &serde_ast::Variant<'a>) -> Option<Self> {
        let a = &v.attrs;
        let at = &v.original.ident;
        for (present, key) in [
            (a.other(), "other"),
            (a.untagged(), "untagged"),
            (a.deserialize_with().is_some(), "deserialize_with"),
            (a.serialize_with().is_some(), "serialize_with"),
        ] {
            if present {
                refuse_key(cx, &v.original.attrs, &at, key, spellings(key));
            }
        }
        if a.skip_deserializing() && a.skip_serializing() {
            return None;
        }
        let attr = attr::parse_arg_attrs(cx, &v.original.attrs, ArgPosition::Value);
        let shape = match v.style {
            serde_ast::Style::Unit => VariantShape::Unit,
            serde_ast::Style::Struct => VariantShape::Fields(
                v.fields
                    .iter()
                    .filter_map(|f| {
                        let id = f.original.ident.as_ref()?;
                        Arg::from_serde(cx, "field", id, f, false)
                    })
                    .collect(),
            ),
            serde_ast::Style::Newtype => VariantShape::Newtype(v.fields[0].ty),
            serde_ast::Style::Tuple => {
                cx.error_spanned_by(
                    at,
                    "a variant with several unnamed fields has no clear schema: name the fields",
                );
                return None;
            }
        };
        Some(Variant {
            ident: at,
            name: a.name().deserialize_name().value.clone(),
            output_name: a.name().serialize_name().value.clone(),
            read: !a.skip_deserializing(),
            written: !a.skip_serializing(),
            attr,
            shape,
        })
    }
}
