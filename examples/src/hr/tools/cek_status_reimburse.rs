use serde::Serialize;
use tool_runtime::{ToolArg, tool};

use crate::hr::{Gangguan, Session, SharedDb, Status};

/// One reimbursement claim.
#[derive(ToolArg, Serialize)]
pub struct Reimburse {
    /// Nomor pengajuan
    pub id: String,
    /// Nominal dalam rupiah
    #[arg(range = 0..=1_000_000_000)]
    pub jumlah: u64,
    /// Status pengajuan, misalnya diproses atau cair
    pub status: String,
    /// Tanggal pengajuan (YYYY-MM-DD)
    pub tanggal: String,
}

/// Reimbursements of the employee in the session.
#[derive(ToolArg, Serialize)]
pub struct HasilReimburse {
    /// Apakah karyawan ditemukan
    pub status: Status,
    /// Pengajuan; kosong bila tidak ada pengajuan, null bila karyawan tidak ditemukan
    pub daftar: Option<Vec<Reimburse>>,
}

#[tool(
    name = "cek-status-reimburse",
    title = "Status reimbursement",
    description = "Ambil STATUS PENGAJUAN REIMBURSEMENT karyawan yang sedang login. Pakai untuk pertanyaan seperti \"reimburse saya sudah cair belum\".",
    not_for = "kuota atau riwayat cuti (pakai cek-sisa-cuti atau cek-riwayat-cuti)",
    requires = "hr.reimburse.baca",
    read_only
)]
pub fn cek_status_reimburse(
    #[ctx] db: &SharedDb,
    #[ctx] sesi: &Session,
) -> Result<HasilReimburse, Gangguan> {
    let daftar = db.reimburse(&sesi.nik)?.map(|d| {
        d.into_iter()
            .map(|r| Reimburse {
                id: r.id,
                jumlah: r.jumlah,
                status: r.status,
                tanggal: r.tanggal,
            })
            .collect()
    });
    let status = if daftar.is_some() {
        Status::Ok
    } else {
        Status::KaryawanTidakDitemukan
    };
    Ok(HasilReimburse { status, daftar })
}
