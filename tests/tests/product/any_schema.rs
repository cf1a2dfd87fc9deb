//! Schemas nobody wrote with `#[tool]`: a runtime-defined tool's, or a remote MCP server's
//! `tools/list` entry. The validator either refuses such a schema when it is compiled (what it
//! cannot enforce exactly) or enforces all of it: for random schemas of the supported keywords
//! (types, `enum`/`const`, bounds, lengths, patterns, lists, objects, `oneOf`/`anyOf`, `$ref`
//! chains into `$defs`) and random values, a schema it compiles accepts exactly what the
//! `jsonschema` crate (Draft 2020-12) accepts.
//!
//! `DIFFERENTIAL_CASES=100000 cargo test --release -p tests --test product any_schema` runs longer.

use std::cell::Cell;

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use tool_runtime::Validator;

use crate::differential::{integral_as_integers, seeded};

const NAMES: [&str; 3] = ["a", "b", "c"];

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..12).prop_map(Value::from),
        prop::sample::select(vec![0.5, 2.0, -1.5, 1e3, 11.999]).prop_map(Value::from),
        prop::sample::select(vec!["", "a", "ab", "abc", "x9", "éé", "2024-01-31"])
            .prop_map(Value::from),
    ]
}

/// Any JSON value a little deep, its object keys mostly the schemas' property names. No member
/// is `null`: the validator reads `null` for an optional property that refuses it as the
/// property left out (what OpenAI's strict mode sends), on purpose, where JSON Schema refuses it;
/// `differential.rs` tests that rule.
fn value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(3, 16, 4, |inner| {
        let member = inner
            .clone()
            .prop_map(|v| if v.is_null() { Value::Bool(false) } else { v });
        prop_oneof![
            prop::collection::vec(inner, 0..4).prop_map(Value::Array),
            prop::collection::vec(
                (prop::sample::select(vec!["a", "b", "c", "z"]), member),
                0..4
            )
            .prop_map(|members| {
                Value::Object(
                    members
                        .into_iter()
                        .map(|(k, v)| (k.to_owned(), v))
                        .collect(),
                )
            }),
        ]
    })
}

/// One keyword and its value, of the subset the validator supports.
fn keyword(sub: BoxedStrategy<Value>) -> impl Strategy<Value = (String, Value)> {
    let types = prop::sample::select(vec![
        "null", "boolean", "integer", "number", "string", "array", "object",
    ]);
    let bound = prop_oneof![
        4 => (-2i64..10).prop_map(Value::from),
        1 => prop::sample::select(vec![2.5, 2.0, 1e3, -0.5]).prop_map(Value::from),
    ];
    let count = (0u64..4).prop_map(Value::from);
    prop_oneof![
        types.prop_map(|t| ("type".into(), json!(t))),
        prop::sample::subsequence(
            vec![
                "null", "boolean", "integer", "number", "string", "array", "object"
            ],
            1..3
        )
        .prop_map(|ts| ("type".into(), json!(ts))),
        prop::collection::vec(scalar(), 1..4).prop_map(|v| ("enum".into(), Value::Array(v))),
        scalar().prop_map(|v| ("const".into(), v)),
        bound.clone().prop_map(|b| ("minimum".into(), b)),
        bound.clone().prop_map(|b| ("maximum".into(), b)),
        bound.clone().prop_map(|b| ("exclusiveMinimum".into(), b)),
        bound.prop_map(|b| ("exclusiveMaximum".into(), b)),
        count.clone().prop_map(|c| ("minLength".into(), c)),
        count.clone().prop_map(|c| ("maxLength".into(), c)),
        count.clone().prop_map(|c| ("minItems".into(), c)),
        count.prop_map(|c| ("maxItems".into(), c)),
        prop::sample::select(vec!["^[a-z]+$", "[0-9]", "^a", "b$", "^.{2}$"])
            .prop_map(|p| ("pattern".into(), json!(p))),
        sub.clone().prop_map(|s| ("items".into(), s)),
        prop::collection::vec(sub.clone(), 1..3)
            .prop_map(|bs| ("properties".into(), properties(bs))),
        prop::sample::subsequence(NAMES.to_vec(), 0..3).prop_map(|r| ("required".into(), json!(r))),
        any::<bool>().prop_map(|b| ("additionalProperties".into(), json!(b))),
        // Annotations, as a documented enum's variants carry them.
        prop::sample::select(vec!["description", "title"])
            .prop_map(|k| (k.to_owned(), json!("catatan"))),
        prop::collection::vec(sub.clone(), 1..3).prop_map(|bs| ("oneOf".into(), json!(bs))),
        prop::collection::vec(sub, 1..3).prop_map(|bs| ("anyOf".into(), json!(bs))),
    ]
}

