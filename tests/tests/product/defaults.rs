//! Defaults and examples against their own rules, over random rules and values: a tool whose
//! default (or example) breaks its argument's range, length, pattern or dates is never built;
//! one whose default keeps them is, and a call that leaves the argument out hands the tool
//! exactly that default. The oracle is the `jsonschema` crate (and, for dates, which it does not
//! check, the days compared as text). The compile-time half (constants, literals) is in the
//! macro crate's `trybuild` cases.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::{Value, json};
use tool_runtime::{Context, Tool, ToolSet};

use crate::differential::seeded;

/// One argument's rules and a value given as its default or example.
#[derive(Debug, Clone)]
struct Case {
    rules: Value,
    value: Value,
    /// Whether the rules are dates, which the oracle cannot check.
    dates: Option<(String, String)>,
}

const PATTERNS: &[&str] = &[
    "^[A-Z]{3}$",
    "^\\d+$",
    "^[a-z]+-[0-9]{2}$",
    "ab",
    "^(ya|tidak)$",
];

fn integer() -> impl Strategy<Value = Case> {
    (-100i64..100, 0i64..60, -150i64..150, any::<bool>()).prop_map(|(min, width, v, as_float)| {
        let value = if as_float { json!(v as f64) } else { json!(v) };
        Case {
            rules: json!({"type": "integer", "minimum": min, "maximum": min + width}),
            value,
            dates: None,
        }
    })
}

fn text() -> impl Strategy<Value = Case> {
    (
        prop::sample::select(PATTERNS),
        0u64..4,
        0u64..6,
        "[A-Za-z0-9-]{0,8}",
    )
        .prop_map(|(pattern, min, extra, value)| Case {
            rules: json!({"type": "string", "pattern": pattern, "minLength": min, "maxLength": min + extra}),
            value: json!(value),
            dates: None,
        })
}

fn day() -> impl Strategy<Value = String> {
    (1990u32..2110, 1u32..13, 1u32..29).prop_map(|(y, m, d)| format!("{y:04}-{m:02}-{d:02}"))
}

fn date() -> impl Strategy<Value = Case> {
    (day(), day(), day()).prop_map(|(a, b, value)| {
        let (first, last) = if a <= b { (a, b) } else { (b, a) };
        Case {
            rules: json!({"type": "string", "format": "date", "formatMinimum": first, "formatMaximum": last}),
            value: json!(value),
            dates: Some((first, last)),
        }
    })
}

/// Whether `case.value` keeps `case.rules`, by the oracle.
fn keeps(case: &Case) -> bool {
    if let Some((first, last)) = &case.dates {
        let day = case.value.as_str().unwrap();
        return first.as_str() <= day && day <= last.as_str();
    }
    jsonschema::validator_for(&case.rules)
        .unwrap()
        .is_valid(&case.value)
}

fn schema(case: &Case, key: &str) -> Value {
    let mut property = case.rules.clone();
    property["description"] = json!("Nilai yang diuji");
    match key {
        "default" => property["default"] = case.value.clone(),
        _ => property["examples"] = json!([case.value]),
    }
    json!({"type": "object", "properties": {"nilai": property}})
}

fn check(case: Case, key: &str) -> Result<(), TestCaseError> {
    let built = Tool::define("uji", "Kembalikan nilai yang diterima.", schema(&case, key))
        .build_fn(|args| async move { Ok(args) });
    let keeps = keeps(&case);
    match built {
        Err(e) => {
            prop_assert!(
                !keeps,
                "{case:?}: a {key} that keeps its rules is refused: {e}"
            );
            let text = e.to_string();
            prop_assert!(
                text.contains("`/properties/nilai`") && text.contains(&format!("its {key}")),
                "{text}"
            );
        }
        Ok(tool) => {
            prop_assert!(keeps, "{case:?}: a {key} that breaks its rules is accepted");
            if key == "default" {
                let set = ToolSet::new([tool]).unwrap();
                let out = set
                    .call(&Context::new(), "uji", "{}")
                    .blocking()
                    .map_err(|e| TestCaseError::fail(format!("{case:?}: {e}")))?;
                let got = out.into_value()["nilai"].clone();
                // An integral float default reaches the tool as the integer it is.
                let want = match case.value.as_f64() {
                    Some(f) if case.rules["type"] == "integer" => json!(f as i64),
                    _ => case.value.clone(),
                };
                prop_assert_eq!(got, want);
            }
        }
    }
    Ok(())
}

#[test]
fn a_default_or_example_is_built_exactly_when_it_keeps_its_rules() {
    let mut runner = seeded(3000);
    let (refused, kept) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
    let case = prop_oneof![integer(), text(), date()];
    runner
        .run(&(case, any::<bool>()), |(case, as_default)| {
            let side = if keeps(&case) { &kept } else { &refused };
            side.set(side.get() + 1);
            check(case, if as_default { "default" } else { "example" })
        })
        .unwrap();
    let (refused, kept) = (refused.get(), kept.get());
    // Both sides were exercised, not one.
    assert!(
        refused > 300 && kept > 300,
        "refused {refused}, kept {kept}"
    );
}
