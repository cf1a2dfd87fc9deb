//! Generated catalogs: the examples ship theirs (`examples/catalog/`), and this test fails when a
//! committed one is stale. Regenerate with `UPDATE_EXPECT=1 cargo test -p tests --test product catalog`.

use crate::expect;

use std::path::PathBuf;

use tool_runtime::{ToolSet, docs};

fn sets() -> Vec<(&'static str, ToolSet)> {
    vec![
        ("hr", examples::hr::tool_set()),
        ("perpustakaan", examples::perpustakaan::tool_set()),
        (
            "contoh",
            ToolSet::new([
                examples::katering::pesan_katering::tool(),
                examples::laporan_penjualan::buat_laporan::tool(),
                examples::cuaca::cuaca_terkini::tool(),
            ])
            .unwrap(),
        ),
    ]
}

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/catalog")
}

#[test]
fn committed_catalogs_are_up_to_date() {
    let update = expect::updating();
    let mut stale = Vec::new();
    for (name, set) in sets() {
        for (ext, text) in [
            ("md", docs::markdown(&set)),
            (
                "json",
                serde_json::to_string_pretty(&docs::json(&set)).unwrap() + "\n",
            ),
            ("html", docs::html(&set)),
        ] {
            let path = dir().join(format!("{name}.{ext}"));
            if update {
                std::fs::write(&path, &text).unwrap();
            } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
                stale.push(path.display().to_string());
            }
        }
    }
    assert!(
        stale.is_empty(),
        "stale catalogs (run with UPDATE_EXPECT=1 and commit): {stale:?}"
    );
}

#[test]
fn the_markdown_catalog_shows_what_the_model_sees() {
    let md = docs::markdown(&examples::hr::tool_set());
    assert!(md.contains("## `ajukan-cuti` — Ajukan cuti"));
    assert!(md.contains("**Not for:** mengecek sisa cuti (pakai cek-sisa-cuti)"));
    assert!(md.contains(
        "requires `hr.cuti.ajukan`; each call waits for a person's approval; destructive; its definition costs 180 tokens in OpenAI Chat (o200k_base), an estimated 180-186 elsewhere."
    ));
    assert!(md.contains("| `hari` | integer | yes | 1..=14 |"), "{md}");
    assert!(md.contains("| `mulai` | string | yes | 2000-01-01..=2100-12-31, format `date` |"));
    let json = docs::json(&examples::perpustakaan::tool_set());
    assert_eq!(
        json["tools"][0]["arguments"][1]["type"],
        "one of `fiksi`, `nonfiksi`, `null`"
    );
}

/// Renders the HTML catalog in headless Chromium (Debian's package, installed on first use) and checks
/// that the script ran and drew every tool.
#[test]
fn the_html_catalog_renders_in_a_real_browser() {
    let chromium = crate::provision::provision("chromium");
    let page = dir().join("hr.html").canonicalize().unwrap();
    let profile = std::env::temp_dir().join(format!("catalog-chromium-{}", std::process::id()));
    let shot = std::env::temp_dir().join(format!("catalog-{}.png", std::process::id()));
    let flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
    ];
    let run = |extra: &[String]| {
        std::process::Command::new(&chromium)
            .args(flags)
            .arg(format!("--user-data-dir={}", profile.display()))
            .args(extra)
            .arg(format!("file://{}", page.display()))
            .output()
            .unwrap()
    };
    let dom = String::from_utf8(run(&["--dump-dom".into()]).stdout).unwrap();
    assert!(
        dom.contains("5 of 5 tools"),
        "the search script did not run: {}",
        &dom[..dom.len().min(500)]
    );
    let rendered = dom
        .split("<div id=\"tools\">")
        .nth(1)
        .and_then(|r| r.split("<script").next())
        .unwrap_or_default();
    assert_eq!(
        rendered.matches("<div class=\"tool\"><h2>").count(),
        5,
        "one card per tool"
    );
    run(&[
        format!("--screenshot={}", shot.display()),
        "--window-size=1200,1600".into(),
    ]);
    let png = std::fs::read(&shot).expect("a screenshot");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "{} bytes",
        png.len()
    );
}

#[derive(tool_runtime::ToolArg, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
enum Periode {
    /// Per hari
    Harian,
    /// Per minggu
    Mingguan,
}

#[tool_runtime::tool(description = "Ambil laporan; pakai saat pengguna meminta angka penjualan.")]
fn laporan(
    #[arg(description = "Periode; kosongkan bila tidak disebut")] periode: Option<Periode>,
) -> u32 {
    let _ = periode;
    1
}

#[test]
fn an_optional_enum_is_shown_with_its_values() {
    let catalog = docs::json(&ToolSet::new([laporan::tool()]).unwrap());
    assert_eq!(
        catalog["tools"][0]["arguments"][0]["type"],
        "one of `harian`, `mingguan` or null"
    );
}
