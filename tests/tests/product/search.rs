//! How well `search::ToolIndex` finds tools in the 500-tool catalog, measured: fifty requests in
//! plain language (English and Indonesian), each with the tool it should find (for a generated
//! tool, any of its rounds: they differ only in their number). Recall at 5 and at 1 are printed
//! (for the README), with what the five found tools cost against sending all 500; a floor keeps
//! the ranking from getting worse unnoticed.

use std::sync::Arc;

use tool_runtime::search::{
    Embedder, EmbeddingCache, Glossary, Hit, INDONESIAN_FUNCTION_WORDS, Ranking, ToolIndex,
    WordLlama,
};
use tool_runtime::{Api, tokens};

use crate::big_catalog::catalog;

/// A request, and the tools that answer it: a whole name, or a generated tool's name up to its
/// round (ending in `-`).
const REQUESTS: &[(&str, &[&str])] = &[
    ("berapa sisa cuti saya", &["cek-sisa-cuti"]),
    ("how many days of leave do I have left", &["cek-sisa-cuti"]),
    ("kapan saja saya cuti tahun ini", &["cek-riwayat-cuti"]),
    (
        "which dates did I take leave this year",
        &["cek-riwayat-cuti"],
    ),
    ("reimburse saya sudah cair belum", &["cek-status-reimburse"]),
    (
        "what is the status of my reimbursement",
        &["cek-status-reimburse"],
    ),
    ("sisa cuti setiap anggota tim saya", &["cek-cuti-tim"]),
    ("leave balance of each member of my team", &["cek-cuti-tim"]),
    (
        "saya mau ajukan cuti mulai tanggal 5 selama 3 hari",
        &["ajukan-cuti"],
    ),
    (
        "book leave for me starting Monday for two days",
        &["ajukan-cuti"],
    ),
    ("cari buku karangan Pramoedya", &["cari-buku"]),
    ("find books in the library catalog by title", &["cari-buku"]),
    (
        "info lengkap buku dengan ISBN 978-979-3062-79-2",
        &["detail-buku"],
    ),
    ("is the book with this ISBN available", &["detail-buku"]),
    ("berapa denda keterlambatan saya", &["cek-denda"]),
    (
        "which of my books are late and what is the fine",
        &["cek-denda"],
    ),
    ("export all invoices to CSV", &["ekspor-faktur-"]),
    ("ekspor semua faktur penjualan ke CSV", &["ekspor-faktur-"]),
    ("cancel my meeting room booking", &["batalkan-jadwal-"]),
    ("batalkan pemesanan ruang rapat", &["batalkan-jadwal-"]),
    ("look up shipment number SHP-123", &["cek-pengiriman-"]),
    ("cek pengiriman barang nomor 123", &["cek-pengiriman-"]),
    ("list my support tickets", &["daftar-tiket-"]),
    (
        "tampilkan daftar tiket dukungan pelanggan",
        &["daftar-tiket-"],
    ),
    ("open a new support ticket", &["buat-tiket-"]),
    (
        "change the note on customer account 88",
        &["ubah-pelanggan-"],
    ),
    ("ubah catatan akun pelanggan", &["ubah-pelanggan-"]),
    ("list my payslips", &["daftar-gaji-"]),
    ("tampilkan slip gaji saya", &["daftar-gaji-"]),
    ("export attendance records as CSV", &["ekspor-absensi-"]),
    ("ekspor catatan kehadiran ke CSV", &["ekspor-absensi-"]),
    ("enrol me in a new training", &["buat-pelatihan-"]),
    ("daftar pendaftaran pelatihan saya", &["daftar-pelatihan-"]),
    ("look up which company laptop I have", &["cek-aset-"]),
    ("batalkan kontrak pemasok", &["batalkan-kontrak-"]),
    ("list the supplier contracts", &["daftar-kontrak-"]),
    (
        "look up the marketing department budget",
        &["cek-anggaran-"],
    ),
    ("ubah anggaran departemen", &["ubah-anggaran-"]),
    (
        "list the job applications received this week",
        &["daftar-rekrutmen-"],
    ),
    ("buat entri lamaran kerja baru", &["buat-rekrutmen-"]),
    (
        "look up the status of a project milestone",
        &["cek-proyek-"],
    ),
    ("export the project milestones", &["ekspor-proyek-"]),
    ("look up office inventory item 55", &["cek-inventaris-"]),
    (
        "buat entri barang inventaris kantor baru",
        &["buat-inventaris-"],
    ),
    ("cancel one of my leave requests", &["batalkan-cuti-"]),
    ("list the customer accounts", &["daftar-pelanggan-"]),
    ("export expense claims", &["ekspor-reimburse-"]),
    ("change a shipment", &["ubah-pengiriman-"]),
    ("create a new invoice", &["buat-faktur-"]),
    ("ubah satu catatan kehadiran", &["ubah-absensi-"]),
];

