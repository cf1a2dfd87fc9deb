// The runtime under another path: `crate = ".."` on #[tool], #[tools] and #[derive(ToolArg)].
mod deps {
    pub use tool_runtime;
}

use deps::tool_runtime::{Context, ToolSet};

#[derive(deps::tool_runtime::ToolArg, serde::Deserialize, serde::Serialize)]
#[arg(crate = "deps::tool_runtime")]
struct Filter {
    /// Kata kunci judul
    kata: String,
    /// Jumlah hasil
    #[arg(range = 1..=20)]
    jumlah: u8,
}

#[deps::tool_runtime::tool(crate = "deps::tool_runtime", description = "Cari buku berdasarkan judul.")]
fn cari(#[arg(description = "Filter pencarian")] filter: Filter) -> u8 {
    filter.jumlah
}

struct Rak;

#[deps::tool_runtime::tools(crate = "deps::tool_runtime")]
impl Rak {
    #[tool(description = "Hitung buku di rak.")]
    fn hitung_rak(&self) -> u32 {
        3
    }
}

fn main() {
    let set = ToolSet::new([cari::tool(), Rak::tools()[0]]).unwrap();
    let cx = Context::new().with(Rak);
    let out = set
        .call(&cx, "cari", r#"{"filter": {"kata": "laskar", "jumlah": 5}}"#)
        .blocking()
        .unwrap();
    assert_eq!(out.value(), 5);
    assert_eq!(set.call(&cx, "hitung_rak", "{}").blocking().unwrap().value(), 3);
}
