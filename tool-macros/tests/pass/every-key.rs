use tool_runtime::{ToolArg, ToolSet, tool};

#[derive(ToolArg, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
enum Wilayah {
    Jakarta,
    Surabaya,
    /// Semua wilayah digabung
    Semua,
}

#[tool(
    name = "cari-toko",
    description = "Cari toko di satu wilayah dan kembalikan daftar namanya.",
    not_for = "stok barang (pakai cek-stok)",
    crate = "::tool_runtime"
)]
fn cari_toko(
    #[arg(description = "Kata kunci nama toko", length = 2..=40, pattern = "^[a-z ]+$", example = "toko buku")]
    kata_kunci: String,
    #[arg(description = "Wilayah; semua bila tidak disebut", default = Wilayah::Semua)] wilayah: Wilayah,
    #[arg(description = "Jumlah hasil", range = 1..=50, default = 10, example = 5)] batas: u32,
    #[arg(description = "Jarak maksimum dalam km", min = 0.5, max = 25.0)] jarak_km: Option<f64>,
    #[arg(description = "Nomor halaman", unbounded = "halaman berikutnya dari API, tanpa batas atas")] halaman: Option<u64>,
) -> Vec<String> {
    let _ = (wilayah, batas, jarak_km, halaman);
    vec![kata_kunci]
}

fn main() {
    let set = ToolSet::new([cari_toko::tool()]).unwrap();
    let s = set.get("cari-toko").unwrap().input_schema();
    assert_eq!(s["properties"]["batas"]["default"], 10);
    assert_eq!(s["properties"]["kata_kunci"]["maxLength"], 40);
    assert_eq!(s["properties"]["jarak_km"]["maximum"], 25.0);
    assert_eq!(s["required"], serde_json::json!(["kata_kunci"]));
}