fn answers(tool: &str, expected: &[&str]) -> bool {
    expected.iter().any(|e| {
        if e.ends_with('-') {
            tool.strip_prefix(e)
                .is_some_and(|round| round.chars().all(|c| c.is_ascii_digit()))
        } else {
            tool == *e
        }
    })
}

#[test]
fn fifty_requests_find_their_tool_among_the_first_five_of_500() {
    assert_eq!(REQUESTS.len(), 50);
    let catalog = catalog();
    for (_, expected) in REQUESTS {
        for e in *expected {
            assert!(
                catalog.names().any(|t| answers(t, &[e])),
                "no tool answers `{e}`: the request names a tool the catalog lacks"
            );
        }
    }
    let index = ToolIndex::new(&catalog);
    let (mut at1, mut at5, mut missed) = (0, 0, Vec::new());
    for (request, expected) in REQUESTS {
        let hits = index.search(request, 5);
        if hits.first().is_some_and(|h| answers(&h.tool, expected)) {
            at1 += 1;
        }
        if hits.iter().any(|h| answers(&h.tool, expected)) {
            at5 += 1;
        } else {
            let found: Vec<&str> = hits.iter().map(|h| h.tool.as_str()).collect();
            missed.push(format!("{request:?}: {found:?}"));
        }
    }
    // What a request costs with the five found tools instead of all 500 (OpenAI Chat).
    let all: usize = tokens::of_set(&catalog, Api::OPENAI_CHAT)
        .iter()
        .map(|t| t.tokens)
        .sum();
    let mut five = Vec::new();
    for (request, _) in REQUESTS {
        let found: usize = index
            .search(request, 5)
            .iter()
            .filter_map(|h| catalog.get(&h.tool))
            .map(|t| tokens::of_tool(t, Api::OPENAI_CHAT).tokens)
            .sum();
        five.push(found);
    }
    let largest = five.iter().max().copied().unwrap_or_default();
    eprintln!(
        "recall@5 {at5}/50, recall@1 {at1}/50; five found tools take at most {largest} tokens of the {all} all 500 take ({:.1}%)",
        100.0 * largest as f64 / all as f64
    );
    eprintln!("missed: {missed:#?}");
    // Measured 45/50: the misses are English requests for tools described only in Indonesian
    // (the HR and library examples): a lexical ranking does not cross languages.
    assert!(at5 >= 45, "recall@5 {at5}/50; missed: {missed:#?}");
    assert!(largest * 100 < all * 15, "{largest} of {all}");
}

#[test]
fn a_request_sharing_no_word_with_any_tool_finds_nothing() {
    let index = ToolIndex::new(&catalog());
    assert!(index.search("zzz qqq", 5).is_empty());
    assert!(index.search("", 5).is_empty());
    assert_eq!(index.search("cuti", 3).len(), 3, "bounded by the limit");
}

