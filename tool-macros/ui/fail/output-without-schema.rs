use tool_runtime::tool;

#[derive(serde::Serialize)]
struct Laporan {
    total: u32,
}

#[tool(description = "Hitung total penjualan hari ini.")]
fn total_hari_ini() -> Laporan {
    Laporan { total: 3 }
}

struct TanpaSerde;

#[tool(description = "Kembalikan sesuatu yang tidak bisa ditulis.")]
fn tanpa_serde() -> TanpaSerde {
    TanpaSerde
}

fn main() {}
