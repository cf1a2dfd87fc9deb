mod model {
    use tool_runtime::ToolArg;

    #[derive(ToolArg, serde::Deserialize)]
    pub struct Rentang {
        /// Tahun awal
        #[arg(range = 1900..=2100)]
        pub dari: u16,
        /// Tahun akhir
        #[arg(range = 1900..=2100)]
        pub sampai: u16,
    }

    #[derive(serde::Serialize, schemars::JsonSchema)]
    pub struct Jumlah {
        pub buku: usize,
    }
}

mod tools {
    use super::model::{Jumlah, Rentang};
    use tool_runtime::tool;

    #[tool(description = "Hitung buku yang terbit dalam rentang tahun tertentu.")]
    pub fn hitung_buku(#[arg(description = "Rentang tahun terbit")] rentang: Rentang) -> Jumlah {
        Jumlah { buku: (rentang.sampai - rentang.dari) as usize }
    }
}

fn main() {
    let tool = tools::hitung_buku::tool();
    assert_eq!(tool.input_schema()["properties"]["rentang"]["properties"]["dari"]["minimum"], 1900);
}
