use tool_runtime::{Context, ToolArg, ToolSet, tool};

#[derive(ToolArg, serde::Deserialize)]
struct Kategori {
    /// Nama kategori
    nama: String,
    /// Subkategori, kosong bila tidak ada
    #[arg(length = 0..=5)]
    anak: Vec<Kategori>,
}

#[tool(description = "Hitung jumlah kategori dalam sebuah pohon kategori.")]
fn hitung(#[arg(description = "Akar pohon")] akar: Kategori) -> usize {
    fn n(k: &Kategori) -> usize {
        1 + k.anak.iter().map(n).sum::<usize>()
    }
    n(&akar)
}

fn main() {
    let set = ToolSet::new([hitung::tool()]).unwrap();
    let cx = Context::new();
    let out = set
        .call(&cx, "hitung", r#"{"akar":{"nama":"a","anak":[{"nama":"b","anak":[]}]}}"#).blocking()
        .unwrap();
    assert_eq!(out.value(), 2);
    assert!(set.call(&cx, "hitung", r#"{"akar":{"nama":"a","anak":[{"nama":1,"anak":[]}]}}"#).blocking().is_err());
}
