use tool_runtime::ToolArg;

#[derive(ToolArg, serde::Deserialize, serde::Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
enum HasilCuti {
    /// Data ditemukan
    Ok {
        /// Nama karyawan
        nama: String,
        /// Sisa cuti dalam hari
        #[arg(range = 0..=365)]
        sisa_cuti: u32,
    },
    /// NIK tidak terdaftar
    KaryawanTidakDitemukan,
}

#[derive(ToolArg, serde::Deserialize)]
#[serde(tag = "jenis", content = "nilai")]
enum Kunci {
    /// Cari dengan ISBN
    Isbn(String),
    /// Cari dengan judul
    Judul {
        /// Judul lengkap atau sebagian
        teks: String,
    },
}

#[derive(ToolArg, serde::Deserialize)]
enum Bentuk {
    Kosong,
    /// Teks bebas
    Teks(String),
    Angka {
        /// Nilainya
        #[arg(range = -10..=10)]
        nilai: i8,
    },
}

fn main() {
    let s = schemars::schema_for!(HasilCuti);
    assert!(s.as_value()["oneOf"][1]["properties"]["status"]["const"] == "karyawan-tidak-ditemukan");
    let _ = schemars::schema_for!(Kunci);
    let _ = schemars::schema_for!(Bentuk);
}
