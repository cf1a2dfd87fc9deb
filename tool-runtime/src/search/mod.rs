//! Finding tools by what a person asks: BM25 ranking over each tool's name, description (with
//! its boundary sentence) and argument descriptions, for catalogs too large to send whole;
//! fused with a model's sense of meaning where the host gives one: an [`Embedder`] run in the
//! process (feature `semantic`: [`WordLlama`], offline, from the files a Python package ships),
//! or an [`EmbeddingService`] behind a network call. Near-identical tools of
//! one family (names that differ only in a trailing number, `cek-gaji-1`, `cek-gaji-2`) take
//! one place each until every family found has one. The index only ranks: what a caller may
//! see and call is still the tool set's rules (search a set made with [`ToolSet::visible_to`],
//! and every call is checked as any other).
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
use crate::defer::{Deferral, Offered, Ranker, SchemasInAnswers};
use crate::error::ToolError;
use crate::future::BoxFuture;
use crate::handler::Handler;
use crate::host::Annotations;
use crate::set::{ToolRef, ToolSet, ToolSetError};
use crate::tool::Tool;

mod glossary;
mod service;
#[cfg(feature = "semantic")]
mod wordllama;
pub use glossary::{Glossary, GlossaryError, INDONESIAN_FUNCTION_WORDS};
pub use service::{EmbedError, EmbeddingCache, EmbeddingService};
use service::{Paused, SERVICE_TIMEOUT, Service};
#[cfg(feature = "semantic")]
pub use wordllama::{ModelError, WordLlama};

/// What turns a text into a vector whose direction is its meaning, for ranking tools by what
/// a request means rather than the words it shares with them: a model run in the process
/// ([`WordLlama`] with feature `semantic`, or a host's own), asked on the caller's thread:
/// every tool is embedded once when the index is built, each query once per search. A model
/// behind a network call is an [`EmbeddingService`] instead (asked asynchronously, and allowed
/// to fail). Vectors of one embedder have one length; the index normalizes them.
pub trait Embedder: Send + Sync {
    /// The vector of `text`.
    fn embed(&self, text: &str) -> Vec<f32>;
}

/// How a [`ToolIndex`] ranks tools: by the words they share with a request (BM25), the
/// default; with an [`Embedder`] or an [`EmbeddingService`], by meaning too; with a
/// [`Glossary`], each tool's text is also read in the glossary's language (a tool described in
/// Indonesian is found by an English request, through the words its description renders as).
///
/// ```
/// use tool_runtime::{ToolSet, search::{Glossary, Ranking, ToolIndex}, tool};
///
/// #[tool(description = "Ambil sisa kuota cuti karyawan yang sedang login.")]
/// fn cek_sisa_cuti() -> u32 { 12 }
///
/// #[tool(description = "Return the weather forecast for a city.")]
/// fn cuaca(#[arg(description = "The city's name")] kota: String) -> String { kota }
///
/// let set = ToolSet::new([cek_sisa_cuti::tool(), cuaca::tool()]).unwrap();
/// let glossary = Glossary::from_pairs([("cuti", "leave"), ("sisa", "remaining")]);
/// let index = ToolIndex::ranked_by(&set, Ranking::lexical().glossary(glossary));
/// assert_eq!(index.search("how much leave do I have remaining?", 1)[0].tool, "cek_sisa_cuti");
/// ```
#[derive(Clone, Default)]
pub struct Ranking {
    embedder: Option<Arc<dyn Embedder>>,
    service: Option<Arc<dyn EmbeddingService>>,
    service_timeout: Option<std::time::Duration>,
    glossary: Option<Arc<Glossary>>,
}

impl Ranking {
    /// By the words a request shares with each tool (BM25) alone.
    pub fn lexical() -> Ranking {
        Ranking::default()
    }

    /// By meaning too: `embedder` embeds each tool (its name and description, and what a
    /// glossary renders them as) when the index is built and each query when searched; a
    /// tool's score is the cosine of the two meanings plus one half of its BM25 score (scaled
    /// so the query's best is 1), so a request sharing no word with a tool can find it.
    pub fn embedder(mut self, embedder: Arc<dyn Embedder>) -> Ranking {
        self.embedder = Some(embedder);
        self.service = None;
        self
    }

    /// By meaning too, as [`embedder`](Self::embedder) says, with the vectors from `service`:
    /// asked by [`ToolIndex::search_async`] and a deferred set's search tool (the
    /// [`EmbeddingService`]'s rules), while [`ToolIndex::search`] ranks by the words alone.
    /// Replaces an embedder given before (and `embedder` replaces a service).
    pub fn service(mut self, service: Arc<dyn EmbeddingService>) -> Ranking {
        self.service = Some(service);
        self.embedder = None;
        self
    }

    /// How long one call of the [service](Self::service) may take before its search ranks by
    /// the words alone (10 seconds unless set), and how long searches leave the service alone
    /// after the tools could not be embedded.
    pub fn service_timeout(mut self, timeout: std::time::Duration) -> Ranking {
        self.service_timeout = Some(timeout);
        self
    }

