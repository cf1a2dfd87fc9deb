use tool_runtime::tool;

#[tool(description = "Ambil status pesanan berdasarkan nomornya.")]
fn status_pesanan(
    #[arg(description = "Nomor pesanan, seperti ORD-000123", pattern = "^ORD-([0-9]{6}$")] nomor: String,
) -> String {
    nomor
}

fn main() {}
