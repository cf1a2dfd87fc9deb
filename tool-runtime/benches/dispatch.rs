//! A call by name with JSON text arguments, through validation, the function and output
//! serialization, side by side with a hand-written baseline (`serde_json::from_str` into a struct,
//! manual range checks, the call, `serde_json::to_string`). Run with `cargo bench -p tool-runtime`;
//! the ratio to report is toolkit / baseline for each pair, from the same run.

use criterion::{Criterion, criterion_group, criterion_main};
use serde::{Deserialize, Serialize};
use std::hint::black_box;
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

mod baseline {
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
type Baseline = fn(&str) -> Result<String, String>;

fn bench(c: &mut Criterion) {
    let set = ToolSet::new([
        pesan_katering::tool(),
        buat_laporan::tool(),
        buat_tiket::tool(),
    ])
    .unwrap();
    let cx = Context::new();
    let cases: [(&str, &str, Baseline); 3] = [
        (
            "pesan-katering",
            r#"{"jumlah_peserta": 25}"#,
            baseline::katering,
        ),
        (
            "buat-laporan-penjualan",
            r#"{"periode": "mingguan", "wilayah": "medan"}"#,
            baseline::penjualan,
        ),
        (
            "buat-tiket",
            r#"{"terdampak": 120, "prioritas": "tinggi", "ringkasan": "Login gagal untuk pengguna SSO", "notifikasi": true}"#,
            baseline::buat_tiket,
        ),
    ];
    for (name, args, hand) in cases {
        // Both paths must agree before they are timed.
        let ours = toolkit(&set, &cx, name, args).unwrap();
        assert_eq!(ours, hand(args).unwrap(), "{name}");
        let mut g = c.benchmark_group(name);
        g.bench_function("baseline", |b| b.iter(|| hand(black_box(args)).unwrap()));
        g.bench_function("toolkit", |b| {
            b.iter(|| toolkit(&set, &cx, black_box(name), black_box(args)).unwrap())
        });
        g.finish();
    }
}

/// One call by name, JSON text in and out: the function `scripts/bench-instructions.py` counts.
#[inline(never)]
fn toolkit(
    set: &ToolSet,
    cx: &Context,
    name: &str,
    args: &str,
) -> Result<String, tool_runtime::ToolError> {
    set.call(cx, name, args)
        .blocking()
        .map(tool_runtime::CallOutput::into_json)
}

criterion_group!(benches, bench);
criterion_main!(benches);
