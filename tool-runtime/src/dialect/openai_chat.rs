//! OpenAI Chat Completions (`POST /v1/chat/completions`,
//! <https://platform.openai.com/docs/api-reference/chat>): tools as
//! `{type: "function", function: {name, description, parameters, strict}}`, structured output as
//! `response_format: {type: "json_schema", json_schema}`, replies in `choices[0].message`
//! (`content`, `refusal`, `tool_calls[]` with `function.arguments` as JSON text), results as
//! one `{role: "tool", tool_call_id, content}` message per call. The strict-mode lowering here
//! is OpenAI's, shared with the Responses API.

use serde_json::{Value, json};

use super::lower::{OPEN_MAP, each_subschema, is_closed, note, one_of_to_any_of, take};
use super::{
    CallArguments, Dialect, ExportError, Exported, Finish, Lowered, Reply, ToolAnswer, ToolCall,
    str_at,
};
use crate::tool::Tool;

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
/// OpenAI strict-mode limits (the current documented figures).
const OPENAI_MAX_PROPERTIES: usize = 5000;
const OPENAI_MAX_DEPTH: usize = 10;
const OPENAI_MAX_ENUM_VALUES: usize = 1000;
const OPENAI_MAX_CHARS: usize = 120_000;

/// OpenAI strict mode (Chat Completions and Responses tools, `json_schema` formats): every
/// object closed with every property required, `oneOf` as `anyOf` (or `enum`), `$ref` without
/// siblings, only listed formats, size limits checked. Properties the model could leave out
/// become required, taking `null` for "left out" (see [`null_for_absent`]); an `Option` stays
/// nullable. The runtime accepts everything strict output can contain, so nothing the model
/// sends is refused for being strict.
pub(super) fn strict(canonical: &Value) -> Lowered {
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
        let moved = matches!(k, "examples" | "formatMinimum" | "formatMaximum");
        !(moved || k == "default" && v.is_null())
    });
    note(s, moved);
    if let Some(Value::Array(values)) = s.get("enum") {
        stats.enum_values += values.len();
        stats.chars += values.iter().map(|v| v.to_string().len()).sum::<usize>();
    }
    // Properties the model may leave out, which strict mode makes required.
    let mut optional = Vec::new();
    if let Some(Value::Object(props)) = s.get("properties") {
        stats.properties += props.len();
        stats.chars += props.keys().map(String::len).sum::<usize>();
        let required = s.get("required").and_then(Value::as_array);
        let is_required = |k: &str| required.is_some_and(|r| r.iter().any(|n| n == k));
        optional = props.keys().filter(|k| !is_required(k)).cloned().collect();
        let keys: Vec<Value> = props.keys().map(|k| Value::from(k.as_str())).collect();
        s.insert("required".into(), Value::Array(keys));
        if !is_closed(s) {
            reasons.push(OPEN_MAP.into());
        }
        s.insert("additionalProperties".into(), false.into());
    }
    let nested = if s.contains_key("properties") {
        depth + 1
    } else {
        depth
    };
    each_subschema(s, &mut |child| openai_node(child, nested, reasons, stats));
    if let Some(Value::Object(props)) = s.get_mut("properties") {
        for name in optional {
            if let Some(p) = props.get_mut(&name) {
                null_for_absent(p);
            }
        }
    }
}

/// An optional property, which strict mode makes required, also takes `null`, and its
/// description says that null stands for its default: the runtime reads a `null` there as the
/// property left out. Without this the model would have to invent a value, and the default would
/// never apply.
fn null_for_absent(p: &mut Value) {
    let Value::Object(s) = p else { return };
    let meaning = match s.get("default") {
        Some(Value::String(d)) => format!("null for the default ({d})"),
        Some(d) => format!("null for the default ({d})"),
        None => "null to leave it out".to_owned(),
    };
    if s.contains_key("$ref") {
        // `$ref` takes no siblings: the alternatives go around it.
        let reference = std::mem::take(s);
        s.insert(
            "anyOf".into(),
            json!([Value::Object(reference), {"type": "null"}]),
        );
        s.insert("description".into(), said_with("", &meaning).into());
        return;
    }
    let null = Value::Null;
    let takes_null = s.get("type").is_some_and(|t| {
        *t == "null" || t.as_array().is_some_and(|a| a.iter().any(|t| t == "null"))
    }) || s
        .get("anyOf")
        .and_then(Value::as_array)
        .is_some_and(|a| a.iter().any(|b| b.get("type").is_some_and(|t| t == "null")))
        || s.get("enum")
            .and_then(Value::as_array)
            .is_some_and(|a| a.contains(&null))
        || s.get("const").is_some_and(Value::is_null)
        || !["type", "anyOf", "enum", "const"]
            .iter()
            .any(|k| s.contains_key(*k));
    if takes_null {
        return;
    }
    if let Some(c) = s.remove("const") {
        s.insert("enum".into(), json!([c]));
    }
    match s.get_mut("type") {
        Some(Value::Array(types)) => types.push("null".into()),
        Some(t) => *t = json!([t.take(), "null"]),
        None => {}
    }
    if let Some(Value::Array(values)) = s.get_mut("enum") {
        values.push(Value::Null);
    }
    if let Some(Value::Array(alternatives)) = s.get_mut("anyOf") {
        alternatives.push(json!({"type": "null"}));
    }
    let description = s.get("description").and_then(Value::as_str).unwrap_or("");
    let description = said_with(description, &meaning);
    s.insert("description".into(), description.into());
}

