//! Building the canonical input schema (JSON Schema 2020-12) from what the macros collected.
//!
//! Generated code describes each argument or field with an [`ArgSpec`] and a base schema; the
//! rules for where a constraint lands (`minLength` vs `minItems`, the description, the default)
//! live here, once, for tools and derived types alike.

mod enums;

use schemars::{Schema, SchemaGenerator, generate::SchemaSettings};
use serde_json::{Map, Value};

use crate::arg::Num;

pub use enums::{Tagging, Variant, VariantBody, enum_schema};

/// Everything `#[arg(...)]` (or a field's attributes) says about one argument.
#[derive(Clone, Copy, Debug)]
pub struct ArgSpec {
    /// The description the model reads (`description = ".."` or the doc comment); empty for
    /// none.
    pub description: &'static str,
    /// The lower bound (`range` or `min`): the schema's `minimum`.
    pub min: Option<Num>,
    /// The upper bound (`range` or `max`): the schema's `maximum`, or `exclusiveMaximum` with
    /// `exclusive_max`.
    pub max: Option<Num>,
    /// Whether `max` is excluded (`range = a..b` on a float); for an integer the macros write
    /// `a..b` as `max = b - 1` instead.
    pub exclusive_max: bool,
    /// The lower bound of `length`: characters of a string, items of a list.
    pub min_length: Option<u64>,
    /// The upper bound of `length`.
    pub max_length: Option<u64>,
    /// The regular expression a string must match (`pattern = ".."`).
    pub pattern: Option<&'static str>,
    /// The first day a date may be (`range = "2024-01-01"..`): the schema's `formatMinimum`.
    pub first_day: Option<&'static str>,
    /// The last day a date may be (`range = ..="2030-12-31"`): the schema's `formatMaximum`.
    pub last_day: Option<&'static str>,
}

impl ArgSpec {
    /// A spec with this description and no constraints; the generated code sets the rest with
    /// struct-update syntax.
    pub const fn described(description: &'static str) -> Self {
        ArgSpec {
            description,
            min: None,
            max: None,
            exclusive_max: false,
            min_length: None,
            max_length: None,
            pattern: None,
            first_day: None,
            last_day: None,
        }
    }
}

/// Applies the non-numeric constraints of `spec` to a field's base schema.
pub(crate) fn apply_spec(schema: &mut Schema, spec: &ArgSpec) {
    let has_type = |schema: &Schema, ty: &str| match schema.get("type") {
        Some(Value::String(t)) => t == ty,
        Some(Value::Array(ts)) => ts.iter().any(|t| t == ty),
        _ => false,
    };
    if spec.min_length.is_some() || spec.max_length.is_some() {
        let (lo, hi) = if has_type(schema, "array") {
            ("minItems", "maxItems")
        } else {
            ("minLength", "maxLength")
        };
        if let Some(n) = spec.min_length {
            schema.insert(lo.into(), n.into());
        }
        if let Some(n) = spec.max_length {
            schema.insert(hi.into(), n.into());
        }
    }
    if let Some(p) = spec.pattern {
        schema.insert("pattern".into(), p.into());
    }
    // On the date itself (inside `anyOf` for an `Option`, where schemars puts it).
    if spec.first_day.is_some() || spec.last_day.is_some() {
        let target = match schema.get_mut("anyOf").and_then(Value::as_array_mut) {
            Some(alts) => alts.iter_mut().find(|a| a.get("format").is_some()),
            None => None,
        };
        let target = match target {
            Some(Value::Object(m)) => m,
            _ => schema.as_object_mut().expect("a schema object"),
        };
        if let Some(d) = spec.first_day {
            target.insert("formatMinimum".into(), d.into());
        }
        if let Some(d) = spec.last_day {
            target.insert("formatMaximum".into(), d.into());
        }
    }
    if !spec.description.is_empty() {
        schema.insert("description".into(), spec.description.into());
    }
}

/// How a field's base schema is made, before its [`ArgSpec`] applies.
#[derive(Clone, Copy)]
pub enum FieldSchema {
    /// A [`ToolArg`](crate::arg::ToolArg) type's own schema.
    Plain(fn(&mut SchemaGenerator) -> Schema),
    /// A number's, with its range placed on the number itself, on each item of a list
    /// ([`RangeArg::ranged_schema`](crate::arg::RangeArg::ranged_schema)).
    Ranged(fn(Option<Num>, Option<Num>, bool) -> Schema),
}

impl FieldSchema {
    /// The field's schema: the base, with the spec's bounds, length, pattern and description.
    pub fn make(self, g: &mut SchemaGenerator, spec: &ArgSpec) -> Schema {
        let mut s = match self {
            FieldSchema::Plain(f) => f(g),
            FieldSchema::Ranged(f) => f(spec.min, spec.max, spec.exclusive_max),
        };
        apply_spec(&mut s, spec);
        s
    }
}

/// One argument or field, as the macros describe it.
pub struct Field {
    /// The JSON name: a parameter's name, or a field's as serde reads it (after `rename`,
    /// `rename_all` and `rename_all_fields`).
    pub name: &'static str,
    /// The name serde writes: the same, unless `rename(serialize = ..)` says otherwise.
    pub output_name: &'static str,
    /// In the input schema: what serde reads.
    pub input: Presence,
    /// In the output schema: what serde writes (`Option` fields are written as `null`).
    pub output: Presence,
    /// Makes the field's base schema.
    pub schema: FieldSchema,
    /// The field's description and constraints.
    pub spec: ArgSpec,
    /// The `default` value's JSON, put in the schema and filled in by the validator.
    pub default: Option<fn() -> Value>,
    /// The JSON of each `example`, put in the schema's `examples`.
    pub examples: &'static [fn() -> Value],
}

