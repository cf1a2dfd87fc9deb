use tool_runtime::tool;

struct Session {
    nik: String,
}

#[tool(description = "Ambil sisa cuti karyawan yang sedang login.")]
fn sisa_cuti(#[ctx] #[arg(description = "Sesi")] session: &Session) -> String {
    session.nik.clone()
}

fn main() {}
