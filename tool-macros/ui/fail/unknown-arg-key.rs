use tool_runtime::tool;

#[tool(description = "Cari buku di katalog berdasarkan judul.")]
fn cari_buku(#[arg(descripton = "Judul buku")] judul: String) -> Vec<String> {
    vec![judul]
}

fn main() {}
