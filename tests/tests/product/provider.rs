//! The provider layer: requests written from one description in every API, responses and
//! streams the test kit writes read back the way real ones are, a sixth API from outside the
//! crate, and the test kit's own checks.

use futures_util::StreamExt;
use serde_json::{Value, json};
use tool_runtime::agent::{Agent, AgentError, Conversation, Finished, read_turn, render};
use tool_runtime::provider::{
    Api, CallArguments, Delta, Finish, Message, Request, ResponseStream, ToolAnswer, ToolCall,
    ToolChoice, Turn,
};
use tool_runtime::testing::{TestModel, TestModelError};
use tool_runtime::{Context, ToolSet, tool};

use examples::llama_cpp::LLAMA_CPP;

#[tool(
    name = "hitung-jumlah",
    description = "Jumlahkan dua bilangan bulat; alat uji penyedia."
)]
fn jumlah(
    #[arg(description = "Bilangan pertama", range = -1000..=1000)] a: i32,
    #[arg(description = "Bilangan kedua", range = -1000..=1000)] b: i32,
) -> i32 {
    a + b
}

fn call(id: &str, name: &str, arguments: Value) -> ToolCall {
    ToolCall::new(Some(id.into()), name, CallArguments::Value(arguments))
}

/// Turns of every kind a response holds.
fn turns() -> Vec<(&'static str, Turn)> {
    vec![
        ("text", Turn::text("Sisa cuti Anda 7 hari.")),
        (
            "one call",
            Turn::calls([call("c1", "hitung-jumlah", json!({"a": 2, "b": 3}))]),
        ),
        (
            "two calls after text",
            Turn::calls([
                call("c1", "hitung-jumlah", json!({"a": 2, "b": 3})),
                call("c2", "hitung-jumlah", json!({"a": 1, "b": "dua"})),
            ])
            .with_text("Saya hitung dulu."),
        ),
        (
            "thinking, then a call",
            Turn::calls([call("c9", "hitung-jumlah", json!({}))]).thinking("Perlu dijumlahkan."),
        ),
        (
            "cut off",
            Turn::text("Sisa cuti").finish(Finish::Truncated {
                reason: "length".into(),
            }),
        ),
    ]
}

/// What a response says, read as the agent loop reads it: calls, text, how it finished.
fn said(api: Api, raw: &Value) -> (Vec<ToolCall>, Option<String>, &'static str) {
    let turn = read_turn(api, raw).unwrap_or_else(|e| panic!("{api}: {e}: {raw}"));
    let finish = match turn.reply.finish {
        Finish::Completed => "completed",
        Finish::Truncated { .. } => "truncated",
        Finish::Refused { .. } => "refused",
        _ => "other",
    };
    (turn.calls, turn.reply.text, finish)
}

#[test]
fn a_written_response_reads_back_as_the_turn_it_holds() {
    for &api in Api::BUILT_IN {
        for (case, turn) in turns() {
            let raw = api.provider().write_response(&turn).unwrap();
            let (calls, text, finish) = said(api, &raw);
            assert_eq!(
                calls.iter().map(|c| (&c.id, &c.name)).collect::<Vec<_>>(),
                turn.calls
                    .iter()
                    .map(|c| (&c.id, &c.name))
                    .collect::<Vec<_>>(),
                "{api}, {case}"
            );
            for (got, want) in calls.iter().zip(&turn.calls) {
                let got = match &got.arguments {
                    CallArguments::Text(t) => serde_json::from_str(t).unwrap(),
                    CallArguments::Value(v) => v.clone(),
                    other => panic!("{other:?}"),
                };
                let CallArguments::Value(want) = &want.arguments else {
                    unreachable!()
                };
                assert_eq!(&got, want, "{api}, {case}");
            }
            assert_eq!(
                text, turn.text,
                "{api}, {case}: the text, without the thinking"
            );
            let want = match turn.finish {
                Finish::Truncated { .. } => "truncated",
                // A turn of calls stops for its calls: neither an answer nor a failure.
                _ if !turn.calls.is_empty() => finish,
                _ => "completed",
            };
            assert_eq!(finish, want, "{api}, {case}");
        }
    }
}

