use tool_runtime::tool;

struct Hr;

impl Hr {
    #[tool(description = "Ambil sisa kuota cuti karyawan yang sedang login.")]
    fn cek_sisa_cuti(&self) -> u32 {
        7
    }
}

fn main() {}
