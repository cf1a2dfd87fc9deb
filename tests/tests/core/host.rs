//! What the host controls: injected context, permissions, approval, model-facing vs app-facing
//! output, annotations. Each test would fail if its rule were broken.

use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::json;
use tool_runtime::{
    Content, Context, Disclosure, Grants, ModelOutput, ToolArg, ToolError, ToolSet, Violation,
    ViolationKind, tool,
};

/// Who is calling: set by the host from its login, never by the model.
struct Session {
    nik: String,
}

#[derive(Serialize, schemars::JsonSchema)]
struct SisaCuti {
    nik: String,
    sisa: u32,
}

#[tool(
    description = "Ambil sisa kuota cuti karyawan yang sedang login.",
    requires = "hr.leave.read",
    read_only
)]
fn sisa_cuti_sesi(#[ctx] session: &Session) -> SisaCuti {
    SisaCuti {
        nik: session.nik.clone(),
        sisa: 7,
    }
}

#[tool(
    description = "Ambil status reimbursement karyawan yang sedang login.",
    requires = "hr.reimburse.read"
)]
fn status_reimburse(#[ctx] session: &Session) -> String {
    format!("{}: diproses", session.nik)
}

static AJUKAN_RAN: AtomicUsize = AtomicUsize::new(0);
/// The tests that count runs of `ajukan_cuti` take turns.
static COUNTING: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[derive(ToolArg, Serialize, Deserialize, Debug, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Jenis {
    Tahunan,
    Sakit,
}

#[tool(
    description = "Ajukan cuti untuk karyawan yang sedang login; mengubah data cuti.",
    requires = "hr.leave.request",
    destructive,
    title = "Ajukan cuti"
)]
fn ajukan_cuti(
    #[ctx] session: &Session,
    #[arg(description = "Jumlah hari", range = 1..=14)] hari: u32,
    #[arg(description = "Jenis cuti; tahunan bila tidak disebut", default = Jenis::Tahunan)] jenis: Jenis,
) -> String {
    AJUKAN_RAN.fetch_add(1, Ordering::SeqCst);
    format!("{} mengajukan {hari} hari cuti {jenis:?}", session.nik)
}

static PINDAH_RAN: AtomicUsize = AtomicUsize::new(0);

/// A rule the schema cannot say: the target is not the source.
fn bukan_ruang_sama(ruang: &String) -> Vec<Violation> {
    if ruang == "R-1" {
        vec![Violation::rule(
            "",
            "a room other than R-1, where the meeting is",
            ruang,
        )]
    } else {
        Vec::new()
    }
}

#[tool(
    description = "Pindahkan rapat ke ruang lain; mengubah jadwal.",
    destructive
)]
fn pindah_rapat(
    #[arg(description = "Ruang tujuan", length = 1..=8, validate = bukan_ruang_sama)] ruang: String,
) -> String {
    PINDAH_RAN.fetch_add(1, Ordering::SeqCst);
    format!("rapat pindah ke {ruang}")
}

#[tool(
    description = "Hapus catatan sementara; boleh tanpa persetujuan.",
    destructive,
    needs_approval = false
)]
fn hapus_draf() -> bool {
    true
}

#[derive(Serialize, schemars::JsonSchema)]
struct Cuaca {
    kota: String,
    suhu: i32,
    ikon: String,
    mentah: String,
}

fn ringkas(c: &Cuaca) -> ModelOutput {
    ModelOutput::text(format!("{}: {}°C", c.kota, c.suhu)).and_image_url(&c.ikon)
}

fn sensor(c: &Cuaca) -> Result<serde_json::Value, String> {
    if c.kota == "rahasia" {
        return Err("tidak bisa disensor".into());
    }
    Ok(json!({ "kota": c.kota, "suhu": c.suhu }))
}

#[tool(description = "Ambil cuaca terkini satu kota.", to_model = ringkas, redact = sensor, read_only, open_world)]
fn cuaca(#[arg(description = "Nama kota", length = 2..=40)] kota: String) -> Cuaca {
    Cuaca {
        kota,
        suhu: 31,
        ikon: "https://example.invalid/cerah.png".into(),
        mentah: "{...}".into(),
    }
}

fn set() -> ToolSet {
    ToolSet::new([
        sisa_cuti_sesi::tool(),
        status_reimburse::tool(),
        ajukan_cuti::tool(),
        hapus_draf::tool(),
        cuaca::tool(),
    ])
    .unwrap()
}

fn karyawan(grants: &[&str]) -> Context {
    Context::new()
        .with(Session {
            nik: "K-001".into(),
        })
        .with(Grants::new(grants.iter().copied()))
}

