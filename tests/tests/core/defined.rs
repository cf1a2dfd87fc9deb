//! Tools defined at run time (`Tool::define`): in the same set as `#[tool]` functions, checked by
//! the same validator with the same repair messages, refused when their schema cannot be
//! enforced exactly, and under the same permissions, approval, exports and lints.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use tool_runtime::{
    Annotations, Api, Context, DefineProblem, Grants, Tool, ToolError, ToolSet, lint, tool,
};

#[tool(
    description = "Hitung porsi katering: jumlah peserta ditambah 5 cadangan. Mengembalikan jumlah porsi."
)]
fn porsi(#[arg(description = "Jumlah peserta", range = 1..=500)] jumlah_peserta: u32) -> u32 {
    jumlah_peserta + 5
}

/// The same tool as `porsi`, defined at run time from `porsi`'s own schema; counts its runs.
fn porsi_defined(runs: Arc<AtomicUsize>) -> Tool {
    Tool::define(
        "porsi_remote",
        porsi::tool().spec_description(),
        porsi::tool().input_schema().clone(),
    )
    .output_schema(json!({"type": "integer", "minimum": 6}))
    .build_fn(move |args| {
        let runs = runs.clone();
        async move {
            runs.fetch_add(1, Ordering::SeqCst);
            Ok(json!(args["jumlah_peserta"].as_u64().unwrap_or(0) + 5))
        }
    })
    .unwrap()
}

fn call(set: &ToolSet, cx: &Context, name: &str, args: &str) -> Result<Value, ToolError> {
    set.call(cx, name, args).blocking().map(|o| o.into_value())
}

#[test]
fn a_defined_tool_runs_beside_a_declared_one_and_is_refused_the_same_bad_arguments() {
    let runs = Arc::new(AtomicUsize::new(0));
    let set = ToolSet::new([porsi::tool()])
        .unwrap()
        .with_tools([porsi_defined(runs.clone())])
        .unwrap();
    let cx = Context::new();
    assert_eq!(set.names().collect::<Vec<_>>(), ["porsi", "porsi_remote"]);
    let args = r#"{"jumlah_peserta": 25}"#;
    assert_eq!(call(&set, &cx, "porsi", args).unwrap(), json!(30));
    assert_eq!(call(&set, &cx, "porsi_remote", args).unwrap(), json!(30));
    assert_eq!(runs.load(Ordering::SeqCst), 1);

    // "25" + 5: the string is refused before the handler runs, with the message `#[tool]` gets.
    for bad in [
        r#"{"jumlah_peserta": "25"}"#,
        r#"{"jumlah_peserta": 0}"#,
        r#"{"jumlah_peserta": 25, "catatan": "x"}"#,
        r#"{}"#,
        "not json",
    ] {
        let declared = call(&set, &cx, "porsi", bad).unwrap_err();
        let defined = call(&set, &cx, "porsi_remote", bad).unwrap_err();
        assert!(
            matches!(defined, ToolError::InvalidArguments(_)),
            "{bad}: {defined:?}"
        );
        assert_eq!(
            set.model_message(&defined),
            set.model_message(&declared),
            "{bad}"
        );
    }
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "no bad call reached the handler"
    );
}

