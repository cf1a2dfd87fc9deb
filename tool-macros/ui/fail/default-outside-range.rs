use tool_runtime::tool;

#[tool(description = "Cari buku; kembalikan paling banyak sejumlah hasil.")]
fn cari_buku(
    #[arg(description = "Judul buku")] judul: String,
    #[arg(description = "Jumlah hasil; 10 bila tidak disebut", range = 1..=5, default = 10)] batas: u32,
) -> Vec<String> {
    vec![judul; batas as usize]
}

fn main() {}