/// `description` followed by `meaning` as its own clause.
fn said_with(description: &str, meaning: &str) -> String {
    let d = description.trim_end();
    if d.is_empty() {
        let mut m = meaning.chars();
        return m
            .next()
            .map_or_else(String::new, |c| c.to_uppercase().chain(m).collect());
    }
    if let Some(sentence) = d.strip_suffix('.') {
        return format!("{sentence}. {}.", said_with("", meaning));
    }
    format!("{d}; {meaning}")
}

/// OpenAI Chat Completions.
pub(super) struct OpenAiChat;

impl Dialect for OpenAiChat {
    fn name(&self) -> &'static str {
        "OpenAI Chat Completions"
    }

    fn lower(&self, canonical: &Value) -> Lowered {
        strict(canonical)
    }

    fn tool(&self, name: &str, description: &str, input: &Value) -> Exported {
        let Lowered {
            schema,
            strict,
            reasons,
        } = strict(input);
        let json = json!({
            "type": "function",
            "function": { "name": name, "description": description, "parameters": schema, "strict": strict }
        });
        Exported {
            json,
            strict,
            reasons,
        }
    }

    fn tools(&self, entries: Vec<(&Tool, Exported)>) -> Result<Vec<Value>, ExportError> {
        Ok(entries.into_iter().map(|(_, e)| e.json).collect())
    }

    fn structured_output(&self, name: &str, canonical: &Value) -> Exported {
        let Lowered {
            schema,
            strict,
            reasons,
        } = strict(canonical);
        let json = json!({ "type": "json_schema", "json_schema": { "name": name, "schema": schema, "strict": strict } });
        Exported {
            json,
            strict,
            reasons,
        }
    }

    fn read_reply(&self, raw: &Value) -> Result<Reply, String> {
        let choice = raw["choices"].get(0).ok_or("no `choices[0]`")?;
        let message = &choice["message"];
        if let Some(r) = message["refusal"].as_str() {
            return Ok(Reply {
                text: None,
                finish: Finish::Refused { message: r.into() },
            });
        }
        let text = message["content"].as_str().map(str::to_owned);
        let finish = match choice["finish_reason"].as_str() {
            Some("stop") => Finish::Completed,
            Some("content_filter") => Finish::Refused {
                message: "content_filter".into(),
            },
            Some("length") => Finish::Truncated {
                reason: "length".into(),
            },
            Some(other) => Finish::Other {
                reason: other.into(),
            },
            None => return Err("no `finish_reason`".into()),
        };
        Ok(Reply { text, finish })
    }

    fn read_calls(&self, raw: &Value) -> Result<(Vec<ToolCall>, Vec<Value>), String> {
        let message = &raw["choices"][0]["message"];
        let mut calls = Vec::new();
        for c in message["tool_calls"].as_array().into_iter().flatten() {
            let id = Some(str_at(c, "id", "a tool call")?);
            if c["type"] != "function" {
                // A `custom` call (free-form input) or one without a type: no tool here takes
                // it, yet its id must be answered or the next request is refused.
                let name = [&c["custom"]["name"], &c["function"]["name"]]
                    .into_iter()
                    .find_map(Value::as_str)
                    .unwrap_or_default();
                calls.push(ToolCall {
                    id,
                    name: name.to_owned(),
                    arguments: CallArguments::NotAFunction(c.clone()),
                });
                continue;
            }
            let function = &c["function"];
            let arguments = match &function["arguments"] {
                Value::String(text) => CallArguments::Text(text.clone()),
                // Some OpenAI-compatible servers send the object itself; none at all is `{}`.
                Value::Null => CallArguments::Text(String::new()),
                other => CallArguments::Value(other.clone()),
            };
            calls.push(ToolCall {
                id,
                name: str_at(function, "name", "a tool call")?,
                arguments,
            });
        }
        Ok((calls, vec![message.clone()]))
    }

    /// Tool messages carry text only: images are named in the text.
    fn render(&self, answers: &[ToolAnswer]) -> Vec<Value> {
        answers
            .iter()
            .map(|a| json!({"role": "tool", "tool_call_id": a.id(), "content": a.text()}))
            .collect()
    }

    fn user_message(&self, text: &str) -> Value {
        json!({"role": "user", "content": text})
    }
}
