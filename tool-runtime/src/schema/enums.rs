//! Schemas of derived enums, agreeing with how serde tags their variants: a string `enum` (or a
//! `oneOf` of documented constants) when every variant is a unit, otherwise one alternative per
//! variant, tagged externally, internally (`tag`) or adjacently (`tag` + `content`).

use schemars::{Schema, SchemaGenerator};
use serde_json::{Map, Value};

use super::{Field, Property, object_schema, properties};

/// Unit-variant enums: the schema for one variant's name, with its description.
fn variant(name: &'static str, description: &'static str) -> Value {
    let mut m = Map::new();
    m.insert("const".into(), name.into());
    if !description.is_empty() {
        m.insert("description".into(), description.into());
    }
    Value::Object(m)
}

/// Builds a schema from a JSON object value (for the derives' enum schemas).
fn schema(v: Value) -> Schema {
    match v {
        Value::Object(m) => Schema::from(m),
        _ => Schema::default(),
    }
}

/// How serde tags an enum's variants.
pub enum Tagging {
    /// serde's default: `{"variant": body}`, or the bare name for a unit variant.
    External,
    /// `#[serde(tag = "..")]`: the variant's name in a field, beside the variant's own fields.
    Internal {
        /// The field holding the variant's name.
        tag: &'static str,
    },
    /// `#[serde(tag = "..", content = "..")]`: the name and the body in two fields.
    Adjacent {
        /// The field holding the variant's name.
        tag: &'static str,
        /// The field holding the variant's body.
        content: &'static str,
    },
}

/// What a variant holds.
pub enum VariantBody {
    /// Nothing: the variant is its name alone.
    Unit,
    /// Named fields, described like a struct's.
    Fields(Vec<Field>),
    /// One unnamed value, with this schema.
    Newtype(Schema),
}

/// One variant of a derived enum.
pub struct Variant {
    /// The variant's name, as serde reads it.
    pub name: &'static str,
    /// The variant's name, as serde writes it.
    pub output_name: &'static str,
    /// serde reads it (no `skip_deserializing`).
    pub read: bool,
    /// serde writes it (no `skip_serializing`).
    pub written: bool,
    /// The variant's description (its `description` or doc comment); empty for none.
    pub description: &'static str,
    /// What the variant holds.
    pub body: VariantBody,
}

/// The schema of a derived enum: a string enum when every variant is a unit, otherwise one
/// alternative per variant, tagged the way serde tags it.
pub fn enum_schema(
    g: &mut SchemaGenerator,
    description: &str,
    tagging: Tagging,
    variants: Vec<Variant>,
) -> Schema {
    // The variants and names of the generator's direction: read for input, written for output.
    let serialize = g.contract().is_serialize();
    let variants: Vec<Variant> = variants
        .into_iter()
        .filter(|v| if serialize { v.written } else { v.read })
        .map(|v| Variant {
            name: if serialize { v.output_name } else { v.name },
            ..v
        })
        .collect();
    let all_unit = variants.iter().all(|v| matches!(v.body, VariantBody::Unit));
    let mut out = Map::new();
    if !description.is_empty() {
        out.insert("description".into(), description.into());
    }
    if all_unit && matches!(tagging, Tagging::External) {
        out.insert("type".into(), "string".into());
        if variants.iter().any(|v| !v.description.is_empty()) {
            let alts = variants
                .iter()
                .map(|v| variant(v.name, v.description))
                .collect();
            out.insert("oneOf".into(), Value::Array(alts));
        } else {
            let names = variants.iter().map(|v| Value::from(v.name)).collect();
            out.insert("enum".into(), Value::Array(names));
        }
    } else {
        let alts = variants
            .into_iter()
            .map(|v| tagged(g, &tagging, v).to_value())
            .collect();
        out.insert("oneOf".into(), Value::Array(alts));
    }
    Schema::from(out)
}

fn tagged(g: &mut SchemaGenerator, tagging: &Tagging, v: Variant) -> Schema {
    let tag_field = |tag: &'static str| Property {
        name: tag,
        schema: schema(variant(v.name, "")),
        required: true,
        default: None,
        examples: Vec::new(),
    };
    let desc = Some(v.description).filter(|d| !d.is_empty());
    match (tagging, v.body) {
        (Tagging::External, VariantBody::Unit) => schema(variant(v.name, v.description)),
        (Tagging::External, VariantBody::Fields(fields)) => {
            let inner = object_schema(None, properties(g, &fields));
            wrap(v.name, desc, inner)
        }
        (Tagging::External, VariantBody::Newtype(inner)) => wrap(v.name, desc, inner),
        (Tagging::Internal { tag } | Tagging::Adjacent { tag, .. }, VariantBody::Unit) => {
            object_schema(desc, vec![tag_field(tag)])
        }
        (Tagging::Internal { tag }, VariantBody::Fields(fields)) => {
            let mut props = vec![tag_field(tag)];
            props.extend(properties(g, &fields));
            object_schema(desc, props)
        }
        (Tagging::Internal { tag }, VariantBody::Newtype(inner)) => {
            // Rejected by the derive; kept total: the tag plus the inner value as `value`.
            object_schema(desc, vec![tag_field(tag), prop("value", inner)])
        }
        (Tagging::Adjacent { tag, content }, VariantBody::Fields(fields)) => {
            let inner = object_schema(None, properties(g, &fields));
            object_schema(desc, vec![tag_field(tag), prop(content, inner)])
        }
        (Tagging::Adjacent { tag, content }, VariantBody::Newtype(inner)) => {
            object_schema(desc, vec![tag_field(tag), prop(content, inner)])
        }
    }
}

fn prop(name: &'static str, schema: Schema) -> Property {
    Property {
        name,
        schema,
        required: true,
        default: None,
        examples: Vec::new(),
    }
}

fn wrap(name: &'static str, description: Option<&str>, inner: Schema) -> Schema {
    object_schema(description, vec![prop(name, inner)])
}
