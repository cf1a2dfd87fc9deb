//! Behaviour at the model/code boundary: strict decoding, every violation reported, failures as
//! data, the registry, and the generated schemas checked by an independent validator.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tool_runtime::{
    CallOutput, Context, ToolArg, ToolError, ToolSet, ToolSetError, ViolationKind, tool, tools,
};

#[derive(Serialize, schemars::JsonSchema)]
struct Pesanan {
    total_porsi: u32,
    biaya: u64,
}

#[tool(
    name = "pesan-katering",
    description = "Buat pesanan katering dan kembalikan total porsi serta biaya.",
    not_for = "membatalkan pesanan"
)]
fn pesan_katering(
    #[arg(description = "Jumlah peserta sebagai angka", range = 1..=500)] jumlah_peserta: u32,
) -> Pesanan {
    let total_porsi = jumlah_peserta + 5;
    Pesanan {
        total_porsi,
        biaya: total_porsi as u64 * 50_000,
    }
}

#[derive(ToolArg, Deserialize, Serialize, Debug, PartialEq, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum Wilayah {
    Jakarta,
    Medan,
    /// Semua wilayah
    Semua,
}

#[derive(ToolArg, Deserialize, Debug)]
struct Rentang {
    /// Tahun awal
    #[arg(range = 2000..=2100)]
    dari: u16,
    /// Catatan, null bila tidak ada
    catatan: Option<String>,
}

#[tool(description = "Kembalikan argumen yang diterima, untuk menguji batas model dan kode.")]
fn gema(
    #[arg(description = "Wilayah; semua bila tidak disebut", default = Wilayah::Semua)]
    wilayah: Wilayah,
    #[arg(description = "Kata kunci", length = 2..=10, pattern = "^[a-z]+$")] kata: String,
    #[arg(description = "Skor opsional", range = 0.0..=1.0)] skor: Option<f64>,
    #[arg(description = "Rentang tahun")] rentang: Rentang,
    #[arg(description = "Label", length = 0..=3)] label: Vec<String>,
) -> Value {
    json!({ "wilayah": wilayah, "kata": kata, "skor": skor, "dari": rentang.dari, "catatan": rentang.catatan, "label": label })
}

#[derive(Debug)]
struct Gagal;
impl std::fmt::Display for Gagal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stok habis")
    }
}

#[tool(description = "Selalu gagal dengan pesan dari domain.")]
fn selalu_gagal() -> Result<u32, Gagal> {
    Err(Gagal)
}

#[tool(description = "Panik dengan rahasia internal di pesannya.")]
fn panik() -> u32 {
    panic!("koneksi ke db-internal-7 gagal")
}

#[tool(
    description = "Panik dengan pesan yang boleh dibaca model.",
    panic_to_model = true
)]
fn panik_terbuka() -> u32 {
    panic!("kuota harian habis")
}

#[tool(description = "Panik di dalam fungsi async.")]
async fn panik_async() -> u32 {
    panic!("rahasia async")
}

struct Hr {
    sisa: u32,
}

#[tools]
impl Hr {
    #[tool(description = "Ambil sisa kuota cuti dari state host.")]
    fn sisa_cuti(&self) -> u32 {
        self.sisa
    }
}

fn set() -> ToolSet {
    ToolSet::new([
        pesan_katering::tool(),
        gema::tool(),
        selalu_gagal::tool(),
        panik::tool(),
        panik_async::tool(),
        Hr::tools()[0],
    ])
    .unwrap()
}

fn call(name: &str, args: &str) -> Result<Value, ToolError> {
    set()
        .call(&Context::new(), name, args)
        .blocking()
        .map(CallOutput::into_value)
}

fn violations(r: Result<Value, ToolError>) -> Vec<(String, ViolationKind)> {
    match r {
        Err(ToolError::InvalidArguments(v)) => v
            .iter()
            .map(|v| (v.path.to_string(), v.kind.clone()))
            .collect(),
        other => panic!("expected invalid arguments, got {other:?}"),
    }
}

