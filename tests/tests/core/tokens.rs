//! What tool definitions cost in tokens (`tool_runtime::tokens`), against Python `tiktoken`
//! (pinned in `scripts/requirements.txt`): every definition of a 500-tool catalog (every
//! example tool, and generated ones with realistic descriptions) in each of the five APIs is
//! counted the same by both. Python `tiktoken` reads the `o200k_base` ranks from its cache,
//! seeded here with the file compiled into `tiktoken-rs`, which `tiktoken` accepts only if it
//! hashes to the hash `tiktoken` expects of OpenAI's published file.

use std::io::Write;
use std::process::Stdio;

use serde_json::{Value, json};
use tool_runtime::tokens::{self, Budget};
use tool_runtime::{Api, Tool, ToolRef, ToolSet};

use crate::provision::python;

/// Areas of a company's work and what is kept there, for the generated tools.
const AREAS: &[(&str, &str, &str)] = &[
    ("cuti", "leave requests", "pengajuan cuti karyawan"),
    ("gaji", "payslips", "slip gaji karyawan"),
    ("reimburse", "expense claims", "klaim reimbursement"),
    (
        "inventaris",
        "office inventory items",
        "barang inventaris kantor",
    ),
    ("pelanggan", "customer accounts", "akun pelanggan"),
    ("faktur", "invoices", "faktur penjualan"),
    ("pengiriman", "shipments", "pengiriman barang"),
    ("tiket", "support tickets", "tiket dukungan pelanggan"),
    ("jadwal", "meeting room bookings", "pemesanan ruang rapat"),
    ("proyek", "project milestones", "tonggak proyek"),
    ("kontrak", "supplier contracts", "kontrak pemasok"),
    ("absensi", "attendance records", "catatan kehadiran"),
    ("pelatihan", "training enrolments", "pendaftaran pelatihan"),
    ("aset", "company laptops", "laptop milik perusahaan"),
    ("anggaran", "department budgets", "anggaran departemen"),
    ("rekrutmen", "job applications", "lamaran kerja"),
];

/// What a generated tool does to an area's records.
const ACTIONS: &[(&str, &str, &str)] = &[
    ("cek", "Look up one of the", "Ambil satu"),
    ("daftar", "List the caller's", "Tampilkan daftar"),
    (
        "buat",
        "Create a new entry among the",
        "Buat entri baru untuk",
    ),
    ("ubah", "Change one of the", "Ubah satu"),
    ("batalkan", "Cancel one of the", "Batalkan satu"),
    ("ekspor", "Export as CSV the", "Ekspor ke CSV semua"),
];

/// `n` tools defined at run time, named and described as a company's own tools would be
/// (English and Indonesian), each with one to three arguments.
fn generated(n: usize) -> Vec<ToolRef> {
    let mut tools = Vec::with_capacity(n);
    'all: for round in 0.. {
        for (area, english, indonesian) in AREAS {
            for (verb, en_verb, id_verb) in ACTIONS {
                if tools.len() == n {
                    break 'all;
                }
                let name = format!("{verb}-{area}-{round}");
                let description = if (tools.len() + round) % 2 == 0 {
                    format!(
                        "{en_verb} {english} by its number; returns the record with its status and last change. Use when the user names one of their {english}."
                    )
                } else {
                    format!(
                        "{id_verb} {indonesian} berdasarkan nomornya; mengembalikan data beserta status dan perubahan terakhir. Pakai saat pengguna menyebut {indonesian}."
                    )
                };
                let mut properties = serde_json::Map::new();
                properties.insert(
                    "nomor".into(),
                    json!({"type": "string", "description": format!("The number of the {english} entry, as printed on it"), "minLength": 3, "maxLength": 20}),
                );
                if round % 2 == 1 {
                    properties.insert(
                        "tahun".into(),
                        json!({"type": "integer", "description": "Tahun data; tahun ini bila tidak disebut", "minimum": 2000, "maximum": 2100}),
                    );
                }
                if *verb == "ubah" {
                    properties.insert(
                        "catatan".into(),
                        json!({"type": "string", "description": "What to write on the entry", "maxLength": 500}),
                    );
                }
                let required: Vec<&String> = properties.keys().take(1).collect();
                let schema = json!({
                    "type": "object",
                    "properties": properties,
                    "required": required,
                    "additionalProperties": false,
                });
                let tool = Tool::define(name, description, schema)
                    .build_fn(|_| async { Ok(Value::Null) })
                    .expect("a generated tool is a valid definition");
                tools.push(ToolRef::from(tool));
            }
        }
    }
    tools
}

/// Every example tool, and generated ones to make 500.
fn catalog() -> ToolSet {
    let mut examples: Vec<ToolRef> = examples::hr::tool_set().iter().cloned().collect();
    examples.extend(examples::perpustakaan::tool_set().iter().cloned());
    let more = 500 - examples.len();
    examples.extend(generated(more));
    ToolSet::new(examples).expect("the catalog's tools have distinct names")
}

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