    /// Each tool's name and description also rendered by `glossary`: the rendering is added
    /// to the words the tool is found by and to the text the embedder (or service) reads.
    pub fn glossary(mut self, glossary: impl Into<Arc<Glossary>>) -> Ranking {
        self.glossary = Some(glossary.into());
        self
    }
}

impl std::fmt::Debug for Ranking {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ranking")
            .field("embedder", &self.embedder.is_some())
            .field("service", &self.service.is_some())
            .field("service_timeout", &self.service_timeout)
            .field("glossary", &self.glossary.as_ref().map(|g| g.len()))
            .finish()
    }
}

/// `v` scaled to length 1 (a zero vector stays zero).
fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

/// How much the lexical score (scaled so the query's best is 1) counts beside the meaning's
/// (a cosine, at most 1) when an embedder ranks too: a tool sharing the request's rare words
/// still leads, and one sharing none can be found.
const LEXICAL_WEIGHT: f64 = 0.5;

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
    /// The tool's family: its name without a trailing number.
    family: String,
    terms: HashMap<String, u32>,
    len: u32,
    /// Its text's meaning, where the index has an embedder.
    meaning: Vec<f32>,
}

/// A tool found, with its score (higher is closer).
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    /// The tool's name.
    pub tool: String,
    /// Its score for the query: BM25; where the index ranks by meaning too (an [`Embedder`],
    /// or an [`EmbeddingService`] that answered), the cosine of their meanings plus half the
    /// BM25 score scaled so the query's best is 1.
    pub score: f64,
}

/// An index over a tool set's tools (built once; the set may be large).
pub struct ToolIndex {
    docs: Vec<Doc>,
    /// In how many tools each term occurs.
    df: HashMap<String, u32>,
    avg_len: f64,
    embedder: Option<Arc<dyn Embedder>>,
    service: Option<Service>,
}

impl std::fmt::Debug for ToolIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolIndex")
            .field("tools", &self.docs.len())
            .field("terms", &self.df.len())
            .field("embedder", &self.embedder.is_some())
            .field("service", &self.service.is_some())
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
/// How far a request's word may be from an indexed one and still count as it, mistyped: one
/// edit (a letter added, dropped, changed or two swapped) in a word of five letters or more,
/// two in one of nine or more.
fn typo_distance(word: &str) -> usize {
    match word.chars().count() {
        0..5 => 0,
        5..9 => 1,
        _ => 2,
    }
}

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

/// A tool's family: its name without a trailing number and the separator before it
/// (`cek-gaji-12` is of `cek-gaji`); a name not ending in a digit is a family of its own.
fn family(name: &str) -> &str {
    let stem = name.trim_end_matches(|c: char| c.is_ascii_digit());
    if stem.len() == name.len() || stem.is_empty() {
        return name;
    }
    let stem = stem.trim_end_matches(['-', '_', '.', ' ']);
    if stem.is_empty() { name } else { stem }
}

/// What the index reads of a tool: its name (words split), description and argument text.
fn text_of(tool: &Tool) -> (String, String) {
    let mut text = tool.description().to_owned();
    argument_text(tool.input_schema(), &mut text);
    (tool.name().replace(['-', '_'], " "), text)
}

/// The text whose meaning an embedder or a service takes of a tool: its name, description and
/// what a glossary renders them as (an [`Embedder`] reads it lowercase).
fn meaning_text(name: &str, description: &str, rendered: &str) -> String {
    let mut text = format!("{name}. {description}");
    if !rendered.is_empty() {
        text.push(' ');
        text.push_str(rendered);
    }
    text
}

/// A tool as the index keeps it, and the text its ranking's service embeds (when it has one).
fn document(tool: &Tool, ranking: &Ranking) -> (Doc, Option<String>) {
    let mut terms: HashMap<String, u32> = HashMap::new();
    for w in words(tool.name()) {
        *terms.entry(w).or_default() += NAME_WEIGHT;
    }
    let (name, text) = text_of(tool);
    for w in words(&text) {
        *terms.entry(w).or_default() += 1;
    }
    // What the name and description render as in the glossary's language.
    let rendered = ranking
        .glossary
        .as_ref()
        .map(|g| g.render(&format!("{name} {}", tool.description())))
        .unwrap_or_default();
    for w in words(&rendered) {
        *terms.entry(w).or_default() += 1;
    }
    let len = terms.values().sum();
    let meaning = ranking.embedder.as_ref().map_or_else(Vec::new, |e| {
        let mut v = e.embed(&meaning_text(&name, tool.description(), &rendered).to_lowercase());
        normalize(&mut v);
        v
    });
    let doc = Doc {
        tool: tool.name().to_owned(),
        family: family(tool.name()).to_owned(),
        terms,
        len,
        meaning,
    };
    let text = ranking
        .service
        .as_ref()
        .map(|_| meaning_text(&name, tool.description(), &rendered));
    (doc, text)
}

impl ToolIndex {
    /// The index of every tool of `set`.
    pub fn new(set: &ToolSet) -> ToolIndex {
        ToolIndex::ranked_by(set, Ranking::lexical())
    }