#[test]
fn the_string_25_never_becomes_255_portions() {
    let ok = call("pesan-katering", r#"{"jumlah_peserta": 25}"#).unwrap();
    assert_eq!(ok, json!({"total_porsi": 30, "biaya": 1_500_000}));
    let err = call("pesan-katering", r#"{"jumlah_peserta": "25"}"#).unwrap_err();
    let msg = err.model_message();
    assert!(
        msg.contains(
            "`jumlah_peserta`: expected an integer from 1 to 500, received \"25\" (a string)"
        ),
        "{msg}"
    );
}

#[test]
fn integral_floats_are_integers_and_fractions_are_not() {
    assert_eq!(
        call("pesan-katering", r#"{"jumlah_peserta": 250.0}"#).unwrap()["total_porsi"],
        255
    );
    let v = violations(call("pesan-katering", r#"{"jumlah_peserta": 2.5}"#));
    assert_eq!(v, [("jumlah_peserta".into(), ViolationKind::Type)]);
}

#[test]
fn bounds_are_inclusive_and_checked_both_ways() {
    assert!(call("pesan-katering", r#"{"jumlah_peserta": 1}"#).is_ok());
    assert!(call("pesan-katering", r#"{"jumlah_peserta": 500}"#).is_ok());
    for bad in ["0", "501", "-1", "1e12"] {
        let v = violations(call(
            "pesan-katering",
            &format!(r#"{{"jumlah_peserta": {bad}}}"#),
        ));
        assert_eq!(
            v,
            [("jumlah_peserta".into(), ViolationKind::Range)],
            "{bad}"
        );
    }
}

#[test]
fn every_violation_of_a_call_is_reported_with_its_path() {
    let v = violations(call(
        "gema",
        r#"{"wilayah": "Jakarta", "kata": "X", "skor": 2, "rentang": {"dari": 1999, "extra": 1}, "label": ["a","b","c","d"], "kata_kunci": 1}"#,
    ));
    let paths: Vec<&str> = v.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        paths,
        [
            "kata_kunci",
            "wilayah",
            "kata",
            "skor",
            "rentang.extra",
            "rentang.dari",
            "label"
        ]
    );
    assert!(
        matches!(&v[1].1, ViolationKind::NotAllowed { did_you_mean: Some(s) } if s == "\"jakarta\"")
    );
}

#[test]
fn unknown_fields_suggest_the_close_name() {
    let err = call("pesan-katering", r#"{"jumlah": 25}"#).unwrap_err();
    let ToolError::InvalidArguments(v) = &err else {
        panic!()
    };
    assert!(v.iter().any(|v| matches!(&v.kind, ViolationKind::Unknown { did_you_mean: Some(s) } if s == "jumlah_peserta")));
    assert!(
        v.iter()
            .any(|v| v.kind == ViolationKind::Missing && v.path.to_string() == "jumlah_peserta")
    );
}

#[test]
fn null_only_where_nullable() {
    let ok = call(
        "gema",
        r#"{"kata": "ab", "skor": null, "rentang": {"dari": 2020, "catatan": null}, "label": []}"#,
    )
    .unwrap();
    assert_eq!(ok["skor"], Value::Null);
    let v = violations(call(
        "gema",
        r#"{"kata": null, "rentang": {"dari": 2020}, "label": []}"#,
    ));
    assert_eq!(v, [("kata".into(), ViolationKind::Type)]);
}

#[test]
fn defaults_are_filled_in_for_absent_arguments() {
    let ok = call(
        "gema",
        r#"{"kata": "ab", "rentang": {"dari": 2020}, "label": []}"#,
    )
    .unwrap();
    assert_eq!(ok["wilayah"], "semua");
    assert_eq!(ok["catatan"], Value::Null);
}

#[test]
fn patterns_and_lengths_count_characters() {
    let v = violations(call(
        "gema",
        r#"{"kata": "abcdefghijk", "rentang": {"dari": 2020}, "label": []}"#,
    ));
    assert_eq!(v, [("kata".into(), ViolationKind::Length)]);
    let v = violations(call(
        "gema",
        r#"{"kata": "abc1", "rentang": {"dari": 2020}, "label": []}"#,
    ));
    assert_eq!(v, [("kata".into(), ViolationKind::Pattern)]);
}

#[test]
fn arguments_that_are_not_json_or_not_an_object() {
    let v = violations(call("pesan-katering", "{jumlah_peserta: 25"));
    assert_eq!(v[0].1, ViolationKind::Syntax);
    let v = violations(call("pesan-katering", "[25]"));
    assert_eq!(v, [("(arguments)".into(), ViolationKind::Type)]);
    assert!(call("selalu_gagal", "").is_err_and(|e| matches!(e, ToolError::Failed { .. })));
}

#[test]
fn a_tool_error_is_data_for_the_model() {
    let err = call("selalu_gagal", "{}").unwrap_err();
    assert_eq!(err, ToolError::failed("stok habis"));
    assert_eq!(err.model_message(), "The tool failed: stok habis");
}

#[test]
fn a_panic_is_caught_and_does_not_leak_to_the_model() {
    for name in ["panik", "panik_async"] {
        let err = call(name, "{}").unwrap_err();
        let ToolError::Panicked { message, .. } = &err else {
            panic!("{err:?}")
        };
        assert!(message.contains("rahasia") || message.contains("db-internal"));
        assert!(
            !err.model_message().contains("db-internal")
                && !err.model_message().contains("rahasia")
        );
    }
    // A tool can opt in to showing its panic message.
    let set = ToolSet::new([panik_terbuka::tool()]).unwrap();
    let err = set
        .call(&Context::new(), "panik_terbuka", "{}")
        .blocking()
        .unwrap_err();
    assert_eq!(
        err.model_message(),
        "The tool failed unexpectedly: kuota harian habis"
    );
    // The set still works after a panic.
    assert!(call("pesan-katering", r#"{"jumlah_peserta": 3}"#).is_ok());
}

#[test]
fn unknown_tools_are_named_with_a_suggestion() {
    let err = call("pesan_katering", "{}").unwrap_err();
    assert_eq!(
        err,
        ToolError::UnknownTool {
            name: "pesan_katering".into(),
            did_you_mean: Some("pesan-katering".into())
        }
    );
}

#[test]
fn impl_groups_take_self_from_the_context() {
    let set = set();
    let cx = Context::new().with(Hr { sisa: 7 });
    assert_eq!(
        set.call(&cx, "sisa_cuti", "{}").blocking().unwrap().value(),
        7
    );
    let err = set
        .call(&Context::new(), "sisa_cuti", "{}")
        .blocking()
        .unwrap_err();
    assert!(matches!(err, ToolError::MissingContext { type_name } if type_name.ends_with("Hr")));
}

#[test]
fn the_registry_holds_every_tool_and_sets_refuse_duplicates() {
    let crate_root = module_path!().split("::").next().unwrap();
    let all = ToolSet::from_module(crate_root).unwrap();
    for name in ["pesan-katering", "gema", "panik", "sisa_cuti"] {
        assert!(all.get(name).is_some(), "{name} is registered");
    }
    let names: Vec<_> = all.names().collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "deterministic order");
    let dup = ToolSet::new([gema::tool(), gema::tool()]).unwrap_err();
    assert_eq!(
        dup,
        ToolSetError::DuplicateName {
            name: "gema".into()
        }
    );
}

#[test]
fn description_carries_the_boundary_sentence() {
    let t = pesan_katering::tool();
    assert_eq!(
        t.description(),
        "Buat pesanan katering dan kembalikan total porsi serta biaya. Not for: membatalkan pesanan."
    );
    assert_eq!(t.not_for(), Some("membatalkan pesanan"));
}

#[test]
fn schemas_are_valid_2020_12_and_agree_with_an_independent_validator() {
    let set = set();
    for tool in set.iter() {
        for schema in [tool.input_schema(), tool.output_schema()] {
            assert!(
                jsonschema::meta::is_valid(schema),
                "{}: {schema}",
                tool.name()
            );
            assert!(
                !schema.to_string().contains("uint"),
                "no Rust number formats: {schema}"
            );
        }
    }
    let schema = gema::tool().input_schema();
    let oracle = jsonschema::draft202012::new(schema).unwrap();
    let cases = [
        json!({"kata": "ab", "rentang": {"dari": 2020}, "label": []}),
        json!({"kata": "ab", "rentang": {"dari": 1999}, "label": []}),
        json!({"kata": "ab", "rentang": {"dari": 2020}, "label": ["a", "b", "c", "d"]}),
        json!({"kata": "ab", "wilayah": "medan", "skor": 0.5, "rentang": {"dari": 2100, "catatan": "x"}, "label": ["a"]}),
        json!({"kata": "ab", "wilayah": "bandung", "rentang": {"dari": 2020}, "label": []}),
        json!({"kata": "ab", "rentang": {"dari": 2020}, "label": [], "x": 1}),
        json!({"kata": "a", "rentang": {"dari": 2020}, "label": []}),
        json!({"kata": "ab", "skor": 1.01, "rentang": {"dari": 2020}, "label": []}),
        json!({"rentang": {"dari": 2020}, "label": []}),
    ];
    let set = ToolSet::new([gema::tool()]).unwrap();
    for case in cases {
        let ours = set
            .call(&Context::new(), "gema", case.to_string())
            .blocking()
            .is_ok();
        assert_eq!(ours, oracle.is_valid(&case), "disagreement on {case}");
    }
}

#[test]
fn input_schema_snapshot() {
    let expected = json!({
        "type": "object",
        "properties": {
            "jumlah_peserta": {
                "type": "integer",
                "minimum": 1,
                "maximum": 500,
                "description": "Jumlah peserta sebagai angka"
            }
        },
        "required": ["jumlah_peserta"],
        "additionalProperties": false
    });
    let actual = pesan_katering::tool().input_schema();
    assert_eq!(actual, &expected);
    // Declaration order survives (the model fills fields in order).
    let keys: Vec<_> = gema::tool().input_schema()["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(keys, ["wilayah", "kata", "skor", "rentang", "label"]);
}

#[derive(ToolArg, Serialize)]
#[serde(rename_all = "kebab-case")]
enum Status {
    /// Data ditemukan
    Ok,
    /// NIK tidak terdaftar
    KaryawanTidakDitemukan,
}

#[derive(ToolArg, Serialize)]
struct Reimburse {
    /// Nomor pengajuan
    id: String,
    /// Nominal dalam rupiah
    #[arg(unbounded = "nominal dari sistem keuangan, bukan masukan model")]
    jumlah: u64,
}

/// Failure as data: the shape never changes, only the values.
#[derive(ToolArg, Serialize)]
struct HasilReimburse {
    /// Hasil pencarian
    status: Status,
    /// Pengajuan karyawan; kosong bila tidak ada, null bila karyawan tidak ditemukan
    daftar: Option<Vec<Reimburse>>,
}

#[tool(description = "Ambil status pengajuan reimbursement seorang karyawan.")]
fn cek_reimburse(
    #[arg(description = "NIK karyawan, format K-XXX", pattern = "^K-[0-9]{3}$")] nik: String,
) -> HasilReimburse {
    match nik.as_str() {
        "K-001" => HasilReimburse {
            status: Status::Ok,
            daftar: Some(vec![Reimburse {
                id: "R-88".into(),
                jumlah: 450_000,
            }]),
        },
        "K-002" => HasilReimburse {
            status: Status::Ok,
            daftar: Some(Vec::new()),
        },
        _ => HasilReimburse {
            status: Status::KaryawanTidakDitemukan,
            daftar: None,
        },
    }
}

#[test]
fn failure_as_data_keeps_one_shape_and_tells_empty_from_not_found() {
    let tool = cek_reimburse::tool();
    let schema = tool.output_schema();
    assert_eq!(
        schema["required"],
        json!(["status", "daftar"]),
        "nullable, not optional"
    );
    assert_eq!(
        schema["properties"]["daftar"]["type"],
        json!(["array", "null"])
    );
    let oracle = jsonschema::draft202012::new(schema).unwrap();
    assert!(
        !oracle.is_valid(&json!({"status": "ok"})),
        "a missing field is a different shape"
    );

    let set = ToolSet::new([tool]).unwrap();
    let cx = Context::new();
    let empty = set
        .call(&cx, "cek_reimburse", r#"{"nik": "K-002"}"#)
        .blocking()
        .unwrap()
        .into_value();
    let missing = set
        .call(&cx, "cek_reimburse", r#"{"nik": "K-999"}"#)
        .blocking()
        .unwrap()
        .into_value();
    let found = set
        .call(&cx, "cek_reimburse", r#"{"nik": "K-001"}"#)
        .blocking()
        .unwrap()
        .into_value();
    assert_eq!(empty, json!({"status": "ok", "daftar": []}));
    assert_eq!(
        missing,
        json!({"status": "karyawan-tidak-ditemukan", "daftar": null})
    );
    for out in [&empty, &missing, &found] {
        assert!(
            oracle.is_valid(out),
            "output conforms to the output schema: {out}"
        );
    }
    // The input side of the same kind of field stays optional.
    assert_eq!(tool.input_schema()["required"], json!(["nik"]));
}

#[test]
fn serde_skip_rules_shape_input_and_output_differently() {
    #[derive(ToolArg, Serialize, Deserialize)]
    struct Catatan {
        /// Isi catatan
        isi: String,
        /// Diisi sistem, tidak dibaca dari model
        #[serde(skip_deserializing)]
        dibuat_oleh: String,
        /// Hanya ditulis bila ada
        #[serde(skip_serializing_if = "Option::is_none")]
        label: Option<String>,
    }
    #[tool(description = "Simpan catatan dan kembalikan catatan yang disimpan.")]
    fn simpan(#[arg(description = "Catatan baru")] catatan: Catatan) -> Catatan {
        Catatan {
            dibuat_oleh: "sistem".into(),
            ..catatan
        }
    }
    let input = &simpan::tool().input_schema()["properties"]["catatan"];
    let output = simpan::tool().output_schema();
    let keys = |s: &Value| {
        s["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(keys(input), ["isi", "label"]);
    assert_eq!(input["required"], json!(["isi"]));
    assert_eq!(keys(output), ["isi", "dibuat_oleh", "label"]);
    assert_eq!(output["required"], json!(["isi", "dibuat_oleh"]));
    // And serde does as the schemas say: `dibuat_oleh` is never read, `label` written only if set.
    let set = ToolSet::new([simpan::tool()]).unwrap();
    let out = set
        .call(
            &Context::new(),
            "simpan",
            r#"{"catatan": {"isi": "rapat"}}"#,
        )
        .blocking()
        .unwrap();
    assert_eq!(
        out.value(),
        &json!({"isi": "rapat", "dibuat_oleh": "sistem"})
    );
}
