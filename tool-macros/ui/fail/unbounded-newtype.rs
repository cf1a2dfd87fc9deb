use tool_runtime::ToolArg;

/// Jumlah peserta
#[derive(ToolArg, serde::Deserialize)]
struct Peserta(u32);

fn main() {}