    /// The index of every tool of `set`, ranked as `ranking` says.
    pub fn ranked_by(set: &ToolSet, ranking: Ranking) -> ToolIndex {
        ToolIndex::of(set.iter().map(|t| &**t), ranking)
    }

    /// The index of every tool of `set`, ranking by meaning too
    /// ([`Ranking::embedder`]): `embedder` embeds each tool now (its name and description) and
    /// each query when searched.
    pub fn with_embedder(set: &ToolSet, embedder: Arc<dyn Embedder>) -> ToolIndex {
        ToolIndex::ranked_by(set, Ranking::lexical().embedder(embedder))
    }

    fn of<'t>(tools: impl Iterator<Item = &'t Tool>, ranking: Ranking) -> ToolIndex {
        let (docs, texts): (Vec<Doc>, Vec<Option<String>>) =
            tools.map(|t| document(t, &ranking)).unzip();
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
        let service = ranking.service.map(|client| {
            let timeout = ranking.service_timeout.unwrap_or(SERVICE_TIMEOUT);
            Service::new(client, timeout, texts.into_iter().flatten().collect())
        });
        ToolIndex {
            docs,
            df,
            avg_len,
            embedder: ranking.embedder,
            service,
        }
    }

    /// How many tools it holds.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// At most `limit` tools matching `query`, best first (ties by name), one of each family
    /// before a second of any; without an embedder, tools sharing no word with it are not
    /// found. An index ranking with an [`EmbeddingService`] ranks by the words alone here: its
    /// service is asked by [`search_async`](Self::search_async).
    pub fn search(&self, query: &str, limit: usize) -> Vec<Hit> {
        self.diversified(self.ranked(query), limit)
    }

    /// [`search`](Self::search), asking the index's [`EmbeddingService`] for the meaning of
    /// the query (and of the tools, the first time): by meaning and words as with an
    /// [`Embedder`]; by the words alone when the service fails. The same as `search` for an
    /// index without a service.
    pub async fn search_async(&self, query: &str, limit: usize) -> Vec<Hit> {
        self.diversified(self.ranked_async(query).await, limit)
    }

    /// Has the index's [`EmbeddingService`] embed its tools now, rather than at the first
    /// [`search_async`](Self::search_async), and says whether it could (why not, when it
    /// could not); the [pause](Ranking::service_timeout) after a failure does not apply.
    /// `Ok` at once for an index without a service, or whose tools are embedded.
    pub async fn prepare(&self) -> Result<(), EmbedError> {
        match &self.service {
            Some(service) if !self.docs.is_empty() => service.prepare().await,
            _ => Ok(()),
        }
    }

    /// [`ranked`](Self::ranked), with the meanings from the index's service.
    async fn ranked_async(&self, query: &str) -> Vec<(usize, f64)> {
        let Some(service) = self
            .service
            .as_ref()
            .filter(|_| !self.docs.is_empty() && !query.trim().is_empty())
        else {
            return self.ranked(query);
        };
        match service.meanings(query).await {
            Ok((query_meaning, tools)) => self.fused(query, Some((&query_meaning, &tools))),
            Err(error) if error.is::<Paused>() => {
                tracing::debug!(target: "tool_runtime::search", "{error}");
                self.fused::<&[f32]>(query, None)
            }
            Err(error) => {
                tracing::warn!(
                    target: "tool_runtime::search",
                    error = %error,
                    "the embedding service failed: tools ranked by the words they share with the request"
                );
                self.fused::<&[f32]>(query, None)
            }
        }
    }

    /// Every tool matching `query`, best first (ties by name), families not yet spread.
    fn ranked(&self, query: &str) -> Vec<(usize, f64)> {
        match &self.embedder {
            None => self.fused::<&[f32]>(query, None),
            Some(embedder) => {
                let mut meaning = embedder.embed(&query.to_lowercase());
                normalize(&mut meaning);
                let tools: Vec<&[f32]> = self.docs.iter().map(|d| d.meaning.as_slice()).collect();
                self.fused(query, Some((&meaning, &tools)))
            }
        }
    }

    /// Every tool matching `query` by the words it shares with it (BM25), and by meaning when
    /// `meanings` gives the query's vector and each tool's (normalized): best first (ties by
    /// name), families not yet spread.
    fn fused<T: AsRef<[f32]>>(
        &self,
        query: &str,
        meanings: Option<(&[f32], &[T])>,
    ) -> Vec<(usize, f64)> {
        let mut query_words: Vec<String> = Vec::new();
        for word in words(query) {
            let most = typo_distance(&word);
            if self.df.contains_key(&word) || most == 0 {
                query_words.push(word);
                continue;
            }
            // A word no tool has: the indexed words it may be a mistyping of.
            query_words.extend(
                self.df
                    .keys()
                    .filter(|known| {
                        known.len().abs_diff(word.len()) <= most
                            && strsim::damerau_levenshtein(known, &word) <= most
                    })
                    .cloned(),
            );
        }
        query_words.sort();
        query_words.dedup();
        let n = self.docs.len() as f64;
        let idf: Vec<(&str, f64)> = query_words
            .iter()
            .filter_map(|t| {
                let df = f64::from(*self.df.get(t)?);
                Some((t.as_str(), (1.0 + (n - df + 0.5) / (df + 0.5)).ln()))
            })
            .collect();
        let lexical: Vec<f64> = self
            .docs
            .iter()
            .map(|d| {
                let norm = K1 * (1.0 - B + B * f64::from(d.len) / self.avg_len);
                idf.iter()
                    .filter_map(|(t, idf)| {
                        let tf = f64::from(*d.terms.get(*t)?);
                        Some(idf * tf * (K1 + 1.0) / (tf + norm))
                    })
                    .sum()
            })
            .collect();
        let mut scored: Vec<(usize, f64)> = match meanings {
            None => lexical
                .into_iter()
                .enumerate()
                .filter(|(_, s)| *s > 0.0)
                .collect(),
            Some((meaning, tools)) => {
                let best = lexical.iter().copied().fold(0.0, f64::max);
                let scale = if best > 0.0 {
                    LEXICAL_WEIGHT / best
                } else {
                    0.0
                };
                tools
                    .iter()
                    .zip(lexical)
                    .enumerate()
                    .map(|(i, (tool, lexical))| {
                        let cosine: f32 =
                            tool.as_ref().iter().zip(meaning).map(|(a, b)| a * b).sum();
                        (i, f64::from(cosine) + lexical * scale)
                    })
                    .filter(|(_, s)| *s > 0.0)
                    .collect()
            }
        };
        scored.sort_by(|(a, sa), (b, sb)| {
            sb.total_cmp(sa)
                .then_with(|| self.docs[*a].tool.cmp(&self.docs[*b].tool))
        });
        scored
    }

    /// The first `limit` of `ranked`, the best of each family first, then the others in order.
    fn diversified(&self, ranked: Vec<(usize, f64)>, limit: usize) -> Vec<Hit> {
        let mut seen = std::collections::HashSet::new();
        let (first, rest): (Vec<_>, Vec<_>) = ranked
            .into_iter()
            .partition(|(i, _)| seen.insert(self.docs[*i].family.as_str()));
        first
            .into_iter()
            .chain(rest)
            .take(limit)
            .map(|(i, score)| Hit {
                tool: self.docs[i].tool.clone(),
                score,
            })
            .collect()
    }
}

