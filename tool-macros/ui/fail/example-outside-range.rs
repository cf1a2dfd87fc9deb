use tool_runtime::tool;

#[tool(description = "Hitung porsi katering untuk sejumlah peserta.")]
fn hitung_porsi(
    #[arg(description = "Jumlah peserta", range = 1..=500, example = 25, example = 900)] jumlah_peserta: u32,
) -> u32 {
    jumlah_peserta + 5
}

fn main() {}
