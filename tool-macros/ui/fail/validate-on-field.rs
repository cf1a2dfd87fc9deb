use tool_runtime::ToolArg;

fn tahun_wajar(_: &u16) -> Vec<tool_runtime::Violation> {
    Vec::new()
}

#[derive(ToolArg, serde::Deserialize)]
struct Paper {
    /// Tahun terbit
    #[arg(range = 1900..=2100, validate = tahun_wajar)]
    tahun: u16,
}

fn main() {}
