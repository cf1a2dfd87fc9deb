//! Structured output: every failure kind from every provider's response format, and the retry
//! driver's limits.

use std::cell::RefCell;

use examples::ekstraksi::{Lowongan, Paper, aturan_paper, recorded};
use serde_json::{Value, json};
use tool_runtime::Api;
use tool_runtime::provider::Finish;
use tool_runtime::structured::{self, Attempt, Extractor, Failure};

/// The year the recorded replies were made, passed to the paper's rule (no clock is read).
const TAHUN_REKAMAN: u16 = 2026;

/// One recorded reply read as a `Paper`, with the paper's rule for the recordings' year.
fn paper(api: Api, raw: &serde_json::Value) -> Result<Paper, Failure> {
    Extractor::<Paper>::new(api)
        .rules(|p| aturan_paper(p, TAHUN_REKAMAN))
        .parse(raw)
}

/// The extraction driver for a `Paper`, with the same rule.
fn extract_paper<F, Fut, E>(
    api: Api,
    max_retries: usize,
    send: F,
) -> impl std::future::Future<Output = Result<structured::Extracted<Paper>, structured::Failed>>
where
    F: FnMut(Attempt) -> Fut,
    Fut: std::future::Future<Output = Result<serde_json::Value, E>>,
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    Extractor::<Paper>::new(api)
        .max_retries(max_retries)
        .rules(|p| aturan_paper(p, TAHUN_REKAMAN))
        .run(send)
}

const PROVIDERS: [(Api, &str); 5] = [
    (Api::OPENAI_CHAT, "openai-chat"),
    (Api::OPENAI_RESPONSES, "openai-responses"),
    (Api::ANTHROPIC, "anthropic"),
    (Api::GEMINI, "gemini"),
    (Api::BEDROCK_CONVERSE, "bedrock-converse"),
];

fn kind(r: &Result<impl std::fmt::Debug, Failure>) -> &'static str {
    match r {
        Ok(_) => "ok",
        Err(Failure::NotJson { .. }) => "not_json",
        Err(Failure::Invalid(_)) => "invalid",
        Err(Failure::RuleBroken(_)) => "rule",
        Err(Failure::Truncated { .. }) => "truncated",
        Err(Failure::Refused { .. }) => "refused",
        Err(_) => "other",
    }
}

#[test]
fn every_failure_kind_is_recognised_in_every_provider_format() {
    let expected = [
        ("good", "ok"),
        ("broken_json", "not_json"),
        ("wrong_shape", "invalid"),
        ("rule_violation", "rule"),
        ("truncated", "truncated"),
        ("refused", "refused"),
    ];
    for (provider, dir) in PROVIDERS {
        for (case, want) in expected {
            let paper = paper(provider, &recorded(dir, &format!("paper-{case}")));
            assert_eq!(kind(&paper), want, "{dir} paper-{case}: {paper:?}");
            let lowongan = structured::parse::<Lowongan>(
                provider,
                &recorded(dir, &format!("lowongan-{case}")),
            );
            assert_eq!(kind(&lowongan), want, "{dir} lowongan-{case}: {lowongan:?}");
        }
    }
}

#[test]
fn a_wrong_shape_lists_every_violation_for_the_repair() {
    for (provider, dir) in PROVIDERS {
        let Err(failure) = paper(provider, &recorded(dir, "paper-wrong_shape")) else {
            panic!()
        };
        let Failure::Invalid(v) = &failure else {
            panic!("{failure:?}")
        };
        let paths: Vec<String> = v.iter().map(|x| x.path.to_string()).collect();
        assert_eq!(
            paths,
            ["penulis", "tahun", "metode", "dataset_publik"],
            "{dir}"
        );
        let repair = failure.repair_message().unwrap();
        for p in &paths {
            assert!(repair.contains(&format!("`{p}`")), "{repair}");
        }
    }
}

