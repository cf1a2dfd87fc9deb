//! Three tools of the course's cases (catering, sales report, support ticket), written with
//! `#[tool]` and by hand, for the dispatch benchmark and the speed gate (`perf-probe`).

use serde::{Deserialize, Serialize};
use tool_runtime::{Context, ToolArg, ToolSet, tool};

#[derive(Serialize, schemars::JsonSchema)]
struct Pesanan {
    total_porsi: u32,
    biaya: u64,
}

fn hitung(jumlah_peserta: u32) -> Pesanan {
    let total_porsi = jumlah_peserta + 5;
    Pesanan {
        total_porsi,
        biaya: total_porsi as u64 * 50_000,
    }
}

#[tool(
    name = "pesan-katering",
    description = "Buat pesanan katering dan kembalikan porsi serta biaya."
)]
fn pesan_katering(
    #[arg(description = "Jumlah peserta", range = 1..=500)] jumlah_peserta: u32,
) -> Pesanan {
    hitung(jumlah_peserta)
}

#[derive(ToolArg, Deserialize, Serialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum Periode {
    Harian,
    Mingguan,
    Bulanan,
}

#[derive(ToolArg, Deserialize, Serialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum Wilayah {
    Jakarta,
    Surabaya,
    Medan,
    Semua,
}

#[derive(Serialize, schemars::JsonSchema)]
struct Laporan {
    periode: Periode,
    wilayah: Wilayah,
    total_penjualan: u64,
    jumlah_transaksi: u32,
}

fn laporan(periode: Periode, wilayah: Wilayah, grafik: bool) -> Laporan {
    Laporan {
        periode,
        wilayah,
        total_penjualan: 125_000_000,
        jumlah_transaksi: if grafik { 342 } else { 341 },
    }
}

#[tool(
    name = "buat-laporan-penjualan",
    description = "Hasilkan laporan penjualan untuk satu periode dan wilayah."
)]
fn buat_laporan(
    #[arg(description = "Rentang waktu laporan")] periode: Periode,
    #[arg(description = "Wilayah; semua bila tidak disebut", default = Wilayah::Semua)]
    wilayah: Wilayah,
    #[arg(description = "Sertakan grafik", default = false)] sertakan_grafik: bool,
) -> Laporan {
    laporan(periode, wilayah, sertakan_grafik)
}

#[derive(ToolArg, Deserialize, Serialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum Prioritas {
    Rendah,
    Sedang,
    Tinggi,
    Darurat,
}

#[derive(Serialize, schemars::JsonSchema)]
struct Tiket {
    nomor: u32,
    prioritas: Prioritas,
}

fn tiket(terdampak: u32, prioritas: Prioritas, ringkasan: &str, notifikasi: Option<bool>) -> Tiket {
    let nomor = terdampak + ringkasan.len() as u32 + notifikasi.unwrap_or(false) as u32;
    Tiket { nomor, prioritas }
}

#[tool(
    name = "buat-tiket",
    description = "Buat tiket dukungan dan kembalikan nomornya."
)]
fn buat_tiket(
    #[arg(description = "Jumlah pengguna terdampak", range = 1..=10_000)] terdampak: u32,
    #[arg(description = "Prioritas tiket")] prioritas: Prioritas,
    #[arg(description = "Ringkasan masalah", length = 5..=200)] ringkasan: String,
    #[arg(description = "Kirim notifikasi")] notifikasi: Option<bool>,
) -> Tiket {
    tiket(terdampak, prioritas, &ringkasan, notifikasi)
}

/// The same three tools written by hand: `serde_json::from_str` into a struct, the range checks,
/// the call, `serde_json::to_string` (the floor of every dispatch ratio).
pub mod floor {
    use super::*;

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Katering {
        jumlah_peserta: u32,
    }

    pub fn katering(text: &str) -> Result<String, String> {
        let a: Katering = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if !(1..=500).contains(&a.jumlah_peserta) {
            return Err("jumlah_peserta out of range".into());
        }
        serde_json::to_string(&hitung(a.jumlah_peserta)).map_err(|e| e.to_string())
    }

    fn semua() -> Wilayah {
        Wilayah::Semua
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Penjualan {
        periode: Periode,
        #[serde(default = "semua")]
        wilayah: Wilayah,
        #[serde(default)]
        sertakan_grafik: bool,
    }

    pub fn penjualan(text: &str) -> Result<String, String> {
        let a: Penjualan = serde_json::from_str(text).map_err(|e| e.to_string())?;
        serde_json::to_string(&laporan(a.periode, a.wilayah, a.sertakan_grafik))
            .map_err(|e| e.to_string())
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct BuatTiket {
        terdampak: u32,
        prioritas: Prioritas,
        ringkasan: String,
        notifikasi: Option<bool>,
    }

    pub fn buat_tiket(text: &str) -> Result<String, String> {
        let a: BuatTiket = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if !(1..=10_000).contains(&a.terdampak) {
            return Err("terdampak out of range".into());
        }
        let n = a.ringkasan.chars().count();
        if !(5..=200).contains(&n) {
            return Err("ringkasan length".into());
        }
        serde_json::to_string(&tiket(a.terdampak, a.prioritas, &a.ringkasan, a.notifikasi))
            .map_err(|e| e.to_string())
    }
}

/// A hand-written tool: JSON text in, JSON text out.
pub type Floor = fn(&str) -> Result<String, String>;

/// Each case: the tool's name, its arguments as JSON text, and the hand-written floor.
pub const CASES: [(&str, &str, Floor); 3] = [
    (
        "pesan-katering",
        r#"{"jumlah_peserta": 25}"#,
        floor::katering,
    ),
    (
        "buat-laporan-penjualan",
        r#"{"periode": "mingguan", "wilayah": "medan"}"#,
        floor::penjualan,
    ),
    (
        "buat-tiket",
        r#"{"terdampak": 120, "prioritas": "tinggi", "ringkasan": "Login gagal untuk pengguna SSO", "notifikasi": true}"#,
        floor::buat_tiket,
    ),
];

/// The three tools in one set.
pub fn tool_set() -> ToolSet {
    ToolSet::new([
        pesan_katering::tool(),
        buat_laporan::tool(),
        buat_tiket::tool(),
    ])
    .expect("three valid tools")
}

/// One call by name, JSON text in and out, through the toolkit.
#[inline(never)]
pub fn toolkit(
    set: &ToolSet,
    cx: &Context,
    name: &str,
    args: &str,
) -> Result<String, tool_runtime::ToolError> {
    set.call(cx, name, args)
        .blocking()
        .map(tool_runtime::CallOutput::into_json)
}
