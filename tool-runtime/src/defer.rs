//! Deferred tools: which of a set's tools a request sends only once the model has found them
//! with the set's search tool, and how that tool's answer names what it found. The search
//! itself is the `search` module's (feature `search`); the agent loop and the requests it
//! writes read only what is here.

use std::collections::HashSet;

use serde_json::{Value, json};

/// The name of the tool a set with [deferred](crate::ToolSet::defer) tools offers the model to
/// find them.
pub(crate) const SEARCH_TOOL: &str = "search_tools";

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

/// The deferred tools of a set, by name.
#[derive(Debug)]
#[cfg_attr(not(feature = "search"), allow(dead_code))]
pub(crate) struct Deferral {
    names: HashSet<String>,
}

#[cfg_attr(not(feature = "search"), allow(dead_code))]
impl Deferral {
    /// These tools deferred.
    pub(crate) fn new(names: HashSet<String>) -> Self {
        Deferral { names }
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
