//! What tool definitions cost in tokens (`tool_runtime::tokens`), against Python `tiktoken`
//! (pinned in `scripts/requirements.txt`): every definition of a 500-tool catalog (every
//! example tool, and generated ones with realistic descriptions) in each of the five APIs is
//! counted the same by both. Python `tiktoken` reads the `o200k_base` ranks from its cache,
//! seeded here with the ranks read back from `tiktoken-rs`, which `tiktoken` accepts only if
//! the file they make hashes to the hash `tiktoken` expects of OpenAI's published file.

use std::fmt::Write as _;

use tool_runtime::Api;
use tool_runtime::tokens::{self, Budget};

use crate::big_catalog::catalog;
use crate::provision::python_json;

/// How many ordinary tokens `o200k_base` has (ranks 0 to 199,997 without a gap; its special
/// tokens come after).
const O200K_RANKS: u32 = 199_998;

/// The `o200k_base` ranks compiled into `tiktoken-rs`, as the bytes of each token in hex, one
/// line per rank in order, read back from the tokenizer itself. (Not the crate's own source
/// file: finding that takes `cargo metadata`, which needs every platform's dependencies, more
/// than a build downloads.)
fn ranks_hex() -> String {
    let bpe = tiktoken_rs::o200k_base().expect("the o200k_base ranks load");
    let mut text = String::with_capacity(O200K_RANKS as usize * 12);
    for rank in 0..O200K_RANKS {
        let bytes = bpe
            .decode_bytes(&[rank])
            .expect("every ordinary rank is a token");
        for b in bytes {
            write!(text, "{b:02x}").unwrap();
        }
        text.push('\n');
    }
    text
}

/// Python `tiktoken`'s `o200k_base` counts of `texts`.
fn tiktoken_counts(texts: &[String]) -> Vec<usize> {
    // One directory per call: tests of one process call this at once, and each removes its own.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir =
        std::env::temp_dir().join(format!("tool-toolkit-ranks-{}-{call}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ranks = dir.join("o200k_base.hex");
    std::fs::write(&ranks, ranks_hex()).unwrap();
    let counts = python_json("tiktoken_counts.py", &[ranks.as_os_str()], &texts);
    let _ = std::fs::remove_dir_all(&dir);
    counts
}

#[test]
fn every_definition_of_a_500_tool_catalog_counts_as_python_tiktoken_counts_it() {
    let catalog = catalog();
    assert_eq!(catalog.len(), 500);
    let mut texts = Vec::new();
    let mut ours = Vec::new();
    for api in Api::BUILT_IN {
        for tool in catalog.iter() {
            texts.push(tokens::definition(tool, *api));
        }
        ours.extend(tokens::of_set(&catalog, *api).into_iter().map(|t| t.tokens));
    }
    let theirs = tiktoken_counts(&texts);
    assert_eq!(theirs.len(), ours.len());
    let differ: Vec<String> = texts
        .iter()
        .zip(ours.iter().zip(&theirs))
        .filter(|(_, (a, b))| a != b)
        .map(|(t, (a, b))| format!("{a} here, {b} in tiktoken: {t}"))
        .take(5)
        .collect();
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    // What the catalog costs per request in each API (printed for the README's figures).
    for api in Api::BUILT_IN {
        let total: usize = tokens::of_set(&catalog, *api)
            .iter()
            .map(|t| t.tokens)
            .sum();
        eprintln!("{}: 500 tools, {total} tokens", api.id());
        assert!(total > 500 * 20, "{}: {total}", api.id());
    }
}

/// A set's count is of exactly what its requests send, in the set's wording: the HR example's
/// Indonesian set ("Bukan untuk: …", where a tool alone says "Not for: …"), in both OpenAI
/// APIs, against each tool entry of the request body, counted by Python's `tiktoken`.
#[test]
fn a_sets_count_is_of_the_definitions_its_requests_send_in_its_wording() {
    use tool_runtime::Wording;
    let mut sent = Vec::new();
    let mut ours = Vec::new();
    // Each wording pack, over the HR example's tools (four of five have a boundary sentence).
    for (wording, boundary) in [
        (Wording::indonesian(), "Bukan untuk:"),
        (Wording::english(), "Not for:"),
    ] {
        let set = examples::hr::tool_set().with_wording(wording);
        for api in [
            Api::OPENAI_CHAT,
            Api::OPENAI_RESPONSES,
            Api::ANTHROPIC,
            Api::GEMINI,
            Api::BEDROCK_CONVERSE,
        ] {
            let request = tool_runtime::provider::Request::new("m").tools(&set);
            let body = api.provider().request(&request, &[]).unwrap().body;
            let entries = tool_entries(api, &body);
            assert_eq!(entries.len(), set.iter().count(), "{}", api.id());
            for (tool, entry) in set.iter().zip(&entries) {
                let text = entry.to_string();
                assert_eq!(text, tokens::definition_in(&set, tool, api), "{}", api.id());
                assert!(
                    text.contains(boundary) || tool.not_for().is_none(),
                    "{text}"
                );
                sent.push(text);
            }
            ours.extend(tokens::of_set(&set, api).into_iter().map(|t| t.tokens));
        }
    }
    assert_eq!(sent.len(), 2 * 5 * 5);
    assert_eq!(ours, tiktoken_counts(&sent));
    // A tool alone is counted in English, one token fewer here for every tool with a boundary.
    let set = examples::hr::tool_set();
    let alone: usize = set
        .iter()
        .filter(|t| t.not_for().is_some())
        .map(|t| tokens::of_tool(t, Api::OPENAI_CHAT).tokens)
        .sum();
    let in_set: usize = tokens::of_set(&set, Api::OPENAI_CHAT)
        .iter()
        .zip(set.iter())
        .filter(|(_, t)| t.not_for().is_some())
        .map(|(c, _)| c.tokens)
        .sum();
    assert_ne!(alone, in_set);
}

/// The tool entries of a written request's body, one per tool (Bedrock's cache point after
/// them is not a tool).
fn tool_entries(api: Api, body: &serde_json::Value) -> Vec<serde_json::Value> {
    crate::deferred::entries(api, body)
        .into_iter()
        .filter(|e| e.get("cachePoint").is_none())
        .collect()
}

#[test]
fn a_hosts_budget_names_each_tool_over_it_and_the_request_over_its_own() {
    let set = examples::hr::tool_set();
    let counted = tokens::of_set(&set, Api::OPENAI_CHAT);
    let largest = counted.iter().max_by_key(|t| t.tokens).unwrap().clone();
    let total: usize = counted.iter().map(|t| t.tokens).sum();
    let fits = Budget {
        per_tool: largest.tokens,
        per_request: total,
    };
    assert!(tool_runtime::lint::check_tokens(&set, Api::OPENAI_CHAT, fits).is_empty());
    let tight = Budget {
        per_tool: largest.tokens - 1,
        per_request: total - 1,
    };
    let lints = tool_runtime::lint::check_tokens(&set, Api::OPENAI_CHAT, tight);
    let ids: Vec<(&str, &str)> = lints.iter().map(|l| (l.id, l.tool.as_str())).collect();
    assert!(
        ids.contains(&("tool-tokens", largest.tool.as_str())),
        "{ids:?}"
    );
    assert!(ids.contains(&("request-tokens", "")), "{ids:?}");
    assert!(
        lints[0].message.contains("(o200k_base)"),
        "{}",
        lints[0].message
    );
    let elsewhere = tool_runtime::lint::check_tokens(&set, Api::GEMINI, tight);
    assert!(
        elsewhere.iter().all(|l| l.message.contains("estimated")),
        "{elsewhere:?}"
    );
}
