//! A tool whose schema cannot be enforced is refused when a set is built, never at call time.
//! In its own test binary because it poisons the program-wide registry on purpose.

use tool_runtime::{ToolSet, ToolSetError, tool};

#[tool(description = "Alat dengan pola yang tidak valid, untuk menguji penolakan skema.")]
fn pola_rusak(#[arg(description = "Teks", pattern = "(")] teks: String) -> String {
    teks
}

#[test]
fn a_schema_the_validator_cannot_enforce_is_refused_by_the_set() {
    let err = ToolSet::new([pola_rusak::tool()]).unwrap_err();
    assert!(
        matches!(
            err,
            ToolSetError::Schema {
                tool: "pola_rusak",
                ..
            }
        ),
        "{err}"
    );
    assert!(ToolSet::all().is_err(), "the registry refuses it too");
}