fn properties(schemas: Vec<Value>) -> Value {
    Value::Object(
        NAMES
            .iter()
            .zip(schemas)
            .map(|(n, s)| ((*n).to_owned(), s))
            .collect(),
    )
}

/// A schema: a `$ref` to a definition, or a few keywords (nested ones are schemas again).
fn schema() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        prop::sample::select(vec!["D0", "D1", "D2"])
            .prop_map(|d| json!({"$ref": format!("#/$defs/{d}")})),
        keyword(Just(json!({})).boxed()).prop_map(|(k, v)| Value::Object(Map::from_iter([(k, v)]))),
    ];
    leaf.prop_recursive(3, 24, 3, |inner| {
        prop_oneof![
            1 => prop::sample::select(vec!["D0", "D1", "D2"]).prop_map(|d| json!({"$ref": format!("#/$defs/{d}")})),
            4 => prop::collection::vec(keyword(inner.boxed()), 1..4)
                .prop_map(|kws| Value::Object(kws.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// A root schema with three definitions, which may refer to each other (chains, cycles).
fn document() -> impl Strategy<Value = Value> {
    (schema(), schema(), schema(), schema()).prop_map(|(root, d0, d1, d2)| {
        // A root `$ref` would have `$defs` beside it (refused as rules beside a `$ref`).
        let mut root = match root {
            Value::Object(m) if !m.contains_key("$ref") => m,
            other => Map::from_iter([("anyOf".to_owned(), json!([other]))]),
        };
        root.insert("$defs".into(), json!({"D0": d0, "D1": d1, "D2": d2}));
        Value::Object(root)
    })
}

fn cases() -> u32 {
    std::env::var("DIFFERENTIAL_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5000)
}

#[test]
fn a_schema_the_validator_compiles_is_enforced_exactly() {
    let mut runner = seeded(cases());
    let (compiled, accepted, checked) = (Cell::new(0u32), Cell::new(0u32), Cell::new(0u32));
    runner
        .run(
            &(document(), prop::collection::vec(value(), 8)),
            |(schema, values)| {
                let Ok(ours) = Validator::compile(&schema) else {
                    return Ok(());
                };
                // The oracle is given integral numbers as integers, which it reads correctly
                // (see `integral_as_integers`).
                let theirs = jsonschema::draft202012::new(&integral_as_integers(&schema))
                    .map_err(|e| TestCaseError::fail(format!("{schema}: {e}")))?;
                compiled.set(compiled.get() + 1);
                for v in values {
                    let expected = theirs.is_valid(&integral_as_integers(&v));
                    let got = ours.validate(&mut v.clone()).is_empty();
                    prop_assert_eq!(got, expected, "schema {}\nvalue {}", schema, v);
                    checked.set(checked.get() + 1);
                    accepted.set(accepted.get() + got as u32);
                }
                Ok(())
            },
        )
        .unwrap();
    let (compiled, accepted, checked) = (compiled.get(), accepted.get(), checked.get());
    println!("{compiled} schemas compiled, {checked} values, {accepted} accepted");
    assert!(
        cases() < 1000 || (compiled > cases() / 4 && accepted > checked / 20 && accepted < checked),
        "the generator must give compiled schemas and both kinds of values: {compiled} compiled, {accepted}/{checked} accepted"
    );
}
