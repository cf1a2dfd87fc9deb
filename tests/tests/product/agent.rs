//! The agent loop over recorded responses of the five model APIs: calls read with their ids,
//! run through the tool set, answered in the API's format (ids in order, `is_error` exactly for
//! failures, images where the format takes them), approvals deferred and resumed once.

use std::sync::Arc;

use examples::hr::{Peran, Session, domain::Db};
use proptest::prelude::*;
use serde_json::{Value, json};
use tool_runtime::agent::{
    Agent, Conversation, Decision, Finished, Outcome, read_turn, render, run_calls,
};
use tool_runtime::provider::{Api, CallArguments, Message, Request, ToolCall, Turn};
use tool_runtime::{Context, ToolSet};

use crate::checked;

/// A turn of four tool calls, written for each API from its reference: Chat Completions
/// (platform.openai.com/docs/api-reference/chat/object), Responses
/// (platform.openai.com/docs/api-reference/responses/object), Anthropic Messages
/// (docs.anthropic.com/en/api/messages), Gemini (ai.google.dev/api/generate-content#response-body),
/// Bedrock Converse (docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html:
/// `output.message.content[].toolUse` with `toolUseId`, `name`, `input`; `stopReason: tool_use`).
/// Each is in the file named by its API's id.
fn recorded(api: Api) -> Value {
    let path = format!(
        "{}/recorded/agent/{}.json",
        env!("CARGO_MANIFEST_DIR"),
        api.id()
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn sari() -> Context {
    Session::new("K-001", Peran::Karyawan).context(Arc::new(Db::in_memory().unwrap()))
}

/// A response of `api` holding these calls (id, name, arguments), written by its provider.
fn response(api: Api, calls: &[(String, String, Value)]) -> Value {
    let turn = Turn::calls(calls.iter().map(|(id, name, args)| {
        ToolCall::new(
            Some(id.clone()),
            name.clone(),
            CallArguments::Value(args.clone()),
        )
    }));
    api.provider().write_response(&turn).unwrap()
}

/// A response of `api` with a final text, written by its provider.
fn text_response(api: Api, text: &str) -> Value {
    api.provider().write_response(&Turn::text(text)).unwrap()
}

/// The tool results in these messages of `api`'s format, read back by its provider, one list
/// per turn of results: call id, and whether it reports a failure (where the format has no
/// flag, OpenAI's, a result that is not the tool's JSON output).
fn results_of(api: Api, messages: &[Value]) -> Vec<Vec<(String, bool)>> {
    let mut conversation = Conversation::new(api);
    conversation.messages = messages.to_vec();
    let http = conversation.request(&Request::new("model")).unwrap();
    let sent = api.provider().read_request(&http).unwrap();
    sent.messages
        .into_iter()
        .filter_map(|m| match m {
            Message::Results(results) => Some(results),
            _ => None,
        })
        .map(|results| {
            results
                .into_iter()
                .map(|r| {
                    let error = r.is_error.unwrap_or(!r.text.starts_with('{'));
                    (r.call_id.unwrap_or_default(), error)
                })
                .collect()
        })
        .collect()
}

/// Every tool result in these messages.
fn answered(api: Api, messages: &[Value]) -> Vec<(String, bool)> {
    results_of(api, messages).concat()
}

/// The results of the conversation's last turn of results.
fn last_results(api: Api, messages: &[Value]) -> Vec<(String, bool)> {
    results_of(api, messages).pop().unwrap_or_default()
}

#[test]
fn recorded_turns_are_answered_once_each_in_order_with_errors_flagged() {
    let tools = examples::hr::tool_set();
    let cx = sari();
    for &api in Api::BUILT_IN {
        let turn = read_turn(api, &recorded(api)).unwrap();
        let ids: Vec<String> = turn.calls.iter().map(|c| c.id.clone().unwrap()).collect();
        assert_eq!(ids.len(), 4, "{api}");
        assert_eq!(
            turn.append.len(),
            if api == Api::OPENAI_RESPONSES { 5 } else { 1 },
            "{api}"
        );
        let outcomes = pollster::block_on(run_calls(&tools, &cx, &turn.calls, 4));
        let answers: Vec<_> = outcomes
            .into_iter()
            .map(|o| match o {
                Outcome::Answered(a) => a,
                other => panic!("{api}: nothing here waits: {other:?}"),
            })
            .collect();
        let rendered = render(api, &answers);
        let got = answered(api, &rendered);
        let expected: Vec<(String, bool)> =
            ids.iter().cloned().zip([false, true, true, true]).collect();
        assert_eq!(
            got, expected,
            "{api}: ids in order, errors exactly for failures"
        );
        // The repair messages are what the model can act on.
        let text = serde_json::to_string(&rendered).unwrap();
        assert!(text.contains("tahun"), "{api}: names the bad field: {text}");
        assert!(
            text.contains("hitung-lembur"),
            "{api}: names the unknown tool"
        );
        assert!(text.contains("Sari"), "{api}: the good call's output");
    }
}

#[test]
fn images_go_where_the_format_takes_them() {
    let tools = ToolSet::new([examples::cuaca::cuaca_terkini::tool()]).unwrap();
    let call = ToolCall::new(
        Some("c1".into()),
        "cuaca-terkini",
        CallArguments::Value(json!({"kota": "Surabaya"})),
    );
    let outcomes = pollster::block_on(run_calls(&tools, &Context::new(), &[call], 1));
    let Outcome::Answered(answer) = &outcomes[0] else {
        panic!()
    };
    let icon = "https://cdn.worldweatheronline.com/images/wsymbols01_png_64/wsymbol_0001_sunny.png";
    let anthropic = &render(Api::ANTHROPIC, std::slice::from_ref(answer))[0]["content"][0];
    assert_eq!(
        anthropic["content"][1],
        json!({"type": "image", "source": {"type": "url", "url": icon}})
    );
    let responses = &render(Api::OPENAI_RESPONSES, std::slice::from_ref(answer))[0];
    assert_eq!(
        responses["output"][1],
        json!({"type": "input_image", "image_url": icon})
    );
    let chat = &render(Api::OPENAI_CHAT, std::slice::from_ref(answer))[0];
    assert!(
        chat["content"]
            .as_str()
            .unwrap()
            .contains(&format!("[image: {icon}]"))
    );
    let gemini = &render(Api::GEMINI, std::slice::from_ref(answer))[0]["parts"][0];
    assert!(
        gemini["functionResponse"]["response"]["output"]
            .as_str()
            .unwrap()
            .contains(&format!("[image: {icon}]"))
    );
    // Converse image blocks carry bytes, not URLs: the image is named in the text.
    let bedrock = &render(Api::BEDROCK_CONVERSE, std::slice::from_ref(answer))[0]["content"][0];
    assert!(
        bedrock["toolResult"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains(&format!("[image: {icon}]"))
    );
}

#[tool_runtime::tool(
    name = "tambah",
    description = "Jumlahkan dua bilangan bulat dan kembalikan hasilnya; alat uji agen."
)]
fn tambah(
    #[arg(description = "Bilangan pertama", range = -1000..=1000)] a: i32,
    #[arg(description = "Bilangan kedua", range = -1000..=1000)] b: i32,
) -> i32 {
    a + b
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// However many calls a response holds, and whatever is wrong with them, the results are
    /// that many, with exactly the calls' ids, in the calls' order.
    #[test]
    fn n_calls_get_n_results_with_their_ids(
        calls in proptest::collection::vec(
            (0usize..4, -2000i64..2000, any::<bool>()), 0..7),
        api in prop::sample::select(Api::BUILT_IN.to_vec()),
        salt in "[a-z0-9]{1,8}",
    ) {
        let calls: Vec<(String, String, Value)> = calls
            .into_iter()
            .enumerate()
            .map(|(i, (kind, n, text))| {
                let name = if kind == 3 { "kurang" } else { "tambah" }.to_owned();
                let b = if text { json!(n.to_string()) } else { json!(n) };
                (format!("id-{salt}-{i}"), name, json!({"a": 1, "b": b}))
            })
            .collect();
        let tools = ToolSet::new([tambah::tool()]).unwrap();
        let turn = read_turn(api, &response(api, &calls)).unwrap();
        let outcomes = pollster::block_on(run_calls(&tools, &Context::new(), &turn.calls, 3));
        let answers: Vec<_> = outcomes.into_iter().map(|o| match o {
            Outcome::Answered(a) => a,
            _ => unreachable!(),
        }).collect();
        let rendered = render(api, &answers);
        let ids: Vec<String> = answered(api, &rendered).into_iter().map(|(id, _)| id).collect();
        let expected: Vec<String> = calls.iter().map(|(id, ..)| id.clone()).collect();
        prop_assert_eq!(ids, expected);
        for (answer, (_, name, args)) in answers.iter().zip(&calls) {
            let valid = name == "tambah" && args["b"].as_i64().is_some_and(|b| (-1000..=1000).contains(&b));
            prop_assert_eq!(answer.is_error, !valid, "{:?}", answer);
        }
    }
}

#[test]
fn a_held_call_is_resumed_from_stored_state_and_runs_once() {
    let db = Arc::new(Db::in_memory().unwrap());
    let cx = Session::new("K-001", Peran::Karyawan).context(db.clone());
    let tools = examples::hr::tool_set();
    let agent = Agent::new(&tools);
    for (i, &api) in Api::BUILT_IN.iter().enumerate() {
        let turn = response(
            api,
            &[
                ("k1".into(), "cek-sisa-cuti".into(), json!({})),
                (
                    "k2".into(),
                    "ajukan-cuti".into(),
                    json!({"mulai": format!("2027-0{}-01", 1 + i), "hari": 1}),
                ),
            ],
        );
        let answer = text_response(api, "Sudah.");
        let mut send = checked::replying(api, &tools, [turn, answer]);
        let mut conversation = Conversation::new(api);
        conversation.push_user("Ajukan cuti satu hari, dan berapa sisa cuti saya?");
        let Finished::Paused(paused) =
            pollster::block_on(agent.run(&cx, conversation, &mut send)).unwrap()
        else {
            panic!("{api}: the booking waits for approval")
        };
        let waiting: Vec<_> = paused.waiting().collect();
        assert_eq!(waiting.len(), 1);
        assert_eq!(waiting[0].tool, "ajukan-cuti");
        assert_eq!(waiting[0].ticket.len(), 32, "{api}: 128 random bits");
        // Stored as text (another process would read this), then resumed.
        let stored = serde_json::to_string(&paused).unwrap();
        let paused: tool_runtime::agent::Paused = serde_json::from_str(&stored).unwrap();
        let before = db.karyawan("K-001").unwrap().unwrap().sisa_cuti;
        let finished =
            pollster::block_on(agent.resume(&cx, paused.clone(), |_| Decision::Approve, &mut send))
                .unwrap();
        let Finished::Answered {
            reply,
            conversation,
            ..
        } = finished
        else {
            panic!("{api}")
        };
        assert_eq!(reply.text.as_deref(), Some("Sudah."));
        assert_eq!(
            db.karyawan("K-001").unwrap().unwrap().sisa_cuti,
            before - 1,
            "{api}: booked once"
        );
        // The results come right before the final answer.
        let results = last_results(api, &conversation.messages);
        assert_eq!(
            results,
            [("k1".to_owned(), false), ("k2".to_owned(), false)],
            "{api}"
        );
        // The same stored state resumed again: the store gave the call out already, and the
        // model is told the truth: it was not run.
        let send_again = checked::always(api, &tools, text_response(api, "."));
        let Finished::Answered { conversation, .. } =
            pollster::block_on(agent.resume(&cx, paused, |_| Decision::Approve, send_again))
                .unwrap()
        else {
            panic!()
        };
        assert_eq!(
            db.karyawan("K-001").unwrap().unwrap().sisa_cuti,
            before - 1,
            "{api}: not twice"
        );
        let text = serde_json::to_string(&conversation.messages).unwrap();
        assert!(
            text.contains("Tindakan ini tidak dijalankan"),
            "{api}: {text}"
        );
    }
}

/// The README's flow: a run pauses, the pause is written to a file, and every `Agent` and tool
/// set is dropped; later a new tool set and a new `Agent` read the file and resume. The sets
/// share one store, so the approved call runs, once; a set with a store of its own (the
/// default) has nothing held, and runs nothing.
#[test]
fn the_readmes_pause_to_disk_and_resume_runs_the_approved_call_once() {
    let db = Arc::new(Db::in_memory().unwrap());
    let cx = Session::new("K-001", Peran::Karyawan).context(db.clone());
    let path = std::env::temp_dir().join(format!("paused-{}.json", std::process::id()));
    let api = Api::ANTHROPIC;
    let store = Arc::new(tool_runtime::MemoryApprovals::new());
    {
        let tools = examples::hr::tool_set().with_approvals(store.clone());
        let call = response(
            api,
            &[(
                "b1".into(),
                "ajukan-cuti".into(),
                json!({"mulai": "2027-05-03", "hari": 2}),
            )],
        );
        let send = checked::replying(api, &tools, [call]);
        let mut conversation = Conversation::new(api);
        conversation.push_user("Ajukan cuti dua hari mulai 3 Mei.");
        let finished = pollster::block_on(Agent::new(&tools).run(&cx, conversation, send));
        let Ok(Finished::Paused(paused)) = finished else {
            panic!("{finished:?}")
        };
        std::fs::write(&path, serde_json::to_string(&paused).unwrap()).unwrap();
    }
    let before = db.karyawan("K-001").unwrap().unwrap().sisa_cuti;
    let paused: tool_runtime::agent::Paused =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let _ = std::fs::remove_file(&path);
    // Another set, with its own store: the call is not held there, and nothing runs.
    let elsewhere = examples::hr::tool_set();
    let send = checked::replying(api, &elsewhere, [text_response(api, ".")]);
    let finished = pollster::block_on(Agent::new(&elsewhere).resume(
        &cx,
        paused.clone(),
        |_| Decision::Approve,
        send,
    ));
    assert!(
        matches!(finished, Ok(Finished::Answered { .. })),
        "{finished:?}"
    );
    assert_eq!(db.karyawan("K-001").unwrap().unwrap().sisa_cuti, before);
    let tools = examples::hr::tool_set().with_approvals(store);
    let done = text_response(api, "Sudah diajukan.");
    let send = checked::replying(api, &tools, [done]);
    let finished = pollster::block_on(Agent::new(&tools).resume(
        &cx,
        paused.clone(),
        |_| Decision::Approve,
        send,
    ));
    let Ok(Finished::Answered { conversation, .. }) = finished else {
        panic!("{finished:?}")
    };
    assert_eq!(
        db.karyawan("K-001").unwrap().unwrap().sisa_cuti,
        before - 2,
        "the approved booking ran"
    );
    assert_eq!(
        last_results(api, &conversation.messages),
        [("b1".to_owned(), false)]
    );
    // Rejected after the fact, or approved again: nothing more runs.
    let send = checked::replying(api, &tools, [text_response(api, ".")]);
    let again =
        pollster::block_on(Agent::new(&tools).resume(&cx, paused, |_| Decision::Approve, send));
    assert!(matches!(again, Ok(Finished::Answered { .. })));
    assert_eq!(db.karyawan("K-001").unwrap().unwrap().sisa_cuti, before - 2);
}

static PASANGAN: std::sync::LazyLock<tokio::sync::Barrier> =
    std::sync::LazyLock::new(|| tokio::sync::Barrier::new(2));

#[tool_runtime::tool(
    name = "tunggu-pasangan",
    description = "Tunggu sampai panggilan pasangannya juga berjalan; alat uji untuk panggilan bersamaan."
)]
async fn tunggu_pasangan() -> bool {
    PASANGAN.wait().await;
    true
}

