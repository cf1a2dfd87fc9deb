//! No silently wrong value: numbers read exactly and never clamped, numeric choices compared by
//! value on both paths, and the toolkit's model-facing words replaceable as one piece.

use std::borrow::Cow;
use std::future::IntoFuture;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde_json::{Value, json};
use tool_runtime::{
    CallOutput, Context, ToolArg, ToolError, ToolSet, ViolationKind, Wording, tool,
};

#[tool(description = "Kembalikan bilangan bulat yang diterima.")]
fn gema_u64(#[arg(description = "Bilangan", unbounded = "uji")] n: u64) -> u64 {
    n
}

#[tool(description = "Kembalikan bilangan bulat bertanda yang diterima.")]
fn gema_i64(#[arg(description = "Bilangan", unbounded = "uji")] n: i64) -> i64 {
    n
}

#[tool(description = "Kembalikan bilangan pecahan yang diterima.")]
fn gema_f32(#[arg(description = "Bilangan", unbounded = "uji")] x: f32) -> f32 {
    x
}

/// A hand-written schema: 1 or 2, with no `type` (so nothing else makes `1.0` an integer).
#[derive(serde::Deserialize, serde::Serialize)]
struct SatuAtauDua(u8);

impl JsonSchema for SatuAtauDua {
    fn schema_name() -> Cow<'static, str> {
        "SatuAtauDua".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "enum": [1, 2] })
    }
}

impl ToolArg for SatuAtauDua {}

#[tool(description = "Kembalikan pilihan yang diterima.")]
fn pilih(#[arg(description = "Pilihan")] p: SatuAtauDua) -> u8 {
    p.0
}

fn set() -> ToolSet {
    ToolSet::new([
        gema_u64::tool(),
        gema_i64::tool(),
        gema_f32::tool(),
        pilih::tool(),
    ])
    .unwrap()
}

/// A call made both ways: as text (single-pass decoder first) and as a parsed value (the same
/// text read by serde_json into a `Value` first); both must give the same result.
fn call(name: &str, text: &str) -> Result<Value, ToolError> {
    let set = set();
    let cx = Context::new();
    let by_text = set.call(&cx, name, text).blocking();
    let value: Value = serde_json::from_str(text).unwrap();
    let by_value = pollster::block_on(set.call(&cx, name, value).into_future());
    let by_text = by_text.map(CallOutput::into_value);
    match (&by_text, by_value.map(CallOutput::into_value)) {
        (Ok(a), Ok(b)) => assert_eq!(a, &b, "{name} {text}: text and value paths differ"),
        (Err(_), Err(_)) => {}
        (a, b) => panic!("{name} {text}: text path {a:?}, value path {b:?}"),
    }
    by_text
}

fn refused(r: Result<Value, ToolError>) -> Vec<ViolationKind> {
    match r {
        Err(ToolError::InvalidArguments(v)) => v.iter().map(|x| x.kind.clone()).collect(),
        other => panic!("expected invalid arguments, got {other:?}"),
    }
}

