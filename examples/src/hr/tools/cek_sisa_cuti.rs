use serde::Serialize;
use tool_runtime::{ToolArg, tool};

use crate::hr::{Gangguan, Session, SharedDb, Status};

/// Leave balance of the employee in the session.
#[derive(ToolArg, Serialize)]
pub struct HasilCuti {
    /// Apakah karyawan ditemukan
    pub status: Status,
    /// Nama karyawan; null bila tidak ditemukan
    pub nama: Option<String>,
    /// Sisa cuti dalam hari; null bila tidak ditemukan
    #[arg(range = 0..=365)]
    pub sisa_cuti: Option<u32>,
    /// Cuti yang sudah terpakai tahun ini dalam hari; null bila tidak ditemukan
    #[arg(range = 0..=365)]
    pub cuti_terpakai: Option<u32>,
}

#[tool(
    name = "cek-sisa-cuti",
    title = "Sisa cuti",
    description = "Ambil SISA KUOTA CUTI karyawan yang sedang login: berapa hari lagi ia bisa cuti. Pakai untuk pertanyaan seperti \"sisa cuti saya berapa\".",
    not_for = "tanggal cuti yang sudah diambil (pakai cek-riwayat-cuti) atau status reimbursement (pakai cek-status-reimburse)",
    requires = "hr.cuti.baca",
    read_only
)]
pub fn cek_sisa_cuti(#[ctx] db: &SharedDb, #[ctx] sesi: &Session) -> Result<HasilCuti, Gangguan> {
    Ok(match db.karyawan(&sesi.nik)? {
        Some(k) => HasilCuti {
            status: Status::Ok,
            nama: Some(k.nama),
            sisa_cuti: Some(k.sisa_cuti),
            cuti_terpakai: Some(k.cuti_terpakai),
        },
        None => HasilCuti {
            status: Status::KaryawanTidakDitemukan,
            nama: None,
            sisa_cuti: None,
            cuti_terpakai: None,
        },
    })
}