#[test]
fn context_parameters_are_not_in_the_schema_and_cannot_be_overridden() {
    let schema = sisa_cuti_sesi::tool().input_schema();
    assert_eq!(schema["properties"], json!({}));
    let cx = karyawan(&["hr.leave.read"]);
    let ok = set().call(&cx, "sisa_cuti_sesi", "{}").blocking().unwrap();
    assert_eq!(ok.value()["nik"], "K-001");
    // The model tries to read someone else's data.
    let err = set()
        .call(&cx, "sisa_cuti_sesi", r#"{"nik": "K-002"}"#)
        .blocking()
        .unwrap_err();
    let ToolError::InvalidArguments(v) = err else {
        panic!("{err:?}")
    };
    assert!(matches!(v.0[0].kind, ViolationKind::Unknown { .. }));
    let err = set()
        .call(&cx, "sisa_cuti_sesi", r#"{"session": {"nik": "K-002"}}"#)
        .blocking()
        .unwrap_err();
    assert!(matches!(err, ToolError::InvalidArguments(_)));
}

#[test]
fn a_missing_context_value_is_a_clear_error() {
    let cx = Context::new().with(Grants::new(["hr.leave.read"]));
    let err = set()
        .call(&cx, "sisa_cuti_sesi", "{}")
        .blocking()
        .unwrap_err();
    assert!(
        matches!(err, ToolError::MissingContext { type_name } if type_name.ends_with("Session")),
        "{err}"
    );
}

#[test]
fn callers_see_and_call_only_what_they_are_granted() {
    let cx = karyawan(&["hr.leave.read"]);
    let visible = set().visible_to(&cx);
    let visible: Vec<_> = visible.names().collect();
    assert_eq!(visible, ["sisa_cuti_sesi", "hapus_draf", "cuaca"]);
    // A guessed name is still refused, before anything runs.
    let err = set()
        .call(&cx, "status_reimburse", "{}")
        .blocking()
        .unwrap_err();
    assert_eq!(
        err,
        ToolError::Forbidden {
            tool: "status_reimburse".into(),
            missing: vec!["hr.reimburse.read".to_owned()]
        }
    );
    assert!(!err.model_message().contains("reimburse.read"));
    // No grants at all: nothing that requires one.
    let anonymous = Context::new().with(Session {
        nik: "K-001".into(),
    });
    assert!(matches!(
        set().call(&anonymous, "sisa_cuti_sesi", "{}").blocking(),
        Err(ToolError::Forbidden { .. })
    ));
}

#[test]
fn destructive_tools_wait_for_approval_and_run_exactly_once() {
    let _turn = COUNTING.lock().unwrap_or_else(|e| e.into_inner());
    let set = set();
    let cx = karyawan(&["hr.leave.request"]);
    let before = AJUKAN_RAN.load(Ordering::SeqCst);
    let err = set
        .call(&cx, "ajukan_cuti", r#"{"hari": 3}"#)
        .blocking()
        .unwrap_err();
    let ToolError::ApprovalRequired(pending) = err else {
        panic!("{err:?}")
    };
    assert_eq!(
        pending.arguments,
        json!({"hari": 3, "jenis": "tahunan"}),
        "validated, defaults filled"
    );
    assert_eq!(
        AJUKAN_RAN.load(Ordering::SeqCst),
        before,
        "nothing ran before approval"
    );
    let copy = pending.clone();
    let out = set.resume(&cx, &pending.ticket).blocking().unwrap();
    assert_eq!(out.value(), "K-001 mengajukan 3 hari cuti Tahunan");
    assert_eq!(AJUKAN_RAN.load(Ordering::SeqCst), before + 1);
    assert!(matches!(
        set.resume(&cx, &copy.ticket).blocking(),
        Err(ToolError::NotPending { .. })
    ));
    assert_eq!(
        AJUKAN_RAN.load(Ordering::SeqCst),
        before + 1,
        "nothing runs twice"
    );
}

#[test]
fn rejected_and_invalid_calls_never_run() {
    let _turn = COUNTING.lock().unwrap_or_else(|e| e.into_inner());
    let set = set();
    let cx = karyawan(&["hr.leave.request"]);
    let before = AJUKAN_RAN.load(Ordering::SeqCst);
    let err = set
        .call(&cx, "ajukan_cuti", r#"{"hari": 30}"#)
        .blocking()
        .unwrap_err();
    assert!(
        matches!(err, ToolError::InvalidArguments(_)),
        "invalid arguments are not sent for approval"
    );
    let Err(ToolError::ApprovalRequired(pending)) =
        set.call(&cx, "ajukan_cuti", r#"{"hari": 2}"#).blocking()
    else {
        panic!()
    };
    assert_eq!(pollster::block_on(set.reject(&pending.ticket)), Ok(true));
    assert!(matches!(
        set.resume(&cx, &pending.ticket).blocking(),
        Err(ToolError::NotPending { .. })
    ));
    assert_eq!(AJUKAN_RAN.load(Ordering::SeqCst), before);
}

#[test]
fn a_call_its_own_rules_refuse_is_never_put_to_a_person() {
    let set = ToolSet::new([pindah_rapat::tool()]).unwrap();
    let cx = karyawan(&[]);
    let err = set
        .call(&cx, "pindah_rapat", r#"{"ruang": "R-1"}"#)
        .blocking()
        .unwrap_err();
    let ToolError::InvalidArguments(v) = &err else {
        panic!("refused before the hold, got {err:?}")
    };
    assert_eq!(v.0.len(), 1, "{v}");
    assert_eq!(v.0[0].path.to_string(), "ruang", "{v}");
    assert!(v.to_string().contains("a room other than R-1"), "{v}");
    // A call its rules accept is held as before, and runs once approved.
    let Err(ToolError::ApprovalRequired(pending)) = set
        .call(&cx, "pindah_rapat", r#"{"ruang": "R-2"}"#)
        .blocking()
    else {
        panic!("a good call waits for approval")
    };
    assert_eq!(
        PINDAH_RAN.load(Ordering::SeqCst),
        0,
        "checking runs nothing"
    );
    let out = set.resume(&cx, &pending.ticket).blocking().unwrap();
    assert_eq!(out.value(), "rapat pindah ke R-2");
    assert_eq!(PINDAH_RAN.load(Ordering::SeqCst), 1);
}

#[test]
fn approval_is_checked_with_the_permissions_of_the_resuming_caller() {
    let set = set();
    let Err(ToolError::ApprovalRequired(pending)) = set
        .call(
            &karyawan(&["hr.leave.request"]),
            "ajukan_cuti",
            r#"{"hari": 1}"#,
        )
        .blocking()
    else {
        panic!()
    };
    let err = set
        .resume(&karyawan(&[]), &pending.ticket)
        .blocking()
        .unwrap_err();
    assert!(matches!(err, ToolError::Forbidden { .. }));
    // The refused resume did not use the call up: the permitted caller can still resume it.
    let _turn = COUNTING.lock().unwrap_or_else(|e| e.into_inner());
    assert!(
        set.resume(&karyawan(&["hr.leave.request"]), &pending.ticket)
            .blocking()
            .is_ok()
    );
}

#[test]
fn a_destructive_tool_can_opt_out_of_approval() {
    assert!(hapus_draf::tool().annotations().destructive == Some(true));
    assert!(!hapus_draf::tool().needs_approval());
    assert_eq!(
        set()
            .call(&Context::new(), "hapus_draf", "{}")
            .blocking()
            .unwrap()
            .value(),
        &json!(true)
    );
}

#[test]
fn the_model_gets_the_summary_and_the_app_gets_everything() {
    let out = set()
        .call(&Context::new(), "cuaca", r#"{"kota": "Surabaya"}"#)
        .blocking()
        .unwrap();
    assert_eq!(
        out.value()["mentah"],
        "{...}",
        "the application receives the raw source"
    );
    assert_eq!(
        out.model().0,
        [
            Content::Text {
                text: "Surabaya: 31°C".into()
            },
            Content::ImageUrl {
                url: "https://example.invalid/cerah.png".into()
            }
        ]
    );
    assert_eq!(
        out.for_display(),
        Some(&json!({"kota": "Surabaya", "suhu": 31}))
    );
}

#[test]
fn redaction_fails_closed() {
    let out = set()
        .call(&Context::new(), "cuaca", r#"{"kota": "rahasia"}"#)
        .blocking()
        .unwrap();
    assert_eq!(out.for_display(), None);
    assert!(matches!(out.disclosure(), Disclosure::Withheld { .. }));
}

#[test]
fn without_hooks_the_model_gets_the_output_as_json() {
    let cx = karyawan(&["hr.leave.read"]);
    let out = set().call(&cx, "sisa_cuti_sesi", "{}").blocking().unwrap();
    assert_eq!(
        out.model().0,
        [Content::Text {
            text: r#"{"nik":"K-001","sisa":7}"#.into()
        }]
    );
    assert_eq!(out.for_display(), Some(out.value()));
}

#[test]
fn annotations_are_declared_hints() {
    let a = ajukan_cuti::tool().annotations();
    assert_eq!(
        (a.title.as_deref(), a.destructive, a.read_only),
        (Some("Ajukan cuti"), Some(true), None)
    );
    let c = cuaca::tool().annotations();
    assert_eq!(
        (c.read_only, c.open_world, c.destructive),
        (Some(true), Some(true), None)
    );
    assert_eq!(ajukan_cuti::tool().requires(), ["hr.leave.request"]);
}