#[test]
fn the_calls_of_one_turn_run_at_once() {
    // Each call waits for the other: they finish only if they run concurrently.
    let tools = ToolSet::new([tunggu_pasangan::tool()]).unwrap();
    let calls: Vec<ToolCall> = (0..2)
        .map(|i| {
            ToolCall::new(
                Some(format!("p{i}")),
                "tunggu-pasangan",
                CallArguments::Text("{}".into()),
            )
        })
        .collect();
    let outcomes = pollster::block_on(run_calls(&tools, &Context::new(), &calls, 2));
    assert_eq!(outcomes.len(), 2);
}

#[test]
fn gemini_calls_without_ids_are_answered_by_name_in_order() {
    let raw = json!({"candidates": [{"finishReason": "STOP", "content": {"role": "model", "parts": [
        {"functionCall": {"name": "tambah", "args": {"a": 1, "b": 2}}},
        {"functionCall": {"name": "tambah", "args": {"a": 1, "b": "dua"}}}]}}]});
    let turn = read_turn(Api::GEMINI, &raw).unwrap();
    assert!(turn.calls.iter().all(|c| c.id.is_none()));
    let tools = ToolSet::new([tambah::tool()]).unwrap();
    let outcomes = pollster::block_on(run_calls(&tools, &Context::new(), &turn.calls, 2));
    let answers: Vec<_> = outcomes
        .into_iter()
        .map(|o| match o {
            Outcome::Answered(a) => a,
            _ => unreachable!(),
        })
        .collect();
    let parts = &render(Api::GEMINI, &answers)[0]["parts"];
    assert_eq!(
        parts[0]["functionResponse"],
        json!({"name": "tambah", "response": {"output": 3}})
    );
    assert!(parts[1]["functionResponse"].get("id").is_none());
    assert!(parts[1]["functionResponse"]["response"]["error"].is_string());
}

