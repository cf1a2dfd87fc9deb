//! The catalog of a tool set, for the people who review what an agent can do: Markdown, JSON, and
//! one self-contained HTML page with a search box. Everything comes from what `#[tool]` already
//! knows; nothing is written by hand.
//!
//! A binary can expose it with one line: `if tool_runtime::docs::print_tool_docs(&tools) { return; }`
//! prints the catalog and returns true when the program was run with `--print-tool-docs`
//! (`=md`, `=json` or `=html`; Markdown by default).

use std::fmt::Write as _;
use std::io::Write as _;

use serde_json::{Value, json};

use crate::lint;
use crate::set::ToolSet;
use crate::table;
use crate::tool::Tool;

/// The catalog as JSON: every tool with its description, boundary, permissions, approval,
/// annotations, schemas and the lints that apply to it.
pub fn json(set: &ToolSet) -> Value {
    let lints = lint::check(set);
    let tools: Vec<Value> = set
        .iter()
        .map(|t| {
            let a = t.annotations();
            json!({
                "name": t.name(),
                "title": a.title,
                "description": t.spec_description(),
                "not_for": t.not_for(),
                "requires": t.requires(),
                "needs_approval": t.needs_approval(),
                "annotations": {
                    "read_only": a.read_only, "destructive": a.destructive,
                    "idempotent": a.idempotent, "open_world": a.open_world,
                },
                "arguments": arguments(t),
                "input_schema": t.input_schema(),
                "output_schema": t.output_schema(),
                "lints": lints.iter().filter(|l| l.tool == t.name()).collect::<Vec<_>>(),
                "max_result_chars": t.max_result_chars(),
                "deferred": set.is_deferred(t.name()),
                "tokens": tokens(t),
            })
        })
        .collect();
    json!({
        "tools": tools,
        "set_lints": lints.iter().filter(|l| l.tool.is_empty()).collect::<Vec<_>>(),
    })
}

/// What the tool's exported definition costs in each API (feature `tokens`; `null` without
/// it): `{"openai-chat": {"tokens": 135, "exact": true}, ...}`.
fn tokens(t: &Tool) -> Value {
    #[cfg(feature = "tokens")]
    {
        use crate::provider::Api;
        let apis = [
            Api::OPENAI_CHAT,
            Api::OPENAI_RESPONSES,
            Api::ANTHROPIC,
            Api::GEMINI,
            Api::BEDROCK_CONVERSE,
        ];
        let costs = apis.into_iter().map(|api| {
            let cost = crate::tokens::of_tool(t, api);
            (
                api.id().to_owned(),
                json!({"tokens": cost.tokens, "exact": cost.exact}),
            )
        });
        Value::Object(costs.collect())
    }
    #[cfg(not(feature = "tokens"))]
    {
        let _ = t;
        Value::Null
    }
}

/// One row per argument: name, JSON type, required, constraints, default, description.
fn arguments(t: &Tool) -> Vec<Value> {
    let schema = t.input_schema();
    let required = crate::schema::required_names(schema);
    schema["properties"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, p)| {
            json!({
                "name": name,
                "type": type_text(p),
                "required": required.contains(&name.as_str()),
                "constraints": constraints(p),
                "default": p.get("default"),
                "description": p["description"],
            })
        })
        .collect()
}

fn type_text(p: &Value) -> String {
    if let Some(values) = allowed(p) {
        return format!("one of {}", values.join(", "));
    }
    match &p["type"] {
        Value::String(t) if t == "array" => format!("list of {}", type_text(&p["items"])),
        Value::String(t) => t.clone(),
        Value::Array(ts) => ts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        _ => match p
            .get("anyOf")
            .or_else(|| p.get("oneOf"))
            .and_then(Value::as_array)
        {
            // `Option<Enum>` and other unions: each alternative in words, once.
            Some(alts) => {
                let mut texts: Vec<String> = Vec::new();
                for t in alts.iter().map(type_text) {
                    if !texts.contains(&t) {
                        texts.push(t);
                    }
                }
                texts.join(" or ")
            }
            None => "any".into(),
        },
    }
}

fn allowed(p: &Value) -> Option<Vec<String>> {
    let show = |v: &Value| format!("`{}`", v.as_str().map_or(v.to_string(), str::to_owned));
    if let Some(Value::Array(e)) = p.get("enum") {
        // A `const` beside the `enum` leaves the one value both allow.
        return Some(match p.get("const") {
            Some(c) => vec![show(c)],
            None => e.iter().map(show).collect(),
        });
    }
    let alts = p.get("oneOf")?.as_array()?;
    alts.iter().map(|a| a.get("const").map(show)).collect()
}

