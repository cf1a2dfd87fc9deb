use tool_runtime::tool;

#[tool(description = "Ambil halaman hasil pencarian.")]
fn halaman(#[arg(description = "Nomor halaman", range = 1..=100, unbounded = "any page")] nomor: u64) -> u64 {
    nomor
}

fn main() {}
