use tool_runtime::tools;

struct Hr;

// A key of one tool written on the group: an error, never silently dropped.
#[tools(bogus_key = 1, description = "Alat HR.")]
impl Hr {
    #[tool(description = "Ambil sisa kuota cuti karyawan yang sedang login.")]
    fn cek_sisa_cuti(&self) -> u32 {
        7
    }
}

fn main() {}
