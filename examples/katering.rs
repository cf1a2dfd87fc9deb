//! The seed's catering case: a model once sent `"25"` for the number of participants and a
//! string concatenation turned it into 255 portions. Here `"25"` never reaches the business rule.
//!
//! Run with `cargo run -p examples --example katering`.

use serde::Serialize;
use tool_runtime::{Context, ToolSet, tool};

mod show;

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
struct Pesanan {
    /// Peserta yang dipesankan
    jumlah_peserta: u32,
    /// Porsi yang dimasak, termasuk cadangan
    total_porsi: u32,
    /// Total biaya dalam rupiah
    biaya_rupiah: u64,
}

#[tool(
    name = "pesan-katering",
    description = "Buat pesanan katering untuk sebuah acara dan kembalikan total porsi serta biayanya. Pakai saat pengguna meminta memesan makanan untuk sejumlah peserta.",
    not_for = "mengubah atau membatalkan pesanan yang sudah dibuat"
)]
fn pesan_katering(
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

fn main() {
    let tools = ToolSet::new([pesan_katering::tool()]).expect("valid tool set");
    show::tools(&tools);
    let calls = [
        r#"{"jumlah_peserta": 25}"#,
        r#"{"jumlah_peserta": "25"}"#,
        r#"{"jumlah_peserta": 25.0}"#,
        r#"{"jumlah_peserta": 0}"#,
        r#"{"peserta": 25}"#,
    ];
    show::calls(&tools, &Context::new(), "pesan-katering", &calls);
}
