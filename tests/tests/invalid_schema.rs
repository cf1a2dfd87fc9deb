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
