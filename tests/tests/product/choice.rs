//! The tool-choice harness (`choice::run`) on the library's border messages. The model is a
//! keyword stand-in, so these tests check the harness, not a model's judgement: that each border
//! message is sent with the exported tools, that the pick is read from each provider's response
//! format, and that a wrong pick, a missing ask-back and a failed request are reported as such.

use serde_json::{Value, json};
use tool_runtime::choice::{self, Expect, Picked};
use tool_runtime::provider::{Api, CallArguments, ToolCall, Turn};

/// A response calling `tool`, or answering in text when `tool` is `None`, in `target`'s format
/// (written by the test kit).
fn response(target: Api, tool: Option<&str>) -> Value {
    let turn = match tool {
        Some(t) => Turn::calls([ToolCall::new(
            Some("call_1".into()),
            t,
            CallArguments::Value(json!({})),
        )])
        .with_text("Saya cek dulu."),
        None => Turn::text("Judul atau penulis bukunya apa?"),
    };
    target.provider().write_response(&turn).unwrap()
}

/// A keyword stand-in for a model: "ISBN" picks `detail-buku` (`cari-buku` when `confused`),
/// "telat"/"denda" pick `cek-denda`, the bare "cari buku" asks back, anything else picks
/// `cari-buku`. It answers in `target`'s response format.
fn keyword_model(
    target: Api,
    confused: bool,
) -> impl FnMut(&'static str, &[Value]) -> std::future::Ready<Result<Value, String>> {
    move |message: &'static str, tools: &[Value]| {
        assert!(!tools.is_empty(), "the exported tools are passed along");
        let tool = if message.contains("ISBN") {
            Some(if confused { "cari-buku" } else { "detail-buku" })
        } else if message.contains("telat") || message.contains("denda") {
            Some("cek-denda")
        } else if message == "cari buku" {
            None
        } else {
            Some("cari-buku")
        };
        std::future::ready(Ok(response(target, tool)))
    }
}

const TARGETS: [Api; 4] = [
    Api::OPENAI_CHAT,
    Api::OPENAI_RESPONSES,
    Api::ANTHROPIC,
    Api::GEMINI,
];

#[test]
fn the_harness_reads_the_pick_of_every_border_message_in_every_format() {
    let set = examples::perpustakaan::tool_set();
    for target in TARGETS {
        let report = pollster::block_on(choice::run(
            &set,
            target,
            examples::perpustakaan::BORDER_MESSAGES,
            keyword_model(target, false),
        ))
        .unwrap();
        assert!(report.wrong().is_empty(), "{target:?}: {report}");
        assert_eq!(report.outcomes.len(), 5);
        // Each outcome is the pick read from this format, not the expectation copied over.
        let picks: Vec<&Picked> = report.outcomes.iter().map(|o| &o.picked).collect();
        assert_eq!(
            picks,
            [
                &Picked::Tool("cari-buku".into()),
                &Picked::Tool("detail-buku".into()),
                &Picked::Tool("cek-denda".into()),
                &Picked::Tool("cek-denda".into()),
                &Picked::NoTool,
            ],
            "{target:?}"
        );
    }
}

#[test]
fn a_wrong_pick_is_reported_with_what_was_picked() {
    let set = examples::perpustakaan::tool_set();
    let report = pollster::block_on(choice::run(
        &set,
        Api::ANTHROPIC,
        examples::perpustakaan::BORDER_MESSAGES,
        keyword_model(Api::ANTHROPIC, true),
    ))
    .unwrap();
    let wrong = report.wrong();
    assert_eq!(wrong.len(), 1);
    assert_eq!(wrong[0].case.expect, Expect::Tool("detail-buku"));
    assert_eq!(wrong[0].picked, Picked::Tool("cari-buku".into()));
    let text = report.to_string();
    assert!(
        text.contains("4 of 5") && text.contains("expected `detail-buku`, got `cari-buku`"),
        "{text}"
    );
}

#[test]
fn a_failed_request_is_an_error_outcome_not_a_pass() {
    let set = examples::perpustakaan::tool_set();
    let failing =
        |_: &'static str, _: &[Value]| std::future::ready(Err::<Value, _>("rate limited"));
    let report = pollster::block_on(choice::run(
        &set,
        Api::GEMINI,
        examples::perpustakaan::BORDER_MESSAGES,
        failing,
    ))
    .unwrap();
    assert_eq!(report.wrong().len(), 5);
}
