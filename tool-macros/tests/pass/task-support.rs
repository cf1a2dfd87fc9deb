// `task = ".."`: whether a call may (or must) run as a task the caller follows after its request.
use tool_runtime::{TaskSupport, tool};

#[tool(description = "Ekspor gaji satu bulan; butuh waktu.", task = "optional")]
async fn ekspor_gaji() -> String {
    "ok".into()
}

#[tool(description = "Bangun ulang semua laporan; hanya sebagai tugas.", task = "required")]
fn bangun_laporan() -> String {
    "ok".into()
}

#[tool(description = "Ambil sisa cuti karyawan yang sedang login.")]
fn cek_saldo_cuti() -> u8 {
    12
}

fn main() {
    assert_eq!(ekspor_gaji::tool().task_support(), TaskSupport::Optional);
    assert_eq!(bangun_laporan::tool().task_support(), TaskSupport::Required);
    assert_eq!(cek_saldo_cuti::tool().task_support(), TaskSupport::Forbidden);
}
