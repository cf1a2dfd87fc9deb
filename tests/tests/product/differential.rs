//! Proof that the schema a model is shown and the runtime that checks its arguments agree.
//!
//! For each tool, arguments are generated around every boundary its input schema states (in
//! range, off by one, wrong type, missing, extra, null, nested; numbers near 2^52, 2^53, 2^63 and
//! 2^64 of both signs, integral and not; integers spelled with a fraction or an exponent; strings
//! with escapes; keys given twice) and written as JSON text. Then, for every case:
//!
//! - the **complete validator** alone (`Validator::validate`) accepts exactly what the
//!   `jsonschema` crate (Draft 2020-12) accepts;
//! - a call through the **complete path** alone accepts exactly what `jsonschema` accepts, and a
//!   call through the **single-pass decoder** alone never accepts what it refuses;
//! - the normal call (single pass, then the complete path) accepts exactly what it accepts;
//! - what the tool receives equals what serde makes of the same value (the tools echo their
//!   arguments), on every path;
//! - a key given twice is refused on every path (the schema cannot say which value counts).
//!
//! `DIFFERENTIAL_CASES=100000 cargo test --release -p tests --test product differential -- --nocapture`
//! runs longer.

use std::future::IntoFuture;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde::{Deserialize, Serialize, de::DeserializeOwned};
use serde_json::{Map, Value, json};
use tool_runtime::__private::{Only, decode_only};
use tool_runtime::{Context, Tool, ToolArg, ToolError, ToolSet, Validator, ViolationKind, tool};

#[derive(ToolArg, Deserialize, Serialize, Debug)]
#[serde(rename_all = "snake_case")]
enum Prioritas {
    Rendah,
    Sedang,
    Tinggi,
    Darurat,
}

/// The four-field shape of the benchmarks.
#[derive(Deserialize, Serialize, schemars::JsonSchema)]
struct Tiket {
    terdampak: u32,
    prioritas: Prioritas,
    ringkasan: String,
    notifikasi: Option<bool>,
}

#[tool(description = "Buat tiket dukungan dan kembalikan isinya.")]
fn buat_tiket(
    #[arg(description = "Jumlah pengguna terdampak", range = 1..=10_000)] terdampak: u32,
    #[arg(description = "Prioritas tiket")] prioritas: Prioritas,
    #[arg(description = "Ringkasan masalah", length = 5..=200)] ringkasan: String,
    #[arg(description = "Kirim notifikasi; false bila tidak disebut")] notifikasi: Option<bool>,
) -> Tiket {
    Tiket {
        terdampak,
        prioritas,
        ringkasan,
        notifikasi,
    }
}

#[derive(ToolArg, Deserialize, Serialize)]
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

#[derive(ToolArg, Deserialize, Serialize)]
struct Pesanan {
    /// Isi pesanan
    #[arg(length = 1..=3)]
    items: Vec<Item>,
    /// Catatan, null bila tidak ada
    catatan: Option<String>,
}

#[derive(Deserialize, Serialize, schemars::JsonSchema)]
struct PesanMenu {
    pesanan: Pesanan,
    hari: i8,
}

#[tool(description = "Buat pesanan katering dengan beberapa menu dan kembalikan isinya.")]
fn pesan_menu(
    #[arg(description = "Pesanan")] pesanan: Pesanan,
    #[arg(description = "Hari pengantaran dari sekarang; 1 bila tidak disebut", range = 0..=14, default = 1)]
    hari: i8,
) -> PesanMenu {
    PesanMenu { pesanan, hari }
}

/// Internally tagged: one object whose `jenis` says which fields it has.
#[derive(ToolArg, Deserialize, Serialize)]
#[serde(tag = "jenis", rename_all = "snake_case")]
enum Pengiriman {
    /// Diambil sendiri
    Ambil {
        /// Jam pengambilan
        #[arg(range = 7..=20)]
        jam: u8,
    },
    /// Diantar ke alamat
    Antar {
        /// Alamat tujuan
        #[arg(length = 5..=60)]
        alamat: String,
        /// Jarak dalam kilometer
        #[arg(range = 0.5..=25.0)]
        jarak_km: f32,
    },
}

/// A tree of categories: a recursive type (`$ref` into `$defs`).
#[derive(ToolArg, Deserialize, Serialize)]
struct Kategori {
    /// Nama kategori
    #[arg(length = 1..=12)]
    nama: String,
    /// Subkategori
    #[arg(length = 0..=3)]
    anak: Vec<Kategori>,
}

#[derive(Deserialize, Serialize, schemars::JsonSchema)]
struct Kirim {
    pengiriman: Pengiriman,
    kategori: Option<Kategori>,
}

#[tool(description = "Atur pengiriman pesanan dan kembalikan isinya.")]
fn atur_kirim(
    #[arg(description = "Cara pengiriman")] pengiriman: Pengiriman,
    #[arg(description = "Kategori pesanan; null bila tidak ada")] kategori: Option<Kategori>,
) -> Kirim {
    Kirim {
        pengiriman,
        kategori,
    }
}

#[derive(Deserialize, Serialize, schemars::JsonSchema)]
struct Hapus {
    kode: String,
    jumlah: u16,
}

/// Needs approval: its arguments are checked by the complete validator only, and held.
#[tool(description = "Hapus stok sebuah barang.", destructive)]
fn hapus_stok(
    #[arg(description = "Kode barang", pattern = "^B-[0-9]{3}$")] kode: String,
    #[arg(description = "Jumlah yang dihapus", range = 1..=500)] jumlah: u16,
) -> Hapus {
    Hapus { kode, jumlah }
}