/// The object schema of a tool's arguments or a derived struct.
pub fn object(g: &mut SchemaGenerator, description: Option<&str>, fields: &[Field]) -> Schema {
    object_schema(description, properties(g, fields))
}

/// Whether a field is in a schema, and if so whether it is required.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Presence {
    /// In the schema and in its `required` list.
    Required,
    /// In the schema, but may be left out.
    Optional,
    /// Not in the schema: serde skips the field in this direction.
    Absent,
}

/// The properties of an object for the generator's contract: a schema for reading arguments, or
/// (`for_serialize`) for the output a tool writes, where every field serde always writes is
/// required, `null` or not.
fn properties(g: &mut SchemaGenerator, fields: &[Field]) -> Vec<Property> {
    let serialize = g.contract().is_serialize();
    fields
        .iter()
        .filter_map(|f| {
            let presence = if serialize { f.output } else { f.input };
            (presence != Presence::Absent).then_some((f, presence == Presence::Required))
        })
        .map(|(f, required)| Property {
            name: if serialize { f.output_name } else { f.name },
            schema: f.schema.make(g, &f.spec),
            required,
            default: f.default.map(|d| d()),
            examples: f.examples.iter().map(|e| e()).collect(),
        })
        .collect()
}

/// Puts a description on a schema when it has none.
pub fn describe(mut s: Schema, description: &str) -> Schema {
    if !description.is_empty() && s.get("description").is_none() {
        s.insert("description".into(), description.into());
    }
    s
}

/// One property of an object schema under construction.
pub(crate) struct Property {
    pub name: &'static str,
    pub schema: Schema,
    pub required: bool,
    pub default: Option<Value>,
    pub examples: Vec<Value>,
}

/// Builds `{"type":"object","properties":..,"required":..,"additionalProperties":false}` with
/// properties in declaration order.
pub(crate) fn object_schema(description: Option<&str>, props: Vec<Property>) -> Schema {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for p in props {
        let mut s = p.schema;
        if let Some(d) = p.default {
            s.insert("default".into(), d);
        }
        if !p.examples.is_empty() {
            s.insert("examples".into(), Value::Array(p.examples));
        }
        if p.required {
            required.push(Value::from(p.name));
        }
        properties.insert(p.name.into(), s.to_value());
    }
    let mut o = Map::new();
    o.insert("type".into(), "object".into());
    if let Some(d) = description.filter(|d| !d.is_empty()) {
        o.insert("description".into(), d.into());
    }
    o.insert("properties".into(), Value::Object(properties));
    o.insert("required".into(), Value::Array(required));
    o.insert("additionalProperties".into(), false.into());
    Schema::from(o)
}

/// The settings every canonical schema is made with: 2020-12, subschemas inlined (a recursive
/// type still gets a `$ref` into `$defs`).
fn settings() -> SchemaSettings {
    SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
        s.meta_schema = None;
    })
}

/// The generator for input schemas: what serde will read.
pub(crate) fn input_generator() -> SchemaGenerator {
    settings().for_deserialize().into_generator()
}

/// The generator for output schemas: what serde writes.
pub(crate) fn output_generator() -> SchemaGenerator {
    settings().for_serialize().into_generator()
}

/// Finishes a root schema: attaches `$defs` when a recursive type needed them.
pub(crate) fn finish_root(mut schema: Schema, generator: &mut SchemaGenerator) -> Schema {
    let defs = generator.take_definitions(true);
    if !defs.is_empty() {
        schema.insert("$defs".into(), Value::Object(defs));
    }
    schema
}

/// Removes the `format`s schemars gives Rust number types (`uint32`, `double`, ...): they are not
/// JSON Schema formats, and validators and providers reject them.
pub(crate) fn strip_number_formats(v: &mut Value) {
    match v {
        Value::Object(m) => {
            let rust_format = m.get("format").and_then(Value::as_str).is_some_and(|f| {
                matches!(
                    f,
                    "int8"
                        | "int16"
                        | "int32"
                        | "int64"
                        | "int128"
                        | "uint"
                        | "uint8"
                        | "uint16"
                        | "uint32"
                        | "uint64"
                        | "uint128"
                        | "float"
                        | "double"
                )
            });
            if rust_format {
                m.remove("format");
            }
            m.values_mut().for_each(strip_number_formats);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_number_formats),
        _ => {}
    }
}

/// The canonical schema of a type `T` as serde reads it: a structured-output type, or the input
/// of anything that deserializes `T`.
pub fn input_schema_of<T: schemars::JsonSchema>() -> Value {
    let mut g = input_generator();
    let s = g.subschema_for::<T>();
    finish_root(s, &mut g).to_value()
}

/// The canonical schema of a type `T` as serde writes it: a tool's output.
pub fn output_schema_of<T: schemars::JsonSchema>() -> Value {
    let mut g = output_generator();
    let s = g.subschema_for::<T>();
    finish_root(s, &mut g).to_value()
}

/// Whether this program's `serde_json` keeps object members in the order they were inserted
/// (its `preserve_order` feature, which `tool-runtime`'s feature of that name turns on). Without
/// it, serde_json sorts keys: schemas still validate the same, but a provider sees properties in
/// alphabetical order, not as declared.
pub(crate) fn keeps_order() -> bool {
    let mut probe = Map::new();
    probe.insert("b".into(), Value::Null);
    probe.insert("a".into(), Value::Null);
    probe.keys().next().is_some_and(|k| k == "b")
}

/// The names an object schema lists in `required`.
pub(crate) fn required_names(schema: &Value) -> Vec<&str> {
    schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}
