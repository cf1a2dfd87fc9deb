use tool_runtime::ToolArg;

#[derive(ToolArg, serde::Deserialize)]
struct Alamat {
    /// Nama jalan
    jalan: String,
    kota: String,
}

fn main() {}
