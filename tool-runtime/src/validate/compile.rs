//! A canonical schema compiled into [`Node`]s, once per tool. A keyword that asserts something
//! and has no rule here is an error, never silently ignored.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::format::Format;
use super::node::{Node, Prop, Union, type_bit};
use super::number::Numeric;
use super::pattern::Pattern;
use super::{SchemaError, Validator};

struct Compiler<'a> {
    def_names: HashMap<&'a str, usize>,
}

impl Validator {
    /// Compiles a canonical schema (JSON Schema 2020-12, the subset `#[tool]` and
    /// `schemars` produce).
    pub fn new(schema: &Value) -> Result<Validator, SchemaError> {
        let empty = Map::new();
        let defs_map = schema
            .get("$defs")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let mut cx = Compiler {
            def_names: defs_map
                .keys()
                .enumerate()
                .map(|(i, name)| (name.as_str(), i))
                .collect(),
        };
        let defs = defs_map
            .values()
            .map(|def| cx.node(def))
            .collect::<Result<_, _>>()?;
        let root = cx.node(schema)?;
        Ok(Validator {
            root,
            defs,
            slot_order: std::sync::OnceLock::new(),
        })
    }
}

impl<'a> Compiler<'a> {
    fn node(&mut self, schema: &'a Value) -> Result<Node, SchemaError> {
        let obj = match schema {
            Value::Bool(true) => return Ok(Node::default()),
            Value::Object(o) => o,
            other => return Err(SchemaError(format!("unsupported schema `{other}`"))),
        };
        let mut n = Node::default();
        let mut allowed: Option<Vec<Value>> = None;
        let mut branches: Option<(Vec<Node>, bool)> = None;
        let mut required: Vec<&str> = Vec::new();
        for (key, val) in obj {
            match key.as_str() {
                "type" => {
                    let mut mask = 0;
                    let names: Vec<&Value> = match val {
                        Value::Array(a) => a.iter().collect(),
                        one => vec![one],
                    };
                    for t in names {
                        mask |= t.as_str().and_then(type_bit).ok_or_else(|| bad(key, val))?;
                    }
                    n.types = Some(mask);
                }
                "enum" => allowed = Some(val.as_array().ok_or_else(|| bad(key, val))?.clone()),
                "const" => allowed = Some(vec![val.clone()]),
                "oneOf" | "anyOf" => {
                    if branches.is_some() {
                        return Err(SchemaError(
                            "a schema with both `oneOf` and `anyOf` is not supported".into(),
                        ));
                    }
                    branches = Some((self.list(key, val)?, key == "oneOf"));
                }
                "minimum" => n.minimum = Some(number(key, val)?),
                "maximum" => n.maximum = Some(number(key, val)?),
                "exclusiveMinimum" => n.exclusive_minimum = Some(number(key, val)?),
                "exclusiveMaximum" => n.exclusive_maximum = Some(number(key, val)?),
                "minLength" => n.min_length = Some(count(key, val)?),
                "maxLength" => n.max_length = Some(count(key, val)?),
                "minItems" => n.min_items = Some(count(key, val)?),
                "maxItems" => n.max_items = Some(count(key, val)?),
                "pattern" => {
                    let p = val.as_str().ok_or_else(|| bad(key, val))?;
                    let re = Pattern::new(p)
                        .map_err(|e| SchemaError(format!("invalid `pattern` {p:?}: {e}")))?;
                    n.pattern = Some(re);
                }
                "items" => n.items = Some(Box::new(self.node(val)?)),
                "additionalProperties" => match val {
                    Value::Bool(b) => n.closed = !b,
                    _ => {
                        return Err(SchemaError(
                            "`additionalProperties` must be a boolean".into(),
                        ));
                    }
                },
                "required" => {
                    let names = val.as_array().ok_or_else(|| bad(key, val))?;
                    required = names.iter().filter_map(Value::as_str).collect();
                }
                "properties" => {
                    let props = val.as_object().ok_or_else(|| bad(key, val))?;
                    for (name, s) in props {
                        n.properties.push(Prop {
                            name: name.clone(),
                            node: self.node(s)?,
                            default: s.get("default").cloned(),
                            required: false,
                        });
                    }
                }
                "$ref" => {
                    let r = val.as_str().ok_or_else(|| bad(key, val))?;
                    let name = r.strip_prefix("#/$defs/").unwrap_or(r);
                    let i = self
                        .def_names
                        .get(name)
                        .ok_or_else(|| SchemaError(format!("unresolved `$ref` {r:?}")))?;
                    n.reference = Some(*i);
                }
                "format" => n.format = val.as_str().and_then(Format::of),
                // A date's first and last day (the `formatMinimum`/`formatMaximum` of JSON Schema's
                // format-assertion vocabulary, as ajv names them); checked with `format: date`.
                "formatMinimum" | "formatMaximum" => {
                    let day = val.as_str().ok_or_else(|| bad(key, val))?.to_owned();
                    if key == "formatMinimum" {
                        n.first_day = Some(day);
                    } else {
                        n.last_day = Some(day);
                    }
                }
                // Annotations: they describe, they do not assert.
                "description" | "title" | "default" | "examples" | "$defs" | "$schema" | "$id"
                | "$comment" | "deprecated" | "readOnly" | "writeOnly" => {}
                other => {
                    return Err(SchemaError(format!(
                        "the keyword `{other}` is not supported by the argument validator"
                    )));
                }
            }
        }
        if (n.first_day.is_some() || n.last_day.is_some()) && n.format != Some(Format::Date) {
            return Err(SchemaError(
                "`formatMinimum`/`formatMaximum` are supported on `format: date` only".into(),
            ));
        }
        for (i, p) in n.properties.iter_mut().enumerate() {
            p.required = required.contains(&p.name.as_str());
            if p.required && i < 64 {
                n.required_bits |= 1 << i;
            }
        }
        n.required_unknown = required
            .iter()
            .filter(|r| !n.properties.iter().any(|p| p.name == **r))
            .map(|r| (*r).to_owned())
            .collect();
        // A union whose every branch is one constant is a list of choices (a documented enum).
        let union_consts: Option<Vec<Value>> = branches.as_ref().and_then(|(bs, _)| {
            bs.iter()
                .map(|b| match &b.choices {
                    Some(c) if c.len() == 1 && b.reference.is_none() => Some(c[0].clone()),
                    _ => None,
                })
                .collect()
        });
        n.choices = match (allowed, union_consts) {
            (Some(a), _) => Some(a),
            (None, Some(c)) if !c.is_empty() => {
                branches = None;
                Some(c)
            }
            _ => None,
        };
        n.union = branches.map(|(branches, exactly_one)| Union {
            branches,
            exactly_one,
        });
        Ok(n)
    }

    fn list(&mut self, key: &str, val: &'a Value) -> Result<Vec<Node>, SchemaError> {
        let items = val.as_array().ok_or_else(|| bad(key, val))?;
        items.iter().map(|s| self.node(s)).collect()
    }
}

fn bad(key: &str, val: &Value) -> SchemaError {
    SchemaError(format!("invalid value for `{key}`: {val}"))
}

fn number(key: &str, val: &Value) -> Result<Numeric, SchemaError> {
    match val {
        Value::Number(n) => Ok(Numeric::of(n)),
        _ => Err(bad(key, val)),
    }
}

fn count(key: &str, val: &Value) -> Result<u64, SchemaError> {
    val.as_u64().ok_or_else(|| bad(key, val))
}
