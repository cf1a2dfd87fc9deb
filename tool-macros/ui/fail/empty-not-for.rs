use tool_runtime::tool;

#[tool(description = "Ambil sisa kuota cuti karyawan.", not_for = "")]
fn cek_sisa_cuti() -> u32 {
    7
}

fn main() {}