/// One echo tool per number type: `n` bounded, `m` unbounded (bounded by the type alone).
macro_rules! echo_numbers {
    ($($name:ident: $ty:ty = $lo:literal..=$hi:literal;)*) => {
        $(
            mod $name {
                use super::*;
                #[derive(Deserialize, Serialize, schemars::JsonSchema)]
                pub struct Args {
                    pub n: $ty,
                    pub m: Option<$ty>,
                }
                #[tool(description = "Kembalikan bilangan yang diterima.")]
                pub fn $name(
                    #[arg(description = "Bilangan berbatas", range = $lo..=$hi)] n: $ty,
                    #[arg(description = "Bilangan tanpa batas; null bila tidak ada", unbounded = "uji")] m: Option<$ty>,
                ) -> Args {
                    Args { n, m }
                }
            }
        )*
        fn number_tools() -> Vec<(&'static Tool, Expect)> {
            vec![$(($name::$name::tool(), expect::<$name::Args>)),*]
        }
    };
}

echo_numbers! {
    gema_u8: u8 = 1..=200;
    gema_u16: u16 = 0..=60_000;
    gema_u32: u32 = 1..=4_000_000_000;
    gema_u64: u64 = 0..=18_000_000_000_000_000_000;
    gema_usize: usize = 0..=9_007_199_254_740_993;
    gema_i8: i8 = -100..=100;
    gema_i16: i16 = -30_000..=30_000;
    gema_i32: i32 = -2_000_000_000..=2_000_000_000;
    gema_i64: i64 = -9_000_000_000_000_000_000..=9_000_000_000_000_000_000;
    gema_isize: isize = -4_503_599_627_370_497..=4_503_599_627_370_497;
    gema_f32: f32 = -1.0e30..=1.0e30;
    gema_f64: f64 = -9.1e18..=9.1e18;
}

/// What plain serde makes of `args` (valid for the schema, defaults filled in, integral floats
/// written as integers): read into the tool's own argument type and written back as text.
type Expect = fn(&Value) -> Option<Value>;

fn expect<T: DeserializeOwned + Serialize>(args: &Value) -> Option<Value> {
    // Written as text, as a tool's output is (an f32 is written in its shortest form).
    let t = serde_json::from_value::<T>(args.clone()).ok()?;
    serde_json::from_str(&serde_json::to_string(&t).ok()?).ok()
}

