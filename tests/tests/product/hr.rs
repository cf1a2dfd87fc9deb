//! The HR assistant's rules, on a fresh in-memory database per test.

use std::sync::Arc;

use examples::hr::domain::Db;
use examples::hr::{Peran, Session, tool_set};
use serde_json::{Value, json};
use tool_runtime::{CallOutput, Context, ToolError, ViolationKind};

fn cx(nik: &str, peran: Peran) -> Context {
    Session::new(nik, peran).context(Arc::new(Db::in_memory().unwrap()))
}

fn call(cx: &Context, tool: &str, args: &str) -> Result<Value, ToolError> {
    tool_set()
        .call(cx, tool, args)
        .blocking()
        .map(CallOutput::into_value)
}

#[test]
fn no_tool_lets_the_model_name_the_employee() {
    for tool in tool_set().iter() {
        let props = tool.input_schema()["properties"].as_object().unwrap();
        assert!(
            !props.contains_key("nik"),
            "{} must not take a NIK",
            tool.name()
        );
    }
    let sari = cx("K-001", Peran::Karyawan);
    let err = call(&sari, "cek-status-reimburse", r#"{"nik": "K-002"}"#).unwrap_err();
    let ToolError::InvalidArguments(v) = err else {
        panic!("{err:?}")
    };
    assert!(matches!(v.0[0].kind, ViolationKind::Unknown { .. }));
}

#[test]
fn each_employee_sees_their_own_data() {
    let sari = call(&cx("K-001", Peran::Karyawan), "cek-sisa-cuti", "{}").unwrap();
    assert_eq!(
        sari,
        json!({"status": "ok", "nama": "Sari", "sisa_cuti": 7, "cuti_terpakai": 5})
    );
    let budi = call(&cx("K-002", Peran::Karyawan), "cek-sisa-cuti", "{}").unwrap();
    assert_eq!(budi["sisa_cuti"], 0);
}

#[test]
fn an_unknown_employee_is_data_in_every_read_tool() {
    let ghost = cx("K-999", Peran::Karyawan);
    for tool in ["cek-sisa-cuti", "cek-status-reimburse", "cek-riwayat-cuti"] {
        let out = call(&ghost, tool, "{}").unwrap();
        assert_eq!(out["status"], "karyawan-tidak-ditemukan", "{tool}");
    }
    assert_eq!(
        call(&ghost, "cek-status-reimburse", "{}").unwrap()["daftar"],
        Value::Null
    );
}

#[test]
fn an_empty_list_is_not_not_found() {
    let budi = call(&cx("K-002", Peran::Karyawan), "cek-status-reimburse", "{}").unwrap();
    assert_eq!(budi, json!({"status": "ok", "daftar": []}));
    let history = call(
        &cx("K-001", Peran::Karyawan),
        "cek-riwayat-cuti",
        r#"{"tahun": 2025}"#,
    )
    .unwrap();
    assert_eq!(history["tanggal"], json!([]));
    assert_eq!(history["status"], "ok");
}

#[test]
fn a_manager_sees_the_teams_leave_but_not_its_reimbursements() {
    let dewi = cx("M-001", Peran::Manajer);
    let team = call(&dewi, "cek-cuti-tim", "{}").unwrap();
    assert_eq!(team["anggota"].as_array().unwrap().len(), 2);
    assert!(
        !team.to_string().contains("R-88"),
        "no reimbursement data in the team view"
    );
    // The reimbursement tool answers for the manager only; nothing takes a team member's NIK.
    assert_eq!(
        call(&dewi, "cek-status-reimburse", "{}").unwrap()["daftar"],
        json!([])
    );
    let visible = tool_set().visible_to(&dewi);
    let visible: Vec<_> = visible.names().collect();
    assert!(visible.contains(&"cek-cuti-tim"));
}

#[test]
fn an_employee_cannot_call_the_team_tool_even_by_name() {
    let sari = cx("K-001", Peran::Karyawan);
    assert!(
        !tool_set()
            .visible_to(&sari)
            .names()
            .any(|n| n == "cek-cuti-tim")
    );
    let err = call(&sari, "cek-cuti-tim", "{}").unwrap_err();
    assert!(matches!(
        err,
        ToolError::Forbidden { ref tool, .. } if tool == "cek-cuti-tim"
    ));
}

#[test]
fn booking_leave_waits_for_approval_and_happens_once() {
    let sari = cx("K-001", Peran::Karyawan);
    let set = tool_set();
    let Err(ToolError::ApprovalRequired(pending)) = set
        .call(
            &sari,
            "ajukan-cuti",
            r#"{"mulai": "2026-12-21", "hari": 2}"#,
        )
        .blocking()
    else {
        panic!("booking leave must wait for approval")
    };
    assert_eq!(
        call(&sari, "cek-sisa-cuti", "{}").unwrap()["sisa_cuti"],
        7,
        "nothing booked yet"
    );
    let out = set.resume(&sari, &pending.ticket).blocking().unwrap();
    assert_eq!(
        out.value(),
        &json!({"status": "diajukan", "sisa_cuti": 5, "bentrok": null})
    );
    assert!(matches!(
        set.resume(&sari, &pending.ticket).blocking(),
        Err(ToolError::NotPending { .. })
    ));
    assert_eq!(
        call(&sari, "cek-sisa-cuti", "{}").unwrap()["sisa_cuti"],
        5,
        "booked exactly once"
    );
}

#[test]
fn a_booking_outside_the_period_is_refused_before_anyone_approves_it() {
    let sari = cx("K-001", Peran::Karyawan);
    let tahun = examples::hr::tahun_ini();
    // 29 February of a leap year past next year: a date the schema accepts, the rules do not.
    let kabisat = (tahun + 2..)
        .find(|y| y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))
        .unwrap();
    let err = tool_set()
        .call(
            &sari,
            "ajukan-cuti",
            format!(r#"{{"mulai": "{kabisat}-02-29", "hari": 2}}"#),
        )
        .blocking()
        .unwrap_err();
    let ToolError::InvalidArguments(v) = &err else {
        panic!("refused before the hold, got {err:?}")
    };
    assert_eq!(v.0[0].path.to_string(), "mulai", "{v}");
    assert!(
        v.to_string()
            .contains(&format!("a date from {} to {}", tahun - 1, tahun + 1)),
        "{v}"
    );
}

#[test]
fn sibling_tools_name_each_other_in_their_boundaries() {
    let set = tool_set();
    let desc = |n: &str| set.get(n).unwrap().description().to_owned();
    assert!(desc("cek-sisa-cuti").contains("cek-riwayat-cuti"));
    assert!(desc("cek-sisa-cuti").contains("cek-status-reimburse"));
    assert!(desc("cek-riwayat-cuti").contains("cek-sisa-cuti"));
    assert!(desc("cek-status-reimburse").contains("cek-sisa-cuti"));
}
