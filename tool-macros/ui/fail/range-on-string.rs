use tool_runtime::tool;

#[tool(description = "Cari buku di katalog berdasarkan judul.")]
fn cari_buku(#[arg(description = "Judul buku", range = 1..=64)] judul: String) -> Vec<String> {
    vec![judul]
}

fn main() {}