/// A deferred set's index, as the set sees it.
#[derive(Debug)]
struct SetIndex(Arc<ToolIndex>);

impl Ranker for SetIndex {
    fn prepare(&self) -> BoxFuture<'_, Result<(), EmbedError>> {
        Box::pin(self.0.prepare())
    }
}

/// What the search tool searches: the deferred tools and their index.
struct Catalog {
    index: Arc<ToolIndex>,
    tools: HashMap<String, ToolRef>,
}

impl Handler for Catalog {
    /// The deferred tools best matching the query that this caller may call, best first.
    fn call<'a>(
        &'a self,
        cx: &'a Context,
        arguments: Value,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(async move {
            let query = arguments["query"].as_str().unwrap_or_default();
            let limit = arguments["limit"]
                .as_u64()
                .map_or(FOUND_BY_DEFAULT, |l| (l as usize).min(MOST_FOUND));
            // What this caller may call is filtered first, so a family it may not call leaves
            // its places to the others.
            let callable: Vec<(usize, f64)> = self
                .index
                .ranked_async(query)
                .await
                .into_iter()
                .filter(|(i, _)| {
                    self.tools
                        .get(&self.index.docs[*i].tool)
                        .is_some_and(|tool| {
                            tool.permits(cx)
                                && cx.get::<Offered>().is_none_or(|offered| {
                                    offered.0.iter().any(|o| o == tool.name())
                                })
                        })
                })
                .collect();
            let found = self
                .index
                .diversified(callable, limit)
                .into_iter()
                .filter_map(|hit| self.tools.get(&hit.tool));
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
            Ok(Deferral::answer(found))
        })
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
        self.defer_ranked(which, Ranking::lexical())
    }

    /// [`defer`](ToolSet::defer), with a search tool that ranks by meaning too
    /// ([`ToolIndex::with_embedder`]): `embedder` embeds every deferred tool now, and each
    /// query the model sends.
    pub fn defer_with(
        self,
        which: impl Fn(&Tool) -> bool,
        embedder: Arc<dyn Embedder>,
    ) -> Result<ToolSet, ToolSetError> {
        self.defer_ranked(which, Ranking::lexical().embedder(embedder))
    }

    /// [`defer`](ToolSet::defer), with a search tool that ranks as `ranking` says
    /// ([`ToolIndex::ranked_by`]).
    pub fn defer_ranked(
        self,
        which: impl Fn(&Tool) -> bool,
        ranking: Ranking,
    ) -> Result<ToolSet, ToolSetError> {
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
            index: Arc::new(ToolIndex::of(deferred.iter().map(|t| &**t), ranking)),
            tools: deferred
                .iter()
                .map(|t| (t.name().to_owned(), t.clone()))
                .collect(),
        };
        let names = catalog.tools.keys().cloned().collect();
        let index: Arc<dyn Ranker> = Arc::new(SetIndex(catalog.index.clone()));
        let mut set = base.with_tools([search_tool(catalog)])?;
        set.deferred = Some(Arc::new(Deferral::new(names, index)));
        Ok(set)
    }

    /// Has the [`EmbeddingService`] of the set's search tool (a set deferred with
    /// [`Ranking::service`]) embed the deferred tools now, rather than at the first search,
    /// and says whether it could: a host calls it at start-up to fail fast on a wrong key or
    /// address, and to spare the first search the wait. `Ok` for a set without a service or
    /// without deferred tools; the [pause](Ranking::service_timeout) after a failure does not
    /// apply. See [`ToolIndex::prepare`].
    pub async fn prepare_search(&self) -> Result<(), EmbedError> {
        match &self.deferred {
            Some(deferral) => deferral.ranker.prepare().await,
            None => Ok(()),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, description: &str) -> ToolRef {
        ToolRef::from(
            Tool::define(
                name,
                description,
                json!({"type": "object", "properties": {}}),
            )
            .build_fn(|_| async { Ok(Value::Null) })
            .unwrap(),
        )
    }

    #[test]
    fn a_family_is_a_name_without_its_trailing_number() {
        assert_eq!(family("cek-gaji-12"), "cek-gaji");
        assert_eq!(family("export_v2"), "export_v");
        assert_eq!(family("cek-gaji"), "cek-gaji");
        assert_eq!(family("2024"), "2024");
        assert_eq!(family("x-"), "x-");
    }

    #[test]
    fn near_identical_tools_take_one_place_until_every_family_has_one() {
        let set = ToolSet::new([
            tool("export-invoices-1", "Export invoices as CSV."),
            tool("export-invoices-2", "Export invoices as CSV."),
            tool("export-invoices-3", "Export invoices as CSV."),
            tool("export-payslips", "Export payslips as CSV."),
        ])
        .unwrap();
        let index = ToolIndex::new(&set);
        let found: Vec<String> = index
            .search("export invoices as csv", 3)
            .into_iter()
            .map(|h| h.tool)
            .collect();
        assert_eq!(
            found,
            ["export-invoices-1", "export-payslips", "export-invoices-2"]
        );
    }

    #[test]
    fn a_mistyped_word_finds_the_word_it_meant() {
        let set = ToolSet::new([
            tool("payslips", "List the caller's payslips."),
            tool("invoices", "List the caller's invoices."),
        ])
        .unwrap();
        let index = ToolIndex::new(&set);
        assert_eq!(index.search("my paysilps", 1)[0].tool, "payslips");
        assert_eq!(index.search("invioces", 1)[0].tool, "invoices");
        // Short words are not guessed at: `pay` is not `payslips`.
        assert!(index.search("pau", 1).is_empty());
    }

    /// A host's embedder: each word a direction, synonyms sharing one.
    struct Synonyms;

    impl Embedder for Synonyms {
        fn embed(&self, text: &str) -> Vec<f32> {
            let mut v = vec![0.0; 3];
            for w in words(text) {
                match w.as_str() {
                    "salary" | "wage" | "payslip" | "gaji" => v[0] += 1.0,
                    "invoice" | "bill" | "faktur" => v[1] += 1.0,
                    _ => v[2] += 0.1,
                }
            }
            v
        }
    }

    #[test]
    fn a_hosts_embedder_finds_a_tool_sharing_no_word_with_the_request() {
        let set = ToolSet::new([
            tool("payslips", "List the caller's payslips."),
            tool("invoices", "List the caller's invoices."),
        ])
        .unwrap();
        assert!(ToolIndex::new(&set).search("wage", 2).is_empty());
        let index = ToolIndex::with_embedder(&set, Arc::new(Synonyms));
        assert_eq!(index.search("wage", 1)[0].tool, "payslips");
        assert_eq!(index.search("bill", 1)[0].tool, "invoices");
        // The words shared still count: the lexical score is fused, not replaced.
        assert_eq!(index.search("wage invoices", 1)[0].tool, "invoices");
    }

    #[test]
    fn a_deferred_sets_search_tool_ranks_with_the_hosts_embedder() {
        let set = ToolSet::new([
            tool("payslips", "List the caller's payslips."),
            tool("invoices", "List the caller's invoices."),
        ])
        .unwrap()
        .defer_with(|_| true, Arc::new(Synonyms))
        .unwrap();
        let cx = Context::new();
        let answer = set
            .call(&cx, SEARCH_TOOL, r#"{"query": "salary", "limit": 1}"#)
            .blocking()
            .unwrap()
            .into_value();
        assert_eq!(answer["found"][0]["name"], "payslips", "{answer}");
        let lexical = ToolSet::new([tool("payslips", "List the caller's payslips.")])
            .unwrap()
            .defer(|_| true)
            .unwrap();
        let answer = lexical
            .call(&cx, SEARCH_TOOL, r#"{"query": "salary"}"#)
            .blocking()
            .unwrap()
            .into_value();
        assert_eq!(answer["found"], json!([]), "{answer}");
    }

    /// A host's embedding service: [`Synonyms`]'s vectors, asked asynchronously; it fails while
    /// `down`, and counts the texts it was asked for.
    #[derive(Default)]
    struct Service {
        down: std::sync::atomic::AtomicBool,
        asked: std::sync::atomic::AtomicUsize,
        /// Answers one vector too few.
        short: bool,
        /// Answers a number that is not one.
        nan: bool,
        /// Never answers.
        stalled: bool,
        /// Zeros added to every vector: another model, of another length.
        padding: std::sync::atomic::AtomicUsize,
        /// Gives a call of one text (a query) one number more than the others.
        queries_longer: std::sync::atomic::AtomicBool,
    }

    impl EmbeddingService for Service {
        fn embed<'a>(
            &'a self,
            texts: &'a [String],
        ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
            use std::sync::atomic::Ordering::SeqCst;
            self.asked.fetch_add(texts.len(), SeqCst);
            Box::pin(async move {
                // Answers on a later poll, as a service over the network does.
                let mut yielded = false;
                std::future::poll_fn(|cx| {
                    if std::mem::replace(&mut yielded, true) {
                        std::task::Poll::Ready(())
                    } else {
                        cx.waker().wake_by_ref();
                        std::task::Poll::Pending
                    }
                })
                .await;
                if self.stalled {
                    std::future::pending::<()>().await;
                }
                if self.down.load(SeqCst) {
                    return Err("503 Service Unavailable".into());
                }
                let mut vectors: Vec<Vec<f32>> = texts.iter().map(|t| Synonyms.embed(t)).collect();
                if self.short {
                    vectors.pop();
                }
                if self.nan {
                    vectors[0][0] = f32::NAN;
                }
                let padding = self.padding.load(SeqCst)
                    + usize::from(self.queries_longer.load(SeqCst) && texts.len() == 1);
                vectors
                    .iter_mut()
                    .for_each(|v| v.resize(v.len() + padding, 0.0));
                Ok(vectors)
            })
        }
    }

    fn payslips_and_invoices() -> ToolSet {
        ToolSet::new([
            tool("payslips", "List the caller's payslips."),
            tool("invoices", "List the caller's invoices."),
        ])
        .unwrap()
    }

    #[test]
    fn a_hosts_service_finds_a_tool_sharing_no_word_and_embeds_the_tools_once() {
        use std::sync::atomic::Ordering::SeqCst;
        let service = Arc::new(Service::default());
        let index = ToolIndex::ranked_by(
            &payslips_and_invoices(),
            Ranking::lexical().service(service.clone()),
        );
        // Asked by the async search only: the sync one ranks by the words.
        assert!(index.search("wage", 1).is_empty());
        assert_eq!(service.asked.load(SeqCst), 0);
        let found = pollster::block_on(index.search_async("wage", 1));
        assert_eq!(found[0].tool, "payslips");
        assert_eq!(service.asked.load(SeqCst), 3, "two tools, then the query");
        let found = pollster::block_on(index.search_async("bill", 1));
        assert_eq!(found[0].tool, "invoices");
        assert_eq!(
            service.asked.load(SeqCst),
            4,
            "the tools are kept; the query is asked"
        );
        // The words shared still count.
        let found = pollster::block_on(index.search_async("wage invoices", 1));
        assert_eq!(found[0].tool, "invoices");
    }

    #[test]
    fn a_failing_service_leaves_the_words_to_rank_and_is_asked_again_after_a_pause() {
        use std::sync::atomic::Ordering::SeqCst;
        let service = Arc::new(Service::default());
        service.down.store(true, SeqCst);
        let pause = std::time::Duration::from_millis(100);
        let ranking = Ranking::lexical()
            .service(service.clone())
            .service_timeout(pause);
        let index = ToolIndex::ranked_by(&payslips_and_invoices(), ranking);
        assert!(pollster::block_on(index.search_async("wage", 1)).is_empty());
        assert_eq!(service.asked.load(SeqCst), 2, "the tools, which failed");
        let found = pollster::block_on(index.search_async("the invoices", 1));
        assert_eq!(found[0].tool, "invoices", "by the words alone");
        service.down.store(false, SeqCst);
        assert!(pollster::block_on(index.search_async("wage", 1)).is_empty());
        assert_eq!(service.asked.load(SeqCst), 2, "left alone during the pause");
        std::thread::sleep(pause);
        let found = pollster::block_on(index.search_async("wage", 1));
        assert_eq!(found[0].tool, "payslips", "asked again after it");
    }

    #[test]
    fn a_service_answering_wrong_or_not_at_all_leaves_the_words_to_rank() {
        let wrong = [
            Service {
                short: true,
                ..Service::default()
            },
            Service {
                nan: true,
                ..Service::default()
            },
            Service {
                stalled: true,
                ..Service::default()
            },
        ];
        for service in wrong {
            let ranking = Ranking::lexical()
                .service(Arc::new(service))
                .service_timeout(std::time::Duration::from_millis(50));
            let index = ToolIndex::ranked_by(&payslips_and_invoices(), ranking);
            assert!(pollster::block_on(index.search_async("wage", 1)).is_empty());
            assert_eq!(first_by_meaning(&index, "payslips"), "payslips");
        }
    }

    #[test]
    fn a_service_whose_vectors_change_length_has_the_tools_embedded_again_once() {
        use std::sync::atomic::Ordering::SeqCst;
        let service = Arc::new(Service::default());
        let index = ToolIndex::ranked_by(
            &payslips_and_invoices(),
            Ranking::lexical().service(service.clone()),
        );
        assert_eq!(first_by_meaning(&index, "wage"), "payslips");
        assert_eq!(service.asked.load(SeqCst), 3);
        // Another model behind the service: the query's vector is longer than the tools'.
        service.padding.store(5, SeqCst);
        assert_eq!(first_by_meaning(&index, "bill"), "invoices");
        assert_eq!(
            service.asked.load(SeqCst),
            6,
            "the query, then the tools again"
        );
        assert_eq!(first_by_meaning(&index, "wage"), "payslips");
        assert_eq!(service.asked.load(SeqCst), 7, "kept again: the query alone");
    }

    #[test]
    fn a_service_giving_queries_another_length_than_tools_is_left_alone_for_the_pause() {
        use std::sync::atomic::Ordering::SeqCst;
        let service = Arc::new(Service {
            queries_longer: true.into(),
            ..Service::default()
        });
        let index = paused_for_a_minute(&service);
        // The tools embedded by this search: not embedded again for its query.
        assert!(pollster::block_on(index.search_async("wage", 1)).is_empty());
        assert_eq!(service.asked.load(SeqCst), 3);
        assert_words_alone_and_left_alone(&index, &service);
    }

    /// Two searches at once find, by meaning, the tools they mean.
    fn assert_wage_and_bill_found_at_once(index: &ToolIndex) {
        let (wage, bill) = pollster::block_on(futures_util::future::join(
            index.search_async("wage", 1),
            index.search_async("bill", 1),
        ));
        assert_eq!(
            (wage[0].tool.as_str(), bill[0].tool.as_str()),
            ("payslips", "invoices")
        );
    }

    /// The first tool `index` finds for `query`, asking its service.
    fn first_by_meaning(index: &ToolIndex, query: &str) -> String {
        pollster::block_on(index.search_async(query, 1))[0]
            .tool
            .clone()
    }

    /// The payslips and invoices, ranked by `service`, left alone a minute after a failure.
    fn paused_for_a_minute(service: &Arc<Service>) -> ToolIndex {
        let ranking = Ranking::lexical()
            .service(service.clone())
            .service_timeout(std::time::Duration::from_secs(60));
        ToolIndex::ranked_by(&payslips_and_invoices(), ranking)
    }

    /// A search of `index` (paused) finds by the words alone and does not ask `service`.
    fn assert_words_alone_and_left_alone(index: &ToolIndex, service: &Service) {
        use std::sync::atomic::Ordering::SeqCst;
        let asked = service.asked.load(SeqCst);
        let found = pollster::block_on(index.search_async("the invoices", 1));
        assert_eq!(found[0].tool, "invoices", "by the words alone");
        assert_eq!(
            service.asked.load(SeqCst),
            asked,
            "left alone during the pause"
        );
    }

    #[test]
    fn kept_tools_embedded_again_still_of_another_length_leave_the_words_to_rank() {
        use std::sync::atomic::Ordering::SeqCst;
        let service = Arc::new(Service::default());
        let index = paused_for_a_minute(&service);
        assert_eq!(first_by_meaning(&index, "wage"), "payslips");
        service.queries_longer.store(true, SeqCst);
        assert!(pollster::block_on(index.search_async("wage", 1)).is_empty());
        assert_eq!(
            service.asked.load(SeqCst),
            6,
            "the query, then the tools again"
        );
        assert_words_alone_and_left_alone(&index, &service);
    }

    #[test]
    fn a_service_that_failed_once_and_then_answered_is_not_paused_when_its_model_changes() {
        use std::sync::atomic::Ordering::SeqCst;
        let service = Arc::new(Service::default());
        let index = paused_for_a_minute(&service);
        service.down.store(true, SeqCst);
        assert!(pollster::block_on(index.prepare()).is_err());
        service.down.store(false, SeqCst);
        pollster::block_on(index.prepare()).unwrap();
        service.padding.store(5, SeqCst);
        assert_eq!(first_by_meaning(&index, "wage"), "payslips");
    }

    #[test]
    fn searches_at_once_finding_another_length_embed_the_tools_again_once() {
        use std::sync::atomic::Ordering::SeqCst;
        let service = Arc::new(Service::default());
        let index = ToolIndex::ranked_by(
            &payslips_and_invoices(),
            Ranking::lexical().service(service.clone()),
        );
        pollster::block_on(index.prepare()).unwrap();
        service.padding.store(5, SeqCst);
        assert_wage_and_bill_found_at_once(&index);
        assert_eq!(
            service.asked.load(SeqCst),
            6,
            "two tools twice, two queries"
        );
    }

    #[test]
    fn a_shared_cache_answering_some_tools_from_the_old_model_is_asked_again() {
        use std::sync::atomic::Ordering::SeqCst;
        let service = Arc::new(Service::default());
        let cache = Arc::new(EmbeddingCache::new(service.clone(), 1_000));
        // More tools than one request carries: the index asks in two requests.
        let fillers: Vec<ToolRef> = (0..service::SERVICE_BATCH)
            .map(|i| tool(&format!("report-{i}"), "Print a report of the day."))
            .collect();
        let catalog = |extra: Option<ToolRef>| {
            let mut tools = fillers.clone();
            tools.extend(payslips_and_invoices().iter().cloned());
            tools.extend(extra);
            ToolIndex::ranked_by(
                &ToolSet::new(tools).unwrap(),
                Ranking::lexical().service(cache.clone()),
            )
        };
        let first = catalog(None);
        assert_eq!(first_by_meaning(&first, "wage"), "payslips");
        // Another model; a catalog with one tool more: its first request is all in the
        // cache (the old model's), its second asks the service (the new one's).
        service.padding.store(5, SeqCst);
        let second = catalog(Some(tool("holidays", "List the public holidays.")));
        assert_eq!(first_by_meaning(&second, "wage"), "payslips");
    }

    #[test]
    fn searches_at_once_embed_the_tools_once() {
        use std::sync::atomic::Ordering::SeqCst;
        let service = Arc::new(Service::default());
        let index = ToolIndex::ranked_by(
            &payslips_and_invoices(),
            Ranking::lexical().service(service.clone()),
        );
        assert_wage_and_bill_found_at_once(&index);
        assert_eq!(service.asked.load(SeqCst), 4, "two tools once, two queries");
        // A blank query is not sent.
        assert!(pollster::block_on(index.search_async("  ", 1)).is_empty());
        assert_eq!(service.asked.load(SeqCst), 4);
    }

    #[test]
    fn a_set_prepared_at_start_up_embeds_its_tools_before_any_search_and_says_why_not() {
        use std::sync::atomic::Ordering::SeqCst;
        let service = Arc::new(Service::default());
        service.down.store(true, SeqCst);
        let set = payslips_and_invoices()
            .defer_ranked(|_| true, Ranking::lexical().service(service.clone()))
            .unwrap();
        let why = pollster::block_on(set.prepare_search()).unwrap_err();
        assert_eq!(why.to_string(), "503 Service Unavailable");
        // Asked by the host: no pause.
        service.down.store(false, SeqCst);
        pollster::block_on(set.prepare_search()).unwrap();
        assert_eq!(service.asked.load(SeqCst), 4, "the two tools, twice");
        pollster::block_on(set.prepare_search()).unwrap();
        assert_eq!(first_found(&set, "wage"), "payslips");
        assert_eq!(service.asked.load(SeqCst), 5, "kept: the query alone");
        // Nothing to prepare without a service, or without deferred tools.
        pollster::block_on(payslips_and_invoices().prepare_search()).unwrap();
        let lexical = payslips_and_invoices().defer(|_| true).unwrap();
        pollster::block_on(lexical.prepare_search()).unwrap();
    }

    #[test]
    fn a_deferred_sets_search_tool_asks_the_hosts_service() {
        let service = Arc::new(Service::default());
        let set = payslips_and_invoices()
            .defer_ranked(|_| true, Ranking::lexical().service(service))
            .unwrap();
        assert_eq!(first_found(&set, "salary"), "payslips");
    }

    /// The first tool a deferred set's search tool finds for `query`.
    fn first_found(set: &ToolSet, query: &str) -> Value {
        let arguments = json!({"query": query, "limit": 1});
        let answer = set
            .call(&Context::new(), SEARCH_TOOL, arguments)
            .blocking()
            .unwrap()
            .into_value();
        answer["found"][0]["name"].clone()
    }

    #[test]
    fn a_deferred_sets_search_tool_reads_its_tools_through_the_glossary() {
        let tools = || {
            ToolSet::new([
                tool("cek-sisa-cuti", "Ambil sisa kuota cuti karyawan."),
                tool("cek-gaji", "Ambil slip gaji karyawan."),
            ])
            .unwrap()
        };
        let glossary = Glossary::from_pairs([("cuti", "leave"), ("gaji", "salary")]);
        let search = |set: &ToolSet| {
            set.call(&Context::new(), SEARCH_TOOL, r#"{"query": "my leave"}"#)
                .blocking()
                .unwrap()
                .into_value()
        };
        let glossed = tools()
            .defer_ranked(|_| true, Ranking::lexical().glossary(glossary))
            .unwrap();
        let answer = search(&glossed);
        assert_eq!(answer["found"][0]["name"], "cek-sisa-cuti", "{answer}");
        assert_eq!(answer["found"].as_array().unwrap().len(), 1, "{answer}");
        let answer = search(&tools().defer(|_| true).unwrap());
        assert_eq!(answer["found"], json!([]), "{answer}");
    }
}
