//! Anthropic Messages (`POST /v1/messages`, <https://docs.anthropic.com/en/api/messages>):
//! tools as `{name, description, input_schema, strict}`, structured output as
//! `output_config: {format: {type: "json_schema", schema}}`, replies as `content[]` blocks
//! (`text`, `tool_use` with `id`, `name`, `input`; `thinking` and `redacted_thinking` kept with
//! their signatures), results as one `user` message of `tool_result` blocks (`is_error: true`
//! exactly on failures). Strict tool use has per-request limits (20 strict tools, 24 optional
//! and 16 union-typed parameters), checked here and by Bedrock for Claude.

use serde_json::{Value, json};

use super::lower::{
    OPEN_MAP, each_subschema, has_refs_into_defs, is_closed, note, one_of_to_any_of, take,
};
use super::{
    Api, CallArguments, Dialect, ExportError, Exported, Finish, Lowered, Reply, ToolAnswer,
    ToolCall, str_at,
};
use crate::host::Content;
use crate::schema::required_names;
use crate::tool::Tool;

/// Anthropic's per-request limits for strict tools.
const ANTHROPIC_MAX_STRICT_TOOLS: usize = 20;
const ANTHROPIC_MAX_OPTIONAL_PARAMS: usize = 24;
const ANTHROPIC_MAX_UNION_PARAMS: usize = 16;

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
/// Anthropic (tools with `strict`, and `output_config`): closed objects; numeric bounds,
/// lengths, patterns, defaults, examples, `minItems` over 1, `maxItems` and unlisted formats
/// moved into the description; `oneOf` as `anyOf` (or `enum`). Open maps and recursive schemas
/// are refused for strict mode rather than silently closed or unrolled.
pub(super) fn lower(canonical: &Value) -> Lowered {
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
        | "minLength" | "maxLength" | "pattern" | "default" | "examples" | "maxItems"
        | "formatMinimum" | "formatMaximum" => false,
        "minItems" => v.as_u64().is_some_and(|n| n <= 1),
        "format" => v.as_str().is_some_and(|f| ANTHROPIC_FORMATS.contains(&f)),
        _ => true,
    });
    note(s, moved);
    if s.contains_key("properties") && !is_closed(s) {
        reasons.push(OPEN_MAP.into());
    }
    each_subschema(s, &mut |child| anthropic_node(child, reasons));
}

/// Anthropic Messages.
pub(super) struct Anthropic;