/// Values around every boundary of `schema`: valid ones and ones that break exactly one rule.
fn around(schema: &Value, defs: &Map<String, Value>, depth: u32) -> BoxedStrategy<Value> {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let name = r.trim_start_matches("#/$defs/");
        return match (defs.get(name), depth) {
            (Some(d), 0..=3) => around(d, defs, depth + 1),
            _ => Just(json!({"nama": "daun", "anak": []})).boxed(),
        };
    }
    // (weight, values): values likely to be valid weigh more, so both outcomes are common.
    let mut options: Vec<(u32, BoxedStrategy<Value>)> = vec![
        (1, Just(Value::Null).boxed()),
        (1, Just(json!("25")).boxed()),
        (1, Just(json!(true)).boxed()),
    ];
    if let Some(c) = schema.get("const") {
        options.push((24, Just(c.clone()).boxed()));
    }
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
            "integer" | "number" => numbers(schema, t == "integer", &mut options),
            "string" => {
                let lo = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
                let hi = schema
                    .get("maxLength")
                    .and_then(Value::as_u64)
                    .unwrap_or(30) as usize;
                let edges: Vec<Value> = [lo.saturating_sub(1), lo, hi, hi + 1]
                    .into_iter()
                    .flat_map(|n| [json!("a".repeat(n)), json!("é\"\\\n".repeat(n / 4 + 1))])
                    .collect();
                options.push((3, proptest::sample::select(edges).boxed()));
                options.push((1, Just(json!(25)).boxed()));
                let fitting = match schema.get("pattern").and_then(Value::as_str) {
                    Some("^B-[0-9]{3}$") => "B-[0-9]{3}".to_owned(),
                    _ => format!("[a-z ]{{{},{}}}", lo.max(1), hi.max(1)),
                };
                let fitting = proptest::string::string_regex(&fitting).expect("a valid regex");
                options.push((16, fitting.prop_map(Value::from).boxed()));
                options.push((
                    2,
                    "[a-zA-Z0-9 é\"\\\\-]{0,40}".prop_map(Value::from).boxed(),
                ));
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

/// Numbers at a schema's bounds and at the edges of what 64-bit integers and f64 can hold.
fn numbers(schema: &Value, integer: bool, options: &mut Vec<(u32, BoxedStrategy<Value>)>) {
    let bound = |k: &str| schema.get(k).cloned();
    let (lo, hi) = (bound("minimum"), bound("maximum"));
    let as_f = |v: &Option<Value>, d: f64| v.as_ref().and_then(Value::as_f64).unwrap_or(d);
    let (lo_f, hi_f) = (as_f(&lo, -1000.0), as_f(&hi, 1000.0));
    // The bounds themselves, exactly, and their neighbours.
    for b in [&lo, &hi].into_iter().flatten() {
        options.push((4, Just(b.clone()).boxed()));
        let neighbours: Vec<Value> = match (b.as_i64(), b.as_u64()) {
            (Some(i), _) => vec![json!(i.saturating_sub(1)), json!(i.saturating_add(1))],
            (None, Some(u)) => vec![json!(u.saturating_sub(1)), json!(u.saturating_add(1))],
            _ => vec![],
        };
        if !neighbours.is_empty() {
            options.push((2, proptest::sample::select(neighbours).boxed()));
        }
    }
    let near: Vec<Value> = [
        lo_f - 1.0,
        hi_f + 1.0,
        (lo_f + hi_f) / 2.0,
        lo_f + 0.5,
        hi_f - 0.5,
        -0.0,
    ]
    .into_iter()
    .map(number)
    .collect();
    options.push((3, proptest::sample::select(near).boxed()));
    // Around 2^52, 2^53, 2^63 and 2^64, both signs, integral and not, and other edges: one
    // option among the others, so that most cases stay near the schema's own bounds.
    let mut edges: Vec<Value> = Vec::new();
    for p in [52, 53, 63, 64] {
        let e = 2f64.powi(p);
        for x in [
            e - 1.0,
            e,
            e + 2.0,
            e - 0.5,
            e + 0.5,
            -e,
            -e + 1.0,
            -e - 0.5,
        ] {
            edges.push(number(x));
        }
    }
    edges.extend([
        json!(9007199254740993u64),
        json!(-9007199254740993i64),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(i64::MAX),
        json!(1e-7),
        json!(3.4028235e38),
        json!(1e39),
    ]);
    options.push((4, proptest::sample::select(edges).boxed()));
    let span = (lo_f.max(-1e15), hi_f.min(1e15));
    options.push((20, (span.0..=span.1).prop_map(number).boxed()));
    if integer {
        let (a, b) = (span.0 as i64, span.1 as i64);
        options.push((40, (a..=b).prop_map(|i| json!(i)).boxed()));
    }
}

fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9.2e18 && x != 0.0 {
        if x >= 0.0 {
            json!(x as u64)
        } else {
            json!(x as i64)
        }
    } else {
        serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
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

/// How a value is written as text: numbers and strings in other spellings of the same value,
/// and sometimes a key given twice.
#[derive(Clone, Copy, Debug)]
struct Spelling {
    /// 0: as serde_json writes it; 1: integers as `n.0`; 2: integers with an exponent.
    numbers: u8,
    /// Write non-ASCII characters of strings as `\u` escapes.
    escapes: bool,
    /// Give the arguments' first key a second time (with the same value).
    duplicate: bool,
}

fn spelling() -> impl Strategy<Value = Spelling> {
    (0u8..3, any::<bool>(), prop::bool::weighted(0.05)).prop_map(|(numbers, escapes, duplicate)| {
        Spelling {
            numbers,
            escapes,
            duplicate,
        }
    })
}

/// `v` as JSON text in `s`'s spelling. Integers change spelling only where an f64 holds them
/// exactly, so the oracle (which reads the text into an f64) sees the same number.
fn write(v: &Value, s: Spelling, top: bool, out: &mut String) {
    match v {
        Value::Number(n) => match (s.numbers, n.as_i64().or(n.as_u64().map(|u| u as i64))) {
            (1, Some(i))
                if i.unsigned_abs() < 1 << 53 && n.as_u64().is_none_or(|u| u < 1 << 53) =>
            {
                out.push_str(&format!("{i}.0"))
            }
            (2, Some(i))
                if i.unsigned_abs() < 1 << 53 && n.as_u64().is_none_or(|u| u < 1 << 53) =>
            {
                out.push_str(&format!("{}e1", i as f64 / 10.0))
            }
            // An integral f64 past 2^53 in its exact digits: the shortest spelling
            // (`9.223372036854776e18`) is another integer than the f64 it stands for, and the
            // runtime reads text exactly.
            _ => match n.as_f64() {
                Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() >= 9007199254740992.0 => {
                    out.push_str(&format!("{f:.1}"))
                }
                _ => out.push_str(&n.to_string()),
            },
        },
        Value::String(text) if s.escapes => {
            out.push('"');
            for c in text.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    c if (c as u32) < 0x20 || !c.is_ascii() => {
                        let mut buf = [0u16; 2];
                        for unit in c.encode_utf16(&mut buf) {
                            out.push_str(&format!("\\u{unit:04x}"));
                        }
                    }
                    c => out.push(c),
                }
            }
            out.push('"');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(x, s, false, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            let mut first = true;
            let repeat = map.iter().next().filter(|_| top && s.duplicate);
            for (k, x) in map.iter().chain(repeat) {
                if !first {
                    out.push(',');
                }
                first = false;
                out.push_str(&Value::from(k.as_str()).to_string());
                out.push(':');
                write(x, s, false, out);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The schema a `$ref` names in `defs`, or `schema` itself.
fn resolved<'s>(schema: &'s Value, defs: &'s Map<String, Value>) -> &'s Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => defs.get(r.trim_start_matches("#/$defs/")).unwrap_or(schema),
        None => schema,
    }
}

/// The `oneOf` branch of a tagged union whose tag constant `map` gives.
fn tagged_branch<'s>(schema: &'s Value, map: &Map<String, Value>) -> Option<&'s Value> {
    schema
        .get("oneOf")
        .and_then(Value::as_array)?
        .iter()
        .find(|alt| {
            alt.get("properties")
                .and_then(Value::as_object)
                .is_some_and(|ps| {
                    ps.iter()
                        .any(|(k, p)| p.get("const").is_some_and(|c| map.get(k) == Some(c)))
                })
        })
}

/// The arguments as serde should read them: defaults filled in and integral floats as integers
/// (what JSON Schema calls equal), for the expected output.
fn normalised(schema: &Value, defs: &Map<String, Value>, v: &Value) -> Value {
    let schema = resolved(schema, defs);
    match v {
        Value::Object(map) => {
            let mut out = map.clone();
            let props = schema.get("properties").and_then(Value::as_object);
            for (k, p) in props.into_iter().flatten() {
                match out.get(k) {
                    Some(x) => {
                        let x = normalised(p, defs, x);
                        out.insert(k.clone(), x);
                    }
                    None => {
                        if let Some(d) = p.get("default") {
                            out.insert(k.clone(), d.clone());
                        }
                    }
                }
            }
            // A tagged variant's fields are in the branch its tag names.
            if let Some(alt) = tagged_branch(schema, map) {
                return normalised(alt, defs, &Value::Object(out));
            }
            Value::Object(out)
        }
        Value::Array(items) => {
            let item = schema.get("items").unwrap_or(&Value::Null);
            Value::Array(items.iter().map(|x| normalised(item, defs, x)).collect())
        }
        Value::Number(n) if n.is_f64() => {
            let integer = match schema.get("type") {
                Some(Value::String(t)) => t == "integer",
                Some(Value::Array(ts)) => {
                    ts.iter().any(|t| t == "integer") && !ts.iter().any(|t| t == "number")
                }
                _ => false,
            };
            let f = n.as_f64().unwrap_or(f64::NAN);
            match (integer, f.fract() == 0.0) {
                (true, true) if (0.0..1.8446744073709552e19).contains(&f) => json!(f as u64),
                (true, true) if (-9.223372036854776e18..0.0).contains(&f) => json!(f as i64),
                _ => v.clone(),
            }
        }
        _ => v.clone(),
    }
}

/// `v` as strict mode's reading makes it: a `null` at an optional property whose schema does
/// not take null means the property was left out (what OpenAI's strict mode sends for a
/// property it makes required), so it is dropped here. The runtime's one rule beyond the schema.
fn left_out_nulls_dropped(schema: &Value, defs: &Map<String, Value>, v: &Value) -> Value {
    let schema = resolved(schema, defs);
    match v {
        Value::Object(map) => {
            let required = |k: &str| {
                schema
                    .get("required")
                    .and_then(Value::as_array)
                    .is_some_and(|r| r.iter().any(|n| n == k))
            };
            let takes_null = |p: &Value| {
                let mut p = p.clone();
                if let Value::Object(p) = &mut p {
                    p.insert("$defs".into(), Value::Object(defs.clone()));
                }
                jsonschema::draft202012::is_valid(&p, &Value::Null)
            };
            let props = schema.get("properties").and_then(Value::as_object);
            let mut out = Map::new();
            for (k, x) in map {
                match props.and_then(|ps| ps.get(k)) {
                    Some(p) if x.is_null() && !required(k) && !takes_null(p) => {}
                    Some(p) => {
                        out.insert(k.clone(), left_out_nulls_dropped(p, defs, x));
                    }
                    None => {
                        out.insert(k.clone(), x.clone());
                    }
                }
            }
            if let Some(alt) = tagged_branch(schema, map) {
                return left_out_nulls_dropped(alt, defs, &Value::Object(out));
            }
            Value::Object(out)
        }
        Value::Array(items) => {
            let item = schema.get("items").unwrap_or(&Value::Null);
            Value::Array(
                items
                    .iter()
                    .map(|x| left_out_nulls_dropped(item, defs, x))
                    .collect(),
            )
        }
        _ => v.clone(),
    }
}

/// `v` with every integral number written as an integer. JSON Schema calls `1.0` an integer,
/// and so does `jsonschema` 0.33 for `"type": "integer"`, but not when `type` is a list
/// (`["integer", "null"]`, an `Option`): the oracle is given the same numbers in the spelling it
/// reads correctly.
pub(crate) fn integral_as_integers(v: &Value) -> Value {
    match v {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            match f.fract() == 0.0 {
                true if (0.0..1.8446744073709552e19).contains(&f) => json!(f as u64),
                true if (-9.223372036854776e18..0.0).contains(&f) => json!(f as i64),
                _ => v.clone(),
            }
        }
        Value::Array(a) => Value::Array(a.iter().map(integral_as_integers).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), integral_as_integers(x)))
                .collect(),
        ),
        _ => v.clone(),
    }
}

