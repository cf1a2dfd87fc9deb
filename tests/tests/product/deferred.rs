//! Deferred tools in the agent loop, on the 500-tool catalog: every request offers the search
//! tool and `call_tool` instead of 500 definitions (the list never changes: the conversation's
//! start stays cacheable), the search answers the found tools' schemas, the model calls one
//! through `call_tool`, and the call runs through the set like any other, in the five APIs
//! (Anthropic's in its native form). A deferred tool needing approval still asks; one the
//! caller may not call is never found and never runs. And the host's hook that chooses each
//! turn's tools.

use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::StreamExt;
use serde_json::{Value, json};
use tool_runtime::agent::{
    Agent, AgentError, AgentEvent, Conversation, Decision, Finished, PrepareError,
};
use tool_runtime::provider::{Api, Message, Request, SentRequest, Turn};
use tool_runtime::search::SEARCH_TOOL;
use tool_runtime::testing::TestModel;
use tool_runtime::{CALL_TOOL, Context, Grants, Tool, ToolRef, ToolSet, tokens};

use crate::big_catalog::catalog;

static DELETED: AtomicUsize = AtomicUsize::new(0);
static REFUNDED: AtomicUsize = AtomicUsize::new(0);

/// The catalog, three tools of this test's own beside it (one needing approval, one needing a
/// finance grant), every tool deferred.
fn deferred_catalog(closed: &'static AtomicUsize) -> ToolSet {
    let counting = |name: &str, description: &str, counter: &'static AtomicUsize| {
        Tool::define(
            name,
            description,
            json!({"type": "object", "properties": {"nomor": {"type": "string",
                "description": "The ticket or customer number", "minLength": 3, "maxLength": 20}},
                "required": ["nomor"], "additionalProperties": false}),
        )
        .build_fn(move |args| async move {
            counter.fetch_add(1, Ordering::SeqCst);
            Ok(json!({"done": args["nomor"]}))
        })
    };
    let mine: Vec<ToolRef> = vec![
        counting(
            "tutup-tiket",
            "Close a customer's support ticket for good once they confirm the problem is solved.",
            closed,
        )
        .unwrap()
        .into(),
        Tool::define(
            "hapus-pelanggan",
            "Delete a customer account and everything kept about the customer.",
            json!({"type": "object", "properties": {"nomor": {"type": "string",
                "description": "The customer number", "minLength": 3, "maxLength": 20}},
                "required": ["nomor"], "additionalProperties": false}),
        )
        .needs_approval(true)
        .build_fn(|_| async {
            DELETED.fetch_add(1, Ordering::SeqCst);
            Ok(json!("deleted"))
        })
        .unwrap()
        .into(),
        Tool::define(
            "kembalikan-dana",
            "Refund a customer's payment to their bank account.",
            json!({"type": "object", "properties": {"nomor": {"type": "string",
                "description": "The payment number", "minLength": 3, "maxLength": 20}},
                "required": ["nomor"], "additionalProperties": false}),
        )
        .requires(["keuangan.refund"])
        .build_fn(|_| async {
            REFUNDED.fetch_add(1, Ordering::SeqCst);
            Ok(json!("refunded"))
        })
        .unwrap()
        .into(),
    ];
    catalog().with_tools(mine).unwrap().defer(|_| true).unwrap()
}

