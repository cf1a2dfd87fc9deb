use tool_runtime::{Context, ToolSet, tools};

struct Hr {
    sisa_cuti: u32,
}

#[tools]
impl Hr {
    #[tool(name = "cek-sisa-cuti", description = "Ambil sisa kuota cuti karyawan yang sedang login.")]
    fn cek_sisa_cuti(&self) -> u32 {
        self.sisa_cuti
    }

    #[tool(description = "Ambil sisa cuti setelah rencana cuti diambil.")]
    async fn simulasi(&self, #[arg(description = "Hari cuti yang direncanakan", range = 1..=30)] hari: u32) -> i64 {
        self.sisa_cuti as i64 - hari as i64
    }

    fn bukan_tool(&self) -> u32 {
        0
    }
}

fn main() {
    let set = ToolSet::new(Hr::tools().iter().copied()).unwrap();
    let cx = Context::new().with(Hr { sisa_cuti: 7 });
    assert_eq!(set.call(&cx, "cek-sisa-cuti", "{}").blocking().unwrap().value(), 7);
    assert_eq!(set.call(&cx, "simulasi", r#"{"hari": 3}"#).blocking().unwrap().value(), 4);
    assert_eq!(Hr { sisa_cuti: 1 }.bukan_tool(), 0);
}
