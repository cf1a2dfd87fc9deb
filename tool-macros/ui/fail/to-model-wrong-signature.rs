use tool_runtime::tool;

fn ringkas(suhu: &i32) -> String {
    format!("{suhu}°C")
}

#[tool(description = "Ambil suhu terkini satu kota.", to_model = ringkas)]
fn suhu(#[arg(description = "Nama kota")] kota: String) -> i32 {
    kota.len() as i32
}

fn main() {}
