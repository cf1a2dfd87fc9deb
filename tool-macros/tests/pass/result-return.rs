use tool_runtime::{Context, ToolError, ToolSet, tool};

#[derive(Debug)]
struct TidakDitemukan(String);

impl std::fmt::Display for TidakDitemukan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "buku {} tidak ditemukan", self.0)
    }
}

#[tool(description = "Ambil judul buku dari ISBN-nya.")]
fn judul_buku(#[arg(description = "ISBN 13 digit", pattern = "^978[0-9-]{10,14}$")] isbn: String) -> Result<String, TidakDitemukan> {
    if isbn.starts_with("978-979") { Ok("Laskar Pelangi".into()) } else { Err(TidakDitemukan(isbn)) }
}

fn main() {
    let set = ToolSet::new([judul_buku::tool()]).unwrap();
    let cx = Context::new();
    assert_eq!(set.call(&cx, "judul_buku", r#"{"isbn":"978-979-3062-79-2"}"#).blocking().unwrap().value(), "Laskar Pelangi");
    let err = set.call(&cx, "judul_buku", r#"{"isbn":"978-000-0000-00-0"}"#).blocking().unwrap_err();
    assert!(matches!(err, ToolError::Failed { .. }));
}
