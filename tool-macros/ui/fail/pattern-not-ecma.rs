use tool_runtime::tool;

// Rust's regex syntax that ECMA-262 (JSON Schema's dialect) does not have: an inline flag.
#[tool(description = "Ambil status pesanan berdasarkan nomornya.")]
fn status_pesanan(
    #[arg(description = "Nomor pesanan, seperti ORD-000123", pattern = "(?i)^ord-[0-9]{6}$")] nomor: String,
) -> String {
    nomor
}

// `\d` is ASCII in ECMA-262: an Arabic-Indic default does not match.
#[tool(description = "Ambil kode pos sebuah alamat.")]
fn kode_pos(
    #[arg(description = "Kode pos lima angka", pattern = r"^\d{5}$", default = "١٢٣٤٥")] kode: String,
) -> String {
    kode
}

fn main() {}
