use tool_runtime::tool;

#[tool(description = "Ambil kurs hari ini dari bank sentral.", timeout = "30 detik")]
fn kurs() -> String {
    "15800".into()
}

#[tool(description = "Ambil kurs kemarin dari bank sentral.", timeout = "0s")]
fn kurs_kemarin() -> String {
    "15790".into()
}

fn main() {}
