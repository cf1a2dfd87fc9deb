use tool_runtime::tool;

type Jumlah = u32;

#[tool(description = "Hitung porsi katering untuk sejumlah peserta.")]
fn hitung_porsi(#[arg(description = "Jumlah peserta")] jumlah_peserta: Jumlah) -> u32 {
    jumlah_peserta + 5
}

fn main() {}
