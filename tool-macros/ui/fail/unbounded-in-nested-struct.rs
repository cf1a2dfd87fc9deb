use tool_runtime::{ToolArg, tool};

#[derive(ToolArg, serde::Deserialize)]
struct Pesanan {
    /// Nama menu
    menu: String,
    /// Jumlah porsi
    porsi: u16,
}

#[tool(description = "Buat pesanan katering dari daftar menu.")]
fn pesan(#[arg(description = "Daftar pesanan", length = 1..=20)] pesanan: Vec<Pesanan>) -> usize {
    pesanan.len()
}

fn main() {}