/// The held-out requests (`search_heldout.tsv`): written by a helper shown only what each tool
/// of the catalog is for (`search_heldout_intents.tsv`), never its name nor the ranking, and
/// frozen before the ranking changed. Each: the tools that answer it, its language, its kind,
/// the request.
fn held_out() -> Vec<(Vec<String>, String, String, String)> {
    include_str!("search_heldout.tsv")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let [tools, lang, kind, request] = l.split('\t').collect::<Vec<_>>()[..] else {
                panic!("a held-out line is four fields: {l:?}");
            };
            let tools = tools.split(',').map(str::to_owned).collect();
            (tools, lang.to_owned(), kind.to_owned(), request.to_owned())
        })
        .collect()
}

/// The held-out requests whose tools `catalog` has. The list the writer saw had the HR
/// example's two approval tools, which the catalog lacks: their three requests are left out
/// (and counted, so no other goes unnoticed).
fn held_out_in(catalog: &tool_runtime::ToolSet) -> Vec<(Vec<String>, String, String, String)> {
    let (requests, absent): (Vec<_>, Vec<_>) = held_out().into_iter().partition(|(tools, ..)| {
        let expected: Vec<&str> = tools.iter().map(String::as_str).collect();
        catalog.names().any(|t| answers(t, &expected))
    });
    assert!(
        absent
            .iter()
            .all(|(tools, ..)| tools.iter().all(|t| t.ends_with("-persetujuan"))),
        "{absent:?}"
    );
    assert_eq!((requests.len(), absent.len()), (117, 3));
    requests
}

/// The held-out evaluation against an embedding model behind an OpenAI-compatible embeddings
/// API (`EMBEDDINGS_URL`, e.g. `https://api.openai.com/v1`; `EMBEDDINGS_MODEL`, default
/// `text-embedding-3-small`; `EMBEDDINGS_KEY`), asked through `tool-runtime-rig`'s
/// `Embeddings` as a host would: by meaning and words, without and with the glossary, beside
/// the lexical default, in one run. Opt-in (it needs such an API): `scripts/search-embeddings.sh`,
/// which serves WordLlama that way when no URL is given.
#[tokio::test]
#[ignore = "needs an embeddings API: scripts/search-embeddings.sh"]
async fn held_out_requests_ranked_by_an_embeddings_api() {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let url = var("EMBEDDINGS_URL")
        .expect("EMBEDDINGS_URL: the API's base, e.g. https://api.openai.com/v1");
    let model = var("EMBEDDINGS_MODEL").unwrap_or_else(|| "text-embedding-3-small".to_owned());
    let key = var("EMBEDDINGS_KEY").unwrap_or_else(|| "none".to_owned());
    let client = rig_core::providers::openai::OpenAIConfig::new(&key)
        .with_base_url(&url)
        .client();
    let embeddings = tool_runtime_rig::Embeddings::new(client.embedding(&model, None));
    // One cache for both indexes: each query is embedded once.
    let service = Arc::new(EmbeddingCache::new(embeddings, 10_000));
    let catalog = catalog();
    let requests = held_out_in(&catalog);
    let lexical = recall(&ToolIndex::new(&catalog), &requests);
    let by_meaning = Ranking::lexical().service(service.clone());
    let glossed = by_meaning.clone().glossary(glossary());
    eprintln!("{model} at {url}");
    print_recall("lexical", &lexical);
    for (name, ranking) in [
        ("by meaning", by_meaning),
        ("by meaning + glossary", glossed),
    ] {
        let index = ToolIndex::ranked_by(&catalog, ranking);
        let started = std::time::Instant::now();
        index
            .prepare()
            .await
            .unwrap_or_else(|e| panic!("the tools could not be embedded: {e}"));
        eprintln!(
            "{name}: {} tools embedded in {:.1?}",
            catalog.len(),
            started.elapsed()
        );
        let mut found = Vec::new();
        for request in &requests {
            found.push(index.search_async(&request.3, 5).await);
        }
        print_recall(name, &tally(&requests, found));
    }
}

/// Prints recall at 1 and at 5 per language, as the README gives them.
fn print_recall(name: &str, rows: &[(String, usize, usize, usize)]) {
    for (lang, at1, at5, of) in rows {
        eprintln!(
            "{name} {lang}: recall@1 {:.2}, recall@5 {:.2} ({at1}/{of}, {at5}/{of})",
            *at1 as f64 / *of as f64,
            *at5 as f64 / *of as f64
        );
    }
}

