//! What the lowering passes share: each pass is a pure function of the canonical schema, and
//! what a dialect cannot express moves into the `description` as readable `{key: value}` text
//! (as the providers' SDKs do), so the model still reads it; the runtime still enforces it,
//! because validation always runs against the canonical schema.

use serde_json::{Map, Value};

use crate::validate::node::json_equals;

/// The reason strict mode is off for an object that accepts arbitrary keys.
pub(super) const OPEN_MAP: &str =
    "an object accepts arbitrary keys (an open map), which strict mode cannot express";

/// Whether an object schema is closed (`additionalProperties: false`).
pub(super) fn is_closed(s: &Map<String, Value>) -> bool {
    matches!(s.get("additionalProperties"), Some(Value::Bool(false)))
}

/// Appends `{key: value}` notes to the description, the way the providers' SDKs do.
pub(super) fn note(schema: &mut Map<String, Value>, moved: Vec<(String, Value)>) {
    if moved.is_empty() {
        return;
    }
    // Strings unquoted, like the providers' SDKs write them: `{default: semua}`.
    let text = moved
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}: {s}"),
            other => format!("{k}: {other}"),
        })
        .collect::<Vec<_>>()
        .join(", ");
    let text = format!("{{{text}}}");
    let description = match schema.get("description").and_then(Value::as_str) {
        Some(d) if !d.is_empty() => format!("{d}\n\n{text}"),
        _ => text,
    };
    schema.insert("description".into(), description.into());
}

/// Removes `keys` from `schema`, returning the moved pairs in schema order.
pub(super) fn take(
    schema: &mut Map<String, Value>,
    keep: impl Fn(&str, &Value) -> bool,
) -> Vec<(String, Value)> {
    let moved: Vec<String> = schema
        .iter()
        .filter(|(k, v)| !keep(k, v))
        .map(|(k, _)| k.clone())
        .collect();
    moved
        .into_iter()
        .filter_map(|k| schema.remove(&k).map(|v| (k, v)))
        .collect()
}

/// Applies `f` to every subschema of `v` (properties, items, alternatives, definitions).
pub(super) fn each_subschema(v: &mut Map<String, Value>, f: &mut dyn FnMut(&mut Value)) {
    if let Some(Value::Object(props)) = v.get_mut("properties") {
        props.values_mut().for_each(&mut *f);
    }
    if let Some(items) = v.get_mut("items") {
        f(items);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(alts)) = v.get_mut(key) {
            alts.iter_mut().for_each(&mut *f);
        }
    }
    if let Some(Value::Object(defs)) = v.get_mut("$defs") {
        defs.values_mut().for_each(&mut *f);
    }
}

/// A `oneOf` whose alternatives are all `const`s (a documented Rust enum) as a plain `enum`, the
/// variants' descriptions kept in the enum's description. Other `oneOf`s become `anyOf`: serde's
/// tags make the alternatives exclusive, so "any" and "exactly one" accept the same values.
pub(super) fn one_of_to_any_of(s: &mut Map<String, Value>) {
    let Some(Value::Array(alts)) = s.remove("oneOf") else {
        return;
    };
    let consts: Option<Vec<(Value, Option<String>)>> = alts
        .iter()
        .map(|a| {
            let c = a.get("const")?.clone();
            let d = a
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned);
            (a.as_object()?
                .keys()
                .all(|k| k == "const" || k == "description"))
            .then_some((c, d))
        })
        .collect();
    // A value two alternatives give matches both, so `oneOf` refuses it: it is not offered.
    let consts = consts.map(|all| {
        let once = |c: &Value| all.iter().filter(|(d, _)| json_equals(c, d)).count() == 1;
        all.iter()
            .filter(|(c, _)| once(c))
            .cloned()
            .collect::<Vec<_>>()
    });
    match consts {
        Some(consts) if !consts.is_empty() => {
            let docs: Vec<String> = consts
                .iter()
                .filter_map(|(c, d)| {
                    d.as_ref()
                        .map(|d| format!("{}: {d}", c.as_str().unwrap_or(&c.to_string())))
                })
                .collect();
            s.insert(
                "enum".into(),
                Value::Array(consts.into_iter().map(|(c, _)| c).collect()),
            );
            if !docs.is_empty() {
                let list = docs.join("; ");
                let description = match s.get("description").and_then(Value::as_str) {
                    Some(d) => format!("{d} ({list})"),
                    None => list,
                };
                s.insert("description".into(), description.into());
            }
        }
        _ => {
            s.insert("anyOf".into(), Value::Array(alts));
        }
    }
}

pub(super) fn has_refs_into_defs(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.get("$ref").is_some() || m.values().any(has_refs_into_defs),
        Value::Array(a) => a.iter().any(has_refs_into_defs),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    #[test]
    fn a_constant_two_alternatives_give_is_not_offered() {
        let Value::Object(mut s) = json!({"oneOf": [
            {"const": "a"}, {"const": "b", "description": "Bee"}, {"const": "a"}
        ]}) else {
            unreachable!()
        };
        super::one_of_to_any_of(&mut s);
        assert_eq!(s["enum"], json!(["b"]));
        assert_eq!(s["description"], json!("b: Bee"));
    }
}
