// Defaults and examples the compiler computes: a constant inside the range, an expression of
// constants, and a call whose value (not its literal) fits the pattern.
use tool_runtime::{ToolSet, tool};

const BATAS: u32 = 20;
const KODE: &str = "abc";

#[tool(description = "Cari buku menurut kode penerbit; kembalikan paling banyak sejumlah hasil.")]
fn cari_buku(
    #[arg(description = "Kode penerbit, tiga huruf besar", pattern = "^[A-Z]{3}$", default = KODE.to_uppercase())]
    kode: String,
    #[arg(description = "Jumlah hasil; 20 bila tidak disebut", range = 1..=50, default = BATAS, example = BATAS * 2)]
    batas: u32,
    #[arg(description = "Halaman; 2 bila tidak disebut", range = 1..=9, default = (BATAS / 10) as u8)]
    halaman: u8,
) -> Vec<String> {
    vec![kode; (batas + u32::from(halaman)) as usize]
}

fn main() {
    ToolSet::from_module(module_path!()).expect("every default and example keeps its rules");
}
