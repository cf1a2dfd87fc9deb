use tool_runtime::tool;

#[tool(name = "buat laporan penjualan", description = "Hasilkan laporan penjualan.")]
fn buat_laporan() -> u32 {
    0
}

fn main() {}
