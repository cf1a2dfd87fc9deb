use tool_runtime::tool;

#[tool(description = "Sapa pengguna.", description = "Sapa pengguna lagi.")]
fn sapa() -> String {
    "halo".into()
}

fn main() {}
