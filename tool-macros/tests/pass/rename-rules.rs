use tool_runtime::ToolArg;

#[derive(ToolArg, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Filter {
    /// Tahun terbit
    #[arg(range = 1900..=2100)]
    tahun_terbit: u16,
    /// Nama penerbit
    #[serde(rename = "publisher")]
    nama_penerbit: Option<String>,
    /// Sertakan yang dipinjam
    #[serde(default)]
    sertakan_dipinjam: bool,
    #[serde(skip)]
    _internal: (),
}

#[derive(ToolArg, serde::Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
enum Urutan {
    TerbaruDulu,
    TerlamaDulu,
}

fn main() {
    let s = schemars::schema_for!(Filter);
    let props = s.as_value()["properties"].as_object().unwrap();
    assert_eq!(props.keys().collect::<Vec<_>>(), ["tahunTerbit", "publisher", "sertakanDipinjam"]);
    assert_eq!(s.as_value()["required"], serde_json::json!(["tahunTerbit"]));
    let u = schemars::schema_for!(Urutan);
    assert_eq!(u.as_value()["enum"], serde_json::json!(["TERBARU_DULU", "TERLAMA_DULU"]));
}
