use tool_runtime::tool;

#[tool(description = "Cari buku; batasi jumlah hasil bila diminta.")]
fn cari_buku(
    #[arg(description = "Judul buku")] judul: String,
    #[arg(description = "Jumlah hasil maksimum")] batas: Option<u32>,
) -> Vec<String> {
    let _ = batas;
    vec![judul]
}

fn main() {}
