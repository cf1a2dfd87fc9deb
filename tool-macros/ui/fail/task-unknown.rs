use tool_runtime::tool;

#[tool(description = "Ekspor gaji satu bulan; butuh waktu.", task = "sometimes")]
async fn ekspor_gaji() -> String {
    "ok".into()
}

fn main() {}
