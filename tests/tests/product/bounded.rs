//! A result larger than its tool's bound (`#[tool(max_result_chars = ..)]`) reaches the model
//! in every API as the bound's worth of text and a notice saying it was cut; a result within the
//! bound reaches it whole.

use serde_json::json;
use tool_runtime::agent::{Agent, Finished};
use tool_runtime::provider::{Api, Message, Request, Turn};
use tool_runtime::testing::TestModel;
use tool_runtime::{Context, ToolSet, tool};

/// About 2 MB of attendance rows, or `rows` of them.
#[tool(
    description = "Export the attendance log of every employee as JSON rows; use when HR asks for the raw attendance data.",
    max_result_chars = 20_000
)]
fn export_attendance(
    #[arg(description = "How many rows to export", range = 1..=100_000)] rows: u32,
) -> Vec<String> {
    (0..rows)
        .map(|i| {
            format!(
                "K-{:04},2026-03-{:02},08:0{},17:0{}",
                i % 1000,
                1 + i % 28,
                i % 10,
                i % 10
            )
        })
        .collect()
}

#[test]
fn a_2_mb_result_reaches_the_model_as_its_bound_and_a_notice_in_every_api() {
    let tools = ToolSet::new([export_attendance::tool()]).unwrap();
    let whole = serde_json::to_string(&export_attendance(65_000)).unwrap();
    assert!(whole.len() > 2_000_000, "{}", whole.len());
    for api in [
        Api::OPENAI_CHAT,
        Api::OPENAI_RESPONSES,
        Api::ANTHROPIC,
        Api::GEMINI,
        Api::BEDROCK_CONVERSE,
    ] {
        let model = TestModel::scripted(
            api,
            [
                Turn::call("export_attendance", json!({"rows": 65_000})),
                Turn::call("export_attendance", json!({"rows": 10})),
                Turn::text("done"),
            ],
        );
        let request = Request::new("model").tools(&tools);
        let finished = pollster::block_on(model.run(
            &Agent::new(&tools),
            &Context::new(),
            "Export the attendance.",
            &request,
        ))
        .unwrap();
        assert!(matches!(finished, Finished::Answered { .. }), "{api:?}");
        let requests = model.requests();
        let result = |i: usize| match requests[i].messages.last() {
            Some(Message::Results(r)) => r[0].text.clone(),
            other => panic!("{api:?}: {other:?}"),
        };
        let cut = result(1);
        let (shown, notice) = cut.split_at(cut.char_indices().nth(20_000).unwrap().0);
        assert!(whole.starts_with(shown), "{api:?}: the start of the result");
        assert!(
            notice.contains(&format!("{} characters", whole.chars().count()))
                && notice.contains("first 20000 are shown"),
            "{api:?}: {notice}"
        );
        assert!(notice.len() < 300, "{api:?}: {notice}");
        let small = result(2);
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&small).unwrap(),
            json!(export_attendance(10)),
            "{api:?}: within the bound, whole"
        );
    }
}
