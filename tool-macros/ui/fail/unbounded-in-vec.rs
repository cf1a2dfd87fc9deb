use tool_runtime::tool;

#[tool(description = "Jumlahkan daftar angka transaksi.")]
fn jumlahkan(#[arg(description = "Nominal transaksi", length = 1..=50)] nominal: Vec<i64>) -> i64 {
    nominal.iter().sum()
}

fn main() {}