/// Every Chat tool call gets its result, or OpenAI refuses the next request: one that is not a
/// function (`custom`, or no type) is answered with an error; arguments sent as an object are
/// read, not a reason to fail the turn.
#[test]
fn chat_calls_that_are_not_functions_are_answered_and_object_arguments_are_read() {
    let raw = json!({"choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant",
        "content": null, "tool_calls": [
            {"id": "c1", "type": "custom", "custom": {"name": "tambah", "input": "1 + 2"}},
            {"id": "c2", "function": {"name": "tambah", "arguments": "{\"a\":1,\"b\":2}"}},
            {"id": "c3", "type": "function", "function": {"name": "tambah", "arguments": {"a": 2, "b": 3}}},
            {"id": "c4", "type": "function", "function": {"name": "tambah", "arguments": "{\"a\":1,\"b\":1}"}}]}}]});
    let turn = read_turn(Api::OPENAI_CHAT, &raw).unwrap();
    assert_eq!(turn.calls.len(), 4);
    let tools = ToolSet::new([tambah::tool()]).unwrap();
    let outcomes = pollster::block_on(run_calls(&tools, &Context::new(), &turn.calls, 2));
    let answers: Vec<_> = outcomes
        .into_iter()
        .map(|o| match o {
            Outcome::Answered(a) => a,
            _ => unreachable!(),
        })
        .collect();
    let rendered = render(Api::OPENAI_CHAT, &answers);
    let ids: Vec<_> = rendered.iter().map(|m| &m["tool_call_id"]).collect();
    assert_eq!(ids, ["c1", "c2", "c3", "c4"]);
    let errors: Vec<_> = answers.iter().map(|a| a.is_error).collect();
    assert_eq!(errors, [true, true, false, false]);
    let text = |i: usize| rendered[i]["content"].as_str().unwrap().to_owned();
    assert!(text(0).contains("a function call"), "{}", text(0));
    assert!(text(0).contains("custom"), "{}", text(0));
    assert_eq!((text(2), text(3)), ("5".into(), "2".into()));
    // The pick of an eval reads the same calls.
    assert!(matches!(
        tool_runtime::choice::picked(Api::OPENAI_CHAT, &raw),
        tool_runtime::choice::Picked::Error(_)
    ));
}

