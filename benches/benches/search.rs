//! Tool search over 5,000 tools, lexical (BM25, the default) and by meaning (WordLlama's
//! static embeddings fused with BM25), side by side in one run:
//!
//! - `build/*`: building the index of 5,000 tools (`ToolIndex::new`, `with_embedder`);
//! - `query/*`: one search for the five best tools, cycling over eight requests;
//! - `load_model`: reading WordLlama's files (16 MB of weights, the tokenizer's 1.8 MB JSON);
//! - `load_glossary`: reading Debian's English-Indonesian FreeDict dictionary the other way
//!   (`Glossary::from_freedict_reversed`), and `build/meaning+glossary` the index by meaning
//!   with each tool's Indonesian words rendered in English.
//!
//! The model is the one the `wordllama` Python package ships, the dictionary Debian's
//! `dict-freedict-eng-ind`, installed by `scripts/provision.sh python` and `freedict-eng-ind`.
//! Run: `cargo bench -p benches --bench search`.

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use tool_runtime::search::{Glossary, INDONESIAN_FUNCTION_WORDS, Ranking, ToolIndex, WordLlama};
use tool_runtime::{Tool, ToolRef, ToolSet};

const TOOLS: usize = 5_000;
/// Tools when the test command runs the benchmark once, as a test (a debug build): enough to
/// run every path.
const TOOLS_AS_TEST: usize = 500;

/// How many tools: 5,000 under `cargo bench`, fewer when run as a test.
fn tool_count() -> usize {
    if std::env::args().any(|a| a == "--bench") {
        TOOLS
    } else {
        TOOLS_AS_TEST
    }
}

/// What a company's records are about, in English and Indonesian.
const RECORDS: [(&str, &str, &str); 12] = [
    ("cuti", "leave requests", "pengajuan cuti"),
    ("gaji", "payslips", "slip gaji"),
    ("klaim", "expense claims", "klaim biaya"),
    ("faktur", "invoices", "faktur penjualan"),
    ("kirim", "shipments", "pengiriman barang"),
    ("tiket", "support tickets", "tiket dukungan"),
    ("ruang", "meeting room bookings", "pemesanan ruang rapat"),
    ("kontrak", "supplier contracts", "kontrak pemasok"),
    ("hadir", "attendance records", "catatan kehadiran"),
    ("latih", "training enrolments", "pendaftaran pelatihan"),
    ("aset", "company laptops", "laptop perusahaan"),
    ("dana", "department budgets", "anggaran departemen"),
];

const VERBS: [(&str, &str, &str); 6] = [
    ("cek", "Look up one of the", "Ambil satu"),
    ("daftar", "List the caller's", "Tampilkan daftar"),
    (
        "buat",
        "Create a new entry among the",
        "Buat entri baru untuk",
    ),
    ("ubah", "Change one of the", "Ubah satu"),
    ("batal", "Cancel one of the", "Batalkan satu"),
    ("ekspor", "Export as CSV the", "Ekspor ke CSV semua"),
];

fn tools(count: usize) -> ToolSet {
    let tools = (0..count).map(|i| {
        let (area, en, id) = RECORDS[i % RECORDS.len()];
        let (verb, en_verb, id_verb) = VERBS[(i / RECORDS.len()) % VERBS.len()];
        let description = if i % 2 == 0 {
            format!("{en_verb} {en} of branch {i}; returns the record and when it changed.")
        } else {
            format!("{id_verb} {id} cabang {i}; mengembalikan data dan waktu perubahannya.")
        };
        let schema = json!({"type": "object", "properties": {
            "nomor": {"type": "string", "description": format!("The number of the {en} entry")}
        }});
        ToolRef::from(
            Tool::define(format!("{verb}-{area}-{i}"), description, schema)
                .build_fn(|_| async { Ok(Value::Null) })
                .expect("a valid definition"),
        )
    });
    ToolSet::new(tools).expect("distinct names")
}

const REQUESTS: [&str; 8] = [
    "show me my wage statements",
    "export every invoice to a spreadsheet",
    "batalkan pemesanan ruang rapat besok",
    "berapa anggaran departemen pemasaran",
    "I need a new laptop from the company",
    "where is my parcel",
    "daftar tiket komplain pelanggan",
    "sign me up for a training",
];

/// What `scripts/provision.sh what` installs (or finds): the path it prints.
fn provision(what: &str) -> PathBuf {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/provision.sh");
    let out = std::process::Command::new("bash")
        .args([script, what])
        .output()
        .expect("bash runs scripts/provision.sh");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

fn glossary(dictionary: &std::path::Path) -> Glossary {
    Glossary::from_freedict_reversed(dictionary)
        .expect("the dictionary reads")
        .keeping(INDONESIAN_FUNCTION_WORDS)
}

fn search(c: &mut Criterion) {
    let count = tool_count();
    let set = tools(count);
    let dir = provision("python").join("wordllama");
    let dictionary = provision("freedict-eng-ind");
    let loaded = Arc::new(glossary(&dictionary));
    let model = Arc::new(WordLlama::from_package(&dir).expect("the model loads"));
    let mut group = c.benchmark_group(format!("search_{count}"));
    group.sample_size(10);
    group.bench_function("load_model", |b| {
        b.iter(|| black_box(WordLlama::from_package(&dir).unwrap()))
    });
    group.bench_function("load_glossary", |b| {
        b.iter(|| black_box(glossary(&dictionary)))
    });
    group.bench_function("build/lexical", |b| {
        b.iter(|| black_box(ToolIndex::new(&set)))
    });
    group.bench_function("build/meaning", |b| {
        b.iter(|| black_box(ToolIndex::with_embedder(&set, model.clone())))
    });
    let glossed = Ranking::lexical().embedder(model.clone()).glossary(loaded);
    group.bench_function("build/meaning+glossary", |b| {
        b.iter(|| black_box(ToolIndex::ranked_by(&set, glossed.clone())))
    });
    for (name, index) in [
        ("lexical", ToolIndex::new(&set)),
        ("meaning", ToolIndex::with_embedder(&set, model.clone())),
    ] {
        let mut i = 0;
        group.bench_function(format!("query/{name}"), |b| {
            b.iter(|| {
                i += 1;
                black_box(index.search(REQUESTS[i % REQUESTS.len()], 5))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, search);
criterion_main!(benches);
