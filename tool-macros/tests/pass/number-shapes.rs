use tool_runtime::tool;

#[tool(description = "Hitung statistik dari daftar suhu yang diberikan.")]
fn statistik(
    #[arg(description = "Suhu dalam Celcius", range = -90.0..=60.0, length = 1..=100)] suhu: Vec<f64>,
    #[arg(description = "Persentil", range = 0.0..1.0)] persentil: f32,
    #[arg(description = "Jumlah desimal; 1 bila tidak disebut", range = 0..4)] desimal: Option<u8>,
    #[arg(description = "Selisih hari", min = -30, max = 30)] geser: i16,
) -> f64 {
    let _ = (persentil, desimal, geser);
    suhu.iter().sum::<f64>()
}

fn main() {
    let s = statistik::tool().input_schema();
    assert_eq!(s["properties"]["suhu"]["items"]["minimum"], -90.0);
    assert_eq!(s["properties"]["persentil"]["exclusiveMaximum"], 1.0);
    assert_eq!(s["properties"]["desimal"]["maximum"], 3);
    assert_eq!(s["properties"]["geser"]["minimum"], -30);
}
