//! Oracle test: this crate's OpenAI strict and Anthropic exports compared with what the
//! providers' official Python SDKs produce for equivalent pydantic models
//! (`openai.lib._pydantic.to_strict_json_schema`, `anthropic.transform_schema`; see
//! `tests/oracle/provider_sdks.py`). Both sides are normalized for what does not change meaning
//! (titles, `$ref` vs inline, `anyOf` with null vs a type array, key and note order); every
//! remaining difference must be listed in `INTENDED` with its reason, and every listed one must
//! still occur. The SDKs (pinned in `scripts/requirements.txt`) are installed on first use by
//! `scripts/provision.sh`.

use std::collections::BTreeSet;

use serde::Deserialize;
use serde_json::{Map, Value, json};
use tool_runtime::Api;
use tool_runtime::{Tool, ToolArg, tool};

#[tool(description = "Pesan katering.")]
fn katering(
    #[arg(description = "Jumlah peserta sebagai angka", range = 1..=500)] jumlah_peserta: u32,
) -> u32 {
    jumlah_peserta
}

#[derive(ToolArg, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
enum Periode {
    Harian,
    Mingguan,
    Bulanan,
}

#[derive(ToolArg, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
enum Wilayah {
    Jakarta,
    Surabaya,
    Medan,
    Semua,
}

#[tool(description = "Laporan.")]
fn enum_with_default(
    #[arg(description = "Rentang waktu laporan")] periode: Periode,
    #[arg(description = "Wilayah; pakai semua bila tidak disebut", default = Wilayah::Semua)]
    wilayah: Wilayah,
) -> bool {
    let _ = (periode, wilayah);
    true
}

#[tool(description = "Cari.")]
fn optional_field(
    #[arg(description = "Kata kunci")] kata: String,
    #[arg(description = "Tahun terbit; null bila tidak disebut", range = 2000..=2100)]
    tahun: Option<u16>,
) -> bool {
    let _ = (kata, tahun);
    true
}

#[derive(ToolArg, Deserialize)]
#[allow(dead_code)]
struct Item {
    /// Nama menu
    #[arg(length = ..=20)]
    menu: String,
    /// Jumlah porsi
    #[arg(range = 1..=50)]
    porsi: u8,
}

#[derive(ToolArg, Deserialize)]
#[allow(dead_code)]
struct Pesanan {
    /// Isi pesanan
    #[arg(length = 1..=3)]
    items: Vec<Item>,
    /// Catatan, null bila tidak ada
    catatan: Option<String>,
}

#[tool(description = "Pesan.")]
fn nested_object(#[arg(description = "Pesanan")] pesanan: Pesanan) -> bool {
    let _ = pesanan;
    true
}

#[tool(description = "Label.")]
fn bounded_list(#[arg(description = "Label buku", length = 1..=5)] label: Vec<String>) -> usize {
    label.len()
}

/// Differences that remain on purpose, as `(shape, target, path)` with the reason.
const INTENDED: &[(&str, &str, &str, &str)] = &[
    (
        "optional_field",
        "anthropic",
        "/properties/tahun/description/notes",
        "pydantic gives an Optional field `default: None`, which the SDK moves into the description; \
         our canonical schema has no default for an `Option` (absent already means null)",
    ),
    (
        "nested_object",
        "anthropic",
        "/properties/pesanan/properties/catatan/description/notes",
        "the same `default: None` of an Optional field",
    ),
    (
        "nested_object",
        "anthropic",
        "/properties/pesanan/description",
        "the SDK keeps a bare `$ref` for a nested model and loses the field's description; we inline \
         the nested object and keep it",
    ),
    (
        "enum_with_default",
        "openai",
        "/properties/wilayah/description/text",
        "strict mode makes the defaulted field required: we say that null stands for its default, \
         where the SDK leaves the model to invent a value and the default never applies",
    ),
    (
        "enum_with_default",
        "openai",
        "/properties/wilayah/enum",
        "the same field takes null (for its default), which the runtime reads as left out",
    ),
];

/// The schema of `tool` as `target`'s entry carries it.
fn ours(tool: &Tool, target: Api) -> Value {
    target.lower(tool.input_schema()).schema
}

/// A description split into its text and its `{key: value, ...}` notes (order-free).
fn description(text: &str) -> Value {
    let (base, notes) = match text.rfind("\n\n{") {
        Some(i) if text.ends_with('}') => (&text[..i], &text[i + 3..text.len() - 1]),
        _ if text.starts_with('{') && text.ends_with('}') => ("", &text[1..text.len() - 1]),
        _ => (text, ""),
    };
    let mut set: BTreeSet<String> = notes
        .split(", ")
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    // A nested value's own commas would split it; such shapes are not in this test.
    set.retain(|s| s.contains(": "));
    json!({ "text": base, "notes": set.into_iter().collect::<Vec<_>>() })
}

