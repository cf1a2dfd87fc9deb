//! Finding tools by what a person asks: BM25 ranking over each tool's name, description (with
//! its boundary sentence) and argument descriptions, for catalogs too large to send whole. The
//! index only ranks: what a caller may see and call is still the tool set's rules (search a
//! set made with [`ToolSet::visible_to`], and every call is checked as any other).
//!
//! ```
//! use tool_runtime::{ToolSet, search::ToolIndex, tool};
//!
//! #[tool(description = "Return the weather forecast for a city; use when the user asks about rain or temperature.")]
//! fn cuaca(#[arg(description = "The city's name")] kota: String) -> String { kota }
//!
//! #[tool(description = "Order catering portions for a number of guests; use when the user plans an event.")]
//! fn katering(#[arg(description = "Number of guests", range = 1..=500)] tamu: u32) -> u32 { tamu }
//!
//! let set = ToolSet::new([cuaca::tool(), katering::tool()]).unwrap();
//! let index = ToolIndex::new(&set);
//! assert_eq!(index.search("will it rain in Bandung tomorrow?", 1)[0].tool, "cuaca");
//! assert_eq!(index.search("food for 40 guests", 1)[0].tool, "katering");
//! ```

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::context::Context;
use crate::defer::{Deferral, Offered, SchemasInAnswers};
use crate::error::ToolError;
use crate::future::BoxFuture;
use crate::handler::Handler;
use crate::host::Annotations;
use crate::set::{ToolRef, ToolSet, ToolSetError};
use crate::tool::Tool;

/// The name of the tool a set with [deferred](ToolSet::defer) tools offers the model to find
/// them.
pub const SEARCH_TOOL: &str = crate::defer::SEARCH_TOOL;

/// Tools one search returns when the model does not say, and at most.
const FOUND_BY_DEFAULT: usize = 5;
const MOST_FOUND: usize = 10;

/// BM25's term-frequency saturation and length normalisation (the usual values).
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// How many times a tool's name counts against its description: names are short and exact.
const NAME_WEIGHT: u32 = 2;

/// Words too common to tell tools apart, in English and Indonesian.
const STOP: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "how", "i", "in", "is", "it",
    "its", "me", "my", "of", "on", "or", "the", "this", "to", "use", "what", "when", "which",
    "with", "you", "your", "ada", "apa", "atau", "bila", "dan", "dari", "di", "ini", "itu", "ke",
    "saya", "untuk", "yang", "pakai", "saat", "not", "bukan",
];

/// One tool, as the index keeps it.
struct Doc {
    tool: String,
    terms: HashMap<String, u32>,
    len: u32,
}

/// A tool found, with its score (higher is closer).
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    /// The tool's name.
    pub tool: String,
    /// Its BM25 score for the query.
    pub score: f64,
}

/// An index over a tool set's tools (built once; the set may be large).
pub struct ToolIndex {
    docs: Vec<Doc>,
    /// In how many tools each term occurs.
    df: HashMap<String, u32>,
    avg_len: f64,
}

impl std::fmt::Debug for ToolIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolIndex")
            .field("tools", &self.docs.len())
            .field("terms", &self.df.len())
            .finish()
    }
}

/// The words of `text`: lowercase runs of letters and digits, without the common ones, an
/// English plural's `s` dropped (`payslips` finds `payslip`; applied to tools and requests
/// alike, so a word that only looks plural still matches itself).
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| !STOP.contains(&w.as_str()))
        .map(|mut w| {
            if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") {
                w.pop();
            }
            w
        })
}

/// The argument descriptions of a schema, nested objects and array items included.
fn argument_text(schema: &Value, out: &mut String) {
    if let Some(d) = schema.get("description").and_then(Value::as_str) {
        out.push(' ');
        out.push_str(d);
    }
    if let Some(Value::Object(properties)) = schema.get("properties") {
        for (name, property) in properties {
            out.push(' ');
            out.push_str(name);
            argument_text(property, out);
        }
    }
    if let Some(items) = schema.get("items") {
        argument_text(items, out);
    }
}

