use tool_runtime::tool;

#[tool(description = "Ambil cuaca terkini; pakai saat pengguna menanyakan cuaca.", allow_lint = "overlap")]
fn cuaca() -> String {
    String::new()
}

fn main() {}
