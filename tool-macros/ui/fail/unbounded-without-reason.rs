use tool_runtime::tool;

#[tool(description = "Ambil halaman hasil pencarian.")]
fn halaman(#[arg(description = "Nomor halaman", unbounded = " ")] nomor: u64) -> u64 {
    nomor
}

fn main() {}
