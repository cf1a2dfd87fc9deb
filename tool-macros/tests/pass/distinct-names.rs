// Names that differ only in `-` versus an escape-like spelling are distinct tools.
use tool_runtime::{ToolSet, tool};

#[tool(name = "a-b", description = "Kembalikan satu.")]
fn pertama() -> u32 {
    1
}

#[tool(name = "a_2d_b", description = "Kembalikan dua.")]
fn kedua() -> u32 {
    2
}

#[tool(name = "a_db", description = "Kembalikan tiga.")]
fn ketiga() -> u32 {
    3
}

fn main() {
    let set = ToolSet::new([pertama::tool(), kedua::tool(), ketiga::tool()]).unwrap();
    let cx = tool_runtime::Context::new();
    assert_eq!(set.call(&cx, "a-b", "{}").blocking().unwrap().value(), 1);
    assert_eq!(set.call(&cx, "a_2d_b", "{}").blocking().unwrap().value(), 2);
    assert_eq!(set.call(&cx, "a_db", "{}").blocking().unwrap().value(), 3);
}
