use tool_runtime::tool;

#[tool(description = "   ")]
fn sapa() -> String {
    "halo".into()
}

fn main() {}
