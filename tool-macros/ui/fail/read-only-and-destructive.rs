use tool_runtime::tool;

#[tool(description = "Hapus satu buku dari katalog.", read_only, destructive)]
fn hapus_buku(#[arg(description = "ISBN buku")] isbn: String) -> bool {
    !isbn.is_empty()
}

fn main() {}
