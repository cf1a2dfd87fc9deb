//! Every serde attribute whose effect no schema can describe is refused, at the attribute, with
//! the reason; serde itself accepts all of these.
use tool_runtime::ToolArg;

#[derive(serde::Deserialize)]
struct Mentah {
    nomor: u32,
}

impl From<Mentah> for DariLain {
    fn from(m: Mentah) -> Self {
        DariLain { nomor: m.nomor }
    }
}

impl TryFrom<Mentah> for CobaDari {
    type Error = String;
    fn try_from(m: Mentah) -> Result<Self, String> {
        Ok(CobaDari { nomor: m.nomor })
    }
}

#[derive(ToolArg, serde::Deserialize)]
#[serde(from = "Mentah")]
struct DariLain {
    /// Nomor
    #[arg(range = 1..=9)]
    nomor: u32,
}

#[derive(ToolArg, serde::Deserialize)]
#[serde(try_from = "Mentah")]
struct CobaDari {
    /// Nomor
    #[arg(range = 1..=9)]
    nomor: u32,
}

#[derive(ToolArg, serde::Deserialize)]
#[serde(untagged)]
enum TanpaTag {
    /// Angka
    Angka {
        /// Nilai
        #[arg(range = 1..=9)]
        nilai: u8,
    },
    /// Teks
    Teks {
        /// Isi
        isi: String,
    },
}

#[derive(ToolArg, serde::Deserialize)]
#[serde(tag = "jenis")]
enum DenganLainnya {
    /// Satu
    Satu,
    /// Tag apa pun yang lain
    #[serde(other)]
    Lainnya,
}

#[derive(ToolArg, serde::Deserialize)]
#[serde(variant_identifier)]
enum Pengenal {
    /// A
    A,
    /// B
    B,
}

fn baca_angka<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    <u32 as serde::Deserialize>::deserialize(d)
}

mod teks_angka {
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
        super::baca_angka(d)
    }
}

#[derive(ToolArg, serde::Deserialize)]
struct Fungsi {
    /// Dibaca oleh fungsi sendiri
    #[serde(deserialize_with = "baca_angka")]
    #[arg(range = 1..=9)]
    satu: u32,
    /// Dibaca oleh modul sendiri
    #[serde(with = "teks_angka")]
    #[arg(range = 1..=9)]
    dua: u32,
}

#[derive(serde::Serialize)]
struct Keluaran {
    nomor: u32,
}

impl From<Ditulis> for Keluaran {
    fn from(d: Ditulis) -> Self {
        Keluaran { nomor: d.nomor }
    }
}

#[derive(ToolArg, serde::Deserialize, serde::Serialize, Clone)]
#[serde(into = "Keluaran")]
struct Ditulis {
    /// Nomor
    #[arg(range = 1..=9)]
    nomor: u32,
}

mod jauh {
    pub struct Titik {
        pub x: u8,
    }
}

#[derive(ToolArg, serde::Deserialize)]
#[serde(remote = "jauh::Titik")]
struct TitikDef {
    /// X
    #[arg(range = 1..=9)]
    x: u8,
}

fn main() {}
