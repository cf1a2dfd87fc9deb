//! The sales-report tool: closed enums instead of free strings, defaults, an async fn.

use serde::{Deserialize, Serialize};
use tool_runtime::{ToolArg, tool};

#[derive(ToolArg, Deserialize, Serialize, Clone, Copy, Debug)]
#[serde(rename_all = "snake_case")]
pub enum Periode {
    /// Hari ini
    Harian,
    /// Tujuh hari terakhir
    Mingguan,
    /// Bulan berjalan
    Bulanan,
}

#[derive(ToolArg, Deserialize, Serialize, Clone, Copy, Debug)]
#[serde(rename_all = "snake_case")]
pub enum Wilayah {
    Jakarta,
    Surabaya,
    Medan,
    /// Semua wilayah digabung
    Semua,
}

#[derive(ToolArg, Serialize)]
pub struct Laporan {
    /// Periode laporan
    pub periode: Periode,
    /// Wilayah laporan
    pub wilayah: Wilayah,
    /// Total penjualan dalam rupiah
    #[arg(unbounded = "jumlah rupiah hasil hitungan, bukan masukan model")]
    pub total_penjualan: u64,
    /// Jumlah transaksi
    #[arg(unbounded = "hasil hitungan, bukan masukan model")]
    pub jumlah_transaksi: u32,
    /// Titik grafik per hari, kosong bila grafik tidak diminta
    #[arg(unbounded = "hasil hitungan, bukan masukan model")]
    pub grafik: Vec<u64>,
}

#[tool(
    name = "buat-laporan-penjualan",
    description = "Hasilkan laporan penjualan (total rupiah dan jumlah transaksi) untuk satu periode dan satu wilayah. Pakai saat pengguna meminta angka penjualan yang sudah terjadi.",
    not_for = "prakiraan penjualan ke depan"
)]
pub async fn buat_laporan(
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
