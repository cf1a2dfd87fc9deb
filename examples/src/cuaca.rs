//! The weather tool: the application receives everything, including the raw API payload;
//! the model receives one sentence and an icon (`to_model`); a transcript shows a redacted copy,
//! and shows nothing if redaction fails (`redact`).

use serde::Serialize;
use serde_json::{Value, json};
use tool_runtime::{ModelOutput, tool};

/// The weather service, stubbed with a payload in the shape wttr.in returns (no network here).
fn ambil_dari_layanan(kota: &str) -> Value {
    json!({
        "current_condition": [{
            "temp_C": "31",
            "weatherDesc": [{ "value": "Cerah" }],
            "weatherIconUrl": [{ "value": "https://cdn.worldweatheronline.com/images/wsymbols01_png_64/wsymbol_0001_sunny.png" }],
            "humidity": "62"
        }],
        "nearest_area": [{ "areaName": [{ "value": kota }], "latitude": "-7.250", "longitude": "112.750" }]
    })
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct Cuaca {
    /// Kota yang diminta
    pub lokasi: String,
    /// Suhu dalam derajat Celsius
    pub suhu_celsius: i32,
    /// Kondisi langit
    pub kondisi: String,
    /// Ikon kondisi
    pub ikon_url: String,
    /// Respons mentah layanan cuaca, untuk aplikasi saja
    pub sumber: Value,
}

/// One sentence and an icon: what the model needs, not the raw payload.
pub fn untuk_model(c: &Cuaca) -> ModelOutput {
    ModelOutput::text(format!(
        "{}: {}°C dan {}",
        c.lokasi,
        c.suhu_celsius,
        c.kondisi.to_lowercase()
    ))
    .and_image_url(&c.ikon_url)
}

#[derive(Serialize)]
pub struct CuacaTampil<'a> {
    lokasi: &'a str,
    suhu_celsius: i32,
    kondisi: &'a str,
}

/// What a transcript may show: no coordinates, no raw payload.
pub fn untuk_transkrip(c: &Cuaca) -> Result<CuacaTampil<'_>, String> {
    if c.lokasi.trim().is_empty() {
        return Err("lokasi kosong".into());
    }
    Ok(CuacaTampil {
        lokasi: &c.lokasi,
        suhu_celsius: c.suhu_celsius,
        kondisi: &c.kondisi,
    })
}

#[tool(
    name = "cuaca-terkini",
    title = "Cuaca terkini",
    description = "Ambil kondisi cuaca terkini (suhu dan kondisi langit) untuk satu kota. Pakai saat pengguna menanyakan cuaca, suhu, atau kondisi langit saat ini.",
    not_for = "prakiraan beberapa hari ke depan",
    read_only,
    open_world,
    to_model = untuk_model,
    redact = untuk_transkrip
)]
pub fn cuaca_terkini(
    #[arg(description = "Nama kota, misalnya Surabaya; tanyakan bila pengguna tidak menyebut", length = 2..=60)]
    kota: String,
) -> Result<Cuaca, String> {
    let data = ambil_dari_layanan(&kota);
    let now = &data["current_condition"][0];
    let suhu_celsius = now["temp_C"]
        .as_str()
        .and_then(|t| t.parse().ok())
        .ok_or("layanan cuaca tidak mengirim suhu")?;
    Ok(Cuaca {
        lokasi: kota,
        suhu_celsius,
        kondisi: now["weatherDesc"][0]["value"]
            .as_str()
            .unwrap_or("tidak diketahui")
            .to_owned(),
        ikon_url: now["weatherIconUrl"][0]["value"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        sumber: data,
    })
}