fn document(tool: &Tool) -> Doc {
    let mut terms: HashMap<String, u32> = HashMap::new();
    for w in words(tool.name()) {
        *terms.entry(w).or_default() += NAME_WEIGHT;
    }
    let mut text = tool.description().to_owned();
    argument_text(tool.input_schema(), &mut text);
    for w in words(&text) {
        *terms.entry(w).or_default() += 1;
    }
    let len = terms.values().sum();
    Doc {
        tool: tool.name().to_owned(),
        terms,
        len,
    }
}

impl ToolIndex {
    /// The index of every tool of `set`.
    pub fn new(set: &ToolSet) -> ToolIndex {
        ToolIndex::of(set.iter().map(|t| &**t))
    }

    fn of<'t>(tools: impl Iterator<Item = &'t Tool>) -> ToolIndex {
        let docs: Vec<Doc> = tools.map(document).collect();
        let mut df: HashMap<String, u32> = HashMap::new();
        for d in &docs {
            for term in d.terms.keys() {
                *df.entry(term.clone()).or_default() += 1;
            }
        }
        let total: u64 = docs.iter().map(|d| u64::from(d.len)).sum();
        let avg_len = if docs.is_empty() {
            1.0
        } else {
            total as f64 / docs.len() as f64
        };
        ToolIndex { docs, df, avg_len }
    }

    /// How many tools it holds.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// At most `limit` tools matching `query`, best first (ties by name); tools sharing no
    /// word with it are not found.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Hit> {
        let mut query: Vec<String> = words(query).collect();
        query.sort();
        query.dedup();
        let n = self.docs.len() as f64;
        let idf: Vec<(&str, f64)> = query
            .iter()
            .filter_map(|t| {
                let df = f64::from(*self.df.get(t)?);
                Some((t.as_str(), (1.0 + (n - df + 0.5) / (df + 0.5)).ln()))
            })
            .collect();
        let mut hits: Vec<Hit> = self
            .docs
            .iter()
            .filter_map(|d| {
                let norm = K1 * (1.0 - B + B * f64::from(d.len) / self.avg_len);
                let score: f64 = idf
                    .iter()
                    .filter_map(|(t, idf)| {
                        let tf = f64::from(*d.terms.get(*t)?);
                        Some(idf * tf * (K1 + 1.0) / (tf + norm))
                    })
                    .sum();
                (score > 0.0).then(|| Hit {
                    tool: d.tool.clone(),
                    score,
                })
            })
            .collect();
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.tool.cmp(&b.tool))
        });
        hits.truncate(limit);
        hits
    }
}

/// What the search tool searches: the deferred tools and their index.
struct Catalog {
    index: ToolIndex,
    tools: HashMap<String, ToolRef>,
}

impl Handler for Catalog {
    /// The deferred tools best matching the query that this caller may call, best first.
    fn call<'a>(
        &'a self,
        cx: &'a Context,
        arguments: Value,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        let query = arguments["query"].as_str().unwrap_or_default();
        let limit = arguments["limit"]
            .as_u64()
            .map_or(FOUND_BY_DEFAULT, |l| (l as usize).min(MOST_FOUND));
        let found = self
            .index
            .search(query, usize::MAX)
            .into_iter()
            .filter_map(|hit| self.tools.get(&hit.tool))
            .filter(|tool| tool.permits(cx))
            .filter(|tool| {
                cx.get::<Offered>()
                    .is_none_or(|offered| offered.0.iter().any(|o| o == tool.name()))
            })
            .take(limit);
        let schemas = cx.get::<SchemasInAnswers>().is_some();
        let found = found
            .map(|t| {
                let mut entry = json!({"name": t.name(), "description": t.description()});
                if schemas {
                    entry["input_schema"] = t.input_schema().clone();
                }
                entry
            })
            .collect();
        let answer = Deferral::answer(found);
        Box::pin(std::future::ready(Ok(answer)))
    }
}