#[test]
fn defaults_are_filled_in_and_a_result_off_its_output_schema_is_a_tool_error() {
    let tool = Tool::define(
        "gema",
        "Ulangi teks. Mengembalikan teks dan jumlah ulangan.",
        json!({
            "type": "object",
            "properties": {
                "teks": {"type": "string", "description": "Teks"},
                "kali": {"type": "integer", "minimum": 1, "default": 2, "description": "Berapa kali"}
            },
            "required": ["teks"],
            "additionalProperties": false
        }),
    )
    .output_schema(json!({
        "type": "object",
        "properties": {"teks": {"type": "string"}, "kali": {"type": "integer"}},
        "required": ["teks", "kali"],
        "additionalProperties": false
    }))
    .build_fn(|args| async move {
        if args["teks"] == "rusak" {
            return Ok(json!({"teks": "rusak", "kali": "dua"}));
        }
        Ok(args)
    })
    .unwrap();
    let set = ToolSet::new([tool]).unwrap();
    let cx = Context::new();
    assert_eq!(
        call(&set, &cx, "gema", r#"{"teks": "halo"}"#).unwrap(),
        json!({"teks": "halo", "kali": 2})
    );
    let err = call(&set, &cx, "gema", r#"{"teks": "rusak"}"#).unwrap_err();
    let ToolError::Failed { message, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(
        message.contains("output schema") && message.contains("kali"),
        "{message}"
    );
}

#[test]
fn a_schema_the_validator_cannot_enforce_is_refused_with_every_problem_and_where() {
    let err = Tool::define(
        "bad name!",
        " ",
        json!({
            "type": "object",
            "properties": {
                "a": {"allOf": [{"type": "string"}]},
                "b": {"$ref": "https://example.com/schema.json"},
                "c": {"$ref": "#/$defs/Loop"},
                "d": {"type": "object", "additionalProperties": {"type": "string"}},
                "e": {"$ref": "#/$defs/Ok", "maxLength": 3}
            },
            "$defs": {
                "Loop": {"oneOf": [{"$ref": "#/$defs/Loop"}, {"type": "null"}]},
                "Ok": {"type": "string"}
            }
        }),
    )
    .output_schema(json!({"type": "object", "patternProperties": {"^x": {}}}))
    .build_fn(|_| async { Ok(Value::Null) })
    .expect_err("refused");
    let at = |p: &DefineProblem| match p {
        DefineProblem::Input(p) => format!("input {}", p.at),
        DefineProblem::Output(p) => format!("output {}", p.at),
        DefineProblem::Name(_) => "name".into(),
        DefineProblem::Description(_) => "description".into(),
        other => format!("{other:?}"),
    };
    let mut found: Vec<String> = err.problems.iter().map(at).collect();
    found.sort();
    assert_eq!(
        found,
        [
            "description",
            "input /$defs/Loop",
            "input /properties/a",
            "input /properties/b",
            "input /properties/d",
            "input /properties/e",
            "name",
            "output ",
        ],
        "{err}"
    );
    let text = err.to_string();
    for expected in [
        "`allOf` is not supported",
        "remote `$ref` \"https://example.com/schema.json\" is not fetched",
        "refers to itself",
        "`additionalProperties` must be a boolean",
        "rules beside `$ref` (`maxLength`)",
        "`patternProperties` is not supported",
    ] {
        assert!(text.contains(expected), "{expected}: {text}");
    }
}

#[test]
fn draft_07_definitions_are_read_and_a_recursive_type_is_accepted() {
    let tool = Tool::define(
        "pohon",
        "Hitung simpul pohon kategori. Mengembalikan jumlah simpul.",
        json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"akar": {"$ref": "#/definitions/Simpul"}},
            "required": ["akar"],
            "definitions": {
                "Simpul": {
                    "type": "object",
                    "properties": {
                        "nama": {"type": "string"},
                        "anak": {"type": "array", "items": {"$ref": "#/definitions/Simpul"}}
                    },
                    "required": ["nama"],
                    "additionalProperties": false
                }
            }
        }),
    )
    .build_fn(|args| async move {
        fn count(v: &Value) -> u64 {
            1 + v["anak"]
                .as_array()
                .map_or(0, |a| a.iter().map(count).sum())
        }
        Ok(json!(count(&args["akar"])))
    })
    .unwrap();
    assert!(tool.input_schema().get("$defs").is_some());
    assert!(tool.input_schema().get("$schema").is_none());
    let set = ToolSet::new([tool]).unwrap();
    let cx = Context::new();
    let tree = r#"{"akar": {"nama": "a", "anak": [{"nama": "b"}, {"nama": "c", "anak": []}]}}"#;
    assert_eq!(call(&set, &cx, "pohon", tree).unwrap(), json!(3));
    let deep_bad = r#"{"akar": {"nama": "a", "anak": [{"nama": 1}]}}"#;
    let err = call(&set, &cx, "pohon", deep_bad).unwrap_err();
    assert!(
        set.model_message(&err).contains("akar.anak[0].nama"),
        "{}",
        set.model_message(&err)
    );
}

