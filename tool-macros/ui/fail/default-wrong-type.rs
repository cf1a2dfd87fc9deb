use tool_runtime::tool;

#[tool(description = "Cari buku; kembalikan paling banyak sejumlah hasil.")]
fn cari_buku(
    #[arg(description = "Jumlah hasil; 5 bila tidak disebut", range = 1..=10, default = "5")] batas: u32,
) -> u32 {
    batas
}

fn main() {}
