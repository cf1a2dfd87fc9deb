//! Exports to every provider: golden snapshots of the examples' tools, the lowering rules, and
//! proof that whatever a lowering drops, the runtime still enforces.
//! Regenerate snapshots with `UPDATE_EXPECT=1 cargo test -p tests --test product export` and review the diff.

use crate::expect;

use serde_json::{Value, json};
use tool_runtime::Api;
use tool_runtime::export;
use tool_runtime::{Context, ToolError, ToolSet};

/// All nine example tools (English wording: the snapshots show the toolkit's defaults).
fn examples() -> ToolSet {
    examples::every_tool()
        .0
        .with_wording(tool_runtime::Wording::english())
}

const TARGETS: [(Api, &str); 5] = [
    (Api::OPENAI_CHAT, "openai-chat"),
    (Api::OPENAI_RESPONSES, "openai-responses"),
    (Api::ANTHROPIC, "anthropic"),
    (Api::GEMINI, "gemini"),
    (Api::BEDROCK_CONVERSE, "bedrock-converse"),
];

fn snapshot(name: &str, actual: &Value) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("snapshots")
        .join(format!("{name}.json"));
    let text = serde_json::to_string_pretty(actual).unwrap() + "\n";
    if expect::updating() {
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "missing snapshot {}: run with UPDATE_EXPECT=1",
            path.display()
        )
    });
    assert!(
        expected == text,
        "snapshot {name} changed: run with UPDATE_EXPECT=1 and review the diff\n{text}"
    );
}

#[test]
fn every_export_of_the_examples_matches_its_snapshot() {
    let set = examples();
    for (target, name) in TARGETS {
        snapshot(
            &format!("tools-{name}"),
            &Value::Array(set.export(target).unwrap()),
        );
    }
    snapshot(
        "tools-mcp",
        &Value::Array(tool_runtime_mcp::export::tools(&set)),
    );
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[allow(dead_code)]
struct Wrapped(u32);

#[test]
fn structured_output_formats_match_their_snapshots() {
    use examples::hr::HasilCuti;
    for (target, name) in TARGETS {
        let out = export::structured_output::<HasilCuti>(target, "hasil_cuti");
        snapshot(&format!("output-{name}"), &out.json);
    }
}

fn find<'a>(tools: &'a [Value], name: &str, path: &[&str]) -> &'a Value {
    let t = tools
        .iter()
        .find(|t| t["name"] == name || t["function"]["name"] == name)
        .unwrap_or_else(|| panic!("{name} not exported"));
    path.iter().fold(t, |v, k| &v[*k])
}

#[test]
fn openai_strict_closes_every_object_and_requires_every_property() {
    let tools = examples().export(Api::OPENAI_CHAT).unwrap();
    let params = find(
        &tools,
        "buat-laporan-penjualan",
        &["function", "parameters"],
    );
    assert_eq!(
        params["required"],
        json!(["periode", "wilayah", "sertakan_grafik"])
    );
    assert_eq!(params["additionalProperties"], false);
    assert_eq!(
        find(&tools, "buat-laporan-penjualan", &["function", "strict"]),
        &json!(true)
    );
    // A documented enum becomes a plain `enum`; the variants' docs stay in the description.
    assert_eq!(
        params["properties"]["periode"]["enum"],
        json!(["harian", "mingguan", "bulanan"])
    );
    assert!(
        params["properties"]["periode"]["description"]
            .as_str()
            .unwrap()
            .contains("mingguan: Tujuh hari terakhir")
    );
    assert!(params.to_string().find("oneOf").is_none());
    // Bounds survive in OpenAI strict mode.
    let katering = find(&tools, "pesan-katering", &["function", "parameters"]);
    assert_eq!(katering["properties"]["jumlah_peserta"]["maximum"], 500);
}

#[derive(tool_runtime::ToolArg, serde::Deserialize, serde::Serialize, Debug, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Urutan {
    /// Yang terbaru dulu
    Terbaru,
    /// Yang terlama dulu
    Terlama,
}

