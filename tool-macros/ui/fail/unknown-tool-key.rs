use tool_runtime::tool;

#[tool(descripton = "Sapa pengguna dengan namanya.")]
fn sapa() -> String {
    "halo".into()
}

fn main() {}