/// An argument's constraints from its schema, in the words of the shared argument table.
fn constraints(p: &Value) -> String {
    // A number's bounds as JSON; a date's first and last day as written.
    let num = |k: &str| {
        p.get(k).map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    };
    let count = |a: &str, b: &str| p.get(a).or_else(|| p.get(b)).and_then(Value::as_u64);
    let exclusive = num("exclusiveMaximum");
    table::constraints(&table::Bounds {
        min: num("minimum").or_else(|| num("formatMinimum")),
        exclusive_max: exclusive.is_some(),
        max: exclusive
            .or_else(|| num("maximum"))
            .or_else(|| num("formatMaximum")),
        min_length: count("minLength", "minItems"),
        max_length: count("maxLength", "maxItems"),
        pattern: p.get("pattern").and_then(Value::as_str),
        format: p.get("format").and_then(Value::as_str),
        unbounded: None,
        items: (p["type"] == "array")
            .then(|| p.get("items").map(constraints))
            .flatten(),
    })
}

fn cell(v: &Value) -> String {
    let s = match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => format!("`{other}`"),
    };
    s.replace('|', "\\|").replace('\n', " ")
}

fn lint_line(md: &mut String, l: &Value) {
    let _ = write!(
        md,
        "\n> **lint `{}`**: {} Fix: {}\n",
        cell(&l["id"]),
        cell(&l["message"]),
        cell(&l["fix"])
    );
}

/// The catalog as Markdown: one section per tool, an argument table, the output shape.
pub fn markdown(set: &ToolSet) -> String {
    let catalog = json(set);
    let mut md =
        String::from("# Tool catalog\n\nGenerated from the `#[tool]` definitions; do not edit.\n");
    for l in catalog["set_lints"].as_array().into_iter().flatten() {
        lint_line(&mut md, l);
    }
    for t in catalog["tools"].as_array().into_iter().flatten() {
        let _ = write!(md, "\n## `{}`", cell(&t["name"]));
        if let Some(title) = t["title"].as_str() {
            let _ = write!(md, " — {title}");
        }
        let _ = write!(md, "\n\n{}\n", cell(&t["description"]));
        if let Some(n) = t["not_for"].as_str() {
            let _ = write!(md, "\n**Not for:** {n}\n");
        }
        let requires: Vec<String> = t["requires"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| format!("`{}`", cell(r)))
            .collect();
        let mut facts = Vec::new();
        if !requires.is_empty() {
            facts.push(format!("requires {}", requires.join(", ")));
        }
        if t["needs_approval"] == true {
            facts.push("each call waits for a person's approval".into());
        }
        for (key, label) in [
            ("read_only", "read-only"),
            ("destructive", "destructive"),
            ("idempotent", "idempotent"),
            ("open_world", "open world"),
        ] {
            if t["annotations"][key] == true {
                facts.push(label.into());
            }
        }
        if let Some(max) = t["max_result_chars"].as_u64() {
            facts.push(format!(
                "the model receives at most {max} characters of a result"
            ));
        }
        if t["deferred"] == true {
            facts.push("deferred: sent once the model finds it by searching".into());
        }
        if let Some(costs) = t["tokens"].as_object() {
            let of = |api: &str| costs.get(api).and_then(|c| c["tokens"].as_u64());
            let estimates: Vec<u64> = ["anthropic", "gemini", "bedrock-converse"]
                .into_iter()
                .filter_map(of)
                .collect();
            if let (Some(chat), Some(low), Some(high)) = (
                of("openai-chat"),
                estimates.iter().min(),
                estimates.iter().max(),
            ) {
                facts.push(format!(
                    "its definition costs {chat} tokens in OpenAI Chat (o200k_base), an estimated {low}-{high} elsewhere"
                ));
            }
        }
        if !facts.is_empty() {
            let _ = write!(md, "\n{}.\n", facts.join("; "));
        }
        let args = t["arguments"].as_array().cloned().unwrap_or_default();
        let text = |v: &Value| match v {
            Value::Null => String::new(),
            Value::String(s) => s.clone(),
            other => format!("`{other}`"),
        };
        let cells: Vec<[String; 5]> = args
            .iter()
            .map(|a| {
                let f = |k: &str| text(&a[k]);
                [
                    f("name"),
                    f("type"),
                    f("constraints"),
                    f("default"),
                    f("description"),
                ]
            })
            .collect();
        let rows: Vec<table::Row> = cells
            .iter()
            .zip(&args)
            .map(
                |([name, ty, constraints, default, description], a)| table::Row {
                    name,
                    ty,
                    required: a["required"] == true,
                    constraints,
                    default,
                    description,
                },
            )
            .collect();
        let _ = writeln!(md, "\n{}", table::markdown(&rows));
        let output = &t["output_schema"];
        let fields: Vec<String> = output["properties"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| format!("`{k}` ({})", type_text(v)))
            .collect();
        if fields.is_empty() {
            let _ = write!(md, "\nReturns: {}.\n", type_text(output));
        } else {
            let _ = write!(md, "\nReturns an object: {}.\n", fields.join(", "));
        }
        for l in t["lints"].as_array().into_iter().flatten() {
            lint_line(&mut md, l);
        }
    }
    md
}

