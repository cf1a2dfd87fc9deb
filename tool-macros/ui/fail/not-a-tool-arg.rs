use tool_runtime::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Filter {
    judul: String,
}

#[tool(description = "Cari buku di katalog dengan filter.")]
fn cari_buku(#[arg(description = "Filter pencarian")] filter: Filter) -> Vec<String> {
    vec![filter.judul]
}

fn main() {}
