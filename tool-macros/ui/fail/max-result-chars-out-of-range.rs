use tool_runtime::tool;

#[tool(description = "Ekspor seluruh catatan kehadiran setahun.", max_result_chars = 0)]
fn ekspor_kehadiran() -> String {
    String::new()
}

#[tool(description = "Ekspor seluruh slip gaji setahun.", max_result_chars = 20_000_000)]
fn ekspor_gaji() -> String {
    String::new()
}

#[tool(description = "Ekspor seluruh klaim reimbursement setahun.", max_result_chars = "20k")]
fn ekspor_klaim() -> String {
    String::new()
}

fn main() {}