#[test]
fn permissions_and_approval_apply_to_defined_tools() {
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = runs.clone();
    let tool = Tool::define(
        "hapus_data",
        "Hapus data pelanggan. Mengembalikan jumlah baris yang dihapus.",
        json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}),
    )
    .requires(["crm.delete"])
    .needs_approval(true)
    .annotations(Annotations {
        destructive: Some(true),
        title: Some("Hapus data".into()),
        ..Annotations::default()
    })
    .build_fn(move |_| {
        let runs = counted.clone();
        async move { Ok(json!(runs.fetch_add(1, Ordering::SeqCst) + 1)) }
    })
    .unwrap();
    let set = ToolSet::new([tool]).unwrap();
    let stranger = Context::new();
    assert!(set.visible_to(&stranger).is_empty());
    let err = call(&set, &stranger, "hapus_data", r#"{"id": "P-1"}"#).unwrap_err();
    assert!(matches!(err, ToolError::Forbidden { ref missing, .. } if missing == &["crm.delete"]));

    let admin = Context::new().with(Grants::new(["crm.delete"]));
    let err = call(&set, &admin, "hapus_data", r#"{"id": "P-1"}"#).unwrap_err();
    let ToolError::ApprovalRequired(pending) = err else {
        panic!("{err:?}")
    };
    assert_eq!(runs.load(Ordering::SeqCst), 0, "held, not run");
    let out = set.resume(&admin, &pending.ticket).blocking().unwrap();
    assert_eq!(out.value(), &json!(1));
    assert!(set.resume(&admin, &pending.ticket).blocking().is_err());
    assert_eq!(runs.load(Ordering::SeqCst), 1, "ran once");
}

#[test]
fn exports_and_lints_cover_defined_tools() {
    let quiet = Tool::define(
        "cari",
        "Cari sesuatu.",
        json!({"type": "object", "properties": {"q": {"type": "string", "description": "Kata kunci"}}, "required": ["q"]}),
    )
    .build_fn(|_| async { Ok(json!([])) })
    .unwrap();
    let set = ToolSet::new([porsi::tool()])
        .unwrap()
        .with_tools([quiet])
        .unwrap();
    for api in [
        Api::OPENAI_CHAT,
        Api::ANTHROPIC,
        Api::GEMINI,
        Api::BEDROCK_CONVERSE,
    ] {
        let exported = serde_json::to_string(&set.export(api).unwrap()).unwrap();
        assert!(
            exported.contains("\"cari\"") && exported.contains("\"porsi\""),
            "{api:?}: {exported}"
        );
    }
    let lints = lint::check(&set);
    assert!(
        lints.iter().any(|l| l.tool == "cari" && l.id == "no-when"),
        "{lints:?}"
    );
    // `allow_lint` silences one lint for a defined tool, as for a `#[tool]`.
    let silenced = Tool::define(
        "cari_diam",
        "Cari sesuatu.",
        json!({"type": "object", "properties": {"q": {"type": "string", "description": "Kata kunci"}}, "required": ["q"]}),
    )
    .allow_lint("no-when", "dipakai hanya oleh agen internal")
    .build_fn(|_| async { Ok(json!([])) })
    .unwrap();
    let lints = lint::check(&ToolSet::new([silenced]).unwrap());
    assert!(!lints.iter().any(|l| l.id == "no-when"), "{lints:?}");
    // The catalogs list it beside the declared tool, with its arguments and permissions.
    let catalog = tool_runtime::docs::markdown(&set);
    assert!(
        catalog.contains("cari") && catalog.contains("Kata kunci"),
        "{catalog}"
    );
    let entries = tool_runtime::docs::json(&set);
    assert!(entries.to_string().contains("\"cari\""), "{entries}");
    // A name already in the set is refused.
    let again = Tool::define(
        "porsi",
        "Lagi. Mengembalikan angka.",
        json!({"type": "object"}),
    )
    .build_fn(|_| async { Ok(json!(0)) })
    .unwrap();
    assert!(set.with_tools([again]).is_err());
}

/// A schema from elsewhere may be held to patterns that run in linear time: one that needs a
/// backtracking engine is refused, naming it; the host's own keep them.
#[test]
fn linear_patterns_only_refuses_a_pattern_that_backtracks() {
    let schema = serde_json::json!({"type": "object", "properties": {"s": {"type": "string",
        "description": "A code", "pattern": "^(?=[A-Z])([A-Z]+)+$"}}});
    let run = |_: serde_json::Value| async { Ok(serde_json::json!("ok")) };
    let err = tool_runtime::Tool::define("code", "Check a code.", schema.clone())
        .linear_patterns_only(true)
        .build_fn(run)
        .unwrap_err();
    assert!(
        err.to_string().contains("needs a backtracking engine"),
        "{err}"
    );
    assert!(
        tool_runtime::Tool::define("code", "Check a code.", schema)
            .build_fn(run)
            .is_ok()
    );
    let linear = serde_json::json!({"type": "object", "properties": {"s": {"type": "string",
        "description": "A code", "pattern": "^([A-Z]+ ?)+$"}}});
    assert!(
        tool_runtime::Tool::define("code", "Check a code.", linear)
            .linear_patterns_only(true)
            .build_fn(run)
            .is_ok(),
        "nested repetition runs in linear time: kept"
    );
}
