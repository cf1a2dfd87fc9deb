//! Fuzzing the decoder of every example tool (all nine) on stable Rust: arbitrary bytes and
//! arbitrary JSON must come back as a value or an error the model can act on, never a panic (a
//! panic inside the toolkit is caught and would come back as `ToolError::Panicked`, so that is
//! what these tests refuse), an internal error, or a hang. Bounded for CI;
//! `FUZZ_CASES=1000000 cargo test --release -p tests --test product fuzz` runs longer, and `fuzz/` holds
//! the same target for `cargo +nightly fuzz run` (coverage-guided).

use std::future::IntoFuture;

use proptest::prelude::*;
use proptest::test_runner::TestRunner;
use serde_json::{Map, Value};
use tool_runtime::{CallOutput, Context, ToolError, ToolSet, Validator, ViolationKind};

fn tools() -> (ToolSet, Context) {
    examples::every_tool()
}

/// A call's outcome, or a test failure when the toolkit itself broke: a caught panic, a schema
/// it could not enforce, host state it lost.
fn outcome(name: &str, r: Result<CallOutput, ToolError>) -> Result<Value, String> {
    match r {
        Ok(out) => Ok(out.into_value()),
        Err(
            e @ (ToolError::Panicked { .. }
            | ToolError::Schema(_)
            | ToolError::MissingContext { .. }),
        ) => {
            panic!("{name}: the toolkit broke: {e:?}")
        }
        Err(e) => Err(e.to_string()),
    }
}

fn cases() -> u32 {
    std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5000)
}

fn runner() -> TestRunner {
    crate::differential::seeded(cases())
}

/// Arbitrary JSON, biased towards the tools' own field names and values.
fn json() -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        Just("jumlah_peserta".to_owned()),
        Just("periode".to_owned()),
        Just("wilayah".to_owned()),
        Just("sertakan_grafik".to_owned()),
        Just("kota".to_owned()),
        Just("isbn".to_owned()),
        Just("judul".to_owned()),
        Just("tahun".to_owned()),
        Just("mulai".to_owned()),
        Just("hari".to_owned()),
        "[a-z_]{0,12}",
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        prop_oneof![
            Just("mingguan".to_owned()),
            Just("semua".to_owned()),
            ".{0,20}"
        ]
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(6, 64, 8, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..8).prop_map(Value::from),
            proptest::collection::vec((key.clone(), inner), 0..8)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

#[test]
fn arbitrary_bytes_never_panic() {
    let (set, cx) = tools();
    let bytes = proptest::collection::vec(any::<u8>(), 0..256);
    runner()
        .run(&bytes, |b| {
            let text = String::from_utf8_lossy(&b);
            for name in set.names() {
                let _ = outcome(name, set.call(&cx, name, &text).blocking());
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn arbitrary_json_never_panics_and_both_paths_agree() {
    let (set, cx) = tools();
    runner()
        .run(&json(), |v| {
            let text = v.to_string();
            for name in set.names() {
                let by_text = outcome(name, set.call(&cx, name, &text).blocking());
                let by_value = outcome(
                    name,
                    pollster::block_on(set.call(&cx, name, v.clone()).into_future()),
                );
                prop_assert_eq!(by_text.is_ok(), by_value.is_ok(), "{} {}", name, text);
                if let (Ok(a), Ok(b)) = (&by_text, &by_value) {
                    prop_assert_eq!(a, b, "{} {}", name, text);
                }
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn hostile_inputs_are_refused_cleanly() {
    let (set, cx) = tools();
    let deep = "[".repeat(100_000) + &"]".repeat(100_000);
    let long_string = format!(r#"{{"periode": "{}"}}"#, "x".repeat(5_000_000));
    let many_fields: String = format!(
        "{{{}}}",
        (0..100_000)
            .map(|i| format!(r#""f{i}": {i}"#))
            .collect::<Vec<_>>()
            .join(",")
    );
    for text in [
        deep.as_str(),
        &long_string,
        &many_fields,
        "\u{0}",
        "{\"periode\": \"\u{FFFF}\"}",
        "1e999",
    ] {
        for name in set.names() {
            let err = set.call(&cx, name, text).blocking().unwrap_err();
            assert!(
                matches!(err, ToolError::InvalidArguments(_)),
                "{name}: {err:?}"
            );
            assert!(
                err.model_message().len() < 8_000,
                "the repair message stays short"
            );
        }
    }
    // Past the complete validator's bound, one violation says the arguments are too large
    // (a refused call costs what the bound allows, not what the sender chose).
    let err = set
        .call(&cx, "pesan-katering", &many_fields)
        .blocking()
        .unwrap_err();
    let tool_runtime::ToolError::InvalidArguments(v) = err else {
        panic!()
    };
    assert_eq!(v.len(), 1, "{v}");
    assert_eq!(v.0[0].kind, ViolationKind::TooLarge, "{v}");
    assert!(v.to_string().contains("10000"), "{v}");
    // Under it, the structured list keeps every violation.
    let fields = Validator::MAX_CHECKED_VALUES / 2 - 1;
    let some_fields: String = format!(
        "{{{}}}",
        (0..fields)
            .map(|i| format!(r#""f{i}": {i}"#))
            .collect::<Vec<_>>()
            .join(",")
    );
    let err = set
        .call(&cx, "pesan-katering", &some_fields)
        .blocking()
        .unwrap_err();
    let tool_runtime::ToolError::InvalidArguments(v) = err else {
        panic!()
    };
    assert_eq!(
        v.len(),
        fields + 1,
        "the structured list keeps every violation"
    );
}