/// A reasoning model's turn goes back exactly as it came (thinking blocks and their signatures,
/// thought parts and `thoughtSignature`s, reasoning items with `encrypted_content`, Bedrock's
/// `reasoningContent` with its signature, in order), followed by the results; its thoughts are
/// not the answer.
#[test]
fn a_reasoning_models_turn_goes_back_unchanged() {
    let tools = examples::hr::tool_set();
    let cx = sari();
    // Each API: what it requires back, byte for byte, right after the user's message (from its
    // reference), and the id its result is answered under (Gemini's call had none: by name).
    type Required = fn(&Value) -> Vec<Value>;
    let cases: [(Api, Required, &str); 4] = [
        (
            Api::OPENAI_RESPONSES,
            |call| call["output"].as_array().unwrap().clone(),
            "call_Think1",
        ),
        (
            Api::ANTHROPIC,
            |call| vec![json!({"role": "assistant", "content": call["content"]})],
            "toolu_01Think",
        ),
        (
            Api::GEMINI,
            |call| vec![call["candidates"][0]["content"].clone()],
            "",
        ),
        (
            Api::BEDROCK_CONVERSE,
            |call| vec![call["output"]["message"].clone()],
            "tooluse_Think1",
        ),
    ];
    for (api, required, result_id) in cases {
        let call = examples::ekstraksi::recorded(api.id(), "agent-reasoning-call");
        let answer = examples::ekstraksi::recorded(api.id(), "agent-reasoning-answer");
        let sent = std::cell::RefCell::new(Vec::new());
        // (The check also requires the turn back exactly as it came.)
        let mut replies = checked::replying(api, &tools, [call.clone(), answer]);
        let send = |c: &Conversation| {
            sent.borrow_mut().push(c.messages.clone());
            replies(c)
        };
        let mut conversation = Conversation::new(api);
        conversation.push_user("Berapa sisa cuti saya?");
        let finished = pollster::block_on(Agent::new(&tools).run(&cx, conversation, send));
        let Ok(Finished::Answered { reply, .. }) = finished else {
            panic!("{api}: {finished:?}")
        };
        assert_eq!(
            reply.text.as_deref(),
            Some("Sisa cuti tahunan Sari 9 hari."),
            "{api}: the answer without the thoughts"
        );
        let sent = sent.into_inner();
        assert_eq!(sent.len(), 2, "{api}");
        let second = &sent[1];
        let required = required(&call);
        let echoed = &second[1..1 + required.len()];
        for (got, want) in echoed.iter().zip(&required) {
            assert_eq!(
                serde_json::to_string(got).unwrap(),
                serde_json::to_string(want).unwrap(),
                "{api}"
            );
        }
        let text = serde_json::to_string(echoed).unwrap();
        for opaque in [
            "signature",
            "redacted_thinking",
            "redactedContent",
            "thoughtSignature",
            "encrypted_content",
        ] {
            let in_reply = serde_json::to_string(&call).unwrap().contains(opaque);
            assert_eq!(text.contains(opaque), in_reply, "{api}: {opaque}");
        }
        // Then the tool's result, answered under the call's id.
        let results = &second[1 + required.len()..];
        assert_eq!(
            answered(api, results),
            [(result_id.to_owned(), false)],
            "{api}"
        );
    }
}

