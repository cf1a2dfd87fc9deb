use serde::Serialize;
use tool_runtime::{ToolArg, tool};

use crate::hr::{Gangguan, Session, SharedDb, Status, tahun_ini};

/// Leave already taken by the employee in the session.
#[derive(ToolArg, Serialize)]
pub struct HasilRiwayat {
    /// Apakah karyawan ditemukan
    pub status: Status,
    /// Tahun yang dilihat
    #[arg(range = 2000..=2100)]
    pub tahun: u16,
    /// Tanggal cuti (YYYY-MM-DD); kosong bila belum pernah cuti tahun itu, null bila karyawan tidak ditemukan
    pub tanggal: Option<Vec<String>>,
}

#[tool(
    name = "cek-riwayat-cuti",
    title = "Riwayat cuti",
    description = "Ambil DAFTAR TANGGAL CUTI yang sudah diambil karyawan yang sedang login dalam satu tahun. Pakai untuk pertanyaan seperti \"kapan saja saya cuti tahun ini\".",
    not_for = "sisa kuota cuti (pakai cek-sisa-cuti)",
    requires = "hr.cuti.baca",
    read_only
)]
pub fn cek_riwayat_cuti(
    #[ctx] db: &SharedDb,
    #[ctx] sesi: &Session,
    #[arg(description = "Tahun yang ditanyakan; kosongkan (null) untuk tahun berjalan", range = 2000..=2100)]
    tahun: Option<u16>,
) -> Result<HasilRiwayat, Gangguan> {
    let tahun = tahun.unwrap_or_else(tahun_ini);
    let tanggal = db.riwayat_cuti(&sesi.nik, tahun)?;
    let status = if tanggal.is_some() {
        Status::Ok
    } else {
        Status::KaryawanTidakDitemukan
    };
    Ok(HasilRiwayat {
        status,
        tahun,
        tanggal,
    })
}
