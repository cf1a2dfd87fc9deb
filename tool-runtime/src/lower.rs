//! Lowering passes: the canonical schema (JSON Schema 2020-12) rewritten into the dialect one
//! provider accepts. Each pass is a pure function of the canonical schema; nothing one dialect
//! needs leaks into another. What a pass cannot express it moves into the `description` as
//! readable JSON text (so the model still reads it) and the runtime still enforces it, because
//! validation always runs against the canonical schema.

use serde_json::{Map, Value, json};

/// A lowered schema, whether it can be sent in the provider's strict mode, and why not.
#[derive(Clone, Debug, PartialEq)]
pub struct Lowered {
    /// The schema in the provider's dialect.
    pub schema: Value,
    /// Whether the schema can be sent in the provider's strict mode.
    pub strict: bool,
    /// Why `strict` is false: what the provider's strict mode cannot express without changing
    /// the schema's meaning.
    pub reasons: Vec<String>,
}

/// Formats OpenAI's strict mode accepts.
const OPENAI_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];
/// Formats Anthropic's strict mode accepts.
const ANTHROPIC_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
];
/// OpenAI strict-mode limits (the current documented figures).
const OPENAI_MAX_PROPERTIES: usize = 5000;
const OPENAI_MAX_DEPTH: usize = 10;
const OPENAI_MAX_ENUM_VALUES: usize = 1000;
const OPENAI_MAX_CHARS: usize = 120_000;

