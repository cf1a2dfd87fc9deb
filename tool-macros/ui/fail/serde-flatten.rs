use tool_runtime::ToolArg;

#[derive(ToolArg, serde::Deserialize)]
struct Halaman {
    /// Nomor halaman
    #[arg(range = 1..=100)]
    nomor: u32,
}

#[derive(ToolArg, serde::Deserialize)]
struct Pencarian {
    /// Kata kunci
    kata_kunci: String,
    /// Halaman hasil
    #[serde(flatten)]
    halaman: Halaman,
}

fn main() {}
