use tool_runtime::tool;

type Judul = String;

#[tool(description = "Cari buku di katalog berdasarkan judul.")]
fn cari_buku(#[arg(description = "Judul buku", range = 1..=64)] judul: Judul) -> Vec<String> {
    vec![judul]
}

fn main() {}
