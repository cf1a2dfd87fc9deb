// A doc comment describes a tool that has no `description`; `description` wins when both exist.
use tool_runtime::{tool, tools};

/// Ambil sisa kuota cuti karyawan yang sedang login.
///
/// Pakai untuk pertanyaan seperti "sisa cuti saya berapa".
#[tool(read_only)]
fn cek_sisa_cuti() -> u32 {
    7
}

/// Komentar ini untuk pengembang.
#[tool(description = "Ambil tanggal cuti yang sudah diambil.")]
fn cek_riwayat_cuti() -> Vec<String> {
    Vec::new()
}

struct Hr;

#[tools]
impl Hr {
    /// Hitung sisa cuti setelah rencana cuti diambil.
    #[tool]
    fn simulasi_sisa(&self, #[arg(description = "Hari cuti", range = 1..=30)] hari: u32) -> u32 {
        7 - hari.min(7)
    }
}

fn main() {
    assert_eq!(
        cek_sisa_cuti::tool().description(),
        "Ambil sisa kuota cuti karyawan yang sedang login. Pakai untuk pertanyaan seperti \"sisa cuti saya berapa\"."
    );
    assert_eq!(cek_riwayat_cuti::tool().description(), "Ambil tanggal cuti yang sudah diambil.");
    assert_eq!(Hr::tools()[0].description(), "Hitung sisa cuti setelah rencana cuti diambil.");
}
