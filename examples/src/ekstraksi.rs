//! The structured-output cases: data extracted from a paper's abstract and from an
//! internship posting, with nullable fields as the way out for data that is not there, and
//! business rules checked after the schema; and an abstract classified as relevant or not, with
//! its reason first.

use serde::{Deserialize, Serialize};
use tool_runtime::{ToolArg, Violation};

#[derive(ToolArg, Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum DatasetPublik {
    /// Dataset dirilis untuk umum
    Ya,
    /// Dataset tidak dirilis
    Tidak,
    /// Abstrak tidak menyebutkannya
    TidakJelas,
}

/// Data paper dari abstraknya.
#[derive(ToolArg, Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Paper {
    /// Judul paper
    #[arg(length = 1..=300)]
    pub judul: String,
    /// Tahun terbit, bukan tahun data dikumpulkan; null bila tidak disebut
    #[arg(range = 1900..=2100)]
    pub tahun: Option<u16>,
    /// Metode yang dipakai; kosong bila tidak disebut
    #[arg(length = 0..=20)]
    pub metode: Vec<String>,
    /// Apakah dataset dirilis untuk umum
    pub dataset_publik: DatasetPublik,
}

/// The business rule: a paper cannot be published after the current year, which the caller
/// passes in (`Extractor::rules(|p| aturan_paper(p, tahun_ini))`), so the rule reads no clock.
pub fn aturan_paper(p: &Paper, now: u16) -> Vec<Violation> {
    match p.tahun {
        Some(t) if t > now => vec![Violation::rule(
            "tahun",
            format!("a year not after the current year ({now})"),
            t,
        )],
        _ => vec![],
    }
}

#[derive(ToolArg, Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Berbayar {
    Ya,
    Tidak,
    /// Lowongan tidak menyebutkannya
    TidakDiketahui,
}

/// Data lowongan magang dari teksnya.
#[derive(ToolArg, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[arg(validate = aturan_lowongan)]
pub struct Lowongan {
    /// Nama posisi
    #[arg(length = 1..=200)]
    pub posisi: String,
    /// Nama perusahaan
    #[arg(length = 1..=200)]
    pub perusahaan: String,
    /// Kota atau "remote"; null bila tidak disebut
    pub lokasi: Option<String>,
    /// Apakah magang berbayar
    pub berbayar: Berbayar,
    /// Tenggat pendaftaran (YYYY-MM-DD); null bila tidak disebut
    #[arg(pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$")]
    pub tenggat: Option<String>,
}

/// A deadline must be a real calendar date (the pattern only checks the shape).
pub fn aturan_lowongan(l: &Lowongan) -> Vec<Violation> {
    let Some(t) = &l.tenggat else { return vec![] };
    let parts: Vec<u32> = t.split('-').filter_map(|p| p.parse().ok()).collect();
    let valid = match parts[..] {
        [y, m, d] => {
            let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
            let days = [
                31,
                if leap { 29 } else { 28 },
                31,
                30,
                31,
                30,
                31,
                31,
                30,
                31,
                30,
                31,
            ];
            (1..=12).contains(&m) && d >= 1 && d <= days[(m - 1) as usize]
        }
        _ => false,
    };
    if valid {
        vec![]
    } else {
        vec![Violation::rule("tenggat", "a real calendar date", t)]
    }
}

/// The seed's exercise: is an abstract relevant to a literature review's topic, and why. The
/// reason comes first because the model fills fields in order: written first, the decision is
/// built on the reasoning instead of reasons being found for a decision already made (the lint
/// `decision-before-reason` reports the other order).
#[derive(ToolArg, Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Relevansi {
    /// Alasan singkat dari isi abstrak, ditulis sebelum keputusan
    #[arg(length = 1..=500)]
    pub alasan: String,
    /// Apakah abstrak relevan dengan topik tinjauan
    pub relevan: bool,
}

/// A recorded provider response from `examples/recorded/` (made by `recorded/make.py`).
pub fn recorded(provider: &str, name: &str) -> serde_json::Value {
    let path = recording(provider, name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("recorded responses are JSON")
}

/// Whether the recording `name` of `provider` exists.
pub fn exists(provider: &str, name: &str) -> bool {
    recording(provider, name).exists()
}

fn recording(provider: &str, name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("recorded")
        .join(provider)
        .join(format!("{name}.json"))
}