/// The WordLlama model the `wordllama` Python package ships (installed by scripts/provision.sh).
fn wordllama() -> WordLlama {
    let dir = std::path::Path::new(&crate::provision::provision("python")).join("wordllama");
    WordLlama::from_package(&dir).unwrap_or_else(|e| panic!("{e}"))
}

/// Debian's English-Indonesian FreeDict dictionary read the other way (installed by
/// scripts/provision.sh): the catalog's Indonesian words rendered in English.
fn glossary() -> Arc<Glossary> {
    let path = crate::provision::provision("freedict-eng-ind");
    let glossary = Glossary::from_freedict_reversed(&path).unwrap_or_else(|e| panic!("{e}"));
    Arc::new(glossary.keeping(INDONESIAN_FUNCTION_WORDS))
}

/// Recall at 1 and at 5 of `index` over `requests`, per language: (language, at 1, at 5, of).
fn recall(
    index: &ToolIndex,
    requests: &[(Vec<String>, String, String, String)],
) -> Vec<(String, usize, usize, usize)> {
    let found = requests.iter().map(|r| index.search(&r.3, 5)).collect();
    tally(requests, found)
}

/// Recall at 1 and at 5 of what was `found` for each of `requests` (the first five), per
/// language.
fn tally(
    requests: &[(Vec<String>, String, String, String)],
    found: Vec<Vec<Hit>>,
) -> Vec<(String, usize, usize, usize)> {
    let mut by_lang: Vec<(String, usize, usize, usize)> = Vec::new();
    for ((tools, lang, _, _), hits) in requests.iter().zip(found) {
        let expected: Vec<&str> = tools.iter().map(String::as_str).collect();
        let at1 = hits.first().is_some_and(|h| answers(&h.tool, &expected));
        let at5 = hits.iter().any(|h| answers(&h.tool, &expected));
        let row = match by_lang.iter_mut().find(|r| r.0 == *lang) {
            Some(row) => row,
            None => {
                by_lang.push((lang.clone(), 0, 0, 0));
                by_lang.last_mut().unwrap()
            }
        };
        row.1 += usize::from(at1);
        row.2 += usize::from(at5);
        row.3 += 1;
    }
    by_lang
}

/// The held-out evaluation, lexical (the default) and by meaning (WordLlama fused with BM25),
/// each without and with the FreeDict glossary, in one run: the figures the README gives, with
/// floors at what was measured so a change that finds fewer fails.
#[test]
fn held_out_requests_in_english_and_indonesian_lexically_and_by_meaning() {
    let catalog = catalog();
    let requests = held_out_in(&catalog);
    let model: Arc<dyn Embedder> = Arc::new(wordllama());
    let glossary = glossary();
    let lexical = recall(&ToolIndex::new(&catalog), &requests);
    let meaning = recall(
        &ToolIndex::with_embedder(&catalog, model.clone()),
        &requests,
    );
    let glossed = Ranking::lexical().glossary(glossary);
    let lexical_glossed = recall(&ToolIndex::ranked_by(&catalog, glossed.clone()), &requests);
    let meaning_glossed = recall(
        &ToolIndex::ranked_by(&catalog, glossed.embedder(model)),
        &requests,
    );
    for (name, rows) in [
        ("lexical", &lexical),
        ("by meaning", &meaning),
        ("lexical + glossary", &lexical_glossed),
        ("by meaning + glossary", &meaning_glossed),
    ] {
        print_recall(name, rows);
    }
    let floor = |rows: &[(String, usize, usize, usize)], lang: &str| {
        let row = rows.iter().find(|r| r.0 == lang).unwrap();
        (row.1, row.2)
    };
    // Measured (see the README): the floors are those figures.
    let (l_en, l_id) = (floor(&lexical, "en"), floor(&lexical, "id"));
    let (m_en, m_id) = (floor(&meaning, "en"), floor(&meaning, "id"));
    assert!(
        l_en.1 >= LEXICAL_EN_AT5 && l_id.1 >= LEXICAL_ID_AT5,
        "{lexical:?}"
    );
    assert!(
        m_en.1 >= MEANING_EN_AT5 && m_id.1 >= MEANING_ID_AT5,
        "{meaning:?}"
    );
    let (g_en, g_id) = (floor(&lexical_glossed, "en"), floor(&lexical_glossed, "id"));
    let (mg_en, mg_id) = (floor(&meaning_glossed, "en"), floor(&meaning_glossed, "id"));
    assert!(
        g_en.1 >= GLOSSED_EN_AT5 && g_id.1 >= GLOSSED_ID_AT5,
        "{lexical_glossed:?}"
    );
    assert!(
        mg_en.1 >= MEANING_GLOSSED_EN_AT5 && mg_id.1 >= MEANING_GLOSSED_ID_AT5,
        "{meaning_glossed:?}"
    );
}

