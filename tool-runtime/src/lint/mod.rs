//! Lints across a tool set, and over the types a model fills: the mistakes no single `#[tool]`
//! can see. Each lint has an id, an explanation and a fix; `#[tool(allow_lint = "id: reason")]`
//! silences one for one tool, `#[arg(allow_lint = "id: reason")]` on a `#[derive(ToolArg)]` type
//! for that type ([`check_output`]). The word-based checks are heuristics, written for Indonesian and English
//! descriptions, and say so in their messages.

use std::collections::BTreeSet;
use std::fmt;

use serde::Serialize;
use serde_json::Value;

use crate::arg::ToolArg;
use crate::set::ToolSet;
use crate::tool::Tool;

mod words;
use words::Words;

/// One finding.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Lint {
    /// The lint's id, one of [`LINTS`]; `allow_lint` names it.
    pub id: &'static str,
    /// The tool it is about (or, from [`check_output`], the type); empty for a finding about
    /// the whole set.
    pub tool: String,
    /// What is wrong, as a sentence.
    pub message: String,
    /// What to change, as a sentence.
    pub fix: String,
}

impl fmt::Display for Lint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.tool.is_empty() {
            "tool set".to_owned()
        } else {
            format!("`{}`", self.tool)
        };
        write!(f, "[{}] {at}: {} Fix: {}", self.id, self.message, self.fix)
    }
}

/// Every lint id, with what it means.
pub const LINTS: &[(&str, &str)] = &[
    (
        "overlap",
        "two tools' descriptions overlap strongly and neither `not_for` names the other",
    ),
    (
        "too-many-tools",
        "more than 10 tools for one agent: agents start picking the wrong one",
    ),
    (
        "no-returns",
        "the description does not say what the tool returns (heuristic)",
    ),
    (
        "no-when",
        "the description does not say when to use the tool (heuristic)",
    ),
    (
        "closed-set-string",
        "a string argument's description lists a closed set of values: make it an enum",
    ),
    (
        "optional-without-rule",
        "an optional argument with no default and no rule for when it is not given",
    ),
    (
        "decision-before-reason",
        "a reasoning field comes after the decision it supports: the model fills fields in order",
    ),
    (
        "unordered-json",
        "this program's serde_json sorts object keys: providers see properties alphabetically, not as declared",
    ),
    (
        "tool-tokens",
        "one tool's exported definition takes more tokens than the host's budget (feature `tokens`)",
    ),
    (
        "request-tokens",
        "the tool set's definitions together take more tokens than the host's budget for a request (feature `tokens`)",
    ),
];

/// Whether this program keeps JSON object members in declaration order: `false` when serde_json
/// was built without `preserve_order` (turn on `tool-runtime`'s feature of that name). Without
/// it, schemas validate the same, but providers see every object's properties in alphabetical
/// order, and [`check`] cannot tell a reason declared after its decision.
pub fn keeps_order() -> bool {
    crate::schema::keeps_order()
}

/// The finding of a program that sorts JSON keys, at `at` (a tool set, or a type).
fn unordered(at: &str) -> Lint {
    Lint {
        id: "unordered-json",
        tool: at.into(),
        message: "this program's serde_json sorts object keys (it is built without `preserve_order`), so providers see every object's properties in alphabetical order, not as declared; a model fills fields in the order it sees them.".into(),
        fix: "turn on tool-runtime's `preserve_order` feature (cargo add tool-runtime --features preserve_order).".into(),
    }
}

/// Whether a schema has an object with two properties or more, whose order a sorted map loses.
fn has_ordered_object(schema: &Value) -> bool {
    match schema {
        Value::Object(m) => {
            m.get("properties")
                .and_then(Value::as_object)
                .is_some_and(|p| p.len() > 1)
                || m.values().any(has_ordered_object)
        }
        Value::Array(a) => a.iter().any(has_ordered_object),
        _ => false,
    }
}

/// Jaccard similarity of descriptions and names at or above which two tools overlap.
pub const OVERLAP: f64 = 0.3;
/// More tools than this for one agent is a lint.
pub const MAX_TOOLS: usize = 10;

fn words(text: &str) -> BTreeSet<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 2 && !words::all(|p| p.stopwords).any(|s| s == *w))
        .map(str::to_owned)
        .collect()
}

fn similarity(a: &Tool, b: &Tool) -> f64 {
    let text = |t: &Tool| {
        format!(
            "{} {}",
            t.name().replace(['-', '_'], " "),
            t.spec_description()
        )
    };
    let (x, y) = (words(&text(a)), words(&text(b)));
    let union = x.union(&y).count();
    if union == 0 {
        0.0
    } else {
        x.intersection(&y).count() as f64 / union as f64
    }
}

