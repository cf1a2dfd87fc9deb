use tool_runtime::tool;

// Three misspelt keys: three errors, each with the key meant, and nothing reported missing.
#[tool(descripton = "Hitung porsi katering untuk sejumlah peserta.")]
fn porsi(#[arg(descriptoin = "Jumlah peserta", rnage = 1..=500)] peserta: u32) -> u32 {
    peserta
}

fn main() {}
