use tool_runtime::tool;

#[tool(name = "cek-cuti", description = "Ambil sisa kuota cuti karyawan.")]
fn cek_sisa_cuti() -> u32 {
    7
}

mod riwayat {
    use tool_runtime::tool;

    #[tool(name = "cek-cuti", description = "Ambil daftar tanggal cuti yang sudah diambil.")]
    fn cek_riwayat_cuti() -> Vec<String> {
        Vec::new()
    }
}

fn main() {}