/// Appends `{key: value}` notes to the description, the way the providers' SDKs do.
fn note(schema: &mut Map<String, Value>, moved: Vec<(String, Value)>) {
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
fn take(
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
fn each_subschema(v: &mut Map<String, Value>, f: &mut dyn FnMut(&mut Value)) {
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
fn one_of_to_any_of(s: &mut Map<String, Value>) {
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

fn has_refs_into_defs(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.get("$ref").is_some() || m.values().any(has_refs_into_defs),
        Value::Array(a) => a.iter().any(has_refs_into_defs),
        _ => false,
    }
}

/// OpenAI strict mode (Chat Completions and Responses tools, `json_schema` formats): every
/// object closed with every property required, `oneOf` as `anyOf` (or `enum`), `$ref` without
/// siblings, only listed formats, size limits checked. Properties the model could leave out
/// become required; an `Option` stays nullable. The runtime accepts everything strict output can
/// contain, so nothing the model sends is refused for being strict.
pub fn openai_strict(canonical: &Value) -> Lowered {
    let mut schema = canonical.clone();
    let mut reasons = Vec::new();
    let mut stats = Stats::default();
    openai_node(&mut schema, 1, &mut reasons, &mut stats);
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        reasons.push("the root is not an object".into());
    }
    if stats.properties > OPENAI_MAX_PROPERTIES {
        reasons.push(format!(
            "{} properties, over the limit of {OPENAI_MAX_PROPERTIES}",
            stats.properties
        ));
    }
    if stats.depth > OPENAI_MAX_DEPTH {
        reasons.push(format!(
            "nesting depth {}, over the limit of {OPENAI_MAX_DEPTH}",
            stats.depth
        ));
    }
    if stats.enum_values > OPENAI_MAX_ENUM_VALUES {
        reasons.push(format!(
            "{} enum values, over the limit of {OPENAI_MAX_ENUM_VALUES}",
            stats.enum_values
        ));
    }
    if stats.chars > OPENAI_MAX_CHARS {
        reasons.push(format!(
            "{} characters of names and values, over the limit of {OPENAI_MAX_CHARS}",
            stats.chars
        ));
    }
    Lowered {
        schema,
        strict: reasons.is_empty(),
        reasons,
    }
}

#[derive(Default)]
struct Stats {
    properties: usize,
    depth: usize,
    enum_values: usize,
    chars: usize,
}

fn openai_node(v: &mut Value, depth: usize, reasons: &mut Vec<String>, stats: &mut Stats) {
    let Value::Object(s) = v else { return };
    stats.depth = stats.depth.max(depth);
    if s.contains_key("$ref") {
        // No siblings next to `$ref`.
        s.retain(|k, _| k == "$ref");
        return;
    }
    one_of_to_any_of(s);
    if let Some(f) = s.get("format").and_then(Value::as_str)
        && !OPENAI_FORMATS.contains(&f)
    {
        let moved = take(s, |k, _| k != "format");
        note(s, moved);
    }
    let moved = take(s, |k, v| {
        k != "examples" && !(k == "default" && v.is_null())
    });
    note(s, moved);
    if let Some(Value::Array(values)) = s.get("enum") {
        stats.enum_values += values.len();
        stats.chars += values.iter().map(|v| v.to_string().len()).sum::<usize>();
    }
    if let Some(Value::Object(props)) = s.get("properties") {
        stats.properties += props.len();
        stats.chars += props.keys().map(String::len).sum::<usize>();
        let keys: Vec<Value> = props.keys().map(|k| Value::from(k.as_str())).collect();
        s.insert("required".into(), Value::Array(keys));
        match s.get("additionalProperties") {
            Some(Value::Bool(false)) => {}
            _ => reasons.push(
                "an object accepts arbitrary keys (an open map), which strict mode cannot express"
                    .into(),
            ),
        }
        s.insert("additionalProperties".into(), false.into());
    }
    let nested = if s.contains_key("properties") {
        depth + 1
    } else {
        depth
    };
    each_subschema(s, &mut |child| openai_node(child, nested, reasons, stats));
}

/// Anthropic (tools with `strict`, and `output_config`): closed objects; numeric bounds,
/// lengths, patterns, defaults, examples, `minItems` over 1, `maxItems` and unlisted formats
/// moved into the description; `oneOf` as `anyOf` (or `enum`). Open maps and recursive schemas
/// are refused for strict mode rather than silently closed or unrolled.
pub fn anthropic(canonical: &Value) -> Lowered {
    let mut schema = canonical.clone();
    let mut reasons = Vec::new();
    if canonical.get("$defs").is_some() && has_refs_into_defs(canonical) {
        reasons.push("the schema is recursive, which strict mode does not support".into());
    }
    anthropic_node(&mut schema, &mut reasons);
    Lowered {
        schema,
        strict: reasons.is_empty(),
        reasons,
    }
}

fn anthropic_node(v: &mut Value, reasons: &mut Vec<String>) {
    let Value::Object(s) = v else { return };
    if s.contains_key("$ref") {
        return;
    }
    one_of_to_any_of(s);
    let moved = take(s, |k, v| match k {
        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf"
        | "minLength" | "maxLength" | "pattern" | "default" | "examples" | "maxItems" => false,
        "minItems" => v.as_u64().is_some_and(|n| n <= 1),
        "format" => v.as_str().is_some_and(|f| ANTHROPIC_FORMATS.contains(&f)),
        _ => true,
    });
    note(s, moved);
    if s.contains_key("properties") {
        match s.get("additionalProperties") {
            Some(Value::Bool(false)) => {}
            _ => reasons.push(
                "an object accepts arbitrary keys (an open map), which strict mode cannot express"
                    .into(),
            ),
        }
    }
    each_subschema(s, &mut |child| anthropic_node(child, reasons));
}

/// Google Gemini (`parametersJsonSchema`, `responseJsonSchema`): `propertyOrdering` on every
/// object (declaration order), type arrays as `anyOf`, `oneOf` as `anyOf` (or `enum`), no
/// siblings next to `$ref`, and keywords outside Gemini's list moved into the description.
/// Gemini has no strict flag; `strict` is true when nothing had to move.
pub fn gemini(canonical: &Value) -> Lowered {
    let mut schema = canonical.clone();
    gemini_node(&mut schema);
    Lowered {
        schema,
        strict: true,
        reasons: Vec::new(),
    }
}

fn gemini_node(v: &mut Value) {
    let Value::Object(s) = v else { return };
    if s.contains_key("$ref") {
        s.retain(|k, _| k.starts_with('$'));
        return;
    }
    one_of_to_any_of(s);
    let moved = take(s, |k, _| {
        !matches!(
            k,
            "exclusiveMinimum"
                | "exclusiveMaximum"
                | "multipleOf"
                | "minLength"
                | "maxLength"
                | "pattern"
                | "default"
                | "examples"
        )
    });
    note(s, moved);
    if let Some(Value::Array(types)) = s.get("type").cloned() {
        // ["integer", "null"] as anyOf: the constraints stay with the non-null type.
        let mut alternatives = Vec::new();
        // Everything but the annotations moves into the typed alternative.
        let moved: Vec<(String, Value)> = take(s, |k, _| k == "description" || k == "title");
        let rest: Map<String, Value> = moved.into_iter().filter(|(k, _)| k != "type").collect();
        for t in types {
            if t == "null" {
                alternatives.push(json!({"type": "null"}));
            } else {
                let mut alt = rest.clone();
                alt.insert("type".into(), t);
                let mut alt = Value::Object(alt);
                gemini_node(&mut alt);
                alternatives.push(alt);
            }
        }
        s.insert("anyOf".into(), Value::Array(alternatives));
        return;
    }
    if let Some(Value::Object(props)) = s.get("properties") {
        let order: Vec<Value> = props.keys().map(|k| Value::from(k.as_str())).collect();
        s.insert("propertyOrdering".into(), Value::Array(order));
    }
    each_subschema(s, &mut |child| gemini_node(child));
}

/// MCP's `outputSchema` must describe an object: any other output is wrapped as
/// `{"result": ...}`, consistently with what `tools/call` returns as `structuredContent`.
pub fn mcp_output(canonical: &Value) -> Value {
    if canonical.get("type").and_then(Value::as_str) == Some("object") {
        return canonical.clone();
    }
    let mut inner = canonical.clone();
    let defs = inner.as_object_mut().and_then(|m| m.remove("$defs"));
    let mut wrapped = json!({
        "type": "object",
        "properties": { "result": inner },
        "required": ["result"],
        "additionalProperties": false
    });
    if let Some(defs) = defs {
        wrapped["$defs"] = defs;
    }
    wrapped
}

/// Whether the MCP output of a tool with this canonical output schema is wrapped.
pub fn mcp_output_is_wrapped(canonical: &Value) -> bool {
    canonical.get("type").and_then(Value::as_str) != Some("object")
}
