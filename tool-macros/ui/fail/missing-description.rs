use tool_runtime::tool;

#[tool(not_for = "anything else")]
fn sapa() -> String {
    "halo".into()
}

fn main() {}
