//! The manager's side of a leave booking that waits for them (`HR_PERSETUJUAN=manajer`): the
//! bookings of the manager's team waiting for approval, and the decision on one. Served only
//! by an MCP server, whose [`ApprovalDesk`] is in each call's context; a manager sees and
//! decides only their own team's bookings (the desk checks the grant, these tools the team).

use chrono::NaiveDate;
use serde::Serialize;
use tool_runtime::{ToolArg, tool};
use tool_runtime_mcp::{ApprovalDesk, Decided, DeskError, Waiting};

use crate::hr::{Gangguan, Session, SharedDb};

/// The tool whose calls wait for the manager.
const AJUKAN_CUTI: &str = "ajukan-cuti";

/// A leave booking waiting for the manager.
#[derive(ToolArg, Serialize, Debug, PartialEq, Eq)]
pub struct AjuanMenunggu {
    /// Id pengajuan, untuk putuskan-persetujuan
    pub id: String,
    /// NIK karyawan yang mengajukan
    pub nik: String,
    /// Tanggal mulai cuti yang diajukan
    pub mulai: NaiveDate,
    /// Jumlah hari cuti yang diajukan
    #[arg(range = 1..=14)]
    pub hari: u32,
}

/// The team's bookings waiting for the manager.
#[derive(ToolArg, Serialize)]
pub struct DaftarAjuan {
    /// Pengajuan cuti anggota tim yang menunggu persetujuan, yang paling lama menunggu lebih dulu; kosong bila tidak ada
    pub menunggu: Vec<AjuanMenunggu>,
}

/// What became of the decision.
#[derive(ToolArg, Serialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum StatusPutusan {
    /// Disetujui; cuti langsung dicatat atas nama karyawan
    Disetujui,
    /// Ditolak; tidak ada yang dicatat
    Ditolak,
    /// Tidak ada pengajuan anggota tim dengan id itu yang menunggu (sudah diputuskan, dibatalkan, atau kedaluwarsa)
    TidakDitemukan,
    /// Karyawan tidak lagi boleh mengajukan cuti; pengajuan dibatalkan
    PemohonTidakBerhak,
}

/// The outcome of a decision.
#[derive(ToolArg, Serialize)]
pub struct HasilPutusan {
    /// Hasil keputusan
    pub status: StatusPutusan,
}

impl From<DeskError> for Gangguan {
    fn from(e: DeskError) -> Self {
        eprintln!("hr: approval desk: {e}");
        Gangguan
    }
}

/// The team's bookings among the waiting calls.
fn milik_tim(
    db: &SharedDb,
    sesi: &Session,
    waiting: Vec<Waiting>,
) -> Result<Vec<AjuanMenunggu>, Gangguan> {
    let tim = db.tim(&sesi.nik)?;
    Ok(waiting
        .into_iter()
        .filter(|w| w.tool == AJUKAN_CUTI)
        .filter_map(|w| {
            let nik = w.owner?.subject;
            if !tim.iter().any(|k| k.nik == nik) {
                return None;
            }
            let mulai = serde_json::from_value(w.arguments["mulai"].clone()).ok()?;
            let hari = serde_json::from_value(w.arguments["hari"].clone()).ok()?;
            Some(AjuanMenunggu {
                id: w.task,
                nik,
                mulai,
                hari,
            })
        })
        .collect())
}

#[tool(
    name = "daftar-persetujuan",
    title = "Pengajuan cuti yang menunggu",
    description = "Ambil PENGAJUAN CUTI ANGGOTA TIM yang menunggu persetujuan manajer yang sedang login.",
    not_for = "cuti atau sisa cuti manajer sendiri (pakai cek-riwayat-cuti atau cek-sisa-cuti)",
    requires = "hr.cuti.setujui",
    read_only
)]
pub async fn daftar_persetujuan(
    #[ctx] db: &SharedDb,
    #[ctx] sesi: &Session,
    #[ctx] meja: &ApprovalDesk,
) -> Result<DaftarAjuan, Gangguan> {
    let menunggu = milik_tim(db, sesi, meja.waiting().await?)?;
    Ok(DaftarAjuan { menunggu })
}

#[tool(
    name = "putuskan-persetujuan",
    title = "Putuskan pengajuan cuti",
    description = "Setujui atau tolak SATU PENGAJUAN CUTI anggota tim, dengan id dari daftar-persetujuan. Mengubah data: cuti yang disetujui langsung dicatat atas nama karyawan.",
    not_for = "mengajukan cuti sendiri (pakai ajukan-cuti)",
    requires = "hr.cuti.setujui",
    destructive
)]
pub async fn putuskan_persetujuan(
    #[ctx] db: &SharedDb,
    #[ctx] sesi: &Session,
    #[ctx] meja: &ApprovalDesk,
    #[arg(description = "Id pengajuan dari daftar-persetujuan", length = 1..=64)] id: String,
    #[arg(description = "true untuk menyetujui, false untuk menolak")] setujui: bool,
) -> Result<HasilPutusan, Gangguan> {
    // Only a booking of the manager's own team is decided.
    let ajuan = meja.get(&id).await?.into_iter().collect();
    let status = if milik_tim(db, sesi, ajuan)?.is_empty() {
        StatusPutusan::TidakDitemukan
    } else {
        match meja.decide(&id, setujui).await {
            Ok(Decided::Approved) => StatusPutusan::Disetujui,
            Ok(_) => StatusPutusan::Ditolak,
            Err(DeskError::NotWaiting { .. }) => StatusPutusan::TidakDitemukan,
            Err(DeskError::OwnerRefused { .. }) => StatusPutusan::PemohonTidakBerhak,
            Err(e) => return Err(e.into()),
        }
    };
    Ok(HasilPutusan { status })
}
