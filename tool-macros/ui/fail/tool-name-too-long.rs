use tool_runtime::tool;

#[tool(
    name = "ambil_sisa_kuota_cuti_tahunan_seorang_karyawan_berdasarkan_nik_dari_sistem_hr",
    description = "Ambil sisa kuota cuti."
)]
fn cek_sisa_cuti() -> u32 {
    7
}

fn main() {}
