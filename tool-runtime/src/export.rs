//! A tool set, or an output type, in each provider's request format. One canonical schema per
//! tool; each API lowers it (`lower.rs`) and wraps it in that provider's shape.
//!
//! ```
//! # use tool_runtime::{tool, Api, ToolSet};
//! #[tool(description = "Kembalikan salam untuk satu nama.")]
//! fn salam(#[arg(description = "Nama orang")] nama: String) -> String { format!("Halo, {nama}") }
//!
//! let tools = ToolSet::new([salam::tool()]).unwrap();
//! let body = serde_json::json!({
//!     "model": "gpt-5-mini",
//!     "messages": [{"role": "user", "content": "sapa Sari"}],
//!     "tools": tools.export(Api::OpenAiChat).unwrap(),
//! });
//! assert_eq!(body["tools"][0]["function"]["strict"], true);
//! ```

use std::fmt;

use schemars::JsonSchema;
use serde_json::{Map, Value, json};

use crate::Api;
use crate::lower::{self, Lowered};
use crate::set::ToolSet;
use crate::tool::Tool;

/// Anthropic's per-request limits for strict tools.
const ANTHROPIC_MAX_STRICT_TOOLS: usize = 20;
const ANTHROPIC_MAX_OPTIONAL_PARAMS: usize = 24;
const ANTHROPIC_MAX_UNION_PARAMS: usize = 16;
/// Gemini's limit of function declarations per request.
const GEMINI_MAX_DECLARATIONS: usize = 128;

/// Why a tool set could not be exported for an API.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExportError {
    /// The set breaks a per-request limit of the provider.
    Limit {
        /// The provider whose limit it is.
        api: Api,
        /// What the set has too many of, how many, and the limit.
        message: String,
    },
    /// A name the provider does not accept.
    Name {
        /// The provider that refuses the name.
        api: Api,
        /// Which tool and name, and the rule the name breaks.
        message: String,
    },
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExportError::Limit { api, message } | ExportError::Name { api, message } => {
                write!(f, "{api}: {message}")
            }
        }
    }
}

impl std::error::Error for ExportError {}

/// A tool, or a structured-output format, written for one API: the JSON to put in the request,
/// whether it is sent as strict, and why not.
#[derive(Clone, Debug, PartialEq)]
pub struct Exported {
    /// The JSON for the request (a `tools[]` entry, or the structured-output field).
    pub json: Value,
    /// Whether the provider enforces the schema (`strict: true`).
    pub strict: bool,
    /// Why `strict` is off, one reason per feature the API cannot enforce.
    pub reasons: Vec<String>,
}

/// One tool for `api`. Never fails: what the API cannot express is moved into the
/// description and `strict` is turned off with the reasons listed.
pub fn tool(tool: &Tool, api: Api) -> Exported {
    entry(tool, api, tool.description())
}

