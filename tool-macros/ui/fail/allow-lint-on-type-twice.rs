use tool_runtime::ToolArg;

#[derive(ToolArg, serde::Deserialize)]
#[arg(allow_lint = "decision-before-reason: the decision is a person's")]
#[arg(allow_lint = "decision-before-reason: said again")]
#[arg(allow_lint = "decision-before-reason")]
struct Catatan {
    /// Keputusan
    relevan: bool,
    /// Alasan
    alasan: String,
}

fn main() {}
