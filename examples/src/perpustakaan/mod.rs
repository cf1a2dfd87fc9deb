//! The library exercise: `cari-buku`, `detail-buku` and `cek-denda`, each saying when it is
//! not the right tool; `detail-buku` gives the model only title, author, year and availability
//! while the application gets the whole record. The member comes from the session.

use serde::{Deserialize, Serialize};
use tool_runtime::choice::{Case, Expect};
use tool_runtime::{ModelOutput, ToolArg, ToolSet, tool};

/// A library member, from the host's login.
pub struct Anggota {
    pub id: String,
}

struct Buku {
    isbn: &'static str,
    judul: &'static str,
    penulis: &'static str,
    tahun: u16,
    penerbit: &'static str,
    kategori: Kategori,
    rak: &'static str,
    tersedia: bool,
}

const KATALOG: &[Buku] = &[
    Buku {
        isbn: "978-979-3062-79-2",
        judul: "Laskar Pelangi",
        penulis: "Andrea Hirata",
        tahun: 2005,
        penerbit: "Bentang Pustaka",
        kategori: Kategori::Fiksi,
        rak: "F-12",
        tersedia: true,
    },
    Buku {
        isbn: "978-979-22-2992-6",
        judul: "Bumi Manusia",
        penulis: "Pramoedya Ananta Toer",
        tahun: 1980,
        penerbit: "Hasta Mitra",
        kategori: Kategori::Fiksi,
        rak: "F-03",
        tersedia: false,
    },
    Buku {
        isbn: "978-602-03-3295-6",
        judul: "Sapiens",
        penulis: "Yuval Noah Harari",
        tahun: 2011,
        penerbit: "KPG",
        kategori: Kategori::Nonfiksi,
        rak: "N-07",
        tersedia: true,
    },
];

#[derive(ToolArg, Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Kategori {
    Fiksi,
    Nonfiksi,
}

/// One book in a search result.
#[derive(ToolArg, Serialize)]
pub struct Ringkas {
    /// ISBN-13
    pub isbn: String,
    /// Judul
    pub judul: String,
    /// Penulis
    pub penulis: String,
}

/// Search results; an empty list means nothing matched.
#[derive(ToolArg, Serialize)]
pub struct HasilCari {
    /// Buku yang cocok; kosong bila tidak ada
    pub buku: Vec<Ringkas>,
}

#[tool(
    name = "cari-buku",
    description = "Cari buku di katalog perpustakaan berdasarkan kata kunci judul atau penulis dan kembalikan daftar buku yang cocok (ISBN, judul, penulis). Pakai saat pengguna bertanya apakah ada buku tertentu.",
    not_for = "info lengkap satu buku dari ISBN-nya (pakai detail-buku) atau denda keterlambatan (pakai cek-denda)",
    read_only
)]
pub fn cari_buku(
    #[arg(
        description = "Kata kunci judul atau penulis persis seperti disebut pengguna; jangan tebak: kalau pengguna tidak menyebutkannya, tanyakan dulu",
        length = 2..=100
    )]
    kata_kunci: String,
    #[arg(description = "Kategori buku; kosongkan (null) bila pengguna tidak menyebut")]
    kategori: Option<Kategori>,
) -> HasilCari {
    let k = kata_kunci.to_lowercase();
    let buku = KATALOG
        .iter()
        .filter(|b| b.judul.to_lowercase().contains(&k) || b.penulis.to_lowercase().contains(&k))
        .filter(|b| kategori.is_none_or(|c| c == b.kategori))
        .map(|b| Ringkas {
            isbn: b.isbn.into(),
            judul: b.judul.into(),
            penulis: b.penulis.into(),
        })
        .collect();
    HasilCari { buku }
}

/// The whole record of a book, for the application.
#[derive(ToolArg, Serialize)]
pub struct Detail {
    /// Apakah ISBN ditemukan
    pub ditemukan: bool,
    /// ISBN-13
    pub isbn: String,
    /// Judul; null bila tidak ditemukan
    pub judul: Option<String>,
    /// Penulis; null bila tidak ditemukan
    pub penulis: Option<String>,
    /// Tahun terbit; null bila tidak ditemukan
    #[arg(range = 1000..=2100)]
    pub tahun: Option<u16>,
    /// Penerbit; null bila tidak ditemukan
    pub penerbit: Option<String>,
    /// Kode rak; null bila tidak ditemukan
    pub lokasi_rak: Option<String>,
    /// Apakah bisa dipinjam sekarang; null bila tidak ditemukan
    pub tersedia: Option<bool>,
}