fn merge_notes(into: &mut Map<String, Value>, from: &Map<String, Value>) {
    if let Some(Value::Object(d)) = from.get("description") {
        let notes = d["notes"].as_array().cloned().unwrap_or_default();
        if let Some(Value::Object(mine)) = into.get_mut("description") {
            let mut all: BTreeSet<String> = mine["notes"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect();
            all.extend(notes.iter().filter_map(|v| v.as_str().map(str::to_owned)));
            mine["notes"] = json!(all.into_iter().collect::<Vec<_>>());
        } else {
            into.insert("description".into(), Value::Object(d.clone()));
        }
    }
}

fn normalize(v: &Value, defs: &Map<String, Value>) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::new();
            if let Some(r) = m.get("$ref").and_then(Value::as_str) {
                let name = r.trim_start_matches("#/$defs/");
                if let Value::Object(d) = normalize(&defs[name], defs) {
                    out = d;
                }
            }
            for (k, val) in m {
                match k.as_str() {
                    "title" | "$defs" | "$ref" => {}
                    "description" => {
                        out.insert(k.clone(), description(val.as_str().unwrap_or_default()));
                    }
                    "required" => {
                        let mut r: Vec<String> = val
                            .as_array()
                            .unwrap()
                            .iter()
                            .filter_map(|s| s.as_str().map(str::to_owned))
                            .collect();
                        r.sort();
                        out.insert(k.clone(), json!(r));
                    }
                    _ => {
                        out.insert(k.clone(), normalize(val, defs));
                    }
                }
            }
            // `anyOf: [X, {type: null}]` is `X` with a nullable type.
            if let Some(Value::Array(alts)) = out.get("anyOf").cloned()
                && alts.len() == 2
                && let Some(i) = alts.iter().position(|a| a == &json!({"type": "null"}))
                && let Value::Object(branch) = &alts[1 - i]
                && let Some(Value::String(t)) = branch.get("type")
            {
                out.remove("anyOf");
                for (k, val) in branch {
                    if k != "description" {
                        out.insert(k.clone(), val.clone());
                    }
                }
                out.insert("type".into(), json!([t, "null"]));
                merge_notes(&mut out, branch);
            }
            // Anthropic's SDK drops `type` next to `enum`; the pair means the same.
            if out.contains_key("enum") {
                out.remove("type");
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| normalize(x, defs)).collect()),
        other => other.clone(),
    }
}

fn diff(path: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                match (x.get(k), y.get(k)) {
                    (Some(p), Some(q)) => diff(&format!("{path}/{k}"), p, q, out),
                    (p, q) => out.push(format!("{path}/{k}: ours={} sdk={}", show(p), show(q))),
                }
            }
        }
        _ if a != b => out.push(format!("{path}: ours={a} sdk={b}")),
        _ => {}
    }
}

fn show(v: Option<&Value>) -> String {
    v.map_or("(absent)".into(), Value::to_string)
}

#[test]
fn exports_match_the_providers_sdks() {
    let out = crate::provision::python()
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/oracle/provider_sdks.py"
        ))
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sdk: Value = serde_json::from_slice(&out.stdout).unwrap();
    let shapes: [(&str, &Tool); 5] = [
        ("katering", katering::tool()),
        ("enum_with_default", enum_with_default::tool()),
        ("optional_field", optional_field::tool()),
        ("nested_object", nested_object::tool()),
        ("bounded_list", bounded_list::tool()),
    ];
    let mut found = Vec::new();
    for (shape, tool) in shapes {
        for (target, key) in [(Api::OPENAI_CHAT, "openai"), (Api::ANTHROPIC, "anthropic")] {
            let theirs = &sdk[shape][key];
            let defs = theirs
                .get("$defs")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            let (a, b) = (
                normalize(&ours(tool, target), &Map::new()),
                normalize(theirs, &defs),
            );
            let mut d = Vec::new();
            diff("", &a, &b, &mut d);
            found.extend(d.into_iter().map(|d| (shape, key, d)));
        }
    }
    let unexpected: Vec<_> = found
        .iter()
        .filter(|(s, t, d)| {
            !INTENDED
                .iter()
                .any(|(is, it, ip, _)| is == s && it == t && d.starts_with(ip))
        })
        .collect();
    let stale: Vec<_> = INTENDED
        .iter()
        .filter(|(is, it, ip, _)| {
            !found
                .iter()
                .any(|(s, t, d)| is == s && it == t && d.starts_with(ip))
        })
        .collect();
    assert!(
        unexpected.is_empty(),
        "differences from the SDKs that are not listed as intended:\n{unexpected:#?}"
    );
    assert!(
        stale.is_empty(),
        "listed differences that no longer occur:\n{stale:#?}"
    );
    println!(
        "{} shapes x 2 SDKs compared; {} intended differences",
        5,
        found.len()
    );
}