/// The tool entries of a written request's body, one per tool (Gemini's declarations, Bedrock's
/// `toolSpec`s).
pub(crate) fn entries(api: Api, body: &Value) -> Vec<Value> {
    let list = if api.id() == Api::BEDROCK_CONVERSE.id() {
        &body["toolConfig"]["tools"]
    } else {
        &body["tools"]
    };
    let list = list.as_array().cloned().unwrap_or_default();
    if api.id() == Api::GEMINI.id() {
        return list
            .iter()
            .flat_map(|t| {
                t["functionDeclarations"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .collect();
    }
    list
}

/// The o200k tokens of these entries.
fn tokens_of(entries: &[Value]) -> usize {
    entries.iter().map(|e| tokens::count(&e.to_string())).sum()
}

/// The names of the tools the last results message reports found by a search.
fn found_by_last_search(sent: &SentRequest) -> Vec<String> {
    let Some(Message::Results(results)) = sent.messages.last() else {
        return Vec::new();
    };
    results
        .iter()
        .filter_map(|r| serde_json::from_str::<Value>(&r.text).ok())
        .flat_map(|v| {
            v["found"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter_map(|t| t["name"].as_str().map(str::to_owned))
        })
        .collect()
}

/// A model that searches with `query`, calls `tool` with `nomor` through `call_tool` if the
/// search found it (and says so otherwise), then answers.
fn searching_model(api: Api, query: &'static str, tool: &'static str) -> TestModel {
    TestModel::function(api, move |sent| match sent.messages.len() {
        1 => Turn::call(SEARCH_TOOL, json!({"query": query})),
        3 if found_by_last_search(sent).iter().any(|f| f == tool) => Turn::call(
            CALL_TOOL,
            json!({"name": tool, "arguments": {"nomor": "TKT-0042"}}),
        ),
        3 => Turn::text(format!("not found: {:?}", found_by_last_search(sent))),
        _ => Turn::text("done"),
    })
}

#[test]
fn a_model_searches_then_calls_a_deferred_tool_in_the_portable_apis_at_a_fraction_of_the_tokens() {
    static CLOSED: AtomicUsize = AtomicUsize::new(0);
    let tools = deferred_catalog(&CLOSED);
    let cx = Context::new();
    for api in [
        Api::OPENAI_CHAT,
        Api::OPENAI_RESPONSES,
        Api::GEMINI,
        Api::BEDROCK_CONVERSE,
    ] {
        // Every tool's definition, as a request without deferral would carry them (Gemini's
        // limit of 128 a request aside).
        let full: usize = tokens::of_set(&tools, api)
            .iter()
            .filter(|t| t.tool != SEARCH_TOOL)
            .map(|t| t.tokens)
            .sum();
        let before = CLOSED.load(Ordering::SeqCst);
        let model = searching_model(
            api,
            "close the customer's support ticket, the problem is solved",
            "tutup-tiket",
        );
        let request = Request::new("model").tools(&tools);
        let finished = pollster::block_on(model.run(
            &Agent::new(&tools),
            &cx,
            "Pelanggan bilang masalahnya sudah beres, tiket TKT-0042.",
            &request,
        ))
        .unwrap();
        let Finished::Answered {
            reply,
            conversation,
            ..
        } = finished
        else {
            panic!("{api:?}: not answered: {finished:?}")
        };
        assert_eq!(reply.text.as_deref(), Some("done"), "{api:?}");
        assert_eq!(
            CLOSED.load(Ordering::SeqCst),
            before + 1,
            "{api:?}: ran once"
        );
        assert_eq!(
            conversation.found.first().map(String::as_str),
            Some("tutup-tiket")
        );

        let requests = model.requests();
        for (i, sent) in requests.iter().enumerate() {
            assert_eq!(
                sent.tools,
                [SEARCH_TOOL, CALL_TOOL],
                "{api:?}: request {i} offers the search tool and call_tool, as every request"
            );
        }
        assert_eq!(model.prefix_kept(), 1.0, "{api:?}: append-only");
        // The found tools' schemas come in the search's answer.
        let found = found_by_last_search(&requests[1]);
        assert!(
            found.iter().any(|t| t == "tutup-tiket"),
            "{api:?}: {found:?}"
        );
        let Some(Message::Results(results)) = requests[1].messages.last() else {
            panic!("{api:?}: the search's answer")
        };
        assert!(
            results[0].text.contains("input_schema"),
            "{api:?}: {}",
            results[0].text
        );

        // What the tools cost, against the catalog's whole export, and what the search's
        // answer adds to the conversation.
        let mut conversation = Conversation::new(api);
        conversation.push_user("hi");
        let written = conversation.request(&request).unwrap();
        let listed = tokens_of(&entries(api, &written.body));
        let answer = tokens::count(&results[0].text);
        println!(
            "{api:?}: tool tokens {listed} in every request, of {full} for all {} tools ({:.1}%); the search's answer (5 tools with their schemas) {answer}",
            tools.len() - 1,
            100.0 * listed as f64 / full as f64
        );
        assert!(listed * 100 < full, "{api:?}: {listed} of {full}");
        assert!(answer * 100 < full * 15, "{api:?}: {answer} of {full}");

        // Streamed, the same.
        let model = searching_model(api, "close a support ticket", "tutup-tiket");
        let agent = Agent::new(&tools);
        let events: Vec<AgentEvent> = pollster::block_on(
            model
                .run_streamed(&agent, &cx, "Tutup TKT-0042.", &request)
                .collect(),
        );
        let Some(AgentEvent::Done(Ok(Finished::Answered { conversation, .. }))) = events.last()
        else {
            panic!("{api:?}: {events:?}")
        };
        assert_eq!(
            conversation.found.first().map(String::as_str),
            Some("tutup-tiket")
        );
        assert_eq!(
            CLOSED.load(Ordering::SeqCst),
            before + 2,
            "{api:?}: streamed, ran once"
        );
    }
}

#[test]
fn anthropic_gets_every_deferred_tool_marked_with_its_own_search_tool_and_the_call_runs() {
    static CLOSED: AtomicUsize = AtomicUsize::new(0);
    let tools = deferred_catalog(&CLOSED);
    let request = Request::new("claude-sonnet-4-5").tools(&tools);
    let before = CLOSED.load(Ordering::SeqCst);
    let mut sent = Vec::new();
    // Anthropic's API as its tool search documents it: the search runs on its side and the
    // same response calls the tool it found.
    let send = |c: &Conversation| {
        let http = c.request(&request).unwrap();
        sent.push(http.clone());
        let reply = if sent.len() == 1 {
            json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
                "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 1},
                "content": [
                    {"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_bm25",
                     "input": {"query": "close support ticket"}},
                    {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1",
                     "content": {"type": "tool_search_tool_search_result",
                                 "tool_references": [{"type": "tool_reference", "tool_name": "tutup-tiket"}]}},
                    {"type": "tool_use", "id": "toolu_1", "name": "tutup-tiket",
                     "input": {"nomor": "TKT-0042"}}]})
        } else {
            json!({"id": "msg_2", "type": "message", "role": "assistant", "model": "claude",
                "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 1},
                "content": [{"type": "text", "text": "Tiket ditutup."}]})
        };
        std::future::ready(Ok::<Value, String>(reply))
    };
    let mut conversation = Conversation::new(Api::ANTHROPIC);
    conversation.push_user("Tutup tiket TKT-0042, sudah beres.");
    let finished =
        pollster::block_on(Agent::new(&tools).run(&Context::new(), conversation, send)).unwrap();
    assert!(
        matches!(finished, Finished::Answered { .. }),
        "{finished:?}"
    );
    assert_eq!(CLOSED.load(Ordering::SeqCst), before + 1);

    let first = &sent[0];
    let entries = first.body["tools"].as_array().unwrap();
    // Every tool this caller may call (the search tool's place taken by Anthropic's), and not
    // the refund or the HR tools, which need grants it lacks.
    let callable = tools.iter().filter(|t| t.permits(&Context::new())).count();
    assert_eq!(entries.len(), callable);
    assert!(callable < tools.len());
    assert!(!entries.iter().any(|e| e["name"] == "kembalikan-dana"));
    assert!(
        entries
            .iter()
            .all(|e| e["defer_loading"] == true || e["type"] == "tool_search_tool_bm25_20251119")
    );
    assert!(!entries.iter().any(|e| e["name"] == SEARCH_TOOL));
    assert!(first.headers.contains(&(
        "anthropic-beta".into(),
        "advanced-tool-use-2025-11-20".into()
    )));
    // The server's blocks go back as they came, before the tool's result.
    let second = &sent[1].body["messages"];
    assert_eq!(second[1]["content"][0]["type"], "server_tool_use");
    assert_eq!(second[1]["content"][1]["type"], "tool_search_tool_result");
    assert_eq!(second[2]["content"][0]["tool_use_id"], "toolu_1");
    assert_eq!(second[2]["content"][0].get("is_error"), None);
}

#[test]
fn a_deferred_tool_that_needs_approval_still_asks_and_a_saved_conversation_keeps_what_was_found() {
    static CLOSED: AtomicUsize = AtomicUsize::new(0);
    let tools = deferred_catalog(&CLOSED);
    let before = DELETED.load(Ordering::SeqCst);
    let model = TestModel::function(Api::OPENAI_CHAT, |sent| match sent.messages.len() {
        1 => Turn::call(SEARCH_TOOL, json!({"query": "delete a customer account"})),
        3 => Turn::call(
            CALL_TOOL,
            json!({"name": "hapus-pelanggan", "arguments": {"nomor": "PLG-0001"}}),
        ),
        _ => Turn::text("done"),
    });
    let request = Request::new("model").tools(&tools);
    let cx = Context::new();
    let agent = Agent::new(&tools);
    let finished =
        pollster::block_on(model.run(&agent, &cx, "Hapus akun PLG-0001.", &request)).unwrap();
    let Finished::Paused(paused) = finished else {
        panic!("not paused: {finished:?}")
    };
    assert_eq!(paused.waiting().next().unwrap().tool, "hapus-pelanggan");
    assert_eq!(DELETED.load(Ordering::SeqCst), before, "nothing ran yet");

    // Stored and read back, as a host keeps it overnight.
    let saved = serde_json::to_string(&paused).unwrap();
    let paused: tool_runtime::agent::Paused = serde_json::from_str(&saved).unwrap();
    assert!(
        paused
            .conversation
            .found
            .iter()
            .any(|f| f == "hapus-pelanggan")
    );
    let finished = pollster::block_on(agent.resume(
        &cx,
        paused,
        |_| Decision::Approve,
        model.sender(&request),
    ))
    .unwrap();
    assert!(
        matches!(finished, Finished::Answered { .. }),
        "{finished:?}"
    );
    assert_eq!(
        DELETED.load(Ordering::SeqCst),
        before + 1,
        "ran once, approved"
    );
    let last = model.requests().pop().unwrap();
    assert_eq!(last.tools, [SEARCH_TOOL, CALL_TOOL]);
    assert_eq!(model.prefix_kept(), 1.0, "the resumed run only appended");
}

#[test]
fn a_deferred_tool_the_caller_may_not_call_is_never_found_and_never_runs() {
    static CLOSED: AtomicUsize = AtomicUsize::new(0);
    let tools = deferred_catalog(&CLOSED);
    let before = REFUNDED.load(Ordering::SeqCst);
    let query = "refund the customer's payment to their bank account";
    // Searched for, then called by a guessed name all the same.
    let model = TestModel::function(Api::OPENAI_RESPONSES, move |sent| {
        match sent.messages.len() {
            1 => Turn::call(SEARCH_TOOL, json!({"query": query})),
            3 => {
                assert!(
                    !found_by_last_search(sent).contains(&"kembalikan-dana".to_owned()),
                    "found without the grant"
                );
                Turn::call("kembalikan-dana", json!({"nomor": "PAY-0001"}))
            }
            _ => Turn::text("done"),
        }
    });
    let request = Request::new("model").tools(&tools);
    let finished = pollster::block_on(model.run(
        &Agent::new(&tools),
        &Context::new(),
        "Refund PAY-0001.",
        &request,
    ))
    .unwrap();
    let Finished::Answered { conversation, .. } = finished else {
        panic!("{finished:?}")
    };
    assert_eq!(REFUNDED.load(Ordering::SeqCst), before, "refused");
    assert!(!conversation.found.contains(&"kembalikan-dana".to_owned()));
    let last = model.requests().pop().unwrap();
    let Some(Message::Results(results)) = last.messages.last() else {
        panic!()
    };
    assert!(
        results[0]
            .text
            .contains("`kembalikan-dana` is not available"),
        "{}",
        results[0].text
    );

    // With the grant, the same search finds it first.
    let finance = Context::new().with(Grants::new(["keuangan.refund"]));
    let model = searching_model(Api::OPENAI_RESPONSES, query, "kembalikan-dana");
    let finished =
        pollster::block_on(model.run(&Agent::new(&tools), &finance, "Refund PAY-0001.", &request))
            .unwrap();
    let Finished::Answered { conversation, .. } = finished else {
        panic!("{finished:?}")
    };
    assert_eq!(
        conversation.found.first().map(String::as_str),
        Some("kembalikan-dana")
    );
    assert_eq!(REFUNDED.load(Ordering::SeqCst), before + 1);
}

#[test]
fn the_hosts_hook_chooses_each_turns_tools_and_a_tool_it_left_out_does_not_run() {
    static CLOSED: AtomicUsize = AtomicUsize::new(0);
    let tools = deferred_catalog(&CLOSED);
    let before = CLOSED.load(Ordering::SeqCst);
    // Support staff get the ticket tools only once the user mentions a ticket.
    let choose = |_: &Context, c: &Conversation| {
        if c.messages.iter().any(|m| m.to_string().contains("tiket")) {
            vec!["tutup-tiket".to_owned()]
        } else {
            vec!["cek-sisa-cuti".to_owned()]
        }
    };
    let agent = Agent::new(&tools).prepare_tools(&choose);
    let request = Request::new("model").tools(&tools);

    // Not chosen: not offered, and a call of it does not run.
    let model = TestModel::scripted(
        Api::GEMINI,
        [
            Turn::call("tutup-tiket", json!({"nomor": "TKT-0042"})),
            Turn::text("done"),
        ],
    );
    let finished =
        pollster::block_on(model.run(&agent, &Context::new(), "Berapa sisa cuti saya?", &request))
            .unwrap();
    assert!(matches!(finished, Finished::Answered { .. }));
    assert_eq!(CLOSED.load(Ordering::SeqCst), before);
    let requests = model.requests();
    assert_eq!(
        requests[0].tools,
        [SEARCH_TOOL, CALL_TOOL],
        "chosen, but deferred: reached through call_tool"
    );
    let Some(Message::Results(results)) = requests[1].messages.last() else {
        panic!()
    };
    assert!(
        results[0].text.contains("tutup-tiket"),
        "{}",
        results[0].text
    );

    // Chosen: called through call_tool once found, and it runs.
    let model = searching_model(
        Api::BEDROCK_CONVERSE,
        "close a support ticket",
        "tutup-tiket",
    );
    let finished =
        pollster::block_on(model.run(&agent, &Context::new(), "Tutup tiket TKT-0042.", &request))
            .unwrap();
    assert!(
        matches!(finished, Finished::Answered { .. }),
        "{finished:?}"
    );
    assert_eq!(CLOSED.load(Ordering::SeqCst), before + 1);
    assert_eq!(model.requests()[1].tools, [SEARCH_TOOL, CALL_TOOL]);
    assert_eq!(model.prefix_kept(), 1.0);
    // The search found only what the turn offers, though other ticket tools match too.
    assert_eq!(found_by_last_search(&model.requests()[1]), ["tutup-tiket"]);
}

#[test]
fn a_hook_choosing_an_unknown_tool_or_too_many_ends_the_run_with_a_typed_error() {
    static CLOSED: AtomicUsize = AtomicUsize::new(0);
    let tools = deferred_catalog(&CLOSED);
    let request = Request::new("model").tools(&tools);
    let model = TestModel::scripted(Api::OPENAI_CHAT, [Turn::text("never sent")]);
    let unknown = |_: &Context, _: &Conversation| vec!["no-such-tool".to_owned()];
    let err = pollster::block_on(model.run(
        &Agent::new(&tools).prepare_tools(&unknown),
        &Context::new(),
        "hi",
        &request,
    ))
    .unwrap_err();
    assert!(
        matches!(&err, AgentError::Prepare(PrepareError::Unknown { name }) if name == "no-such-tool"),
        "{err:?}"
    );
    let all =
        |_: &Context, _: &Conversation| catalog().names().map(str::to_owned).collect::<Vec<_>>();
    let err = pollster::block_on(model.run(
        &Agent::new(&tools).prepare_tools(&all),
        &Context::new(),
        "hi",
        &request,
    ))
    .unwrap_err();
    assert!(
        matches!(
            err,
            AgentError::Prepare(PrepareError::TooMany {
                chosen: 129..,
                most: 128
            })
        ),
        "{err:?}"
    );
    assert!(model.requests().is_empty(), "no request was sent");
}

/// A `call_tool` call whose arguments give a key twice is refused, as a tool's own arguments
/// are: the wrapper's parsed value keeps the last copy, while the text handed to the tool would
/// have been the first, so the model meant one call and another would have run.
#[test]
fn a_call_tool_call_giving_a_key_twice_is_refused_and_nothing_runs() {
    use tool_runtime::provider::{CallArguments, ToolCall};
    static CLOSED: AtomicUsize = AtomicUsize::new(0);
    let tools = deferred_catalog(&CLOSED);
    let request = Request::new("model").tools(&tools);
    for text in [
        r#"{"name": "tutup-tiket", "arguments": {"nomor": "TKT-1"}, "arguments": {"nomor": "TKT-0042"}}"#,
        r#"{"name": "tutup-tiket", "name": "hapus-pelanggan", "arguments": {"nomor": "TKT-1"}}"#,
    ] {
        let call = ToolCall::new(
            Some("c1".into()),
            CALL_TOOL,
            CallArguments::Text(text.into()),
        );
        let model =
            TestModel::scripted(Api::OPENAI_CHAT, [Turn::calls([call]), Turn::text("done")]);
        pollster::block_on(model.run(&Agent::new(&tools), &Context::new(), "close it", &request))
            .unwrap();
        let answered = format!("{:?}", model.requests()[1].messages.last().unwrap());
        assert!(
            answered.contains("is given more than once: give each field once"),
            "{text}: {answered}"
        );
    }
    assert_eq!(CLOSED.load(Ordering::SeqCst), 0, "nothing ran");
}