/// The catalog as one self-contained HTML page: the tools as cards, a search box that filters
/// them as you type, no external resources.
pub fn html(set: &ToolSet) -> String {
    let data = json(set).to_string().replace("</", "<\\/");
    format!(
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Tool catalog</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{{font:15px/1.5 system-ui,sans-serif;margin:2rem auto;max-width:60rem;padding:0 1rem;color:#1d1d1f}}
input{{width:100%;padding:.6rem;font-size:1rem;border:1px solid #aaa;border-radius:6px}}
.tool{{border:1px solid #ddd;border-radius:8px;padding:1rem;margin:1rem 0}}
.tool h2{{margin:0;font-family:ui-monospace,monospace;font-size:1.1rem}}
.not{{color:#8a3b00}} .meta{{color:#555;font-size:.9rem}} .lint{{background:#fff4e5;padding:.4rem;border-radius:4px}}
table{{border-collapse:collapse;width:100%;font-size:.9rem}} td,th{{border-top:1px solid #eee;padding:.3rem;text-align:left;vertical-align:top}}
code{{font-family:ui-monospace,monospace}}
</style></head><body>
<h1>Tool catalog</h1>
<input id="q" type="search" placeholder="Search tools, arguments, permissions" autofocus>
<p id="count" class="meta"></p>
<div id="tools"></div>
<script id="catalog" type="application/json">{data}</script>
<script>
const catalog = JSON.parse(document.getElementById('catalog').textContent);
const esc = s => String(s ?? '').replace(/[&<>"]/g, c => ({{'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}})[c]);
function card(t) {{
  const rows = t.arguments.map(a => `<tr><td><code>${{esc(a.name)}}</code></td><td>${{esc(a.type)}}</td><td>${{a.required ? 'yes' : 'no'}}</td><td>${{esc(a.constraints)}}</td><td>${{a.default === undefined || a.default === null ? '' : esc(JSON.stringify(a.default))}}</td><td>${{esc(a.description)}}</td></tr>`).join('');
  const facts = [t.requires.length ? 'requires ' + t.requires.join(', ') : '', t.needs_approval ? 'needs approval' : '', t.annotations.read_only ? 'read-only' : '', t.annotations.destructive ? 'destructive' : ''].filter(Boolean).join(' · ');
  const lints = t.lints.map(l => `<p class="lint">lint <code>${{esc(l.id)}}</code>: ${{esc(l.message)}} Fix: ${{esc(l.fix)}}</p>`).join('');
  return `<div class="tool"><h2>${{esc(t.name)}}</h2>${{t.title ? `<div class="meta">${{esc(t.title)}}</div>` : ''}}<p>${{esc(t.description)}}</p>${{t.not_for ? `<p class="not">Not for: ${{esc(t.not_for)}}</p>` : ''}}<p class="meta">${{esc(facts)}}</p>${{rows ? `<table><tr><th>argument</th><th>type</th><th>required</th><th>constraints</th><th>default</th><th>description</th></tr>${{rows}}</table>` : '<p class="meta">No arguments.</p>'}}${{lints}}</div>`;
}}
function render() {{
  const q = document.getElementById('q').value.toLowerCase();
  const shown = catalog.tools.filter(t => JSON.stringify(t).toLowerCase().includes(q));
  document.getElementById('tools').innerHTML = shown.map(card).join('');
  document.getElementById('count').textContent = `${{shown.length}} of ${{catalog.tools.length}} tools`;
}}
document.getElementById('q').addEventListener('input', render);
render();
</script></body></html>
"#
    )
}

/// Prints the catalog and returns true when the program's arguments include
/// `--print-tool-docs` (`--print-tool-docs=json`, `=html`, `=md`).
pub fn print_tool_docs(set: &ToolSet) -> bool {
    let Some(arg) = std::env::args().find(|a| a.starts_with("--print-tool-docs")) else {
        return false;
    };
    let text = match arg.split_once('=').map(|(_, f)| f) {
        Some("json") => serde_json::to_string_pretty(&json(set)).unwrap_or_default(),
        Some("html") => html(set),
        _ => markdown(set),
    };
    // A closed pipe (`| head`) is not an error worth a panic.
    let _ = writeln!(std::io::stdout(), "{text}");
    true
}
