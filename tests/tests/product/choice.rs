//! The tool-choice harness (`choice::run`) on the library's border messages. The model is a
//! keyword stand-in, so these tests check the harness, not a model's judgement: that each border
//! message is sent with the exported tools, that the pick is read from each provider's response
//! format, and that a wrong pick, a missing ask-back and a failed request are reported as such.

use serde_json::{Value, json};
use tool_runtime::Api;
use tool_runtime::choice::{self, Expect, Picked};

/// A response calling `tool`, or answering in text when `tool` is `None`, in `target`'s format.
fn response(target: Api, tool: Option<&str>) -> Value {
    match (target, tool) {
        (Api::OPENAI_CHAT, Some(t)) => {
            json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": t, "arguments": "{}"}}]}, "finish_reason": "tool_calls"}]})
        }
        (Api::OPENAI_CHAT, None) => {
            json!({"choices": [{"message": {"role": "assistant", "content": "Judul atau penulis bukunya apa?"}, "finish_reason": "stop"}]})
        }
        (Api::OPENAI_RESPONSES, Some(t)) => {
            json!({"status": "completed", "output": [{"type": "function_call", "call_id": "c1", "name": t, "arguments": "{}"}]})
        }
        (Api::OPENAI_RESPONSES, None) => {
            json!({"status": "completed", "output": [{"type": "message", "content": [{"type": "output_text", "text": "Judul bukunya apa?"}]}]})
        }
        (Api::ANTHROPIC, Some(t)) => {
            json!({"content": [{"type": "text", "text": "Saya cek dulu."}, {"type": "tool_use", "id": "toolu_1", "name": t, "input": {}}], "stop_reason": "tool_use"})
        }
        (Api::ANTHROPIC, None) => {
            json!({"content": [{"type": "text", "text": "Judul bukunya apa?"}], "stop_reason": "end_turn"})
        }
        (Api::GEMINI, Some(t)) => {
            json!({"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": t, "args": {}}}]}, "finishReason": "STOP"}]})
        }
        (Api::GEMINI, None) => {
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Judul bukunya apa?"}]}, "finishReason": "STOP"}]})
        }
        (Api::BEDROCK_CONVERSE, Some(t)) => {
            json!({"output": {"message": {"role": "assistant", "content": [{"text": "Saya cek dulu."}, {"toolUse": {"toolUseId": "tooluse_1", "name": t, "input": {}}}]}}, "stopReason": "tool_use"})
        }
        (Api::BEDROCK_CONVERSE, None) => {
            json!({"output": {"message": {"role": "assistant", "content": [{"text": "Judul bukunya apa?"}]}}, "stopReason": "end_turn"})
        }
        _ => unreachable!("every model API has a stand-in"),
    }
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
