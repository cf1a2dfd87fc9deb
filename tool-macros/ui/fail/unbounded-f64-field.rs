use tool_runtime::ToolArg;

#[derive(ToolArg, serde::Deserialize)]
struct Lokasi {
    /// Lintang dalam derajat
    lintang: f64,
    /// Bujur dalam derajat
    #[arg(range = -180.0..=180.0)]
    bujur: f64,
}

fn main() {}
