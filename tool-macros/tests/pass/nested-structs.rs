use tool_runtime::{ToolArg, tool};

#[derive(ToolArg, serde::Deserialize)]
struct Item {
    /// Nama menu
    #[arg(length = 1..=40)]
    menu: String,
    /// Porsi
    #[arg(range = 1..=500)]
    porsi: u32,
}

#[derive(ToolArg, serde::Deserialize)]
struct Pesanan {
    /// Daftar menu
    #[arg(length = 1..=10)]
    items: Vec<Item>,
    /// Catatan untuk dapur, null bila tidak ada
    catatan: Option<String>,
    /// Alamat lain bila berbeda dari alamat kantor
    tujuan: Option<Box<Tujuan>>,
}

#[derive(ToolArg, serde::Deserialize)]
struct Tujuan {
    /// Alamat lengkap
    alamat: String,
}

#[tool(description = "Buat pesanan katering dengan beberapa menu dan kembalikan jumlah porsi.")]
fn pesan(#[arg(description = "Isi pesanan")] pesanan: Pesanan) -> u32 {
    pesanan.items.iter().map(|i| i.porsi).sum()
}

fn main() {
    let s = pesan::tool().input_schema();
    assert_eq!(s["properties"]["pesanan"]["properties"]["items"]["maxItems"], 10);
    assert_eq!(s["properties"]["pesanan"]["required"], serde_json::json!(["items"]));
}