#[test]
fn a_written_stream_assembles_into_the_written_response() {
    for &api in Api::BUILT_IN {
        for (case, turn) in turns() {
            let events = api.provider().write_stream(&turn).unwrap();
            let mut stream = ResponseStream::new(api);
            let mut deltas = Vec::new();
            for e in &events {
                deltas.extend(
                    stream
                        .push(e)
                        .unwrap_or_else(|e| panic!("{api}, {case}: {e:?}")),
                );
            }
            let (assembled, rest) = stream.finish().unwrap();
            deltas.extend(rest);
            let whole = api.provider().write_response(&turn).unwrap();
            assert_eq!(said(api, &assembled), said(api, &whole), "{api}, {case}");
            // The calls were handed out as they completed, the text piece by piece.
            let streamed_calls: Vec<_> = deltas
                .iter()
                .filter_map(|d| match d {
                    Delta::Call(c) => Some(c.id.clone()),
                    _ => None,
                })
                .collect();
            let ids: Vec<_> = turn.calls.iter().map(|c| c.id.clone()).collect();
            assert_eq!(streamed_calls, ids, "{api}, {case}");
            let text: String = deltas
                .iter()
                .filter_map(|d| match d {
                    Delta::Text(t) => Some(t.as_str()),
                    _ => None,
                })
                .collect();
            assert_eq!(text, turn.text.clone().unwrap_or_default(), "{api}, {case}");
            let texts = deltas
                .iter()
                .filter(|d| matches!(d, Delta::Text(_)))
                .count();
            let words = turn.text.as_deref().map_or(0, |t| t.split(' ').count());
            assert_eq!(texts, words, "{api}, {case}: one event per word");
        }
    }
}

#[test]
fn a_written_stream_survives_its_framing() {
    for &api in Api::BUILT_IN {
        let turn = Turn::calls([call("c1", "hitung-jumlah", json!({"a": 2, "b": 3}))])
            .with_text("Saya hitung:\ndua tambah tiga.");
        let events = api.provider().write_stream(&turn).unwrap();
        let framing = api.provider().framing();
        let body = framing.encode(&events).unwrap();
        // Cut anywhere: the framing reassembles the same events.
        for cut in [1, 7, body.len() / 2] {
            let chunks: Vec<Result<bytes::Bytes, std::io::Error>> = body
                .chunks(cut)
                .map(|c| Ok(bytes::Bytes::copy_from_slice(c)))
                .collect();
            let read: Vec<_> = pollster::block_on(
                framing
                    .events(futures_util::stream::iter(chunks))
                    .collect::<Vec<_>>(),
            );
            let read: Vec<_> = read.into_iter().map(Result::unwrap).collect();
            assert_eq!(read, events, "{api}, chunks of {cut}");
        }
    }
}

#[test]
fn one_description_writes_every_apis_request() {
    let tools = ToolSet::new([jumlah::tool()]).unwrap();
    let request = Request::new("model-x")
        .system("Jawab singkat.")
        .tools(&tools)
        .tool_choice(ToolChoice::Tool("hitung-jumlah".into()))
        .max_tokens(321)
        .extra("temperature", json!(0.5));
    for &api in Api::BUILT_IN {
        let mut conversation = Conversation::new(api);
        conversation.push_user("2 + 3?");
        let raw = api
            .provider()
            .write_response(&Turn::calls([call(
                "c1",
                "hitung-jumlah",
                json!({"a": 2, "b": 3}),
            )]))
            .unwrap();
        let turn = read_turn(api, &raw).unwrap();
        conversation.messages.extend(turn.append);
        conversation.messages.extend(render(
            api,
            &[ToolAnswer::error(
                Some("c1".into()),
                "hitung-jumlah".into(),
                "salah".into(),
            )],
        ));
        for stream in [false, true] {
            let request = if stream {
                request.clone().streamed()
            } else {
                request.clone()
            };
            let http = conversation.request(&request).unwrap();
            let body = serde_json::to_string(&http.body).unwrap();
            // Each part of the description is in the body (or, for the model, the path).
            assert!(
                body.contains("model-x") || http.path.contains("model-x"),
                "{api}: {body}"
            );
            assert!(body.contains("321"), "{api}: the limit: {body}");
            assert!(body.contains("0.5"), "{api}: the extra member: {body}");
            assert!(
                http.headers
                    .iter()
                    .any(|(k, v)| k == "content-type" && v == "application/json"),
                "{api}"
            );
            // Read back by the provider that wrote it: the same conversation.
            let sent = api.provider().read_request(&http).unwrap();
            assert_eq!(sent.system.as_deref(), Some("Jawab singkat."), "{api}");
            assert_eq!(sent.tools, ["hitung-jumlah"], "{api}");
            assert_eq!(sent.stream, stream, "{api}");
            assert_eq!(sent.messages.len(), 3, "{api}: {:?}", sent.messages);
            assert_eq!(sent.messages[0], Message::User("2 + 3?".into()), "{api}");
            let Message::Model { calls, .. } = &sent.messages[1] else {
                panic!("{api}: {:?}", sent.messages[1])
            };
            assert_eq!(calls[0].id.as_deref(), Some("c1"), "{api}");
            let Message::Results(results) = &sent.messages[2] else {
                panic!("{api}: {:?}", sent.messages[2])
            };
            assert_eq!(results[0].call_id.as_deref(), Some("c1"), "{api}");
            assert_ne!(
                results[0].is_error,
                Some(false),
                "{api}: an error is not a success"
            );
            assert!(results[0].text.contains("salah"), "{api}");
        }
    }
}

