//! A tool whose schema cannot be enforced is refused when a set is built, never at call time.
//! (A `pattern` written in `#[arg]` is checked at compile time; a hand-written schema is checked
//! here.) In its own test binary because it poisons the program-wide registry on purpose.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use tool_runtime::{ToolArg, ToolSet, ToolSetError, tool};

/// A type with a hand-written schema whose pattern is not a regular expression.
#[derive(serde::Deserialize)]
struct PolaRusak(String);

impl JsonSchema for PolaRusak {
    fn schema_name() -> Cow<'static, str> {
        "PolaRusak".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "pattern": "(" })
    }
}

impl ToolArg for PolaRusak {}

#[tool(description = "Alat dengan pola yang tidak valid, untuk menguji penolakan skema.")]
fn pola_rusak(#[arg(description = "Teks")] teks: PolaRusak) -> String {
    teks.0
}

#[test]
fn a_schema_the_validator_cannot_enforce_is_refused_by_the_set() {
    let err = ToolSet::new([pola_rusak::tool()]).unwrap_err();
    assert!(
        matches!(
            err,
            ToolSetError::Schema { ref tool, .. } if tool == "pola_rusak"
        ),
        "{err}"
    );
    assert!(err.to_string().contains("invalid `pattern`"), "{err}");
    assert!(
        ToolSet::from_module(module_path!()).is_err(),
        "the registry refuses it too"
    );
}

/// Defaults and examples the macro cannot read as literals are checked when the tool is built,
/// on the values they give: a `ToolSetError` naming the tool, the argument, the value and the
/// rule, never a value handed to the tool. (Constants are checked by the compiler: see the
/// `default-const-outside-range` compile case.)
mod computed {
    use chrono::NaiveDate;
    use tool_runtime::tool;

    pub const KODE: &str = "abc";

    #[tool(description = "Cari buku menurut kode penerbit, tiga huruf besar.")]
    pub fn kode_dari_konstanta(
        #[arg(description = "Kode penerbit", pattern = "^[A-Z]{3}$", default = String::from(KODE))]
        kode: String,
    ) -> String {
        kode
    }

    #[tool(description = "Cari buku menurut kode penerbit, tiga huruf besar.")]
    pub fn kode_kecil(
        #[arg(description = "Kode penerbit", pattern = "^[A-Z]{3}$", default = "ABC".to_lowercase())]
        kode: String,
    ) -> String {
        kode
    }

    #[tool(description = "Cari buku yang terbit pada tanggal tertentu.")]
    pub fn tanggal_terbit(
        #[arg(
            description = "Tanggal terbit",
            range = "2000-01-01"..="2100-12-31",
            default = NaiveDate::from_ymd_opt(1999, 12, 31).unwrap()
        )]
        tanggal: NaiveDate,
    ) -> String {
        tanggal.to_string()
    }

    #[tool(description = "Cari buku menurut kode penerbit, tiga huruf besar.")]
    pub fn contoh_kecil(
        #[arg(description = "Kode penerbit", pattern = "^[A-Z]{3}$", example = "XYZ".to_lowercase())]
        kode: String,
    ) -> String {
        kode
    }
}

#[test]
fn a_computed_default_or_example_that_breaks_its_rules_is_refused_when_the_set_is_built() {
    let cases = [
        (
            computed::kode_dari_konstanta::tool(),
            "kode_dari_konstanta",
            "its default \"abc\" breaks its own rules: `kode`",
        ),
        (
            computed::kode_kecil::tool(),
            "kode_kecil",
            "its default \"abc\" breaks its own rules: `kode`",
        ),
        (
            computed::tanggal_terbit::tool(),
            "tanggal_terbit",
            "its default \"1999-12-31\" breaks its own rules: `tanggal`",
        ),
        (
            computed::contoh_kecil::tool(),
            "contoh_kecil",
            "its example \"xyz\" breaks its own rules: `kode`",
        ),
    ];
    for (tool, name, says) in cases {
        let err = ToolSet::new([tool]).unwrap_err();
        assert!(
            matches!(err, ToolSetError::Schema { ref tool, .. } if tool == name),
            "{err}"
        );
        let text = err.to_string();
        assert!(text.contains("at `/properties/"), "{text}");
        assert!(text.contains(says), "{text}");
    }
    assert!(ToolSet::from_module("invalid_schema::computed").is_err());
}

#[test]
fn a_defined_tool_whose_default_breaks_its_rules_is_not_defined() {
    let schema = serde_json::json!({
        "type": "object",
        "properties": {"batas": {"type": "integer", "minimum": 1, "maximum": 50, "default": 100}},
    });
    let err =
        tool_runtime::Tool::define("cari", "Cari buku; paling banyak sejumlah hasil.", schema)
            .build_fn(|_| async { Ok(serde_json::Value::Null) })
            .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("at `/properties/batas`: its default 100 breaks its own rules: `batas`: expected an integer from 1 to 50, received 100"),
        "{text}"
    );
}