/// The figures measured (recall@5 counts of 59 English and 58 Indonesian requests): lexical
/// 21 and 40, by meaning 31 and 40. Before families took one place each and mistyped words
/// were read (BM25 alone): 14 and 32.
const LEXICAL_EN_AT5: usize = 21;
const LEXICAL_ID_AT5: usize = 40;
const MEANING_EN_AT5: usize = 31;
const MEANING_ID_AT5: usize = 40;
/// With the FreeDict glossary (the catalog's Indonesian words rendered in English): lexical 26
/// and 40, by meaning 39 and 41.
const GLOSSED_EN_AT5: usize = 26;
const GLOSSED_ID_AT5: usize = 40;
const MEANING_GLOSSED_EN_AT5: usize = 39;
const MEANING_GLOSSED_ID_AT5: usize = 41;

/// The model's tokens and vectors are the `wordllama` package's own: every held-out request,
/// every tool text of the catalog, and texts a tokenizer gets wrong (spaces in runs, characters
/// outside the vocabulary that fall back to bytes, the special tokens written out), against
/// Hugging Face `tokenizers` with the package's tokenizer file and numpy's average of rows.
#[test]
fn wordllama_tokenizes_and_embeds_as_the_python_package_does() {
    let model = wordllama();
    let mut texts: Vec<String> = held_out().into_iter().map(|r| r.3).collect();
    texts.extend(catalog().iter().map(|t| t.description().to_owned()));
    texts.extend(
        [
            "",
            " ",
            "  two  spaces ",
            "tab\there\nnewline",
            "Σ café naïve 日本語 🙂 ẞ",
            "<s>start</s> and <unk> inside",
            "ISBN 978-979-3062-79-2, Rp1.500.000,-",
            "a\u{0}b",
        ]
        .map(str::to_owned),
    );
    let oracle: serde_json::Value =
        crate::provision::python_json("wordllama_oracle.py", &[], &texts);
    let oracle = oracle["texts"].as_array().unwrap();
    assert_eq!(oracle.len(), texts.len());
    let mut tokens = 0;
    for (text, expected) in texts.iter().zip(oracle) {
        let ids: Vec<u32> = serde_json::from_value(expected["ids"].clone()).unwrap();
        assert_eq!(model.tokens(text), ids, "the tokens of {text:?}");
        tokens += ids.len();
        let ours = model.embed(text);
        for (i, (a, b)) in ours
            .iter()
            .zip(expected["vector"].as_array().unwrap())
            .enumerate()
        {
            let b = b.as_f64().unwrap();
            assert!(
                (f64::from(*a) - b).abs() < 1e-5,
                "dimension {i} of {text:?}: {a} vs {b}"
            );
        }
    }
    eprintln!("{} texts, {tokens} tokens: the same", texts.len());
}

