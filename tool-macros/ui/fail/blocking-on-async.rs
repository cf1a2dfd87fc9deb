use tool_runtime::tool;

#[tool(description = "Ambil data cuaca terkini untuk satu kota.", blocking = false)]
async fn cuaca(#[arg(description = "Nama kota", length = 1..=80)] kota: String) -> String {
    kota
}

fn main() {}
