//! Deferred tools: which of a set's tools a request sends only once the model has found them
//! with the set's search tool, and how that tool's answer names what it found. The search
//! itself is the `search` module's (feature `search`); the agent loop and the requests it
//! writes read only what is here.

use std::collections::HashSet;
use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::tool::Tool;

/// The name of the tool a set with [deferred](crate::ToolSet::defer) tools offers the model to
/// find them.
pub(crate) const SEARCH_TOOL: &str = "search_tools";

/// The name of the tool through which a model calls a [deferred](crate::ToolSet::defer) tool
/// it found: the tool list a conversation started with never grows (an API caches, and
/// Anthropic binds thinking to, the unchanged start of a conversation), so where the API
/// cannot add a tool mid-conversation by itself (OpenAI Chat, Gemini, Bedrock, and MCP
/// clients) the model names the found tool and its arguments here. The call is then that
/// tool's, checked as any other.
pub const CALL_TOOL: &str = "call_tool";

/// [`CALL_TOOL`]'s description, for a set with `deferred` tools behind it.
pub(crate) fn call_tool_description(deferred: usize) -> String {
    format!(
        "Call one of {deferred} more tools, not listed here, by its name: find it first with the search tool, whose answer gives each tool's name, what it does and its input schema. Not for the listed tools: call those directly."
    )
}

/// [`CALL_TOOL`] as a tool of its own, for the providers' tool lists (which take a [`Tool`]
/// beside each entry, to check their limits). It runs nothing: a call of it is the call of the
/// tool it names ([`unwrap_call_tool`]), made by whoever reads it (the agent loop, an MCP
/// server).
pub(crate) fn call_tool() -> &'static Tool {
    static CALL: OnceLock<Tool> = OnceLock::new();
    CALL.get_or_init(|| {
        Tool::define(CALL_TOOL, call_tool_description(0), call_tool_schema())
            .build_fn(|_| async {
                Err(crate::error::ToolError::failed(
                    "`call_tool` runs the tool it names: its caller unwraps it",
                ))
            })
            .expect("call_tool's definition is valid")
    })
}

/// [`CALL_TOOL`]'s input schema.
pub(crate) fn call_tool_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 64,
                     "description": "The tool's name, as the search tool gave it"},
            "arguments": {"type": "object",
                          "description": "The tool's arguments, as its input schema says"}
        },
        "required": ["name"],
        "additionalProperties": false
    })
}

/// A call of [`CALL_TOOL`] read from its arguments: the tool it names and that tool's
/// arguments (none: `{}`), or what is wrong with it, for the model to repair.
pub fn unwrap_call_tool(arguments: &Value) -> Result<(&str, Value), String> {
    let name = match arguments.get("name") {
        Some(Value::String(name)) if !name.is_empty() => name.as_str(),
        other => {
            return Err(format!(
                "`{CALL_TOOL}` needs `name`: the name of a tool the search tool found, as a string; got {}",
                other.map_or_else(|| "nothing".to_owned(), Value::to_string)
            ));
        }
    };
    match arguments.get("arguments") {
        None | Some(Value::Null) => Ok((name, json!({}))),
        Some(inner @ Value::Object(_)) => Ok((name, inner.clone())),
        Some(other) => Err(format!(
            "`arguments` of `{CALL_TOOL}` are the tool's arguments, an object; got {other}"
        )),
    }
}

/// Put in a call's context to have a set's search tool ([`ToolSet::defer`](crate::ToolSet::defer))
/// answer each found tool's input schema too: for a client that never gets the found tools'
/// definitions and calls them through a `call_tool` (an MCP server serving the search/call
/// pair puts it there).
#[derive(Clone, Copy, Debug, Default)]
pub struct SchemasInAnswers;

/// The tools a turn offers (when not all of them), in the context of a call of the set's
/// search tool: it finds only these.
#[derive(Clone, Debug)]
#[cfg_attr(not(feature = "search"), allow(dead_code))]
pub(crate) struct Offered(pub(crate) Vec<String>);

/// How a request offers one tool of its set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Loading {
    /// Sent in every request.
    Always,
    /// Sent once the model found it, or marked deferred where the API searches itself.
    Deferred,
    /// The set's search tool, which an API that searches itself replaces with its own.
    Search,
}

/// What a set's search tool ranks with, as far as the set sees it: made ready before the
/// first search (`search::ToolIndex`).
#[cfg(feature = "search")]
pub(crate) trait Ranker: Send + Sync + std::fmt::Debug {
    /// Readies it now (an embedding service asked for the tools), or says why it could not.
    fn prepare(
        &self,
    ) -> crate::future::BoxFuture<'_, Result<(), Box<dyn std::error::Error + Send + Sync>>>;
}

/// The deferred tools of a set, by name, and what its search tool ranks them with.
#[derive(Debug)]
#[cfg_attr(not(feature = "search"), allow(dead_code))]
pub(crate) struct Deferral {
    names: HashSet<String>,
    #[cfg(feature = "search")]
    pub(crate) ranker: std::sync::Arc<dyn Ranker>,
}

#[cfg_attr(not(feature = "search"), allow(dead_code))]
impl Deferral {
    /// These tools deferred, found through `ranker`.
    #[cfg(feature = "search")]
    pub(crate) fn new(names: HashSet<String>, ranker: std::sync::Arc<dyn Ranker>) -> Self {
        Deferral { names, ranker }
    }

    /// How a request offers the tool named `name`.
    pub(crate) fn loading(&self, name: &str) -> Loading {
        if name == SEARCH_TOOL {
            Loading::Search
        } else if self.names.contains(name) {
            Loading::Deferred
        } else {
            Loading::Always
        }
    }

    /// The search tool's answer: the tools found (each an object with its `name`), best first.
    pub(crate) fn answer(found: Vec<Value>) -> Value {
        let note = if found.is_empty() {
            "No tool matched: try other words, or fewer."
        } else {
            "These tools can be called from your next turn."
        };
        json!({"found": found, "note": note})
    }
}

/// The names of the tools a search tool's [`answer`](Deferral::answer) lists (an answer of
/// another shape lists none).
pub(crate) fn found_in(answer: &Value) -> impl Iterator<Item = &str> {
    answer["found"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str())
}
