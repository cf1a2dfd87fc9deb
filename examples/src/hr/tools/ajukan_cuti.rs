use serde::Serialize;
use tool_runtime::{ToolArg, tool};

use crate::hr::domain::Penolakan;
use crate::hr::{Gangguan, Session, SharedDb};

#[derive(ToolArg, Serialize, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum StatusAjuan {
    /// Cuti tercatat
    Diajukan,
    /// Sisa cuti tidak cukup
    KuotaKurang,
    /// NIK pada sesi tidak terdaftar
    KaryawanTidakDitemukan,
}

/// The outcome of a leave request.
#[derive(ToolArg, Serialize)]
pub struct HasilAjuan {
    /// Hasil pengajuan
    pub status: StatusAjuan,
    /// Sisa cuti setelah pengajuan (atau saat ini bila kuota kurang); null bila karyawan tidak ditemukan
    #[arg(range = 0..=365)]
    pub sisa_cuti: Option<u32>,
}

#[tool(
    name = "ajukan-cuti",
    title = "Ajukan cuti",
    description = "Ajukan cuti untuk karyawan yang sedang login dan kurangi kuotanya. Mengubah data: setiap pengajuan menunggu persetujuan seseorang sebelum dijalankan.",
    not_for = "mengecek sisa cuti (pakai cek-sisa-cuti)",
    requires = "hr.cuti.ajukan",
    destructive
)]
pub fn ajukan_cuti(
    #[ctx] db: &SharedDb,
    #[ctx] sesi: &Session,
    #[arg(
        description = "Tanggal mulai cuti (YYYY-MM-DD); tanyakan bila pengguna tidak menyebut",
        pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
    )]
    mulai: String,
    #[arg(description = "Jumlah hari cuti berturut-turut", range = 1..=14)] hari: u32,
) -> Result<HasilAjuan, Gangguan> {
    Ok(match db.ajukan_cuti(&sesi.nik, &mulai, hari)? {
        Ok(sisa) => HasilAjuan {
            status: StatusAjuan::Diajukan,
            sisa_cuti: Some(sisa),
        },
        Err(Penolakan::KuotaKurang { sisa }) => HasilAjuan {
            status: StatusAjuan::KuotaKurang,
            sisa_cuti: Some(sisa),
        },
        Err(Penolakan::KaryawanTidakDitemukan) => HasilAjuan {
            status: StatusAjuan::KaryawanTidakDitemukan,
            sisa_cuti: None,
        },
    })
}