/// Requests written beside the catalog to tune the ranking on (synonyms and goals, English and
/// Indonesian): the held-out set is only measured, never tuned to.
const TUNING: &[(&str, &[&str])] = &[
    ("I want to see my wage slips", &["daftar-gaji-"]),
    (
        "pull up my salary statement for March",
        &["cek-gaji-", "daftar-gaji-"],
    ),
    (
        "I paid for a taxi to the client myself and want the money back",
        &["buat-reimburse-"],
    ),
    (
        "dump every bill we sent customers into a spreadsheet",
        &["ekspor-faktur-"],
    ),
    (
        "where is the parcel we sent to Surabaya",
        &["cek-pengiriman-"],
    ),
    (
        "the projector in room 3 is broken, log a complaint",
        &["buat-tiket-"],
    ),
    ("reserve a conference room for Thursday", &["buat-jadwal-"]),
    (
        "drop the agreement with our paper vendor",
        &["batalkan-kontrak-"],
    ),
    ("who applied for the designer job", &["daftar-rekrutmen-"]),
    ("sign me up for the Excel course", &["buat-pelatihan-"]),
    (
        "how much money does finance have left to spend",
        &["cek-anggaran-"],
    ),
    (
        "which notebook computer is assigned to me",
        &["cek-aset-", "daftar-aset-"],
    ),
    (
        "did I clock in on time last week",
        &["daftar-absensi-", "cek-absensi-"],
    ),
    (
        "I'm going on holiday next week, arrange my time off",
        &["ajukan-cuti", "buat-cuti-"],
    ),
    (
        "saya mau lihat slip upah bulan ini",
        &["daftar-gaji-", "cek-gaji-"],
    ),
    (
        "uang makan klien kemarin pakai uang pribadi, gimana gantinya",
        &["buat-reimburse-"],
    ),
    (
        "tagihan ke pembeli mau saya unduh jadi spreadsheet",
        &["ekspor-faktur-"],
    ),
    (
        "paket kiriman ke Medan udah sampai mana",
        &["cek-pengiriman-"],
    ),
    (
        "AC di ruang meeting rusak, tolong laporkan keluhannya",
        &["buat-tiket-"],
    ),
    ("pesan ruangan untuk rapat hari Kamis", &["buat-jadwal-"]),
    (
        "putus kerja sama dengan vendor kertas",
        &["batalkan-kontrak-"],
    ),
    ("siapa saja pelamar posisi desainer", &["daftar-rekrutmen-"]),
    ("daftarkan saya ke kursus Excel", &["buat-pelatihan-"]),
    ("dana divisi keuangan masih sisa berapa", &["cek-anggaran-"]),
    (
        "pinjam buku apa yang belum saya kembalikan dan bayar berapa",
        &["cek-denda"],
    ),
    ("ada novel Laskar Pelangi di perpus?", &["cari-buku"]),
    (
        "berapa hari libur yang masih bisa saya ambil",
        &["cek-sisa-cuti"],
    ),
    ("tim saya masih punya jatah libur berapa", &["cek-cuti-tim"]),
];

/// The tuning set's figures, printed (no floor: the ranking was tuned on them). Run it when
/// changing the ranking: `cargo test -p tests --all-features --test product tuning --
/// --ignored --nocapture`.
#[test]
#[ignore = "prints figures to tune by; asserts nothing"]
fn tuning_requests_lexically_and_by_meaning() {
    let catalog = catalog();
    // The first fourteen are English, the rest Indonesian.
    let requests: Vec<(Vec<String>, String, String, String)> = TUNING
        .iter()
        .enumerate()
        .map(|(i, (request, tools))| {
            let tools = tools.iter().map(|t| (*t).to_owned()).collect();
            let lang = if i < 14 { "en" } else { "id" };
            (tools, lang.to_owned(), String::new(), (*request).to_owned())
        })
        .collect();
    let lexical = recall(&ToolIndex::new(&catalog), &requests);
    let meaning = recall(
        &ToolIndex::with_embedder(&catalog, Arc::new(wordllama())),
        &requests,
    );
    eprintln!("tuning, lexical {lexical:?}; by meaning {meaning:?}");
}