#[test]
fn the_business_rule_names_the_field_and_the_value() {
    let Err(f) = paper(
        Api::ANTHROPIC,
        &recorded("anthropic", "paper-rule_violation"),
    ) else {
        panic!()
    };
    let repair = f.repair_message().unwrap();
    assert!(
        repair.contains("`tahun`") && repair.contains("received 2031"),
        "{repair}"
    );
    let Err(f) =
        structured::parse::<Lowongan>(Api::GEMINI, &recorded("gemini", "lowongan-rule_violation"))
    else {
        panic!()
    };
    assert!(f.repair_message().unwrap().contains("\"2026-02-30\""));
}

#[test]
fn nullable_fields_are_the_way_out_for_missing_data() {
    let raw = json!({"choices": [{"message": {"content": r#"{"judul": "X", "tahun": null, "metode": [], "dataset_publik": "tidak_jelas"}"#}, "finish_reason": "stop"}]});
    let paper: Paper = structured::parse(Api::OPENAI_CHAT, &raw).unwrap();
    assert_eq!((paper.tahun, paper.metode.len()), (None, 0));
    // Field order follows declaration order in the schema the model is given.
    let schema = tool_runtime::structured::schema::<Paper>();
    let keys: Vec<_> = schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(keys, ["judul", "tahun", "metode", "dataset_publik"]);
    assert_eq!(
        schema["required"],
        json!(["judul", "metode", "dataset_publik"])
    );
}

#[test]
fn replies_are_read_before_they_are_parsed() {
    let reply = structured::read_reply(
        Api::OPENAI_RESPONSES,
        &recorded("openai-responses", "paper-truncated"),
    )
    .unwrap();
    assert_eq!(
        reply.finish,
        Finish::Truncated {
            reason: "max_output_tokens".into()
        }
    );
    let reply = structured::read_reply(Api::GEMINI, &recorded("gemini", "paper-refused")).unwrap();
    assert_eq!(
        reply.finish,
        Finish::Refused {
            message: "SAFETY".into()
        }
    );
    assert!(matches!(
        paper(Api::ANTHROPIC, &json!({"unexpected": true})),
        Err(Failure::Unreadable { .. })
    ));
    // A JSON answer wrapped in a Markdown fence is still read.
    let fenced = json!({"content": [{"type": "text", "text": "```json\n{\"judul\": \"X\", \"tahun\": 2020, \"metode\": [], \"dataset_publik\": \"ya\"}\n```"}], "stop_reason": "end_turn"});
    assert!(paper(Api::ANTHROPIC, &fenced).is_ok());
}

/// A model client replaying recorded responses, recording what it was asked.
fn client<'a>(
    dir: &'a str,
    script: &'a [&'a str],
    log: &'a RefCell<Vec<Attempt>>,
) -> impl FnMut(Attempt) -> std::future::Ready<Result<Value, String>> + 'a {
    move |attempt: Attempt| {
        let i = log.borrow().len();
        log.borrow_mut().push(attempt);
        std::future::ready(
            script
                .get(i)
                .map(|n| recorded(dir, n))
                .ok_or_else(|| "no response".to_owned()),
        )
    }
}

#[test]
fn the_driver_repairs_and_succeeds() {
    for (provider, dir) in PROVIDERS {
        let log = RefCell::new(Vec::new());
        let got = pollster::block_on(extract_paper(
            provider,
            2,
            client(
                dir,
                &["paper-wrong_shape", "paper-rule_violation", "paper-good"],
                &log,
            ),
        ))
        .unwrap();
        assert_eq!(got.value.tahun, Some(2023));
        assert_eq!(got.attempts.len(), 3);
        let log = log.borrow();
        assert!(log[0].repair.is_none());
        assert!(log[1].repair.as_ref().unwrap().contains("`dataset_publik`"));
        assert!(log[2].repair.as_ref().unwrap().contains("`tahun`"));
    }
}

#[test]
fn the_driver_stops_at_the_limit() {
    let log = RefCell::new(Vec::new());
    let script = [
        "paper-broken_json",
        "paper-wrong_shape",
        "paper-rule_violation",
        "paper-good",
    ];
    let failed = pollster::block_on(extract_paper(
        Api::OPENAI_CHAT,
        2,
        client("openai-chat", &script, &log),
    ))
    .unwrap_err();
    assert_eq!(
        log.borrow().len(),
        3,
        "one request and two repairs, never a fourth"
    );
    assert!(matches!(failed.last, Failure::RuleBroken(_)));
    assert_eq!(failed.attempts.len(), 3);
}

#[test]
fn a_refusal_is_never_retried() {
    for (provider, dir) in PROVIDERS {
        let log = RefCell::new(Vec::new());
        let failed = pollster::block_on(extract_paper(
            provider,
            2,
            client(dir, &["paper-refused", "paper-good"], &log),
        ))
        .unwrap_err();
        assert!(matches!(failed.last, Failure::Refused { .. }), "{dir}");
        assert_eq!(
            log.borrow().len(),
            1,
            "{dir}: no second request after a refusal"
        );
        assert!(failed.last.repair_message().is_none());
    }
}

#[test]
fn truncation_asks_for_a_larger_budget_and_transport_errors_stop() {
    let log = RefCell::new(Vec::new());
    let got = pollster::block_on(structured::extract::<Lowongan, _, _, _>(
        Api::ANTHROPIC,
        2,
        client("anthropic", &["lowongan-truncated", "lowongan-good"], &log),
    ))
    .unwrap();
    assert_eq!(got.value.perusahaan, "PT Nusantara Data");
    let log = log.borrow();
    assert!(log[1].larger_budget && log[1].repair.is_none());

    let calls = RefCell::new(0);
    let failing = |_: Attempt| {
        *calls.borrow_mut() += 1;
        std::future::ready(Err::<Value, _>("connection reset"))
    };
    let failed = pollster::block_on(extract_paper(Api::GEMINI, 2, failing)).unwrap_err();
    assert!(matches!(failed.last, Failure::Transport { .. }));
    assert_eq!(*calls.borrow(), 1);
}

/// A reasoning model's reply: the thoughts (Gemini's `thought` parts, Anthropic's thinking and
/// redacted thinking, Responses' reasoning items, Bedrock's reasoning content) are not the answer.
#[test]
fn thoughts_are_not_the_answer() {
    for (api, dir, name) in [
        (Api::GEMINI, "gemini", "paper-thoughts"),
        (Api::ANTHROPIC, "anthropic", "paper-thinking"),
        (Api::OPENAI_RESPONSES, "openai-responses", "paper-reasoning"),
        (Api::BEDROCK_CONVERSE, "bedrock-converse", "paper-reasoning"),
    ] {
        let good = structured::read_reply(api, &recorded(dir, "paper-good")).unwrap();
        let reply = structured::read_reply(api, &recorded(dir, name)).unwrap();
        assert_eq!(reply, good, "{api}: the answer text alone, completed");
        assert_eq!(
            paper(api, &recorded(dir, name)).unwrap(),
            paper(api, &recorded(dir, "paper-good")).unwrap(),
            "{api}"
        );
    }
}

/// Chat Completions' content filter is a refusal: reported, never retried.
#[test]
fn a_content_filter_stop_is_a_refusal_and_is_not_retried() {
    let reply = structured::read_reply(
        Api::OPENAI_CHAT,
        &recorded("openai-chat", "paper-content_filter"),
    )
    .unwrap();
    assert_eq!(
        reply.finish,
        Finish::Refused {
            message: "content_filter".into()
        }
    );
    let log = RefCell::new(Vec::new());
    let got = pollster::block_on(extract_paper(
        Api::OPENAI_CHAT,
        2,
        client("openai-chat", &["paper-content_filter", "paper-good"], &log),
    ));
    let failed = got.unwrap_err();
    assert!(matches!(failed.last, Failure::Refused { .. }), "{failed}");
    assert_eq!(log.borrow().len(), 1, "no retry after a refusal");
}
