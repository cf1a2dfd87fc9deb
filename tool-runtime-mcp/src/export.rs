//! A tool set as MCP shows it: `tools/list` entries (name, title, description with the boundary
//! sentence, `inputSchema`, `outputSchema`, annotations) and `tools/call` results
//! (`structuredContent` matching the `outputSchema`, the same JSON or the tool's `to_model`
//! summary as content).

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value, json};
use tool_runtime::{CallOutput, Content, Context, Tool, ToolSet};

/// The `tools/list` entry of `tool`, with the boundary sentence in `set`'s wording.
pub fn tool(set: &ToolSet, tool: &Tool) -> Value {
    let mut entry = Map::new();
    entry.insert("name".into(), tool.name().into());
    let a = tool.annotations();
    if let Some(t) = &a.title {
        entry.insert("title".into(), t.as_ref().into());
    }
    entry.insert("description".into(), set.description(tool).into());
    let mut input = tool.input_schema().clone();
    objects_for_booleans(&mut input);
    entry.insert("inputSchema".into(), input);
    // A result cut to the tool's bound cannot carry the whole as `structuredContent`, which an
    // `outputSchema` would require: a bounded tool declares none.
    if tool.max_result_chars().is_none() {
        entry.insert("outputSchema".into(), output_schema(tool.output_schema()));
    }
    let mut hints = Map::new();
    if let Some(t) = &a.title {
        hints.insert("title".into(), t.as_ref().into());
    }
    for (key, value) in [
        ("readOnlyHint", a.read_only),
        ("destructiveHint", a.destructive),
        ("idempotentHint", a.idempotent),
        ("openWorldHint", a.open_world),
    ] {
        if let Some(v) = value {
            hints.insert(key.into(), v.into());
        }
    }
    if !hints.is_empty() {
        entry.insert("annotations".into(), Value::Object(hints));
    }
    Value::Object(entry)
}

/// The name of the tool through which a client that lists only a set's search tool calls the
/// [deferred](ToolSet::defer) tools it found (the core's, which the agent loop uses too).
pub use tool_runtime::CALL_TOOL;

/// What `tools/list` shows of `set` (the tools a caller may see): every tool, except that a set
/// with deferred tools lists, instead of them, its search tool and [`CALL_TOOL`], whose
/// description says how many tools are reachable that way. A deferred tool can still be called
/// by its own name.
pub fn listed(set: &ToolSet) -> Vec<Value> {
    let Some((description, schema)) = set.call_tool_definition() else {
        return tools(set);
    };
    // None this caller may call: nothing to reach through call_tool.
    if !set.iter().any(|t| set.is_deferred(t.name())) {
        return tools(set);
    }
    let mut listed: Vec<Value> = set
        .iter()
        .filter(|t| !set.is_deferred(t.name()))
        .map(|t| tool(set, t))
        .collect();
    listed.push(json!({
        "name": CALL_TOOL,
        "description": description,
        "inputSchema": schema,
        "annotations": {"openWorldHint": false}
    }));
    listed
}

/// Every tool of `set` as `tools/list` entries.
pub fn tools(set: &ToolSet) -> Vec<Value> {
    set.iter().map(|t| tool(set, t)).collect()
}

/// The `structuredContent` of a `tools/call` result for this tool's output: the output itself
/// when it is an object, `{"result": output}` otherwise (matching its `outputSchema`).
pub fn structured_content(tool: &Tool, output: Value) -> Value {
    if is_wrapped(tool.output_schema()) {
        json!({ "result": output })
    } else {
        output
    }
}

/// MCP's `outputSchema` must describe an object: any other output is wrapped as
/// `{"result": ...}`, consistently with what `tools/call` returns as `structuredContent`.
pub fn output_schema(canonical: &Value) -> Value {
    let mut inner = canonical.clone();
    objects_for_booleans(&mut inner);
    if inner.get("type").and_then(Value::as_str) == Some("object") {
        return inner;
    }
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

/// Boolean subschemas (`true` for a `serde_json::Value`, `false`) written as the objects they
/// equal, `{}` and `{"not": {}}`: the 2025-11-25 MCP schema, and with it the official TypeScript
/// SDK (hence the Inspector), refuses a whole `tools/list` whose `properties` hold a boolean.
/// `additionalProperties: false` is a keyword's value, not a subschema a client checks, and stays.
fn objects_for_booleans(schema: &mut Value) {
    let s = match schema {
        Value::Bool(true) => return *schema = json!({}),
        Value::Bool(false) => return *schema = json!({"not": {}}),
        Value::Object(s) => s,
        _ => return,
    };
    for key in ["properties", "$defs", "patternProperties"] {
        if let Some(Value::Object(map)) = s.get_mut(key) {
            map.values_mut().for_each(objects_for_booleans);
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(list)) = s.get_mut(key) {
            list.iter_mut().for_each(objects_for_booleans);
        }
    }
    for key in ["items", "not"] {
        if let Some(v) = s.get_mut(key) {
            objects_for_booleans(v);
        }
    }
}

/// Whether the MCP output of a tool with this canonical output schema is wrapped.
pub fn is_wrapped(canonical: &Value) -> bool {
    canonical.get("type").and_then(Value::as_str) != Some("object")
}

pub(crate) fn error_result(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

/// A finished call as MCP content: the output as `structuredContent` (wrapped like the
/// `outputSchema` when it is not an object), and as content blocks the tool's `to_model`
/// summary, or else the same JSON as text. A result longer than its tool's bound is cut: its
/// start and a notice as text, a `resource_link` to the whole (kept for the caller, when the
/// server keeps it), and no `structuredContent`.
pub(crate) async fn success(tool: &Tool, out: CallOutput, cx: &Context) -> CallToolResult {
    if let Some(max) = tool.max_result_chars() {
        let text = match out.summary() {
            Some(m) if !m.0.is_empty() => m.as_text(),
            _ => out.json().to_owned(),
        };
        if let Some((cut, uri)) = crate::kept::cut(&text, max, cx).await {
            let mut content = vec![ContentBlock::text(cut)];
            if let Some(uri) = uri {
                let link = json!({"type": "resource_link", "uri": uri,
                    "name": format!("{} result", tool.name()), "mimeType": "text/plain",
                    "size": text.len()});
                content.extend(serde_json::from_value::<ContentBlock>(link).ok());
            }
            return CallToolResult::success(content);
        }
    }
    let wrapped = is_wrapped(tool.output_schema());
    let content = match out.summary() {
        Some(m) if !m.0.is_empty() => m.0.iter().map(content_block).collect(),
        // The text block is the structured content's JSON, written from the output's own text.
        _ if wrapped => vec![ContentBlock::text(format!("{{\"result\":{}}}", out.json()))],
        _ => vec![ContentBlock::text(out.json().to_owned())],
    };
    let mut result = CallToolResult::success(content);
    result.structured_content = Some(structured_content(tool, out.into_value()));
    result
}

fn content_block(c: &Content) -> ContentBlock {
    match c {
        Content::Text { text } => ContentBlock::text(text.clone()),
        // MCP images carry data; a URL is a link to a resource.
        Content::ImageUrl { url } => serde_json::from_value(json!({
            "type": "resource_link", "uri": url, "name": url.rsplit('/').next().unwrap_or(url), "mimeType": "image/*"
        }))
        .unwrap_or_else(|_| ContentBlock::text(url.clone())),
        other => ContentBlock::text(tool_runtime::ModelOutput(vec![other.clone()]).as_text()),
    }
}
