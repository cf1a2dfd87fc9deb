//! How well `search::ToolIndex` finds tools in the 500-tool catalog, measured: fifty requests in
//! plain language (English and Indonesian), each with the tool it should find (for a generated
//! tool, any of its rounds: they differ only in their number). Recall at 5 and at 1 are printed
//! (for the README), with what the five found tools cost against sending all 500; a floor keeps
//! the ranking from getting worse unnoticed.

use tool_runtime::search::ToolIndex;
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
    // Measured 44/50: the six misses are English requests for tools described only in
    // Indonesian (the HR and library examples): a lexical ranking does not cross languages.
    assert!(at5 >= 44, "recall@5 {at5}/50; missed: {missed:#?}");
    assert!(largest * 100 < all * 15, "{largest} of {all}");
}

#[test]
fn a_request_sharing_no_word_with_any_tool_finds_nothing() {
    let index = ToolIndex::new(&catalog());
    assert!(index.search("zzz qqq", 5).is_empty());
    assert!(index.search("", 5).is_empty());
    assert_eq!(index.search("cuti", 3).len(), 3, "bounded by the limit");
}
