use tool_runtime::ToolArg;

#[derive(ToolArg, serde::Deserialize)]
enum Ukuran {
    /// Kecil
    #[arg(range = 1..=3)]
    Kecil,
    Besar,
}

fn main() {}
