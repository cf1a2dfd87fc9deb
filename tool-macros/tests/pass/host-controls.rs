use tool_runtime::{Context, Grants, ModelOutput, ToolSet, tool, tools};

struct Session {
    nik: String,
}

struct Db;

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Buku {
    judul: String,
    lokasi_rak: String,
}

fn ringkas(b: &Buku) -> ModelOutput {
    ModelOutput::text(&b.judul)
}

fn tanpa_rak(b: &Buku) -> Result<String, std::convert::Infallible> {
    Ok(b.judul.clone())
}

#[tool(
    name = "detail-buku",
    title = "Detail buku",
    description = "Ambil detail satu buku dari ISBN-nya.",
    requires = "perpustakaan.baca",
    read_only,
    idempotent,
    open_world = false,
    to_model = ringkas,
    redact = tanpa_rak
)]
async fn detail_buku(#[ctx] _db: &Db, #[arg(description = "ISBN")] isbn: String) -> Buku {
    Buku { judul: isbn, lokasi_rak: "A1".into() }
}

#[tools]
impl Db {
    #[tool(description = "Pinjam satu buku untuk anggota yang sedang login.", destructive, requires = "perpustakaan.pinjam")]
    fn pinjam(&self, #[ctx] session: &Session, #[arg(description = "ISBN")] isbn: String) -> String {
        format!("{} meminjam {isbn}", session.nik)
    }
}

fn main() {
    let set = ToolSet::new([detail_buku::tool(), Db::tools()[0]]).unwrap();
    let cx = Context::new()
        .with(Db)
        .with(Session { nik: "A-1".into() })
        .with(Grants::new(["perpustakaan.baca"]));
    assert_eq!(set.visible_to(&cx).len(), 1);
    let out = set.call(&cx, "detail-buku", r#"{"isbn": "978"}"#).blocking().unwrap();
    assert_eq!(out.for_display(), Some(&serde_json::json!("978")));
    assert!(Db::tools()[0].needs_approval());
}