/// One call through one path (`None`: the normal one): what the tool received, or `None`.
fn call(set: &ToolSet, name: &str, text: &str, path: Option<Only>) -> Option<Value> {
    call_reading(set, name, tool_runtime::Arguments::text(text), path)
}

/// [`call`] with strict mode's reading of `null` (OpenAI's: a `null` at an optional property
/// whose schema refuses it is the property left out).
fn call_strict(set: &ToolSet, name: &str, text: &str) -> Option<Value> {
    call_reading(
        set,
        name,
        tool_runtime::Arguments::text(text).null_means_absent(),
        None,
    )
}

fn call_reading(
    set: &ToolSet,
    name: &str,
    arguments: tool_runtime::Arguments<'_>,
    path: Option<Only>,
) -> Option<Value> {
    decode_only(path);
    let cx = Context::new();
    let text = arguments.as_text().unwrap_or_default().to_owned();
    let out = match set.call(&cx, name, arguments).blocking() {
        Ok(out) => Some(out.into_value()),
        Err(ToolError::InvalidArguments(_)) => None,
        // Held for approval: the arguments passed the complete validator; what is held is what
        // will run.
        Err(ToolError::ApprovalRequired(p)) => {
            let resumed = pollster::block_on(set.resume(&cx, &p.ticket).into_future());
            Some(resumed.expect("an approved call runs").into_value())
        }
        Err(other) => panic!("{name}: the toolkit broke on {text}: {other:?}"),
    };
    decode_only(None);
    out
}

/// A runner with a fixed seed: the same cases on every run, so a failure reproduces and CI
/// cannot flake.
pub(crate) fn seeded(cases: u32) -> TestRunner {
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha))
}

