//! The catering case: `"25"` can no longer become 255 portions.

use serde::Serialize;
use tool_runtime::tool;

/// The business rule, untouched: five spare portions on top of the participants.
mod domain {
    pub const HARGA_PER_PORSI: u64 = 50_000;
    pub const CADANGAN: u32 = 5;

    pub fn hitung_pesanan(jumlah_peserta: u32) -> (u32, u64) {
        let total_porsi = jumlah_peserta + CADANGAN;
        (total_porsi, total_porsi as u64 * HARGA_PER_PORSI)
    }
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct Pesanan {
    /// Peserta yang dipesankan
    pub jumlah_peserta: u32,
    /// Porsi yang dimasak, termasuk cadangan
    pub total_porsi: u32,
    /// Total biaya dalam rupiah
    pub biaya_rupiah: u64,
}

#[tool(
    name = "pesan-katering",
    description = "Buat pesanan katering untuk sebuah acara dan kembalikan total porsi serta biayanya. Pakai saat pengguna meminta memesan makanan untuk sejumlah peserta.",
    not_for = "mengubah atau membatalkan pesanan yang sudah dibuat"
)]
pub fn pesan_katering(
    #[arg(description = "Jumlah peserta sebagai ANGKA, bukan teks", range = 1..=500, example = 25)]
    jumlah_peserta: u32,
) -> Pesanan {
    let (total_porsi, biaya_rupiah) = domain::hitung_pesanan(jumlah_peserta);
    Pesanan {
        jumlah_peserta,
        total_porsi,
        biaya_rupiah,
    }
}
