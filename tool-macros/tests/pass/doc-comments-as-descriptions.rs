use tool_runtime::{ToolArg, tool};

/// Satu alamat pengiriman.
#[derive(ToolArg, serde::Deserialize)]
struct Alamat {
    /// Nama jalan dan nomor rumah
    jalan: String,
    /// Kota tujuan; tanyakan bila pengguna tidak menyebut
    kota: String,
}

#[tool(description = "Kirim paket ke satu alamat dan kembalikan nomor resi.")]
fn kirim(
    /// Alamat tujuan
    alamat: Alamat,
) -> String {
    alamat.kota
}

fn main() {
    let s = kirim::tool().input_schema();
    assert_eq!(s["properties"]["alamat"]["description"], "Alamat tujuan");
    assert_eq!(s["properties"]["alamat"]["properties"]["kota"]["description"], "Kota tujuan; tanyakan bila pengguna tidak menyebut");
}