/// The model gets title, author, year and availability only.
pub fn ringkas_detail(d: &Detail) -> ModelOutput {
    match (&d.judul, &d.penulis, d.tahun, d.tersedia) {
        (Some(j), Some(p), Some(t), Some(ada)) => ModelOutput::text(format!(
            "{j} oleh {p} ({t}), {}",
            if ada { "tersedia" } else { "sedang dipinjam" }
        )),
        _ => ModelOutput::text(format!("Tidak ada buku dengan ISBN {} di katalog.", d.isbn)),
    }
}

#[tool(
    name = "detail-buku",
    description = "Ambil info lengkap satu buku dari ISBN-nya: judul, penulis, tahun dan apakah tersedia. Pakai saat pengguna menyebut ISBN atau meminta detail satu buku yang sudah diketahui ISBN-nya.",
    not_for = "mencari buku dari judul atau penulis (pakai cari-buku)",
    read_only,
    to_model = ringkas_detail
)]
pub fn detail_buku(
    #[arg(
        description = "ISBN-13 seperti ditulis pengguna, misalnya 978-979-3062-79-2",
        pattern = "^97[89][0-9-]{10,14}$"
    )]
    isbn: String,
) -> Detail {
    let normal = |s: &str| s.replace('-', "");
    match KATALOG.iter().find(|b| normal(b.isbn) == normal(&isbn)) {
        Some(b) => Detail {
            ditemukan: true,
            isbn,
            judul: Some(b.judul.into()),
            penulis: Some(b.penulis.into()),
            tahun: Some(b.tahun),
            penerbit: Some(b.penerbit.into()),
            lokasi_rak: Some(b.rak.into()),
            tersedia: Some(b.tersedia),
        },
        None => Detail {
            ditemukan: false,
            isbn,
            judul: None,
            penulis: None,
            tahun: None,
            penerbit: None,
            lokasi_rak: None,
            tersedia: None,
        },
    }
}

/// Late books and the fine.
#[derive(ToolArg, Serialize)]
pub struct Denda {
    /// Total denda dalam rupiah
    #[arg(range = 0..=10_000_000)]
    pub total_rupiah: u64,
    /// Judul buku yang terlambat; kosong bila tidak ada
    pub terlambat: Vec<String>,
}

#[tool(
    name = "cek-denda",
    description = "Ambil denda keterlambatan dan daftar buku terlambat milik anggota yang sedang login. Pakai saat pengguna bertanya buku apa yang telat atau berapa dendanya.",
    not_for = "mencari buku di katalog (pakai cari-buku)",
    read_only
)]
pub fn cek_denda(#[ctx] anggota: &Anggota) -> Denda {
    if anggota.id == "A-001" {
        Denda {
            total_rupiah: 6_000,
            terlambat: vec!["Bumi Manusia".into()],
        }
    } else {
        Denda {
            total_rupiah: 0,
            terlambat: Vec::new(),
        }
    }
}

/// The library agent's tools.
pub fn tool_set() -> ToolSet {
    ToolSet::new([cari_buku::tool(), detail_buku::tool(), cek_denda::tool()])
        .expect("valid tool set")
}

/// Messages at the border between the tools, with the tool each must pick (or ask back).
pub const BORDER_MESSAGES: &[Case] = &[
    Case {
        message: "ada buku Laskar Pelangi?",
        expect: Expect::Tool("cari-buku"),
    },
    Case {
        message: "info lengkap ISBN 978-979-3062-79-2",
        expect: Expect::Tool("detail-buku"),
    },
    Case {
        message: "buku apa saja yang saya pinjam dan telat?",
        expect: Expect::Tool("cek-denda"),
    },
    Case {
        message: "berapa denda saya?",
        expect: Expect::Tool("cek-denda"),
    },
    Case {
        message: "cari buku",
        expect: Expect::AskBack,
    },
];