/// [`tool`] with the description the model reads (the boundary sentence in a set's wording).
fn entry(tool: &Tool, api: Api, description: &str) -> Exported {
    let name = tool.name();
    let input = tool.input_schema();
    match api {
        Api::OpenAiChat | Api::OpenAiResponses => {
            let Lowered {
                schema,
                strict,
                reasons,
            } = lower::openai_strict(input);
            let json = if api == Api::OpenAiChat {
                json!({
                    "type": "function",
                    "function": { "name": name, "description": description, "parameters": schema, "strict": strict }
                })
            } else {
                json!({ "type": "function", "name": name, "description": description, "parameters": schema, "strict": strict })
            };
            Exported {
                json,
                strict,
                reasons,
            }
        }
        Api::Anthropic => {
            let Lowered {
                schema,
                strict,
                reasons,
            } = lower::anthropic(input);
            let json = json!({ "name": name, "description": description, "input_schema": schema, "strict": strict });
            Exported {
                json,
                strict,
                reasons,
            }
        }
        Api::Gemini => {
            let Lowered { schema, .. } = lower::gemini(input);
            let json =
                json!({ "name": name, "description": description, "parametersJsonSchema": schema });
            Exported {
                json,
                strict: false,
                reasons: vec!["Gemini has no strict flag".into()],
            }
        }
        Api::Mcp => {
            let mut entry = Map::new();
            entry.insert("name".into(), name.into());
            let a = tool.annotations();
            if let Some(t) = a.title {
                entry.insert("title".into(), t.into());
            }
            entry.insert("description".into(), description.into());
            entry.insert("inputSchema".into(), input.clone());
            entry.insert(
                "outputSchema".into(),
                lower::mcp_output(tool.output_schema()),
            );
            let mut hints = Map::new();
            if let Some(t) = a.title {
                hints.insert("title".into(), t.into());
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
            Exported {
                json: Value::Object(entry),
                strict: true,
                reasons: Vec::new(),
            }
        }
    }
}

impl ToolSet {
    /// One tool for `api`, with the boundary sentence in this set's wording.
    pub fn export_tool(&self, tool: &Tool, api: Api) -> Exported {
        entry(tool, api, &self.description(tool))
    }

    /// Every tool of the set in `api`'s format, ready for the request's `tools` field (for
    /// Gemini: one tool holding all `functionDeclarations`). Checks the provider's per-request
    /// limits.
    pub fn export(&self, api: Api) -> Result<Vec<Value>, ExportError> {
        let exported: Vec<Exported> = self.iter().map(|t| self.export_tool(t, api)).collect();
        match api {
            Api::Anthropic => check_anthropic_limits(self, &exported)?,
            Api::Gemini => check_gemini(self)?,
            _ => {}
        }
        let tools: Vec<Value> = exported.into_iter().map(|e| e.json).collect();
        Ok(match api {
            Api::Gemini => vec![json!({ "functionDeclarations": tools })],
            _ => tools,
        })
    }
}

fn check_anthropic_limits(set: &ToolSet, exported: &[Exported]) -> Result<(), ExportError> {
    let limit = |message: String| ExportError::Limit {
        api: Api::Anthropic,
        message,
    };
    let strict: Vec<&Tool> = set
        .iter()
        .zip(exported)
        .filter(|(_, e)| e.strict)
        .map(|(t, _)| t)
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
    let required = crate::schema::required_names(schema);
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

fn check_gemini(set: &ToolSet) -> Result<(), ExportError> {
    if set.len() > GEMINI_MAX_DECLARATIONS {
        return Err(ExportError::Limit {
            api: Api::Gemini,
            message: format!(
                "{} function declarations, over the limit of {GEMINI_MAX_DECLARATIONS}",
                set.len()
            ),
        });
    }
    // Gemini's parameter names: a letter or `_`, then letters, digits or `_`, at most 64.
    for t in set.iter() {
        for name in t.input_schema()["properties"]
            .as_object()
            .into_iter()
            .flat_map(|m| m.keys())
        {
            let mut chars = name.chars();
            let ok = chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
                && name.len() <= 64;
            if !ok {
                return Err(ExportError::Name {
                    api: Api::Gemini,
                    message: format!(
                        "tool `{}`: parameter name `{name}` is not accepted (letters, digits, `_`; starting with a letter or `_`; at most 64)",
                        t.name()
                    ),
                });
            }
        }
    }
    Ok(())
}

/// The structured-output request fields for `T` on `api`, named `name`:
/// OpenAI Chat `response_format`, OpenAI Responses `text`, Anthropic `output_config`, Gemini
/// `generationConfig`. MCP has no structured-output request; it gets the JSON Schema itself.
pub fn structured_output<T: JsonSchema>(api: Api, name: &str) -> Exported {
    let canonical = crate::structured::schema::<T>();
    match api {
        Api::OpenAiChat => {
            let Lowered {
                schema,
                strict,
                reasons,
            } = lower::openai_strict(&canonical);
            let json = json!({ "type": "json_schema", "json_schema": { "name": name, "schema": schema, "strict": strict } });
            Exported {
                json,
                strict,
                reasons,
            }
        }
        Api::OpenAiResponses => {
            let Lowered {
                schema,
                strict,
                reasons,
            } = lower::openai_strict(&canonical);
            let json = json!({ "format": { "type": "json_schema", "name": name, "schema": schema, "strict": strict } });
            Exported {
                json,
                strict,
                reasons,
            }
        }
        Api::Anthropic => {
            let Lowered {
                schema,
                strict,
                reasons,
            } = lower::anthropic(&canonical);
            let json = json!({ "format": { "type": "json_schema", "schema": schema } });
            Exported {
                json,
                strict,
                reasons,
            }
        }
        Api::Gemini => {
            let Lowered { schema, .. } = lower::gemini(&canonical);
            let json =
                json!({ "responseMimeType": "application/json", "responseJsonSchema": schema });
            Exported {
                json,
                strict: true,
                reasons: Vec::new(),
            }
        }
        Api::Mcp => Exported {
            json: canonical,
            strict: true,
            reasons: Vec::new(),
        },
    }
}

/// The `structuredContent` of an MCP `tools/call` result for this tool's output: the output
/// itself when it is an object, `{"result": output}` otherwise (matching its `outputSchema`).
pub fn mcp_structured_content(tool: &Tool, output: Value) -> Value {
    if lower::mcp_output_is_wrapped(tool.output_schema()) {
        json!({ "result": output })
    } else {
        output
    }
}