#[test]
fn integers_in_any_spelling_arrive_exactly() {
    for (text, n) in [
        (r#"{"n": 9007199254740991.0}"#, 9007199254740991u64),
        (r#"{"n": 9007199254740993}"#, 9007199254740993),
        (r#"{"n": 2.5e2}"#, 250),
        (r#"{"n": 18446744073709551615}"#, u64::MAX),
    ] {
        assert_eq!(call("gema_u64", text).unwrap(), json!(n), "{text}");
    }
    // Text alone can say this one: a serde_json `Value` of the same text has already rounded.
    let out = set()
        .call(&Context::new(), "gema_u64", r#"{"n": 9007199254740993.0}"#)
        .blocking()
        .unwrap();
    assert_eq!(out.value(), &json!(9007199254740993u64));
}

#[test]
fn a_fraction_is_never_an_integer() {
    for text in [
        r#"{"n": 4503599627370495.5}"#,
        r#"{"n": 2.5}"#,
        r#"{"n": 1e-1}"#,
    ] {
        assert_eq!(
            refused(call("gema_u64", text)),
            [ViolationKind::Type],
            "{text}"
        );
    }
    // Past f64's precision the fraction is in the text only.
    let err = set()
        .call(&Context::new(), "gema_u64", r#"{"n": 4503599627370496.5}"#)
        .blocking()
        .unwrap_err();
    assert!(matches!(err, ToolError::InvalidArguments(_)), "{err:?}");
}

#[test]
fn a_number_the_type_cannot_hold_is_refused_not_clamped() {
    for text in [r#"{"n": 18446744073709551616}"#, r#"{"n": -1}"#] {
        let kinds = refused(call("gema_u64", text));
        assert_eq!(kinds, [ViolationKind::Range], "{text}");
    }
    // As text only: serde_json reads this literal as the f64 -2^63, which is i64::MIN exactly,
    // so a `Value` made from it holds another number than the text says.
    let err = set()
        .call(
            &Context::new(),
            "gema_i64",
            r#"{"n": -9223372036854775809}"#,
        )
        .blocking()
        .unwrap_err();
    let ToolError::InvalidArguments(v) = err else {
        panic!("{err:?}")
    };
    assert_eq!(v.0[0].kind, ViolationKind::Range);
    assert_eq!(
        call("gema_i64", r#"{"n": -9223372036854775808}"#).unwrap(),
        json!(i64::MIN)
    );
    // An f32 would read 1e39 as infinity.
    assert_eq!(
        refused(call("gema_f32", r#"{"x": 1e39}"#)),
        [ViolationKind::Range]
    );
    assert_eq!(call("gema_f32", r#"{"x": 0.5}"#).unwrap(), json!(0.5));
    let schema = gema_u64::tool().input_schema();
    assert_eq!(schema["properties"]["n"]["maximum"], json!(u64::MAX));
}

#[test]
fn numeric_choices_compare_by_value_on_both_paths() {
    assert_eq!(call("pilih", r#"{"p": 1.0}"#).unwrap(), json!(1));
    assert_eq!(call("pilih", r#"{"p": 2}"#).unwrap(), json!(2));
    assert_eq!(
        refused(call("pilih", r#"{"p": 3}"#)),
        [ViolationKind::NotAllowed { did_you_mean: None }]
    );
}

#[test]
fn a_field_given_twice_is_refused() {
    let err = set()
        .call(&Context::new(), "gema_u64", r#"{"n": 1, "n": 2}"#)
        .blocking()
        .unwrap_err();
    assert!(
        err.model_message().contains("`n` is given more than once"),
        "{err}"
    );
}

#[test]
fn a_set_speaks_its_own_wording() {
    fn terse(v: &tool_runtime::Violation) -> String {
        format!("{} ({})", v.path, v.path.pointer())
    }
    let mut wording = Wording::indonesian();
    wording.violation = Some(terse);
    let set = set().with_wording(wording);
    let err = set
        .call(&Context::new(), "gema_u64", r#"{"n": "1"}"#)
        .blocking()
        .unwrap_err();
    assert_eq!(
        set.model_message(&err),
        "Argumen tidak valid:\n- n (/n)\nPerbaiki setiap butir di atas lalu panggil tool ini lagi dengan argumen lengkap."
    );
    let unknown = set
        .call(&Context::new(), "gema_u46", "{}")
        .blocking()
        .unwrap_err();
    assert_eq!(
        set.model_message(&unknown),
        "Tidak ada tool bernama `gema_u46`. Mungkin maksudnya `gema_u64`?"
    );
    // The default stays English, as `ToolError::model_message` is.
    assert_eq!(
        Wording::default().error_message(&unknown),
        unknown.model_message()
    );
    assert!(
        unknown
            .model_message()
            .starts_with("There is no tool named")
    );
}

/// serde's default (externally tagged) enum form, with a unit variant and two data variants.
#[derive(ToolArg, serde::Deserialize, Debug)]
#[allow(dead_code)] // the fields are read through `Debug` only
enum Pesanan {
    /// Tidak ada
    Kosong,
    /// Pesanan kecil
    Kecil {
        /// Jumlah porsi
        #[arg(range = 0..=9)]
        b: u8,
    },
    /// Pesanan besar
    Besar {
        /// Jumlah porsi
        #[arg(range = 10..=99)]
        porsi: u8,
    },
}

#[tool(description = "Kembalikan pesanan yang diterima.")]
fn pesan(#[arg(description = "Pesanan")] v: Pesanan) -> String {
    format!("{v:?}")
}

#[test]
fn an_externally_tagged_variant_is_recognised_by_its_key_and_reported_inside() {
    let set = ToolSet::new([pesan::tool()]).unwrap();
    let cx = Context::new();
    let said = |text: &str| match set.call(&cx, "pesan", text).blocking() {
        Err(ToolError::InvalidArguments(v)) => v.to_string(),
        other => panic!("{text}: expected invalid arguments, got {other:?}"),
    };
    let message = said(r#"{"v": {"Kecil": {"b": 10}}}"#);
    assert!(
        message.contains("`v.Kecil.b`: expected an integer from 0 to 9, received 10"),
        "{message}"
    );
    let message = said(r#"{"v": {"Besar": {"porsi": 5}}}"#);
    assert!(
        message.contains("`v.Besar.porsi`: expected an integer from 10 to 99, received 5"),
        "{message}"
    );
    // A value that names no variant still lists the alternatives.
    let message = said(r#"{"v": {"Sedang": {"b": 1}}}"#);
    assert!(message.contains("`v`: expected"), "{message}");
    assert!(
        set.call(&cx, "pesan", r#"{"v": {"Kecil": {"b": 9}}}"#)
            .blocking()
            .is_ok()
    );
}
