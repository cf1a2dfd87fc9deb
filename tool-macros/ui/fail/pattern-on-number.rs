use tool_runtime::tool;

#[tool(description = "Ambil data karyawan berdasarkan nomor urut.")]
fn karyawan(#[arg(description = "Nomor urut", range = 1..=999, pattern = "^[0-9]+$")] nomor: u32) -> u32 {
    nomor
}

fn main() {}
