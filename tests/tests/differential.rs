//! Proof that the schema a model is shown and the runtime that checks its arguments agree.
//!
//! For each tool, values are generated around every boundary its input schema states (in range,
//! off by one, wrong type, missing, extra, null, nested) and the runtime must accept exactly the
//! values that an independent validator, the `jsonschema` crate (Draft 2020-12), accepts.
//! `DIFFERENTIAL_CASES=100000 cargo test -p tests --test differential -- --nocapture` runs longer.

use std::future::IntoFuture;
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tool_runtime::{Context, Tool, ToolArg, ToolError, ToolSet, tool};

#[derive(ToolArg, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
enum Prioritas {
    Rendah,
    Sedang,
    Tinggi,
    Darurat,
}

/// The four-field shape of the benchmarks: a bounded integer, a 4-value enum, a string, an
/// optional bool.
#[tool(description = "Buat tiket dukungan dan kembalikan nomornya.")]
fn buat_tiket(
    #[arg(description = "Jumlah pengguna terdampak", range = 1..=10_000)] terdampak: u32,
    #[arg(description = "Prioritas tiket")] prioritas: Prioritas,
    #[arg(description = "Ringkasan masalah", length = 5..=200)] ringkasan: String,
    #[arg(description = "Kirim notifikasi; false bila tidak disebut")] notifikasi: Option<bool>,
) -> u32 {
    let _ = (prioritas, ringkasan, notifikasi);
    terdampak
}

#[derive(ToolArg, Deserialize)]
#[allow(dead_code)] // only the decoding matters here
struct Item {
    /// Nama menu
    #[arg(length = 1..=20, pattern = "^[a-z ]+$")]
    menu: String,
    /// Porsi
    #[arg(range = 1..=50)]
    porsi: u8,
    /// Pedas, dari 0 sampai 1
    #[arg(range = 0.0..=1.0)]
    pedas: Option<f64>,
}

#[derive(ToolArg, Deserialize)]
struct Pesanan {
    /// Isi pesanan
    #[arg(length = 1..=3)]
    items: Vec<Item>,
    /// Catatan, null bila tidak ada
    catatan: Option<String>,
}

#[tool(description = "Buat pesanan katering dengan beberapa menu dan kembalikan jumlah porsinya.")]
fn pesan_menu(
    #[arg(description = "Pesanan")] pesanan: Pesanan,
    #[arg(description = "Hari pengantaran dari sekarang; 1 bila tidak disebut", range = 0..=14, default = 1)]
    hari: i8,
) -> u32 {
    let _ = (&pesanan.catatan, hari);
    pesanan.items.iter().map(|i| i.porsi as u32).sum()
}

/// Values around every boundary of `schema`: valid ones and ones that break exactly one rule.
fn around(schema: &Value, defs: &Map<String, Value>, depth: u32) -> BoxedStrategy<Value> {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let name = r.trim_start_matches("#/$defs/");
        return match (defs.get(name), depth) {
            (Some(d), 0..=3) => around(d, defs, depth + 1),
            _ => Just(json!({})).boxed(),
        };
    }
    // (weight, values): values likely to be valid weigh more, so both outcomes are common.
    let mut options: Vec<(u32, BoxedStrategy<Value>)> = vec![
        (1, Just(Value::Null).boxed()),
        (1, Just(json!("25")).boxed()),
        (1, Just(json!(true)).boxed()),
    ];
    let alternatives = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))
        .or_else(|| schema.get("enum"));
    if let Some(Value::Array(alts)) = alternatives {
        for a in alts {
            let v = a.get("const").cloned().unwrap_or_else(|| a.clone());
            if let Some(s) = v.as_str() {
                options.push((1, Just(json!(s.to_uppercase())).boxed()));
            }
            options.push(if a.is_object() && a.get("const").is_none() {
                (6, around(a, defs, depth + 1))
            } else {
                (6, Just(v).boxed())
            });
        }
    }
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    for t in types {
        match t {
            "integer" | "number" => {
                let lo = schema
                    .get("minimum")
                    .and_then(Value::as_f64)
                    .unwrap_or(-1000.0);
                let hi = schema
                    .get("maximum")
                    .or_else(|| schema.get("exclusiveMaximum"))
                    .and_then(Value::as_f64)
                    .unwrap_or(1000.0);
                for x in [
                    lo,
                    hi,
                    lo - 1.0,
                    hi + 1.0,
                    (lo + hi) / 2.0,
                    lo + 0.5,
                    hi - 0.5,
                    -0.0,
                ] {
                    options.push((2, Just(number(x)).boxed()));
                }
                options.push((2, Just(json!(lo)).boxed())); // integral float
                options.push((16, (lo..=hi).prop_map(number).boxed()));
                if t == "integer" {
                    options.push((
                        24,
                        ((lo as i64)..=(hi as i64)).prop_map(|i| json!(i)).boxed(),
                    ));
                }
            }
            "string" => {
                let lo = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
                let hi = schema
                    .get("maxLength")
                    .and_then(Value::as_u64)
                    .unwrap_or(30) as usize;
                for n in [lo.saturating_sub(1), lo, hi, hi + 1] {
                    options.push((2, Just(json!("a".repeat(n))).boxed()));
                    options.push((1, Just(json!("é".repeat(n))).boxed()));
                }
                options.push((1, Just(json!(25)).boxed()));
                let fitting = format!("[a-z ]{{{},{}}}", lo.max(1), hi.max(1));
                let fitting = proptest::string::string_regex(&fitting).expect("a valid regex");
                options.push((16, fitting.prop_map(Value::from).boxed()));
                options.push((2, "[a-zA-Z0-9 é-]{0,40}".prop_map(Value::from).boxed()));
            }
            "boolean" => {
                options.push((12, any::<bool>().prop_map(Value::from).boxed()));
                options.push((1, Just(json!(0)).boxed()));
            }
            "array" => {
                let lo = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
                let hi = schema
                    .get("maxItems")
                    .and_then(Value::as_u64)
                    .unwrap_or(4)
                    .min(6) as usize;
                let item = schema.get("items").cloned().unwrap_or(json!({}));
                let item = around(&item, defs, depth + 1);
                let fitting = proptest::collection::vec(item.clone(), lo..=hi);
                options.push((12, fitting.prop_map(Value::from).boxed()));
                let off_by_one = proptest::collection::vec(item, lo.saturating_sub(1)..=hi + 1);
                options.push((3, off_by_one.prop_map(Value::from).boxed()));
                options.push((1, Just(json!({})).boxed()));
            }
            "object" if depth <= 4 => options.push((12, object(schema, defs, depth))),
            _ => {}
        }
    }
    proptest::strategy::Union::new_weighted(options).boxed()
}

fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 1e15 && x != 0.0 {
        json!(x as i64)
    } else {
        json!(x)
    }
}

/// An object whose every property is present (with a value around its boundaries) or absent,
/// sometimes with an extra field.
fn object(schema: &Value, defs: &Map<String, Value>, depth: u32) -> BoxedStrategy<Value> {
    let props: Vec<(String, Value)> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    let fields: Vec<BoxedStrategy<Option<(String, Value)>>> = props
        .iter()
        .map(|(k, s)| {
            let k = k.clone();
            let present = around(s, defs, depth + 1).prop_map(move |v| Some((k.clone(), v)));
            prop_oneof![1 => Just(None), 12 => present].boxed()
        })
        .collect();
    let extra = prop_oneof![20 => Just(None), 1 => Just(Some(("tambahan".to_owned(), json!(1))))];
    (fields, extra)
        .prop_map(|(fields, extra)| {
            let mut m = Map::new();
            for (k, v) in fields.into_iter().flatten().chain(extra) {
                m.insert(k, v);
            }
            Value::Object(m)
        })
        .boxed()
}

/// Whether the runtime accepts `args`, asked both ways: as JSON text (the single-pass decoder,
/// falling back to the complete validator) and as a `Value` (the complete validator only). The
/// two must agree with each other as well as with the oracle.
fn accepted_by_runtime(set: &ToolSet, name: &str, args: &Value) -> bool {
    let accepted = |r: Result<tool_runtime::CallOutput, ToolError>| match r {
        Ok(_) => true,
        Err(ToolError::InvalidArguments(_)) => false,
        Err(other) => panic!("{name}: a valid call failed: {other}"),
    };
    let cx = Context::new();
    let by_text = accepted(set.call(&cx, name, args.to_string()).blocking());
    let by_value = accepted(pollster::block_on(
        set.call(&cx, name, args.clone()).into_future(),
    ));
    assert_eq!(
        by_text, by_value,
        "{name}: text and value paths disagree on {args}"
    );
    by_text
}

fn cases() -> u32 {
    std::env::var("DIFFERENTIAL_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000)
}

fn agree(tool: &'static Tool) -> (usize, usize) {
    let set = ToolSet::new([tool]).unwrap();
    let schema = tool.input_schema().clone();
    let oracle = jsonschema::draft202012::new(&schema).unwrap();
    let defs = schema
        .get("$defs")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let accepted = AtomicUsize::new(0);
    let ran = AtomicUsize::new(0);
    // A fixed seed: the same cases on every run, so a failure reproduces and CI cannot flake.
    let config = Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let result = runner.run(&object(&schema, &defs, 0), |args| {
        let ours = accepted_by_runtime(&set, tool.name(), &args);
        let theirs = oracle.is_valid(&args);
        ran.fetch_add(1, Ordering::Relaxed);
        accepted.fetch_add(ours as usize, Ordering::Relaxed);
        prop_assert_eq!(ours, theirs, "runtime and jsonschema disagree on {}", args);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{}: {e}", tool.name());
    }
    (ran.into_inner(), accepted.into_inner())
}

#[test]
fn runtime_accepts_exactly_what_the_schema_accepts() {
    let tools = [
        examples::katering::pesan_katering::tool(),
        examples::laporan_penjualan::buat_laporan::tool(),
        buat_tiket::tool(),
        pesan_menu::tool(),
    ];
    let mut total = 0;
    for tool in tools {
        let (ran, accepted) = agree(tool);
        println!(
            "{}: {ran} cases, {accepted} accepted, 0 disagreements",
            tool.name()
        );
        assert!(
            accepted >= 10 && accepted < ran,
            "{}: the generator must produce both kinds",
            tool.name()
        );
        total += ran;
    }
    println!("total: {total} cases, 0 disagreements");
}