fn names_other(t: &Tool, other: &Tool) -> bool {
    t.not_for().is_some_and(|n| n.contains(other.name()))
}

/// Whether `text` holds one of `phrases`, each starting at the start of a word (case and
/// punctuation aside); a phrase ending in a space is whole words: `"null "` is found in
/// "…; null for all" but not in "nullable".
fn mentions(text: &str, phrases: fn(&Words) -> &'static [&'static str]) -> bool {
    let mut words = String::with_capacity(text.len() + 2);
    for w in text
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        words.push(' ');
        words.push_str(w);
    }
    words.push(' ');
    words::all(phrases).any(|p| {
        words
            .match_indices(p)
            .any(|(i, _)| i > 0 && words.as_bytes()[i - 1] == b' ')
    })
}

/// Runs every lint over `set`, leaving out those a tool allows.
pub fn check(set: &ToolSet) -> Vec<Lint> {
    let mut out = Vec::new();
    if set.len() > MAX_TOOLS {
        out.push(Lint {
            id: "too-many-tools",
            tool: String::new(),
            message: format!("{} tools for one agent; past about {MAX_TOOLS} agents start picking the wrong one.", set.len()),
            fix: "split the work into subagents, each with the tools it needs (ToolSet::new per agent).".into(),
        });
    }
    let tools: Vec<&Tool> = set.iter().map(|t| &**t).collect();
    for (i, a) in tools.iter().enumerate() {
        for b in &tools[i + 1..] {
            let s = similarity(a, b);
            if s >= OVERLAP && !names_other(a, b) && !names_other(b, a) {
                out.push(Lint {
                    id: "overlap",
                    tool: a.name().into(),
                    message: format!(
                        "its description overlaps `{}`'s ({:.0}% shared words) and neither `not_for` names the other.",
                        b.name(),
                        s * 100.0
                    ),
                    fix: format!("add a boundary sentence to both: not_for = \"... (use {})\" on this one, and the converse on `{}`.", b.name(), b.name()),
                });
            }
        }
    }
    for t in &tools {
        let d = t.spec_description();
        if !mentions(d, |p| p.returns) {
            out.push(Lint {
                id: "no-returns",
                tool: t.name().into(),
                message: "the description does not seem to say what the tool returns (heuristic: no verb such as ambil, kembalikan, return, get).".into(),
                fix: "start with what comes back, in a sentence such as \"Returns the ... of the given ...\".".into(),
            });
        }
        if !mentions(d, |p| p.when) && t.not_for().is_none() {
            out.push(Lint {
                id: "no-when",
                tool: t.name().into(),
                message: "the description does not seem to say when to use the tool (heuristic: no \"use when\", \"pakai saat\", no `not_for`).".into(),
                fix: "add a sentence on the situation that calls for it, such as \"Use when the user asks about ...\", or a `not_for` boundary.".into(),
            });
        }
        check_arguments(t, &mut out);
        if keeps_order() {
            for (field, reason) in decisions_before_reasons(t.input_schema()) {
                out.push(decision_before_reason(
                    t.name(),
                    &field,
                    &reason,
                    "argument",
                ));
            }
        }
    }
    if !keeps_order() && tools.iter().any(|t| has_ordered_object(t.input_schema())) {
        out.push(unordered(""));
    }
    let silenced = |l: &Lint| set.get(&l.tool).and_then(|t| t.silences_lint(l.id));
    out.retain(|l| l.tool.is_empty() || silenced(l).is_none());
    out
}

fn check_arguments(t: &Tool, out: &mut Vec<Lint>) {
    let schema = t.input_schema();
    let required = crate::schema::required_names(schema);
    for (name, p) in schema["properties"].as_object().into_iter().flatten() {
        let description = p["description"].as_str().unwrap_or_default();
        let is_string = p["type"] == "string"
            || p["type"]
                .as_array()
                .is_some_and(|ts| ts.iter().any(|x| x == "string"));
        let closed =
            p.get("enum").is_some() || p.get("oneOf").is_some() || p.get("pattern").is_some();
        if is_string && !closed && lists_values(&description.to_lowercase()) {
            out.push(Lint {
                id: "closed-set-string",
                tool: t.name().into(),
                message: format!("argument `{name}` is a free string but its description lists the values it takes."),
                fix: "make it a #[derive(ToolArg)] enum, so the schema closes the set.".into(),
            });
        }
        let optional = !required.contains(&name.as_str());
        if optional && p.get("default").is_none() && !mentions(description, |p| p.not_given) {
            out.push(Lint {
                id: "optional-without-rule",
                tool: t.name().into(),
                message: format!("optional argument `{name}` has no default and its description does not say what to do when the user does not give it."),
                fix: "add #[arg(default = ...)], or a rule in the description such as \"omit it when the user does not say\".".into(),
            });
        }
    }
}

