//! What a tool set costs in a model's context (feature `tokens`): the tokens of each tool's
//! definition as it is exported for an API, counted with OpenAI's `o200k_base` encoding
//! (`tiktoken-rs`, the same ranks as Python `tiktoken`). For the OpenAI APIs the count is
//! exact for the JSON text of the definition; the other providers do not publish their
//! tokenizers, so there the same count is an estimate, and says so ([`Tokens::exact`]). Either
//! way the provider adds a few tokens of its own framing per request, not counted here.
//!
//! ```
//! use tool_runtime::{Api, ToolSet, tool, tokens};
//!
//! #[tool(description = "Return a greeting for one name.")]
//! fn greet(#[arg(description = "The person's name")] name: String) -> String {
//!     format!("Hello, {name}")
//! }
//!
//! let set = ToolSet::new([greet::tool()]).unwrap();
//! let cost = tokens::of_set(&set, Api::OPENAI_CHAT);
//! assert!(cost[0].exact && cost[0].tokens > 10);
//! assert!(!tokens::of_set(&set, Api::ANTHROPIC)[0].exact);
//! ```

use std::sync::OnceLock;

use serde::Serialize;

use crate::export;
use crate::provider::Api;
use crate::set::ToolSet;
use crate::tool::Tool;

/// What one tool's exported definition costs for an API.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Tokens {
    /// The tool.
    pub tool: String,
    /// The tokens of its definition, as the JSON text sent to the API.
    pub tokens: usize,
    /// Whether the count uses the API's own tokenizer (OpenAI's); otherwise an estimate.
    pub exact: bool,
}

/// The `o200k_base` encoding, made once (its ranks are compiled in).
fn encoding() -> &'static tiktoken_rs::CoreBPE {
    static ENCODING: OnceLock<tiktoken_rs::CoreBPE> = OnceLock::new();
    ENCODING.get_or_init(|| {
        tiktoken_rs::o200k_base().expect("the o200k_base ranks compiled into tiktoken-rs load")
    })
}

/// The tokens of `text` in `o200k_base` (special tokens read as plain text).
pub fn count(text: &str) -> usize {
    encoding().encode_ordinary(text).len()
}

/// Whether `api` uses the `o200k_base` encoding (OpenAI's current models).
pub fn is_exact(api: Api) -> bool {
    api.id() == Api::OPENAI_CHAT.id() || api.id() == Api::OPENAI_RESPONSES.id()
}

/// The JSON text of `tool`'s definition for `api`, as counted, with the English boundary
/// sentence ("Not for: …"): a tool alone has no set's wording ([`of_set`] counts a set's).
pub fn definition(tool: &Tool, api: Api) -> String {
    export::tool(tool, api).json.to_string()
}

/// The JSON text of `tool`'s definition for `api` as a request of `set` writes it: its
/// description in the set's wording ([`ToolSet::with_wording`]).
pub fn definition_in(set: &ToolSet, tool: &Tool, api: Api) -> String {
    api.provider()
        .tool(tool.name(), &set.description(tool), tool.input_schema())
        .json
        .to_string()
}

/// What `tool`'s definition costs for `api`, in English (see [`definition`]).
pub fn of_tool(tool: &Tool, api: Api) -> Tokens {
    Tokens {
        tool: tool.name().to_owned(),
        tokens: count(&definition(tool, api)),
        exact: is_exact(api),
    }
}

/// What each tool of `set` costs for `api`, in the set's order and its wording: exactly the
/// definitions a request of the set sends.
pub fn of_set(set: &ToolSet, api: Api) -> Vec<Tokens> {
    set.iter()
        .map(|t| Tokens {
            tool: t.name().to_owned(),
            tokens: count(&definition_in(set, t, api)),
            exact: is_exact(api),
        })
        .collect()
}

/// How many tokens the tools of a request may take: a host's budget, per tool and for the
/// whole set ([`crate::lint::check_tokens`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// At most this many for one tool's definition.
    pub per_tool: usize,
    /// At most this many for every tool of a request together.
    pub per_request: usize,
}