#[test]
fn what_an_api_cannot_say_is_an_error_not_a_silent_default() {
    let tools = ToolSet::new([jumlah::tool()]).unwrap();
    let conversation = Conversation::new(Api::BEDROCK_CONVERSE);
    let request = Request::new("m")
        .tools(&tools)
        .tool_choice(ToolChoice::None);
    let e = conversation.request(&request).unwrap_err();
    assert!(e.to_string().contains("tool choice `none`"), "{e}");
    // Anthropic requires a limit: a request without one gets the documented default.
    let http = Conversation::new(Api::ANTHROPIC)
        .request(&Request::new("m"))
        .unwrap();
    assert_eq!(http.body["max_tokens"], 4096);
}

#[test]
fn a_saved_conversation_names_its_api_by_id_and_reads_back() {
    for &api in Api::BUILT_IN {
        let saved = serde_json::to_value(Conversation::new(api)).unwrap();
        assert_eq!(saved["api"], api.id());
        let read: Conversation = serde_json::from_value(saved).unwrap();
        assert_eq!(read.api, api);
    }
    // Written by an earlier version (the enum's kebab-cased names).
    let old: Conversation =
        serde_json::from_value(json!({"api": "open-ai-chat", "messages": []})).unwrap();
    assert_eq!(old.api, Api::OPENAI_CHAT);
    // An API of the program's own: read inside `Api::reading`, refused (naming it) outside.
    let saved = serde_json::to_string(&Conversation::new(LLAMA_CPP)).unwrap();
    let e = serde_json::from_str::<Conversation>(&saved).unwrap_err();
    assert!(e.to_string().contains("llama-cpp-server"), "{e}");
    let read: Conversation = Api::reading(&[LLAMA_CPP], || serde_json::from_str(&saved)).unwrap();
    assert_eq!(read.api, LLAMA_CPP);
}

/// A sixth API, defined outside the crate (`examples/src/llama_cpp.rs`), runs the agent loop,
/// streamed and not, with its own quirks in the requests.
#[test]
fn an_api_from_outside_the_crate_runs_the_agent_loop() {
    let tools = ToolSet::new([jumlah::tool()]).unwrap();
    let request = Request::new("smollm2")
        .tools(&tools)
        .tool_choice(ToolChoice::Required)
        .max_tokens(64);
    let script = || {
        [
            Turn::call("hitung-jumlah", json!({"a": 2, "b": 3})),
            Turn::text("2 + 3 = 5"),
        ]
    };
    let model = TestModel::scripted(LLAMA_CPP, script());
    let agent = Agent::new(&tools);
    let cx = Context::new();
    let finished = pollster::block_on(model.run(&agent, &cx, "2 + 3?", &request));
    let Ok(Finished::Answered {
        reply,
        conversation,
        ..
    }) = finished
    else {
        panic!("{finished:?}")
    };
    assert_eq!(reply.text.as_deref(), Some("2 + 3 = 5"));
    assert_eq!(conversation.api, LLAMA_CPP);
    let http = conversation.request(&request).unwrap();
    assert_eq!(http.body["max_tokens"], 64, "its quirk: max_tokens");
    assert!(http.body.get("max_completion_tokens").is_none());
    assert_eq!(
        http.body["tool_choice"],
        json!({"type": "function", "function": {"name": "hitung-jumlah"}}),
        "`required` with one tool is that tool"
    );
    let with_output = request
        .clone()
        .output_schema("hasil", json!({"type": "object"}));
    let http = conversation.request(&with_output).unwrap();
    assert_eq!(http.body["response_format"]["type"], "json_object");

    let model = TestModel::scripted(LLAMA_CPP, script());
    let events: Vec<_> = pollster::block_on(
        model
            .run_streamed(&agent, &cx, "2 + 3?", &request)
            .collect::<Vec<_>>(),
    );
    assert!(
        matches!(
            events.last(),
            Some(tool_runtime::agent::AgentEvent::Done(Ok(
                Finished::Answered { .. }
            )))
        ),
        "{events:?}"
    );
    assert!(model.requests().iter().all(|r| r.stream));
}

