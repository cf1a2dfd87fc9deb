//! What tool definitions cost in tokens (`tool_runtime::tokens`), against Python `tiktoken`
//! (pinned in `scripts/requirements.txt`): every definition of a 500-tool catalog (every
//! example tool, and generated ones with realistic descriptions) in each of the five APIs is
//! counted the same by both. Python `tiktoken` reads the `o200k_base` ranks from its cache,
//! seeded here with the file compiled into `tiktoken-rs`, which `tiktoken` accepts only if it
//! hashes to the hash `tiktoken` expects of OpenAI's published file.

use std::io::Write;
use std::process::Stdio;

use serde_json::Value;
use tool_runtime::Api;
use tool_runtime::tokens::{self, Budget};

use crate::big_catalog::catalog;
use crate::provision::python;

/// The path of the `o200k_base` ranks compiled into `tiktoken-rs`, from cargo's metadata.
fn ranks_file() -> String {
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.toml");
    let out = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--offline"])
        .args(["--manifest-path", manifest])
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let metadata: Value = serde_json::from_slice(&out.stdout).unwrap();
    let package = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "tiktoken-rs")
        .expect("tiktoken-rs is a dependency");
    let dir = std::path::Path::new(package["manifest_path"].as_str().unwrap())
        .parent()
        .unwrap();
    dir.join("assets/o200k_base.tiktoken")
        .to_string_lossy()
        .into_owned()
}

/// Python `tiktoken`'s `o200k_base` counts of `texts`.
fn tiktoken_counts(texts: &[String]) -> Vec<usize> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/oracle/tiktoken_counts.py");
    let mut child = python()
        .args([script, &ranks_file()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let input = serde_json::to_vec(texts).unwrap();
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "tiktoken: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
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
