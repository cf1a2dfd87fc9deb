use tool_runtime::tool;

#[tool(description = "Kembalikan nilai apa adanya.")]
fn gema<T: serde::Serialize>(#[arg(description = "Nilai")] nilai: String) -> String {
    nilai
}

fn main() {}