impl Dialect for Anthropic {
    fn name(&self) -> &'static str {
        "Anthropic Messages"
    }

    fn lower(&self, canonical: &Value) -> Lowered {
        lower(canonical)
    }

    fn tool(&self, name: &str, description: &str, input: &Value) -> Exported {
        let Lowered {
            schema,
            strict,
            reasons,
        } = lower(input);
        let json = json!({ "name": name, "description": description, "input_schema": schema, "strict": strict });
        Exported {
            json,
            strict,
            reasons,
        }
    }

    fn tools(&self, entries: Vec<(&Tool, Exported)>) -> Result<Vec<Value>, ExportError> {
        check_strict_limits(Api::Anthropic, &entries)?;
        Ok(entries.into_iter().map(|(_, e)| e.json).collect())
    }

    fn structured_output(&self, _name: &str, canonical: &Value) -> Exported {
        let Lowered {
            schema,
            strict,
            reasons,
        } = lower(canonical);
        let json = json!({ "format": { "type": "json_schema", "schema": schema } });
        Exported {
            json,
            strict,
            reasons,
        }
    }

    fn read_reply(&self, raw: &Value) -> Result<Reply, String> {
        let blocks = raw["content"].as_array().ok_or("no `content` array")?;
        let text: String = blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect();
        let finish = match raw["stop_reason"].as_str() {
            Some("end_turn") | Some("stop_sequence") => Finish::Completed,
            Some(r @ ("max_tokens" | "model_context_window_exceeded")) => {
                Finish::Truncated { reason: r.into() }
            }
            Some("refusal") => Finish::Refused {
                message: text.clone(),
            },
            Some(other) => Finish::Other {
                reason: other.into(),
            },
            None => return Err("no `stop_reason`".into()),
        };
        Ok(Reply::new(text, finish))
    }

    fn read_calls(&self, raw: &Value) -> Result<(Vec<ToolCall>, Vec<Value>), String> {
        let content = raw["content"].clone();
        let mut calls = Vec::new();
        for block in content.as_array().into_iter().flatten() {
            if block["type"] != "tool_use" {
                continue;
            }
            calls.push(ToolCall {
                id: Some(str_at(block, "id", "a tool_use block")?),
                name: str_at(block, "name", "a tool_use block")?,
                arguments: CallArguments::Value(block["input"].clone()),
            });
        }
        Ok((
            calls,
            vec![json!({"role": "assistant", "content": content})],
        ))
    }

    /// One user message of `tool_result` blocks, with `text` and `image` blocks.
    fn render(&self, answers: &[ToolAnswer]) -> Vec<Value> {
        let blocks: Vec<Value> = answers
            .iter()
            .map(|a| {
                let content: Vec<Value> = a
                    .content
                    .iter()
                    .map(|c| match c {
                        Content::ImageUrl { url } => {
                            json!({"type": "image", "source": {"type": "url", "url": url}})
                        }
                        Content::Text { text } => json!({"type": "text", "text": text}),
                    })
                    .collect();
                let mut block =
                    json!({"type": "tool_result", "tool_use_id": a.id(), "content": content});
                if a.is_error {
                    block["is_error"] = Value::Bool(true);
                }
                block
            })
            .collect();
        vec![json!({"role": "user", "content": blocks})]
    }

    fn user_message(&self, text: &str) -> Value {
        json!({"role": "user", "content": text})
    }
}

/// Anthropic's per-request limits of strict tools (also Claude's on Bedrock), over the tools sent
/// as strict.
pub(super) fn check_strict_limits(
    api: Api,
    entries: &[(&Tool, Exported)],
) -> Result<(), ExportError> {
    let limit = |message: String| ExportError::Limit { api, message };
    let strict: Vec<&Tool> = entries
        .iter()
        .filter(|(_, e)| e.strict)
        .map(|(t, _)| *t)
        .collect();
    if strict.len() > ANTHROPIC_MAX_STRICT_TOOLS {
        return Err(limit(format!(
            "{} strict tools in one request, over the limit of {ANTHROPIC_MAX_STRICT_TOOLS}: give the agent fewer tools",
            strict.len()
        )));
    }
    let (mut optional, mut unions) = (0, 0);
    for t in &strict {
        count_params(t.input_schema(), &mut optional, &mut unions);
    }
    if optional > ANTHROPIC_MAX_OPTIONAL_PARAMS {
        return Err(limit(format!(
            "{optional} optional parameters across strict tools, over the limit of {ANTHROPIC_MAX_OPTIONAL_PARAMS}"
        )));
    }
    if unions > ANTHROPIC_MAX_UNION_PARAMS {
        return Err(limit(format!(
            "{unions} union-typed parameters across strict tools, over the limit of {ANTHROPIC_MAX_UNION_PARAMS}"
        )));
    }
    Ok(())
}

/// Optional and union-typed (nullable or `anyOf`/`oneOf`) parameters of a schema, all levels.
fn count_params(schema: &Value, optional: &mut usize, unions: &mut usize) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    let required = required_names(schema);
    for (name, p) in props {
        if !required.contains(&name.as_str()) {
            *optional += 1;
        }
        let union = matches!(p.get("type"), Some(Value::Array(_))) || p.get("anyOf").is_some() || {
            p.get("oneOf").is_some()
                && p.get("oneOf")
                    .and_then(Value::as_array)
                    .is_some_and(|a| a.iter().any(|x| x.get("const").is_none()))
        };
        if union {
            *unions += 1;
        }
        count_params(p, optional, unions);
        if let Some(items) = p.get("items") {
            count_params(items, optional, unions);
        }
    }
}