#[derive(tool_runtime::ToolArg, serde::Deserialize, serde::Serialize, Debug, PartialEq)]
struct Saring {
    /// Kata yang dicari
    kata: String,
    /// Cocokkan huruf besar-kecil
    #[serde(default)]
    persis: bool,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Halaman {
    limit: u32,
    urutan: String,
    saring: Option<String>,
}

#[tool_runtime::tool(description = "Cari tiket dukungan.")]
fn cari_tiket(
    #[arg(description = "Berapa tiket paling banyak", range = 1..=100, default = 20)] limit: u32,
    #[arg(description = "Urutan hasil", default = Urutan::Terbaru)] urutan: Urutan,
    #[arg(description = "Saringan; null untuk semua tiket")] saring: Option<Saring>,
) -> Halaman {
    Halaman {
        limit,
        urutan: format!("{urutan:?}"),
        saring: saring.map(|s| format!("{}/{}", s.kata, s.persis)),
    }
}

/// OpenAI strict mode makes every property required: a defaulted one takes `null`, says that
/// null stands for its default, and the runtime reads `null` there as the default; so the model
/// need not invent a value and the default applies. The other dialects keep it optional.
#[test]
fn openai_strict_defaults_are_nullable_and_null_decodes_as_the_default() {
    let set = ToolSet::new([cari_tiket::tool()]).unwrap();
    for api in [Api::OPENAI_CHAT, Api::OPENAI_RESPONSES] {
        let tools = set.export(api).unwrap();
        let params = &api
            .lower(set.get("cari_tiket").unwrap().input_schema())
            .schema;
        assert!(
            serde_json::to_string(&tools[0])
                .unwrap()
                .contains(&params.to_string())
        );
        let limit = &params["properties"]["limit"];
        assert_eq!(limit["type"], json!(["integer", "null"]), "{limit}");
        assert!(
            limit["description"]
                .as_str()
                .unwrap()
                .ends_with("null for the default (20)"),
            "{limit}"
        );
        let urutan = &params["properties"]["urutan"];
        assert!(
            urutan["enum"] == json!(["terbaru", "terlama", null])
                || urutan["anyOf"][1] == json!({"type": "null"}),
            "{urutan}"
        );
        assert!(
            urutan
                .to_string()
                .contains("null for the default (terbaru)"),
            "{urutan}"
        );
        // The nested object's defaulted field too; the `Option` stays as it was.
        let saring = params["properties"]["saring"].to_string();
        assert!(saring.contains(r#"["boolean","null"]"#), "{saring}");
        assert_eq!(params["required"], json!(["limit", "urutan", "saring"]));
        assert!(
            tools[0].to_string().contains(r#""strict":true"#),
            "{}",
            tools[0]
        );
    }
    // A call written against OpenAI's strict schema (as the agent loop reads it).
    let call = |args: &str| {
        let args = tool_runtime::Arguments::text(args).null_means_absent();
        set.call(&Context::new(), "cari_tiket", args)
            .blocking()
            .map(|o| o.into_value())
    };
    let nulls = r#"{"limit": null, "urutan": null, "saring": {"kata": "login", "persis": null}}"#;
    assert_eq!(
        call(nulls).unwrap(),
        json!({"limit": 20, "urutan": "Terbaru", "saring": "login/false"})
    );
    // Against the canonical schema (MCP, a plain call) those nulls are what JSON Schema says
    // they are: values of the wrong type, each named.
    let plain = set.call(&Context::new(), "cari_tiket", nulls).blocking();
    let err = plain.unwrap_err().to_string();
    for field in ["`limit`", "`urutan`", "`saring.persis`"] {
        assert!(err.contains(field), "{err}");
    }
    assert_eq!(
        call("{}").unwrap(),
        json!({"limit": 20, "urutan": "Terbaru", "saring": null})
    );
    // Null is "left out", never a way around a rule: a required field still needs its value.
    let err = call(r#"{"saring": {"kata": null}}"#).unwrap_err();
    assert!(err.to_string().contains("`saring.kata`"), "{err}");
    // Anthropic keeps the argument optional, its default in the description.
    let anthropic = set.export(Api::ANTHROPIC).unwrap();
    let limit = &anthropic[0]["input_schema"]["properties"]["limit"];
    assert_eq!(limit["type"], "integer", "{limit}");
    assert!(
        !anthropic[0]["input_schema"]["required"]
            .to_string()
            .contains("limit")
    );
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Catatan {
    judul: String,
    isi: serde_json::Value,
}

#[tool_runtime::tool(description = "Baca teks JSON dan kembalikan nilainya.")]
fn baca_json(
    #[arg(description = "Teks JSON", length = 1..=1000)] teks: String,
) -> Result<serde_json::Value, String> {
    serde_json::from_str(&teks).map_err(|e| e.to_string())
}

#[tool_runtime::tool(description = "Kembalikan catatan dengan isi bebas.")]
fn catatan_bebas() -> Catatan {
    Catatan {
        judul: "x".into(),
        isi: json!([1]),
    }
}

/// A `serde_json::Value` has the schema `true`; MCP's 2025-11-25 schema (and the TypeScript SDK
/// that checks it) takes only objects as property schemas, so the MCP export writes `{}`.
#[test]
fn mcp_output_schemas_hold_no_boolean_schemas() {
    let set = ToolSet::new([baca_json::tool(), catatan_bebas::tool()]).unwrap();
    let listed = tool_runtime_mcp::export::tools(&set);
    assert_eq!(listed[0]["outputSchema"]["properties"]["result"], json!({}));
    assert_eq!(listed[1]["outputSchema"]["properties"]["isi"], json!({}));
    for entry in &listed {
        for key in ["inputSchema", "outputSchema"] {
            assert!(
                !entry[key].to_string().contains(":true"),
                "{key}: {}",
                entry[key]
            );
        }
    }
}

#[test]
fn anthropic_moves_bounds_into_the_description_and_the_runtime_still_enforces_them() {
    let set = examples();
    let tools = set.export(Api::ANTHROPIC).unwrap();
    let n = find(
        &tools,
        "pesan-katering",
        &["input_schema", "properties", "jumlah_peserta"],
    );
    assert!(
        n.get("maximum").is_none(),
        "Anthropic strict has no `maximum`: {n}"
    );
    assert!(
        n["description"].as_str().unwrap().contains("maximum: 500"),
        "{n}"
    );
    // The model could now send 501; the runtime refuses it all the same.
    let err = set
        .call(
            &Context::new(),
            "pesan-katering",
            r#"{"jumlah_peserta": 501}"#,
        )
        .blocking()
        .unwrap_err();
    assert!(matches!(err, ToolError::InvalidArguments(_)));
}

#[test]
fn gemini_gets_property_ordering_and_any_of_instead_of_type_arrays() {
    let set = examples();
    let tools = set.export(Api::GEMINI).unwrap();
    let decls = tools[0]["functionDeclarations"].as_array().unwrap();
    let laporan = decls
        .iter()
        .find(|d| d["name"] == "buat-laporan-penjualan")
        .unwrap();
    assert_eq!(
        laporan["parametersJsonSchema"]["propertyOrdering"],
        json!(["periode", "wilayah", "sertakan_grafik"])
    );
    let riwayat = decls
        .iter()
        .find(|d| d["name"] == "cek-riwayat-cuti")
        .unwrap();
    let tahun = &riwayat["parametersJsonSchema"]["properties"]["tahun"];
    assert!(
        tahun.get("type").is_none() && tahun["anyOf"].is_array(),
        "{tahun}"
    );
    assert!(
        !Value::Array(tools.clone())
            .to_string()
            .contains(r#""type":["#),
        "no type arrays for Gemini"
    );
    // The bounds Gemini keeps (minimum/maximum) stay on the number.
    assert_eq!(tahun["anyOf"][0]["minimum"], 2000);
    let err = set
        .call(
            &Context::new(),
            "buat-laporan-penjualan",
            r#"{"periode": "tahunan"}"#,
        )
        .blocking()
        .unwrap_err();
    assert!(matches!(err, ToolError::InvalidArguments(_)));
}

#[test]
fn bedrock_tool_specs_carry_the_schema_as_json_and_structured_output_as_text() {
    let set = examples();
    let tools = set.export(Api::BEDROCK_CONVERSE).unwrap();
    let spec = &tools
        .iter()
        .find(|t| t["toolSpec"]["name"] == "pesan-katering")
        .unwrap()["toolSpec"];
    let n = &spec["inputSchema"]["json"]["properties"]["jumlah_peserta"];
    // Claude's strict tool use on Bedrock takes no numeric bounds: they move into the text.
    assert!(n.get("maximum").is_none(), "{n}");
    assert!(n["description"].as_str().unwrap().contains("maximum: 500"));
    assert_eq!(spec["strict"], true);
    let format =
        export::structured_output::<examples::hr::HasilCuti>(Api::BEDROCK_CONVERSE, "hasil");
    let schema = &format.json["textFormat"]["structure"]["jsonSchema"]["schema"];
    let parsed: Value =
        serde_json::from_str(schema.as_str().expect("the schema is JSON text")).unwrap();
    assert_eq!(parsed["type"], "object");
    assert_eq!(format.json["textFormat"]["type"], "json_schema");
}

#[test]
fn mcp_entries_carry_output_schemas_and_annotations() {
    let tools = tool_runtime_mcp::export::tools(&examples());
    let cuaca = find(&tools, "cuaca-terkini", &[]);
    assert_eq!(cuaca["title"], "Cuaca terkini");
    assert_eq!(cuaca["annotations"]["readOnlyHint"], true);
    assert_eq!(cuaca["annotations"]["openWorldHint"], true);
    assert_eq!(cuaca["inputSchema"]["type"], "object");
    assert_eq!(cuaca["outputSchema"]["type"], "object");
    let ajukan = find(&tools, "ajukan-cuti", &[]);
    assert_eq!(ajukan["annotations"]["destructiveHint"], true);
    // Bounds are kept for MCP: its schema is the canonical one.
    assert_eq!(ajukan["inputSchema"]["properties"]["hari"]["maximum"], 14);
}

#[test]
fn a_non_object_output_is_wrapped_for_mcp_consistently() {
    #[tool_runtime::tool(description = "Hitung jumlah huruf sebuah kata.")]
    fn panjang(#[arg(description = "Kata")] kata: String) -> usize {
        kata.len()
    }
    let tool = panjang::tool();
    let set = ToolSet::new([tool]).unwrap();
    let entry = tool_runtime_mcp::export::tool(&set, tool);
    assert_eq!(
        entry["outputSchema"]["properties"]["result"]["type"],
        "integer"
    );
    assert_eq!(entry["outputSchema"]["required"], json!(["result"]));
    let content = tool_runtime_mcp::export::structured_content(tool, json!(5));
    assert_eq!(content, json!({"result": 5}));
    let oracle = jsonschema::draft202012::new(&entry["outputSchema"]).unwrap();
    assert!(oracle.is_valid(&content));
}

#[test]
fn every_example_export_is_valid_json_schema() {
    let set = examples();
    for (target, _) in TARGETS {
        for t in set.iter() {
            let e = export::tool(t, target);
            let schema = &target.lower(t.input_schema()).schema;
            assert!(
                serde_json::to_string(&e.json)
                    .unwrap()
                    .contains(&schema.to_string()),
                "{target:?} {}: the entry carries the lowered schema",
                t.name()
            );
            assert!(
                jsonschema::meta::is_valid(schema),
                "{target:?} {}: {schema}",
                t.name()
            );
        }
    }
}

#[test]
fn the_boundary_sentence_reaches_every_target() {
    let set = examples();
    for (target, _) in TARGETS {
        let text = Value::Array(set.export(target).unwrap()).to_string();
        assert!(
            text.contains("Not for: prakiraan penjualan ke depan."),
            "{target:?}"
        );
    }
    let mcp = Value::Array(tool_runtime_mcp::export::tools(&set)).to_string();
    assert!(mcp.contains("Not for: prakiraan penjualan ke depan."));
}

#[derive(tool_runtime::ToolArg, serde::Deserialize)]
#[allow(dead_code)]
struct Kategori {
    /// Nama kategori
    nama: String,
    /// Subkategori
    #[arg(length = 0..=5)]
    anak: Vec<Kategori>,
}

#[tool_runtime::tool(description = "Simpan pohon kategori buku.")]
fn simpan_kategori(#[arg(description = "Akar pohon")] akar: Kategori) -> bool {
    let _ = akar;
    true
}

#[test]
fn what_cannot_be_strict_is_sent_non_strict_with_a_reason() {
    let e = export::tool(simpan_kategori::tool(), Api::ANTHROPIC);
    assert!(!e.strict);
    assert_eq!(e.json["strict"], false);
    assert!(e.reasons[0].contains("recursive"), "{:?}", e.reasons);
    // OpenAI strict mode takes recursion through `$ref`.
    let o = export::tool(simpan_kategori::tool(), Api::OPENAI_CHAT);
    assert!(o.strict, "{:?}", o.reasons);
}

macro_rules! many_tools {
    ($($name:ident)*) => {
        $(
            #[tool_runtime::tool(description = "Alat uji untuk batas jumlah alat per permintaan.")]
            fn $name(#[arg(description = "Catatan opsional")] catatan: Option<String>) -> bool {
                catatan.is_some()
            }
        )*
        fn many() -> ToolSet {
            ToolSet::new([$($name::tool()),*]).unwrap()
        }
    };
}

many_tools!(t01 t02 t03 t04 t05 t06 t07 t08 t09 t10 t11 t12 t13 t14 t15 t16 t17 t18 t19 t20 t21);

/// Which of a set's tools an export sends strict.
fn strict_flags(api: Api, set: &ToolSet) -> Vec<bool> {
    set.export(api)
        .unwrap()
        .iter()
        .map(|e| {
            let spec = e.get("toolSpec").unwrap_or(e);
            spec["strict"] == true
        })
        .collect()
}

/// Anthropic takes 20 strict tools a request, 24 optional and 16 union-typed parameters across
/// them: past those, tools are sent non-strict (in the set's order, the same every request), and
/// nothing is refused that the API takes. Each tool here has one optional, nullable parameter.
#[test]
fn anthropic_per_request_strict_limits_send_the_tools_past_them_non_strict() {
    for api in [Api::ANTHROPIC, Api::BEDROCK_CONVERSE] {
        let twelve = ToolSet::new(many().iter().take(12)).unwrap();
        assert_eq!(strict_flags(api, &twelve), [true; 12], "{}", api.id());
        // 16 union-typed parameters is the limit: the 17th tool on goes non-strict.
        let flags = strict_flags(api, &many());
        assert_eq!(flags.len(), 21);
        assert_eq!(&flags[..16], [true; 16], "{}", api.id());
        assert_eq!(&flags[16..], [false; 5], "{}", api.id());
        assert_eq!(strict_flags(api, &many()), flags, "the same every time");
    }
    // OpenAI has no such per-request limit.
    let openai = many().export(Api::OPENAI_CHAT).unwrap();
    assert!(openai.iter().all(|e| e["function"]["strict"] == true));
}

#[test]
fn whatever_a_lowering_drops_the_runtime_still_enforces() {
    // `detail-buku` has a `pattern` on `isbn`; `ajukan-cuti` a `maximum` on `hari` and
    // `format: date` on `mulai`.
    let set = examples();
    // (API, `pattern` kept, `maximum` kept, `format` kept): what each dialect takes.
    let expected = [
        (Api::OPENAI_CHAT, true, true, true),
        (Api::OPENAI_RESPONSES, true, true, true),
        (Api::ANTHROPIC, false, false, true),
        (Api::GEMINI, false, true, true),
        (Api::BEDROCK_CONVERSE, false, false, true),
    ];
    for (api, pattern, maximum, format) in expected {
        let export = |name| export::tool(set.get(name).unwrap(), api).json.to_string();
        let (buku, cuti) = (export("detail-buku"), export("ajukan-cuti"));
        let kept = |text: &str, k: &str| text.contains(&format!("\"{k}\":"));
        assert_eq!(
            (
                kept(&buku, "pattern"),
                kept(&cuti, "maximum"),
                kept(&cuti, "format")
            ),
            (pattern, maximum, format),
            "{api}: {buku}\n{cuti}"
        );
        // What a dialect drops is still said, in the description.
        if !pattern {
            assert!(
                buku.contains("pattern"),
                "{api}: the pattern is described: {buku}"
            );
        }
        if !maximum {
            assert!(
                cuti.contains("14"),
                "{api}: the maximum is described: {cuti}"
            );
        }
    }
    // Whatever the model was shown, the call is checked against the canonical schema.
    let cx = examples::hr::Session::new("K-001", examples::hr::Peran::Karyawan).context(
        std::sync::Arc::new(examples::hr::domain::Db::in_memory().unwrap()),
    );
    for bad in [
        r#"{"mulai": "besok", "hari": 2}"#,
        r#"{"mulai": "2026-02-30", "hari": 2}"#,
        r#"{"mulai": "2026-12-21", "hari": 15}"#,
    ] {
        let err = set.call(&cx, "ajukan-cuti", bad).blocking().unwrap_err();
        assert!(
            matches!(err, ToolError::InvalidArguments(_)),
            "{bad}: {err:?}"
        );
    }
    for bad in [
        r#"{"isbn": "123"}"#,
        r#"{"isbn": "9780000000000000000000"}"#,
    ] {
        let err = set.call(&cx, "detail-buku", bad).blocking().unwrap_err();
        assert!(
            matches!(err, ToolError::InvalidArguments(_)),
            "{bad}: {err:?}"
        );
    }
}