fn cases() -> u32 {
    std::env::var("DIFFERENTIAL_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1500)
}

#[derive(Default, Debug)]
struct Tally {
    ran: usize,
    accepted: usize,
    single_pass: usize,
    duplicates: usize,
}

fn agree(tool: &'static Tool, expect: Expect) -> Tally {
    let set = ToolSet::new([tool]).unwrap();
    let name = tool.name();
    let schema = tool.input_schema().clone();
    let oracle = jsonschema::draft202012::new(&schema).unwrap();
    let validator = Validator::new(&schema).unwrap();
    let defs = schema
        .get("$defs")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let tally = std::cell::RefCell::new(Tally::default());
    let mut runner = seeded(cases());
    let cases = (object(&schema, &defs, 0), spelling());
    let result = runner.run(&cases, |(args, spelling)| {
        let mut text = String::new();
        write(&args, spelling, true, &mut text);
        let whole = call(&set, name, &text, None);
        let complete = call(&set, name, &text, Some(Only::Complete));
        let single = call(&set, name, &text, Some(Only::SinglePass));
        let mut tally = tally.borrow_mut();
        tally.ran += 1;
        let duplicate = spelling.duplicate && args.as_object().is_some_and(|m| !m.is_empty());
        if duplicate {
            tally.duplicates += 1;
            prop_assert!(
                whole.is_none() && complete.is_none() && single.is_none(),
                "{name}: a key given twice was accepted: {text}"
            );
            return Ok(());
        }
        // The oracle reads the same text.
        let parsed: Value = serde_json::from_str(&text).unwrap();
        let theirs = oracle.is_valid(&integral_as_integers(&parsed));
        // Strict mode's reading: what the oracle says of the arguments with those nulls left
        // out, and what the tool then gets.
        let dropped = left_out_nulls_dropped(&schema, &defs, &parsed);
        let theirs_strict = oracle.is_valid(&integral_as_integers(&dropped));
        let strict = call_strict(&set, name, &text);
        prop_assert_eq!(
            strict.is_some(),
            theirs_strict,
            "{}: a strict call and jsonschema (nulls left out) disagree on {}",
            name,
            text
        );
        if let Some(got) = &strict {
            let expected = expect(&normalised(&schema, &defs, &dropped));
            prop_assert_eq!(
                Some(got),
                expected.as_ref(),
                "{}: a strict call gave another value for {}",
                name,
                text
            );
        }
        let mut ours_value = parsed.clone();
        let ours = validator.validate(&mut ours_value).is_empty();
        prop_assert_eq!(
            ours,
            theirs,
            "{}: the complete validator and jsonschema disagree on {}",
            name,
            text
        );
        prop_assert_eq!(
            complete.is_some(),
            theirs,
            "{}: the complete path and jsonschema disagree on {}",
            name,
            text
        );
        prop_assert_eq!(
            whole.is_some(),
            theirs,
            "{}: a call and jsonschema disagree on {}",
            name,
            text
        );
        prop_assert!(
            single.is_none() || theirs,
            "{}: the single-pass decoder accepted what jsonschema refuses: {}",
            name,
            text
        );
        if theirs {
            tally.accepted += 1;
            tally.single_pass += single.is_some() as usize;
            let expected = expect(&normalised(&schema, &defs, &parsed));
            prop_assert!(
                expected.is_some(),
                "{}: serde refuses {} although the schema accepts it",
                name,
                text
            );
            for (path, got) in [
                ("call", &whole),
                ("complete", &complete),
                ("single-pass", &single),
            ] {
                if let Some(got) = got {
                    prop_assert_eq!(
                        Some(got),
                        expected.as_ref(),
                        "{}: the {} path gave another value for {}",
                        name,
                        path,
                        text
                    );
                }
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{name}: {e}");
    }
    tally.into_inner()
}

#[test]
fn every_path_accepts_exactly_what_the_schema_accepts_and_passes_the_value_on() {
    let mut tools: Vec<(&'static Tool, Expect)> = vec![
        (buat_tiket::tool(), expect::<Tiket>),
        (pesan_menu::tool(), expect::<PesanMenu>),
        (atur_kirim::tool(), expect::<Kirim>),
        (hapus_stok::tool(), expect::<Hapus>),
    ];
    tools.extend(number_tools());
    let mut total = 0;
    for (tool, expect) in tools {
        let t = agree(tool, expect);
        println!("{}: {t:?}, 0 disagreements", tool.name());
        assert!(
            t.accepted >= 10 && t.accepted < t.ran - t.duplicates,
            "{}: the generator must produce both kinds: {t:?}",
            tool.name()
        );
        if tool.name() != "hapus_stok" {
            assert!(
                t.single_pass > 0,
                "{}: the single pass never ran: {t:?}",
                tool.name()
            );
        }
        total += t.ran;
    }
    println!("total: {total} cases, 0 disagreements");
}

#[test]
fn the_example_tools_agree_too() {
    for tool in [
        examples::katering::pesan_katering::tool(),
        examples::laporan_penjualan::buat_laporan::tool(),
    ] {
        let schema = tool.input_schema().clone();
        let oracle = jsonschema::draft202012::new(&schema).unwrap();
        let set = ToolSet::new([tool]).unwrap();
        let defs = Map::new();
        let mut runner = seeded(cases() / 2);
        runner
            .run(&object(&schema, &defs, 0), |args| {
                let text = args.to_string();
                let theirs = oracle.is_valid(&integral_as_integers(&args));
                prop_assert_eq!(
                    call(&set, tool.name(), &text, None).is_some(),
                    theirs,
                    "{}",
                    text
                );
                prop_assert_eq!(
                    call(&set, tool.name(), &text, Some(Only::Complete)).is_some(),
                    theirs,
                    "{}",
                    text
                );
                let read = left_out_nulls_dropped(&schema, &defs, &args);
                let theirs_strict = oracle.is_valid(&integral_as_integers(&read));
                prop_assert_eq!(
                    call_strict(&set, tool.name(), &text).is_some(),
                    theirs_strict,
                    "strict: {}",
                    text
                );
                Ok(())
            })
            .unwrap();
    }
}

/// One row of `tests/oracle/ecma-patterns.json`: what JavaScript's RegExp (ECMA-262, the `u`
/// flag, as JSON Schema specifies `pattern`) says of a text.
#[derive(Deserialize)]
struct EcmaCase {
    pattern: String,
    text: String,
    ecma: bool,
}

fn pattern_holds(pattern: &str, text: &str) -> bool {
    let schema = json!({"type": "string", "pattern": pattern});
    let validator = Validator::new(&schema).unwrap_or_else(|e| panic!("{pattern:?}: {e}"));
    validator.validate(&mut json!(text)).is_empty()
}

/// `pattern` is ECMA-262's: the classes where Rust's `regex` differs (`\d`, `\w`, `\s`, `\b`,
/// `.` and line ends, case, lookaround, backreferences, `\u` escapes) decide as JavaScript does.
/// `jsonschema` is the oracle where it agrees with ECMA-262; where it does not (it translates
/// patterns to Rust's syntax on a best-effort basis), the difference is listed.
#[test]
fn patterns_match_as_ecma_262_says() {
    let cases: Vec<EcmaCase> =
        serde_json::from_str(include_str!("../../oracle/ecma-patterns.json")).unwrap();
    let mut jsonschema_differs = Vec::new();
    for c in &cases {
        assert_eq!(
            pattern_holds(&c.pattern, &c.text),
            c.ecma,
            "{:?} on {:?}",
            c.pattern,
            c.text
        );
        let schema = json!({"type": "string", "pattern": c.pattern});
        let theirs = jsonschema::draft202012::new(&schema).map(|v| v.is_valid(&json!(c.text)));
        if theirs.as_ref().ok() != Some(&c.ecma) {
            jsonschema_differs.push(c.pattern.as_str());
        }
    }
    // jsonschema 0.33 (fancy-regex with its best-effort ECMA translation): Unicode `\s` and
    // `\b`, `.` across `\u2028` and `\r`, `\k<name>`, `[^]` and `[]`, surrogate pairs, `[\b]`.
    assert_eq!(
        jsonschema_differs,
        [
            r"^\s$",
            r"\bfoo\b",
            r"\Bfoo",
            r"^.$",
            r"^.$",
            r"(?<x>a)\k<x>",
            r"^[^]$",
            r"[]",
            r"^\uD83D\uDE00$",
            r"^[\b]$",
        ],
        "jsonschema now agrees or differs elsewhere: update the list"
    );
}

/// Patterns built from the pieces where engines differ, on texts made of the characters where
/// they differ: the validator decides exactly as `regress` (an ECMA-262 engine) does, on the
/// linear-time translation and on the backtracking path alike.
#[test]
fn generated_patterns_agree_with_regress() {
    let piece = prop::sample::select(vec![
        r"\d", r"\D", r"\w", r"\W", r"\s", r"\S", r"\b", r"\B", ".", "a", "é", "-", r"\.", "[a-z]",
        r"[^\d]", r"[\s\w]", r"[é-ü]", r"\u00e9", r"\p{L}", "(a|b)", "(?:ab)", r"(\w)\1", "(?=a)",
        "(?<!b)", "^", "$", "😀", " ",
    ]);
    let quantifier = prop::sample::select(vec!["", "", "*", "+", "?", "{2}", "{1,3}", "*?"]);
    let pattern = prop::collection::vec((piece, quantifier), 1..5).prop_map(|parts| {
        parts
            .into_iter()
            .map(|(p, q)| match (p, q) {
                ("^" | "$" | r"\b" | r"\B" | "(?=a)" | "(?<!b)", _) => p.to_owned(),
                _ => format!("{p}{q}"),
            })
            .collect::<String>()
    });
    let text = prop::collection::vec(
        prop::sample::select(vec![
            'a', 'b', 'A', 'é', 'ü', '1', '٣', '１', '_', '-', '.', ' ', '\u{a0}', '\u{2028}',
            '\n', '\r', '\u{85}', '😀', 'ß',
        ]),
        0..8,
    )
    .prop_map(|cs| cs.into_iter().collect::<String>());
    let mut runner = seeded(cases());
    runner
        .run(&(pattern, text), |(pattern, text)| {
            let reference = regress::Regex::with_flags(&pattern, "u").unwrap();
            prop_assert_eq!(
                pattern_holds(&pattern, &text),
                reference.find(&text).is_some(),
                "{:?} on {:?}",
                pattern,
                text
            );
            Ok(())
        })
        .unwrap();
}

/// The asserted `format`s decide as `jsonschema` does with format assertion on: each string
/// below sits at an edge of its RFC (leap days and seconds, offsets, lower-case separators,
/// address literals, relative references, UUIDs without hyphens).
#[test]
fn formats_decide_as_their_rfcs_say() {
    let corpus: &[(&str, &[&str])] = &[
        (
            "date",
            &[
                "2024-02-29",
                "2023-02-29",
                "2026-13-01",
                "2026-1-01",
                "2026-01-01T",
                "٢٠٢٦-٠١-٠١",
                "0000-01-01",
            ],
        ),
        (
            "date-time",
            &[
                "2026-12-01T10:00:00Z",
                "2026-12-01t10:00:00z",
                "2026-12-01T10:00:00.123+07:00",
                "2026-12-01 10:00:00Z",
                "2026-12-01T10:00:00",
                "2026-12-01T24:00:00Z",
                "2016-12-31T23:59:60Z",
                "2016-12-31T23:59:60+01:00",
                "2017-01-01T06:59:60+07:00",
                "2026-12-01T10:00:00+7:00",
                "2026-12-01T10:00:00.Z",
            ],
        ),
        (
            "time",
            &[
                "10:00:00Z",
                "10:00:00",
                "23:59:60Z",
                "22:59:60-01:00",
                "10:00:00.5+05:30",
                "10:60:00Z",
                "10:00Z",
            ],
        ),
        (
            "email",
            &[
                "sari@kantor.id",
                "sari.w+cuti@kantor.co.id",
                "\"sari wulan\"@kantor.id",
                "sari@[192.0.2.1]",
                "sari@[IPv6:2001:db8::1]",
                "sari@kantor",
                "sari@-kantor.id",
                "sari@@kantor.id",
                "sari",
                "sari@kantor..id",
                ".sari@kantor.id",
            ],
        ),
        (
            "uri",
            &[
                "https://example.com/a?b=c#d",
                "urn:isbn:0451450523",
                "mailto:sari@kantor.id",
                "/relative/path",
                "//example.com",
                "https://example.com/a b",
                "http://[::1]:8080/",
                "https:",
                "1http://x",
            ],
        ),
        (
            "uuid",
            &[
                "67e55044-10b1-426f-9247-bb680e5fe0c8",
                "67E55044-10B1-426F-9247-BB680E5FE0C8",
                "67e5504410b1426f9247bb680e5fe0c8",
                "{67e55044-10b1-426f-9247-bb680e5fe0c8}",
                "67e55044-10b1-426f-9247-bb680e5fe0cg",
                "urn:uuid:67e55044-10b1-426f-9247-bb680e5fe0c8",
            ],
        ),
    ];
    for (format, strings) in corpus {
        let schema = json!({"type": "string", "format": format});
        let ours = Validator::new(&schema).unwrap();
        let theirs = jsonschema::options()
            .should_validate_formats(true)
            .build(&schema)
            .unwrap();
        let mut accepted = 0;
        for s in *strings {
            let expected = theirs.is_valid(&json!(s));
            let got = ours.validate(&mut json!(s)).is_empty();
            assert_eq!(got, expected, "format {format}: {s:?}");
            accepted += got as usize;
        }
        assert!(
            accepted > 0 && accepted < strings.len(),
            "{format}: the corpus has both kinds"
        );
    }
}

// ---- serde's attributes, honoured in the schema ----

/// `transparent`: serde reads the one field's value itself, not an object around it.
#[derive(ToolArg, Deserialize, Serialize, Debug, PartialEq)]
#[serde(transparent)]
struct NomorTiket {
    /// Nomor tiket
    #[arg(range = 1..=99_999)]
    nomor: u32,
}

/// `rename_all_fields`: the variants' fields are renamed too, after the variants' own rule.
#[derive(ToolArg, Deserialize, Serialize, Debug, PartialEq)]
#[serde(
    tag = "jenis",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
enum Permintaan {
    /// Ganti nama pengguna
    GantiNama {
        /// Nama pengguna baru
        #[arg(length = 1..=20)]
        nama_pengguna: String,
        /// Alasan singkat
        #[arg(length = 1..=30)]
        alasan_singkat: String,
    },
    /// Hapus akun
    HapusAkun {
        /// Sudah yakin
        sudah_yakin: bool,
    },
}

/// Names that differ by direction, aliases, defaults from a path and from the container,
/// fields written only sometimes, a field never read.
#[derive(ToolArg, Deserialize, Serialize, Debug, PartialEq)]
#[serde(
    rename_all(serialize = "camelCase", deserialize = "snake_case"),
    default,
    deny_unknown_fields,
    bound(deserialize = "")
)]
struct Saringan {
    /// Kata kunci
    #[serde(alias = "kata")]
    #[arg(length = 0..=20)]
    kata_kunci: String,
    /// Halaman
    #[arg(range = 1..=50)]
    halaman: u8,
    /// Urutan
    #[serde(rename(serialize = "urut", deserialize = "urutan"))]
    urutan: Urutan,
    /// Label
    #[serde(skip_serializing_if = "Vec::is_empty", default = "label_bawaan")]
    #[arg(length = 0..=3)]
    label: Vec<Label>,
    /// Dihitung ulang, tidak pernah dibaca
    #[serde(skip_deserializing)]
    #[arg(length = 0..=5)]
    ringkasan: String,
}

impl Default for Saringan {
    fn default() -> Self {
        Saringan {
            kata_kunci: String::new(),
            halaman: 1,
            urutan: Urutan::Terbaru,
            label: label_bawaan(),
            ringkasan: String::new(),
        }
    }
}

fn label_bawaan() -> Vec<Label> {
    vec![Label::Umum]
}

/// Variants renamed by direction, and one never read.
#[derive(ToolArg, Deserialize, Serialize, Debug, PartialEq)]
#[serde(rename_all = "lowercase")]
enum Urutan {
    /// Yang terbaru dulu
    #[serde(alias = "baru")]
    Terbaru,
    /// Yang terlama dulu
    #[serde(rename(serialize = "lama", deserialize = "terlama"))]
    Terlama,
    /// Diarsipkan: ditulis, tidak pernah dibaca
    #[serde(skip_deserializing)]
    #[allow(dead_code)]
    Arsip,
}

#[derive(ToolArg, Deserialize, Serialize, Debug, PartialEq)]
#[serde(rename_all = "SCREAMING-KEBAB-CASE")]
enum Label {
    /// Umum
    Umum,
    /// Perlu tindak lanjut
    PerluTindakLanjut,
}

/// Adjacently tagged, with a newtype variant.
#[derive(ToolArg, Deserialize, Serialize, Debug, PartialEq)]
#[serde(tag = "t", content = "c", rename_all = "kebab-case")]
enum Tindakan {
    /// Tutup tiket
    TutupTiket(NomorTiket),
    /// Buka ulang
    BukaUlang {
        /// Nomor tiket
        nomor: NomorTiket,
    },
    /// Tidak ada
    TidakAda,
}

/// What one type showed: how many generated values serde read, and how many of those came back
/// whole through serde's own output.
#[derive(Debug, Default)]
struct RoundTrips {
    read: usize,
    round_trips: usize,
}

fn schemas_of<T: schemars::JsonSchema>() -> (Value, Value) {
    (
        tool_runtime::__private::input_schema_of::<T>(),
        tool_runtime::__private::output_schema_of::<T>(),
    )
}

/// Values generated around the type's input schema: whatever the validator accepts, serde reads;
/// what serde then writes fits the output schema; and where serde reads its own output, the
/// validator accepts it and the value that comes through is the same. For every serde attribute
/// the derive honours.
fn serde_round_trips<T>() -> RoundTrips
where
    T: ToolArg + DeserializeOwned + Serialize,
{
    let name = std::any::type_name::<T>();
    let (input, output) = schemas_of::<T>();
    let defs = input
        .get("$defs")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let reads = Validator::new(&input).unwrap();
    let writes = Validator::new(&output).unwrap();
    let tally = std::cell::RefCell::new(RoundTrips::default());
    let mut runner = seeded(cases() / 3);
    runner
        .run(&around(&input, &defs, 0), |generated| {
            let mut checked = generated;
            if !reads.validate(&mut checked).is_empty() {
                return Ok(());
            }
            let read = serde_json::from_value::<T>(checked.clone());
            prop_assert!(
                read.is_ok(),
                "{name}: the validator accepted {checked}, serde does not read it: {:?}",
                read.err()
            );
            let Ok(value) = read else { return Ok(()) };
            let mut tally = tally.borrow_mut();
            tally.read += 1;
            let written = serde_json::to_value(&value).unwrap();
            let violations = writes.validate(&mut written.clone());
            prop_assert!(
                violations.is_empty(),
                "{name}: serde wrote {written}, which the output schema refuses: {violations:?}"
            );
            // Where serde reads what it writes, so must the tool.
            if let Ok(again) = serde_json::from_value::<T>(written.clone())
                && serde_json::to_value(&again).unwrap() == written
            {
                let mut checked = written.clone();
                let violations = reads.validate(&mut checked);
                prop_assert!(
                    violations.is_empty(),
                    "{name}: serde reads its own {written}, the input schema refuses it: {violations:?}"
                );
                let through = serde_json::from_value::<T>(checked).unwrap();
                prop_assert_eq!(serde_json::to_value(&through).unwrap(), written);
                tally.round_trips += 1;
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    tally.into_inner()
}

#[test]
fn serde_attributes_are_honoured_in_the_schema() {
    // Types that read what they write: every value serde reads comes back whole.
    let whole = [
        ("NomorTiket", serde_round_trips::<NomorTiket>()),
        ("Permintaan", serde_round_trips::<Permintaan>()),
        ("Label", serde_round_trips::<Label>()),
        ("Tindakan", serde_round_trips::<Tindakan>()),
        ("Item", serde_round_trips::<Item>()),
        ("Pesanan", serde_round_trips::<Pesanan>()),
        ("Pengiriman", serde_round_trips::<Pengiriman>()),
        ("Kategori", serde_round_trips::<Kategori>()),
        ("Prioritas", serde_round_trips::<Prioritas>()),
        (
            "Periode",
            serde_round_trips::<examples::laporan_penjualan::Periode>(),
        ),
        (
            "Wilayah",
            serde_round_trips::<examples::laporan_penjualan::Wilayah>(),
        ),
        ("Paper", serde_round_trips::<examples::ekstraksi::Paper>()),
        (
            "Lowongan",
            serde_round_trips::<examples::ekstraksi::Lowongan>(),
        ),
        (
            "Relevansi",
            serde_round_trips::<examples::ekstraksi::Relevansi>(),
        ),
    ];
    for (name, t) in &whole {
        println!("{name}: {t:?}");
        assert!(t.read >= 5, "{name}: too few values serde reads: {t:?}");
        assert_eq!(t.round_trips, t.read, "{name}: {t:?}");
    }
    // An alias serde would read is not in the schema: a call says each field once, by the name
    // the model was shown.
    let (input, _) = schemas_of::<Saringan>();
    let refused = Validator::new(&input)
        .unwrap()
        .validate(&mut json!({"kata": "x"}));
    assert!(
        matches!(
            refused.iter().next().map(|v| &v.kind),
            Some(ViolationKind::Unknown { .. })
        ),
        "{refused:?}"
    );
    // Names that differ by direction: serde cannot read what it writes, and the output schema
    // follows what it writes.
    for (name, t) in [
        ("Saringan", serde_round_trips::<Saringan>()),
        ("Urutan", serde_round_trips::<Urutan>()),
    ] {
        println!("{name}: {t:?}");
        assert!(t.read >= 5, "{name}: too few values serde reads: {t:?}");
    }
}
