use chrono::NaiveDate;
use serde::Serialize;
use tool_runtime::{ToolArg, tool};

use crate::hr::domain::Penolakan;
use crate::hr::{Gangguan, Session, SharedDb};
use tool_runtime::Violation;

#[derive(ToolArg, Serialize, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum StatusAjuan {
    /// Cuti tercatat
    Diajukan,
    /// Sisa cuti tidak cukup
    KuotaKurang,
    /// Ada hari yang sudah tercatat sebagai cuti
    Bentrok,
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
    /// Hari yang sudah tercatat sebagai cuti bila status bentrok; selain itu null
    pub bentrok: Option<NaiveDate>,
}

#[tool(
    name = "ajukan-cuti",
    title = "Ajukan cuti",
    description = "Ajukan cuti untuk karyawan yang sedang login dan kurangi kuotanya. Mengubah data: setiap pengajuan menunggu persetujuan seseorang sebelum dijalankan.",
    not_for = "mengecek sisa cuti (pakai cek-sisa-cuti)",
    requires = "hr.cuti.ajukan",
    destructive,
    task = "optional"
)]
pub fn ajukan_cuti(
    #[ctx] db: &SharedDb,
    #[ctx] sesi: &Session,
    #[arg(
        description = "Tanggal mulai cuti, dari tahun lalu sampai tahun depan; tanyakan bila pengguna tidak menyebut",
        range = "2000-01-01"..="2100-12-31",
        validate = dalam_periode
    )]
    mulai: NaiveDate,
    #[arg(description = "Jumlah hari cuti berturut-turut", range = 1..=14)] hari: u32,
) -> Result<HasilAjuan, Gangguan> {
    let (status, sisa_cuti, bentrok) = match db.ajukan_cuti(&sesi.nik, mulai, hari)? {
        Ok(sisa) => (StatusAjuan::Diajukan, Some(sisa), None),
        Err(Penolakan::KuotaKurang { sisa }) => (StatusAjuan::KuotaKurang, Some(sisa), None),
        Err(Penolakan::Bentrok { tanggal }) => (StatusAjuan::Bentrok, None, Some(tanggal)),
        Err(Penolakan::KaryawanTidakDitemukan) => (StatusAjuan::KaryawanTidakDitemukan, None, None),
    };
    Ok(HasilAjuan {
        status,
        sisa_cuti,
        bentrok,
    })
}

/// Leave is booked from last year (recorded late) to next year: a booking outside that period
/// is refused with the other argument errors, before anyone is asked to approve it.
fn dalam_periode(mulai: &NaiveDate) -> Vec<Violation> {
    let tahun = crate::hr::tahun_ini() as i32;
    if (tahun - 1..=tahun + 1).contains(&chrono::Datelike::year(mulai)) {
        return Vec::new();
    }
    vec![Violation::rule(
        "",
        format!("a date from {} to {}", tahun - 1, tahun + 1),
        mulai,
    )]
}
