use tool_runtime::tool;

const BATAS: u32 = 100;

#[tool(description = "Cari buku; kembalikan paling banyak sejumlah hasil.")]
fn cari_buku(
    #[arg(description = "Judul buku")] judul: String,
    #[arg(description = "Jumlah hasil; 100 bila tidak disebut", range = 1..=50, default = BATAS)] batas: u32,
) -> Vec<String> {
    vec![judul; batas as usize]
}

#[tool(description = "Cari majalah; kembalikan paling banyak sejumlah hasil.")]
fn cari_majalah(
    #[arg(description = "Judul majalah")] judul: String,
    #[arg(description = "Jumlah hasil; 60 bila tidak disebut", range = 1..=50, default = 40 + 20)] batas: u32,
) -> Vec<String> {
    vec![judul; batas as usize]
}

#[tool(description = "Cari koran; kembalikan paling banyak sejumlah hasil.")]
fn cari_koran(
    #[arg(description = "Judul koran")] judul: String,
    #[arg(description = "Jumlah hasil", range = 1..=50, example = BATAS)] batas: u32,
) -> Vec<String> {
    vec![judul; batas as usize]
}

fn main() {}
