use tool_runtime::ToolArg;

#[derive(ToolArg, serde::Deserialize)]
enum Lokasi {
    /// Nama kota
    Kota(String),
    /// Koordinat
    Koordinat(String, String),
}

fn main() {}