#[test]
fn the_test_model_refuses_a_request_an_agent_should_not_send() {
    let tools = ToolSet::new([jumlah::tool()]).unwrap();
    let request = Request::new("m").tools(&tools);
    for &api in Api::BUILT_IN {
        let model =
            TestModel::scripted(api, [Turn::call("hitung-jumlah", json!({"a": 1, "b": 1}))]);
        // A conversation that drops the call's result.
        let mut conversation = Conversation::new(api);
        conversation.push_user("1 + 1?");
        let http = conversation.request(&request).unwrap();
        let raw = model.respond(&http).unwrap();
        conversation
            .messages
            .extend(read_turn(api, &raw).unwrap().append);
        conversation.push_user("dan?");
        let e = model
            .respond(&conversation.request(&request).unwrap())
            .unwrap_err();
        assert!(matches!(e, TestModelError::Unanswered { .. }), "{api}: {e}");
        // A streamed request answered whole.
        let e = model
            .respond(
                &Conversation::new(api)
                    .request(&request.clone().streamed())
                    .unwrap(),
            )
            .unwrap_err();
        assert!(matches!(e, TestModelError::Stream { .. }), "{api}: {e}");
        // Past the script.
        let fresh = Conversation::new(api).request(&request).unwrap();
        let e = model.respond(&fresh).unwrap_err();
        assert!(
            matches!(e, TestModelError::ScriptEnded { .. }),
            "{api}: {e}"
        );
    }
    // In the agent loop, a refusal is the transport's error, with the test model's reason.
    let model = TestModel::scripted(Api::ANTHROPIC, []);
    let finished =
        pollster::block_on(model.run(&Agent::new(&tools), &Context::new(), "?", &request));
    let Err(AgentError::Transport(e)) = finished else {
        panic!("{finished:?}")
    };
    assert!(
        e.to_string().contains("after the script's last turn"),
        "{e}"
    );
}

#[test]
fn a_function_model_answers_from_the_conversation() {
    let tools = ToolSet::new([jumlah::tool()]).unwrap();
    for &api in Api::BUILT_IN {
        // It adds what the user asks, then answers with the tool's result.
        let model = TestModel::function(api, |sent| match sent.messages.last() {
            Some(Message::Results(r)) => Turn::text(format!("Hasilnya {}.", r[0].text)),
            _ => Turn::call("hitung-jumlah", json!({"a": 40, "b": 2})),
        });
        let request = Request::new("m").tools(&tools);
        let finished = pollster::block_on(model.run(
            &Agent::new(&tools),
            &Context::new(),
            "40 + 2?",
            &request,
        ));
        let Ok(Finished::Answered { reply, .. }) = finished else {
            panic!("{api}: {finished:?}")
        };
        assert!(reply.text.unwrap().contains("42"), "{api}");
        assert_eq!(model.requests().len(), 2, "{api}");
    }
}

/// A response cut off by the output token limit that holds tool calls runs none of them, in
/// every API: the last call may have lost arguments (Anthropic, Gemini and Bedrock send them
/// parsed, so nothing else would notice), and a call with partial arguments may still validate
/// with its defaults. Streamed, each call's end is an event: a call that ended before the cut
/// runs, one the cut left open does not (the stream tests).
#[test]
fn a_response_cut_off_with_tool_calls_runs_none_in_any_api() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tool_runtime::Tool;
    static RAN: AtomicUsize = AtomicUsize::new(0);
    let transfer = Tool::define(
        "transfer",
        "Transfer money to an account.",
        json!({"type": "object", "properties": {
            "to": {"type": "string", "description": "The account", "maxLength": 20},
            "note": {"type": "string", "description": "A note", "maxLength": 20, "default": ""}},
            "required": ["to"], "additionalProperties": false}),
    )
    .build_fn(|_| async {
        RAN.fetch_add(1, Ordering::SeqCst);
        Ok(json!("sent"))
    })
    .unwrap();
    let tools = ToolSet::new([transfer]).unwrap();
    let request = Request::new("model").tools(&tools);
    for &api in Api::BUILT_IN {
        let model = TestModel::scripted(
            api,
            [
                Turn::call("transfer", json!({"to": "ACC-1"})).finish(Finish::Truncated {
                    reason: "max_tokens".into(),
                }),
                Turn::text("done"),
            ],
        );
        let result =
            pollster::block_on(model.run(&Agent::new(&tools), &Context::new(), "Pay", &request));
        let Err(AgentError::Unreadable(e)) = &result else {
            panic!("{api}: {result:?}")
        };
        assert!(e.to_string().contains("none runs"), "{api}: {e}");
    }
    assert_eq!(
        RAN.load(Ordering::SeqCst),
        0,
        "no call of a cut-off response ran"
    );
}
