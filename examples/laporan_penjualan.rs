//! The seed's sales-report tool: closed enums instead of free strings, a default for the
//! optional region, a boolean with a default, and an async function.
//!
//! Run with `cargo run -p examples --example laporan_penjualan`.

use serde::{Deserialize, Serialize};
use tool_runtime::{Context, ToolArg, ToolSet, tool};

mod show;

#[derive(ToolArg, Deserialize, Serialize, Clone, Copy, Debug)]
#[serde(rename_all = "snake_case")]
enum Periode {
    /// Hari ini
    Harian,
    /// Tujuh hari terakhir
    Mingguan,
    /// Bulan berjalan
    Bulanan,
}

#[derive(ToolArg, Deserialize, Serialize, Clone, Copy, Debug)]
#[serde(rename_all = "snake_case")]
enum Wilayah {
    Jakarta,
    Surabaya,
    Medan,
    /// Semua wilayah digabung
    Semua,
}

#[derive(ToolArg, Serialize)]
struct Laporan {
    /// Periode laporan
    periode: Periode,
    /// Wilayah laporan
    wilayah: Wilayah,
    /// Total penjualan dalam rupiah
    #[arg(unbounded = "jumlah rupiah hasil hitungan, bukan masukan model")]
    total_penjualan: u64,
    /// Jumlah transaksi
    #[arg(unbounded = "hasil hitungan, bukan masukan model")]
    jumlah_transaksi: u32,
    /// Titik grafik per hari, kosong bila grafik tidak diminta
    #[arg(unbounded = "hasil hitungan, bukan masukan model")]
    grafik: Vec<u64>,
}

#[tool(
    name = "buat-laporan-penjualan",
    description = "Hasilkan laporan penjualan (total rupiah dan jumlah transaksi) untuk satu periode dan satu wilayah. Pakai saat pengguna meminta angka penjualan yang sudah terjadi.",
    not_for = "prakiraan penjualan ke depan"
)]
async fn buat_laporan(
    #[arg(description = "Rentang waktu laporan")] periode: Periode,
    #[arg(description = "Wilayah penjualan; pakai semua bila pengguna tidak menyebut wilayah", default = Wilayah::Semua)]
    wilayah: Wilayah,
    #[arg(
        description = "Sertakan data grafik dalam hasil; default false",
        default = false
    )]
    sertakan_grafik: bool,
) -> Laporan {
    let hari = match periode {
        Periode::Harian => 1,
        Periode::Mingguan => 7,
        Periode::Bulanan => 30,
    };
    let per_hari = match wilayah {
        Wilayah::Semua => 12_500_000,
        _ => 4_000_000,
    };
    Laporan {
        periode,
        wilayah,
        total_penjualan: per_hari * hari,
        jumlah_transaksi: 342 * hari as u32 / 30 + 1,
        grafik: if sertakan_grafik {
            vec![per_hari; hari as usize]
        } else {
            Vec::new()
        },
    }
}

fn main() {
    let tools = ToolSet::new([buat_laporan::tool()]).expect("valid tool set");
    show::tools(&tools);
    let calls = [
        r#"{"periode": "mingguan"}"#,
        r#"{"periode": "bulanan", "wilayah": "medan", "sertakan_grafik": false}"#,
        r#"{"periode": "Mingguan", "wilayah": "DKI Jakarta"}"#,
        r#"{"wilayah": "jakarta", "grafik": true}"#,
    ];
    show::calls(&tools, &Context::new(), "buat-laporan-penjualan", &calls);
}