/// "harian, mingguan atau bulanan", "one of a, b or c", quoted alternatives: a closed set. A
/// clause counts as a list when it is three or more short items (one or two words each)
/// separated by commas and a final "atau"/"or", and gives them as no more than examples.
fn lists_values(d: &str) -> bool {
    let quoted = d.matches('"').count() >= 4 || d.matches('\'').count() >= 4;
    let listed = d.split([';', ':', '.', '(', ')']).any(|clause| {
        // Examples name an open set: "such as a, b or c" lists no closed one.
        let joined = words::all(|p| p.or).any(|or| clause.contains(&format!(" {or} ")));
        if !joined || mentions(clause, |p| p.examples) {
            return false;
        }
        let items: Vec<&str> = clause
            .split(',')
            .flat_map(|part| part.split(" atau ").flat_map(|p| p.split(" or ")))
            .map(str::trim)
            .filter(|i| !i.is_empty())
            .collect();
        items.len() >= 3 && items.iter().all(|i| i.split_whitespace().count() <= 2)
    });
    quoted || listed || d.contains("salah satu dari") || d.contains("one of")
}

/// The lints of a type the model fills as structured output: today `decision-before-reason`,
/// over the type's fields and those of the types it contains. `#[arg(allow_lint = "id: reason")]`
/// on the type silences one.
///
/// ```
/// use serde::Deserialize;
/// use tool_runtime::{ToolArg, lint};
///
/// /// Whether an abstract is relevant to the review's topic.
/// #[derive(ToolArg, Deserialize)]
/// struct Decision {
///     /// Whether the abstract is relevant
///     relevant: bool,
///     /// A short reason, from the abstract
///     reason: String,
/// }
///
/// let lints = lint::check_output::<Decision>();
/// if lint::keeps_order() {
///     assert_eq!(lints[0].id, "decision-before-reason");
///     assert!(lints[0].fix.contains("declare `reason` before `relevant`"));
/// } else {
///     // Without `preserve_order` the declared order is gone, and the lint says so.
///     assert_eq!(lints[0].id, "unordered-json");
/// }
/// ```
pub fn check_output<T: ToolArg>() -> Vec<Lint> {
    let name = T::schema_name();
    let schema = crate::structured::schema::<T>();
    let mut out: Vec<Lint> = if keeps_order() {
        decisions_before_reasons(&schema)
            .into_iter()
            .map(|(field, reason)| decision_before_reason(&name, &field, &reason, "field"))
            .collect()
    } else if has_ordered_object(&schema) {
        vec![unordered(&name)]
    } else {
        Vec::new()
    };
    out.retain(|l| T::silences_lint(l.id).is_none());
    out
}

fn decision_before_reason(at: &str, decision: &str, reason: &str, what: &str) -> Lint {
    Lint {
        id: "decision-before-reason",
        tool: at.into(),
        message: format!(
            "{what} `{reason}` explains {what} `{decision}` but comes after it; the model fills {what}s in order, so it decides first and then finds reasons for the decision."
        ),
        fix: format!("declare `{reason}` before `{decision}`."),
    }
}

/// Every (decision, reason) pair where a reasoning field follows a decision field (a boolean or a
/// closed set of values) in one object of `schema`: nested objects, list items, alternatives and
/// `$defs` included.
fn decisions_before_reasons(schema: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut todo = vec![schema];
    while let Some(node) = todo.pop() {
        if let Some(properties) = node.get("properties").and_then(Value::as_object) {
            let mut first_decision = None;
            for (name, p) in properties {
                let p = resolve(schema, p);
                if first_decision.is_none() && is_decision(p) {
                    first_decision = Some(name);
                } else if let Some(decision) = first_decision
                    && is_reason(name, p)
                {
                    out.push((decision.clone(), name.clone()));
                }
            }
            todo.extend(properties.values());
        }
        for key in ["items", "additionalProperties", "not"] {
            todo.extend(node.get(key).filter(|v| v.is_object()));
        }
        for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
            todo.extend(
                node.get(key)
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten(),
            );
        }
        todo.extend(
            node.get("$defs")
                .and_then(Value::as_object)
                .into_iter()
                .flat_map(|d| d.values()),
        );
    }
    out
}

