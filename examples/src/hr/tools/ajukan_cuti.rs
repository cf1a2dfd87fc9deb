use chrono::NaiveDate;
use serde::Serialize;
use tool_runtime::{Cancelled, Commit, ToolArg, tool};

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
    #[ctx] commit: &Commit,
    #[arg(
        description = "Tanggal mulai cuti, dari tahun lalu sampai tahun depan; tanyakan bila pengguna tidak menyebut",
        range = "2000-01-01"..="2100-12-31",
        validate = dalam_periode
    )]
    mulai: NaiveDate,
    #[arg(description = "Jumlah hari cuti berturut-turut", range = 1..=14)] hari: u32,
) -> Result<HasilAjuan, GagalAjuan> {
    // The booking's commit point: a cancel of its task that came first stops it here, with
    // nothing booked; after it, the booking is made and the task reports it.
    let booked = db.ajukan_cuti_lalu(&sesi.nik, mulai, hari, || {
        commit.now().blocking().map_err(GagalAjuan::Dibatalkan)
    })?;
    let (status, sisa_cuti, bentrok) = match booked {
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

/// Why a leave request did not run to its end.
#[derive(Debug)]
pub enum GagalAjuan {
    /// The HR system failed.
    Gangguan(Gangguan),
    /// Cancelled by its caller before it was booked: nothing changed.
    Dibatalkan(Cancelled),
}

impl std::fmt::Display for GagalAjuan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GagalAjuan::Gangguan(g) => g.fmt(f),
            GagalAjuan::Dibatalkan(_) => {
                f.write_str("pengajuan dibatalkan sebelum dicatat; tidak ada yang berubah")
            }
        }
    }
}

impl std::error::Error for GagalAjuan {}

impl From<rusqlite::Error> for GagalAjuan {
    fn from(e: rusqlite::Error) -> Self {
        GagalAjuan::Gangguan(e.into())
    }
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
