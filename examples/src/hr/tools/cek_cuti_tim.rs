use serde::Serialize;
use tool_runtime::{ToolArg, tool};

use crate::hr::{Gangguan, Session, SharedDb};

/// One team member's leave balance.
#[derive(ToolArg, Serialize)]
pub struct SisaAnggota {
    /// NIK anggota tim
    pub nik: String,
    /// Nama anggota tim
    pub nama: String,
    /// Sisa cuti dalam hari
    #[arg(range = 0..=365)]
    pub sisa_cuti: u32,
}

/// The leave balances of the manager's team (never their reimbursements).
#[derive(ToolArg, Serialize)]
pub struct HasilTim {
    /// Anggota tim; kosong bila yang login tidak memimpin tim
    pub anggota: Vec<SisaAnggota>,
}

#[tool(
    name = "cek-cuti-tim",
    title = "Sisa cuti tim",
    description = "Ambil SISA CUTI SETIAP ANGGOTA TIM dari manajer yang sedang login. Pakai saat manajer menanyakan cuti timnya.",
    not_for = "reimbursement anggota tim (tidak boleh dilihat manajer) atau cuti diri sendiri (pakai cek-sisa-cuti)",
    requires = "hr.tim.cuti.baca",
    read_only
)]
pub fn cek_cuti_tim(#[ctx] db: &SharedDb, #[ctx] sesi: &Session) -> Result<HasilTim, Gangguan> {
    let anggota = db.tim(&sesi.nik)?;
    let anggota = anggota
        .into_iter()
        .map(|k| SisaAnggota {
            nik: k.nik,
            nama: k.nama,
            sisa_cuti: k.sisa_cuti,
        })
        .collect();
    Ok(HasilTim { anggota })
}