/// A `$ref` into the schema's own `$defs`, followed to the end of a chain of them (a cycle
/// stops after one lap); anything else as it is.
fn resolve<'a>(root: &'a Value, mut p: &'a Value) -> &'a Value {
    let laps = root
        .get("$defs")
        .and_then(Value::as_object)
        .map_or(0, |d| d.len());
    for _ in 0..laps {
        let target = p["$ref"]
            .as_str()
            .and_then(|r| r.strip_prefix("#/$defs/"))
            .and_then(|name| root.get("$defs")?.get(name));
        match target {
            Some(t) => p = t,
            None => break,
        }
    }
    p
}

fn types(p: &Value) -> Vec<&str> {
    match &p["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn is_decision(p: &Value) -> bool {
    let closed = p.get("enum").is_some()
        || p.get("const").is_some()
        || p["oneOf"]
            .as_array()
            .is_some_and(|alts| alts.iter().all(|a| a.get("const").is_some()));
    closed || types(p).contains(&"boolean")
}

fn is_reason(name: &str, p: &Value) -> bool {
    if !types(p).contains(&"string") || p.get("enum").is_some() {
        return false;
    }
    let description = p["description"].as_str().unwrap_or_default().to_lowercase();
    words::all(|p| p.reason_names).any(|n| n == name.to_lowercase())
        || words::all(|p| p.reason_words).any(|w| description.contains(w))
}

/// The tools of `set` whose definition for `api` takes more than `budget.per_tool` tokens, and
/// the set when all of them together take more than `budget.per_request` (see
/// [`crate::tokens`]; an estimate outside the OpenAI APIs, and the message says so). A tool's
/// `allow_lint = "tool-tokens: why"` silences the first.
#[cfg(feature = "tokens")]
pub fn check_tokens(
    set: &ToolSet,
    api: crate::provider::Api,
    budget: crate::tokens::Budget,
) -> Vec<Lint> {
    let counted = crate::tokens::of_set(set, api);
    let how = if crate::tokens::is_exact(api) {
        "tokens (o200k_base)"
    } else {
        "tokens (estimated with o200k_base: this provider's tokenizer is not public)"
    };
    let mut out: Vec<Lint> = set
        .iter()
        .zip(&counted)
        .filter(|(t, c)| c.tokens > budget.per_tool && t.silences_lint("tool-tokens").is_none())
        .map(|(t, c)| Lint {
            id: "tool-tokens",
            tool: t.name().into(),
            message: format!(
                "its {} definition takes {} {how}, over the budget of {} per tool.",
                api.id(),
                c.tokens,
                budget.per_tool
            ),
            fix: "shorten its description and argument descriptions, or split the tool; or defer it so it is sent only when searched for.".into(),
        })
        .collect();
    let total: usize = counted.iter().map(|c| c.tokens).sum();
    if total > budget.per_request {
        out.push(Lint {
            id: "request-tokens",
            tool: String::new(),
            message: format!(
                "the {} tools' {} definitions take {total} {how}, over the budget of {} per request.",
                counted.len(),
                api.id(),
                budget.per_request
            ),
            fix: "send fewer tools per request: split the agent, or defer the tools it rarely needs.".into(),
        });
    }
    out
}

/// Fails a test with every lint of `set`, one per line.
pub fn assert_clean(set: &ToolSet) {
    let lints = check(set);
    assert!(
        lints.is_empty(),
        "tool set lints:\n{}",
        lints
            .iter()
            .map(|l| format!("  {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn a_decision_behind_a_chain_of_references_is_still_a_decision() {
        let schema = json!({
            "$defs": {
                "Putusan": {"$ref": "#/$defs/Pilihan"},
                "Pilihan": {"type": "string", "enum": ["setuju", "tolak"]}
            },
            "type": "object",
            "properties": {
                "keputusan": {"$ref": "#/$defs/Putusan"},
                "penjelasan": {"type": "string", "description": "Alasan keputusan"}
            }
        });
        assert_eq!(
            super::decisions_before_reasons(&schema),
            [("keputusan".to_owned(), "penjelasan".to_owned())]
        );
        // A cycle of references ends after one lap, with no decision found.
        let cycle = json!({
            "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}},
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A"}, "b": {"type": "string", "description": "Alasan"}}
        });
        assert!(super::decisions_before_reasons(&cycle).is_empty());
    }
}