impl ToolSet {
    /// The set with the tools `which` picks **deferred**: a request does not send them, but
    /// the set's search tool ([`SEARCH_TOOL`], added here), which ranks them by name,
    /// description and argument descriptions ([`ToolIndex`]) and returns only tools the caller
    /// may call, with their input schemas, and [`CALL_TOOL`](crate::CALL_TOOL), through which
    /// the model calls what it found. The tool list so stays the same from the first request of
    /// a conversation to the last, as the providers' caches and Anthropic's prefix check want
    /// ([`Conversation::found`](crate::agent::Conversation::found) records what was found).
    /// Anthropic's API gets every deferred tool marked `defer_loading` with its own search
    /// tool instead ([`Provider::tool_search`](crate::provider::Provider::tool_search)).
    ///
    /// Deferring changes what the model *sees*, never what it may do: a deferred tool stays in
    /// the set, and every call of it is validated, permission-checked and approval-gated like
    /// any other. A tool added after this is not deferred; deferring again adds to what is
    /// deferred. A set with a tool of its own named [`SEARCH_TOOL`] is refused.
    ///
    /// ```
    /// use tool_runtime::{Api, ToolSet, tool};
    /// use tool_runtime::agent::Conversation;
    /// use tool_runtime::provider::Request;
    ///
    /// #[tool(description = "Return the weather forecast for a city.")]
    /// fn cuaca(#[arg(description = "The city's name")] kota: String) -> String { kota }
    ///
    /// #[tool(description = "Order catering portions for a number of guests.")]
    /// fn katering(#[arg(description = "Number of guests", range = 1..=500)] tamu: u32) -> u32 { tamu }
    ///
    /// let tools = ToolSet::new([cuaca::tool(), katering::tool()]).unwrap()
    ///     .defer(|t| t.name() == "katering").unwrap();
    /// let request = Request::new("gpt-4.1").tools(&tools);
    /// let mut conversation = Conversation::new(Api::OPENAI_CHAT);
    /// conversation.push_user("Catering for 25?");
    /// let sent = conversation.request(&request).unwrap().body;
    /// let names: Vec<_> = sent["tools"].as_array().unwrap().iter().map(|t| &t["function"]["name"]).collect();
    /// // katering waits to be found; the model then calls it through `call_tool`, and the list
    /// // never changes (the conversation's start stays what the provider cached).
    /// assert_eq!(names, ["cuaca", "search_tools", "call_tool"]);
    /// ```
    pub fn defer(self, which: impl Fn(&Tool) -> bool) -> Result<ToolSet, ToolSetError> {
        // Deferring again adds to what is deferred: one search tool over all of them.
        let before: Vec<String> = self
            .iter()
            .filter(|t| self.is_deferred(t.name()))
            .map(|t| t.name().to_owned())
            .collect();
        let base = if self.defers() {
            self.without(SEARCH_TOOL)
        } else {
            self
        };
        let deferred: Vec<ToolRef> = base
            .iter()
            .filter(|t| before.iter().any(|b| b == t.name()) || which(t))
            .cloned()
            .collect();
        if deferred.is_empty() {
            let mut base = base;
            base.deferred = None;
            return Ok(base);
        }
        let catalog = Catalog {
            index: ToolIndex::of(deferred.iter().map(|t| &**t)),
            tools: deferred
                .iter()
                .map(|t| (t.name().to_owned(), t.clone()))
                .collect(),
        };
        let names = catalog.tools.keys().cloned().collect();
        let mut set = base.with_tools([search_tool(catalog)])?;
        set.deferred = Some(Arc::new(Deferral::new(names)));
        Ok(set)
    }
}

/// The tool that finds deferred tools.
fn search_tool(catalog: Catalog) -> Tool {
    Tool::define(
        SEARCH_TOOL,
        "Find tools that are not listed yet: say in a few words what you need a tool for \
         (English or Indonesian). Returns the best matching tools' names and descriptions; the \
         tools found can be called from your next turn.",
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1, "maxLength": 200,
                          "description": "What the tool should do, in a few words"},
                "limit": {"type": "integer", "minimum": 1, "maximum": MOST_FOUND,
                          "description": "How many tools to return (5 when left out)"}
            },
            "required": ["query"],
            "additionalProperties": false
        }),
    )
    .output_schema(json!({
        "type": "object",
        "properties": {
            "found": {"type": "array", "items": {"type": "object"},
                      "description": "The tools found, best first: name, description (and input_schema for a client that calls them through call_tool)"},
            "note": {"type": "string"}
        },
        "required": ["found", "note"]
    }))
    .not_for("doing the task itself: call the tool it finds")
    .annotations(Annotations {
        read_only: Some(true),
        idempotent: Some(true),
        open_world: Some(false),
        ..Annotations::default()
    })
    .build(catalog)
    .expect("the search tool's definition is valid")
}