#[test]
fn the_agent_loop_runs_a_tool_defined_at_run_time_beside_a_declared_one() {
    // `kali` has `tambah`'s schema, defined at run time (as a remote MCP tool is).
    let kali = tool_runtime::Tool::define(
        "kali",
        "Kalikan dua bilangan bulat dan kembalikan hasilnya; alat uji agen.",
        tambah::tool().input_schema().clone(),
    )
    .build_fn(|args| async move {
        Ok(json!(
            args["a"].as_i64().unwrap_or(0) * args["b"].as_i64().unwrap_or(0)
        ))
    })
    .unwrap();
    let tools = ToolSet::new([tambah::tool()])
        .unwrap()
        .with_tools([kali])
        .unwrap();
    for &api in Api::BUILT_IN {
        let calls = [
            (
                "t1".to_owned(),
                "tambah".to_owned(),
                json!({"a": 6, "b": 7}),
            ),
            ("k1".to_owned(), "kali".to_owned(), json!({"a": 6, "b": 7})),
            (
                "k2".to_owned(),
                "kali".to_owned(),
                json!({"a": 6, "b": "7"}),
            ),
        ];
        let turn = read_turn(api, &response(api, &calls)).unwrap();
        let outcomes = pollster::block_on(run_calls(&tools, &Context::new(), &turn.calls, 3));
        let answers: Vec<_> = outcomes
            .into_iter()
            .map(|o| match o {
                Outcome::Answered(a) => a,
                other => panic!("{api}: {other:?}"),
            })
            .collect();
        let flags: Vec<bool> = answers.iter().map(|a| a.is_error).collect();
        assert_eq!(flags, [false, false, true], "{api}: {answers:?}");
        let rendered = serde_json::to_string(&render(api, &answers)).unwrap();
        assert!(
            rendered.contains("42") && rendered.contains("13"),
            "{api}: {rendered}"
        );
        assert!(
            rendered.contains("`b`"),
            "{api}: the repair message names the field: {rendered}"
        );
    }
}
