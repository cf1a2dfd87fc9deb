use tool_runtime::tool;

#[tool(description = "Cari buku di katalog berdasarkan kata kunci.")]
fn cari_buku(
    #[arg(description = "Kata kunci; jangan tebak", length = 3..=20, default = "ab")] kata_kunci: String,
) -> Vec<String> {
    vec![kata_kunci]
}

fn main() {}
