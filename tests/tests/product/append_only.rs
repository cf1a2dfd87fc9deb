//! Conversations the providers can cache and trust. In 2026 every provider caches only the
//! unchanged start of a conversation's request, and Anthropic's preserved thinking refuses a
//! request whose `system`, `tools` or earlier messages changed. So a conversation the agent loop
//! writes only appends: its tool list is written once, and a search that finds tools, a turn
//! that offers fewer tools and one that offers them again, an approval paused to JSON and
//! resumed, and thinking with empty text all go through each API's own means. The test kit's
//! model checks it as a provider would: it refuses a request that does not extend the last one
//! of its conversation, and a model turn not sent back exactly as it was written.

use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::StreamExt;
use serde_json::{Value, json};
use tool_runtime::agent::{Agent, AgentEvent, Conversation, Decision, Finished, Paused};
use tool_runtime::provider::{Api, Message, Request, SentRequest, Turn};
use tool_runtime::search::SEARCH_TOOL;
use tool_runtime::testing::{TestModel, TestModelError};
use tool_runtime::{CALL_TOOL, Context, Tool, ToolRef, ToolSet};

static QUOTED: AtomicUsize = AtomicUsize::new(0);
static TRACKED: AtomicUsize = AtomicUsize::new(0);
static CANCELLED: AtomicUsize = AtomicUsize::new(0);

fn counting(
    name: &str,
    description: &str,
    counter: &'static AtomicUsize,
    approval: bool,
) -> ToolRef {
    Tool::define(
        name,
        description,
        json!({"type": "object", "properties": {"order": {"type": "string",
            "description": "The order number", "minLength": 3, "maxLength": 20}},
            "required": ["order"], "additionalProperties": false}),
    )
    .needs_approval(approval)
    .build_fn(move |args| async move {
        counter.fetch_add(1, Ordering::SeqCst);
        Ok(json!({"done": args["order"]}))
    })
    .unwrap()
    .into()
}

/// Two tools always listed, one that needs approval, and three deferred (two of them about
/// shipping, which a search finds).
fn tools() -> ToolSet {
    tools_but(None)
}

/// [`tools`], without the tool named `left_out`.
fn tools_but(left_out: Option<&str>) -> ToolSet {
    static UNUSED: AtomicUsize = AtomicUsize::new(0);
    let all = [
        counting(
            "add_note",
            "Add a note to an order for the warehouse.",
            &UNUSED,
            false,
        ),
        counting("lookup_price", "Look up an order's price.", &UNUSED, false),
        counting(
            "cancel_order",
            "Cancel an order that has not shipped yet.",
            &CANCELLED,
            true,
        ),
        counting(
            "shipping_quote",
            "Quote the shipping cost of an order.",
            &QUOTED,
            false,
        ),
        counting(
            "shipping_track",
            "Track where an order's shipment is now.",
            &TRACKED,
            false,
        ),
        counting(
            "warehouse_stock",
            "Count the items of an order in stock at the warehouse.",
            &UNUSED,
            false,
        ),
    ];
    ToolSet::new(all.into_iter().filter(|t| Some(t.name()) != left_out))
        .unwrap()
        .defer(|t| t.name().starts_with("shipping") || t.name() == "warehouse_stock")
        .unwrap()
}

/// Whether the API searches for deferred tools itself (Anthropic): its model calls them by
/// name; elsewhere it calls the set's search tool, then the tools found through `call_tool`.
fn native(api: Api) -> bool {
    api.provider().tool_search().is_some()
}

/// A call of `tool`, through `call_tool` where the API cannot list it.
fn call_found(api: Api, tool: &str, order: &str) -> Turn {
    if native(api) {
        Turn::call(tool, json!({"order": order}))
    } else {
        Turn::call(
            CALL_TOOL,
            json!({"name": tool, "arguments": {"order": order}}),
        )
    }
}

/// The model: thinks (with empty text) and searches; calls the two tools it found at once;
/// asks to cancel the order (which waits for a person); answers.
fn model(api: Api) -> TestModel {
    TestModel::function(api, move |sent: &SentRequest| {
        let turns = sent
            .messages
            .iter()
            .filter(|m| matches!(m, Message::Model { .. }))
            .count();
        match turns {
            0 => {
                let mut turn = if native(api) {
                    Turn::call("lookup_price", json!({"order": "ORD-1"}))
                } else {
                    Turn::call(SEARCH_TOOL, json!({"query": "shipping quote and tracking"}))
                };
                turn.thinking = Some(String::new());
                turn
            }
            1 => {
                let mut turn = call_found(api, "shipping_quote", "ORD-1");
                turn.calls
                    .extend(call_found(api, "shipping_track", "ORD-1").calls);
                turn.thinking = Some("Both shipping tools, at once.".into());
                turn
            }
            2 => Turn::call("cancel_order", json!({"order": "ORD-1"})),
            _ => Turn::text("The order is cancelled; it would have cost 4 to ship."),
        }
    })
}

/// The host's choice of each turn's tools: everything, then no `add_note`, then everything.
fn choose(_: &Context, c: &Conversation) -> Vec<String> {
    let asked = c
        .messages
        .iter()
        .filter(|m| {
            m["role"] == "assistant" || m["role"] == "model" || m["type"] == "function_call"
        })
        .count();
    let all = [
        "add_note",
        "lookup_price",
        "cancel_order",
        "shipping_quote",
        "shipping_track",
        "warehouse_stock",
    ];
    all.iter()
        .filter(|t| asked != 1 || **t != "add_note")
        .map(|t| (*t).to_owned())
        .collect()
}

/// The run to its pause, stored and read back as a host keeps it, then approved.
fn paused_and_resumed(api: Api, stream: bool) -> (TestModel, Finished) {
    let tools = tools();
    let model = model(api);
    let request = Request::new("model").tools(&tools).system("Be brief.");
    let agent = Agent::new(&tools).prepare_tools(&choose);
    let cx = Context::new();
    let finished = if stream {
        let events: Vec<AgentEvent> = pollster::block_on(
            model
                .run_streamed(
                    &agent,
                    &cx,
                    "Cancel ORD-1; what would shipping cost?",
                    &request,
                )
                .collect(),
        );
        match events.into_iter().last() {
            Some(AgentEvent::Done(done)) => done,
            other => panic!("{api}: {other:?}"),
        }
    } else {
        pollster::block_on(model.run(
            &agent,
            &cx,
            "Cancel ORD-1; what would shipping cost?",
            &request,
        ))
    };
    let Ok(Finished::Paused(paused)) = finished else {
        panic!("{api} (streamed: {stream}): {finished:?}")
    };
    let saved = serde_json::to_string(&paused).unwrap();
    let paused: Paused = Api::reading(&[api], || serde_json::from_str(&saved)).unwrap();
    let finished = if stream {
        let events: Vec<AgentEvent> = pollster::block_on(
            agent
                .resume_streamed(
                    &cx,
                    paused,
                    |_| Decision::Approve,
                    model.streamed_sender(&request),
                )
                .collect(),
        );
        match events.into_iter().last() {
            Some(AgentEvent::Done(done)) => done,
            other => panic!("{api}: {other:?}"),
        }
    } else {
        pollster::block_on(agent.resume(&cx, paused, |_| Decision::Approve, model.sender(&request)))
    };
    (model, finished.unwrap_or_else(|e| panic!("{api}: {e:?}")))
}

#[test]
fn every_api_only_appends_through_a_search_a_narrowed_turn_and_a_pause() {
    for &api in Api::BUILT_IN {
        for stream in [false, true] {
            let before = (
                QUOTED.load(Ordering::SeqCst),
                TRACKED.load(Ordering::SeqCst),
                CANCELLED.load(Ordering::SeqCst),
            );
            let (model, finished) = paused_and_resumed(api, stream);
            let Finished::Answered {
                reply,
                conversation,
                usage,
            } = finished
            else {
                panic!("{api}: {finished:?}")
            };
            assert!(
                reply.text.unwrap_or_default().contains("cancelled"),
                "{api}"
            );
            assert_eq!(
                (
                    QUOTED.load(Ordering::SeqCst),
                    TRACKED.load(Ordering::SeqCst),
                    CANCELLED.load(Ordering::SeqCst)
                ),
                (before.0 + 1, before.1 + 1, before.2 + 1),
                "{api}: each tool ran once"
            );
            assert_eq!(usage.requests, 4, "{api}");
            // Every request extended the one before it: the test kit refuses any other.
            assert_eq!(model.prefix_kept(), 1.0, "{api}");
            let requests = model.requests();
            assert_eq!(requests.len(), 4, "{api}");
            let declared = &conversation.declared.as_ref().unwrap().tools;
            for (i, sent) in requests.iter().enumerate() {
                // (Anthropic's own search tool beside the declared ones.)
                let listed: Vec<&String> = sent
                    .tools
                    .iter()
                    .filter(|t| *t != "tool_search_tool_bm25")
                    .collect();
                assert_eq!(
                    listed,
                    declared.iter().collect::<Vec<_>>(),
                    "{api}: request {i} lists what was declared"
                );
            }
            if native(api) {
                assert!(!declared.iter().any(|t| t == CALL_TOOL), "{api}");
            } else {
                assert_eq!(
                    declared.last().map(String::as_str),
                    Some(CALL_TOOL),
                    "{api}"
                );
            }
            println!(
                "{api} (streamed: {stream}): 4 requests, every one the last one's extension ({:.0}% of each start kept), tools {declared:?}",
                model.prefix_kept() * 100.0
            );
        }
    }
}

#[test]
fn each_api_narrows_a_turn_by_its_own_means() {
    for &api in Api::BUILT_IN {
        let tools = tools();
        let request = Request::new("model").tools(&tools);
        let mut conversation = Conversation::new(api);
        conversation.push_user("hi");
        conversation.declared = Some(tool_runtime::agent::Declared {
            tools: vec!["add_note".into(), "lookup_price".into()],
            offered: None,
        });
        let before = conversation.messages.len();
        conversation.offer(Some(vec!["lookup_price".into()]));
        let http = conversation.request(&request).unwrap();
        let body = &http.body;
        match api.id() {
            "openai-chat" => assert_eq!(
                body["tool_choice"],
                json!({"type": "allowed_tools", "allowed_tools": {"mode": "auto",
                    "tools": [{"type": "function", "function": {"name": "lookup_price"}}]}})
            ),
            "openai-responses" => assert_eq!(
                body["tool_choice"],
                json!({"type": "allowed_tools", "mode": "auto",
                    "tools": [{"type": "function", "name": "lookup_price"}]})
            ),
            "gemini" => assert_eq!(
                body["toolConfig"]["functionCallingConfig"],
                json!({"mode": "VALIDATED", "allowedFunctionNames": ["lookup_price"]})
            ),
            "anthropic" => {
                assert_eq!(
                    conversation.messages[before],
                    json!({"role": "system", "content": [{"type": "tool_removal",
                        "tool": {"type": "tool_reference", "name": "add_note"}}]})
                );
                assert!(
                    http.headers.iter().any(|(k, v)| k == "anthropic-beta"
                        && v.contains("mid-conversation-tool-changes-2026-07-01")),
                    "{:?}",
                    http.headers
                );
            }
            "bedrock-converse" => assert_eq!(
                conversation.messages[before],
                json!({"role": "system", "content": [{"toolRemoval": {"tool": {"name": "add_note"}}}]})
            ),
            other => panic!("{other}"),
        }
        // The list is the declared one either way.
        let listed = api.provider().read_request(&http).unwrap().tools;
        assert_eq!(listed, ["add_note", "lookup_price"], "{api}");
        // Offered again: Anthropic and Bedrock append the addition; the others narrow nothing.
        conversation.push_user("and now?");
        let at = conversation.messages.len();
        conversation.offer(None);
        let http = conversation.request(&request).unwrap();
        if api.provider().tool_change(&[], &[]).is_some() {
            let added = conversation.messages[at].to_string();
            assert!(
                added.contains("add_note") && added.contains("ddition"),
                "{api}: {added}"
            );
        } else {
            assert_eq!(conversation.messages.len(), at, "{api}");
            assert!(
                http.body.get("tool_choice").is_none() && http.body.get("toolConfig").is_none(),
                "{api}: {}",
                http.body
            );
        }
    }
}

#[test]
fn the_test_kit_refuses_a_request_whose_start_changed_naming_where() {
    let tools = tools();
    let request = Request::new("model").tools(&tools);
    for &api in Api::BUILT_IN {
        let model = TestModel::scripted(
            api,
            [
                Turn::call("lookup_price", json!({"order": "ORD-1"})),
                Turn::text("never"),
            ],
        );
        let mut conversation = Conversation::new(api);
        conversation.push_user("What does ORD-1 cost?");
        let first = conversation.request(&request).unwrap();
        let answer = model.respond(&first).unwrap();
        let turn = tool_runtime::agent::read_turn(api, &answer).unwrap();
        conversation.messages.extend(turn.append);
        let results = tool_runtime::agent::render(
            api,
            &[tool_runtime::provider::ToolAnswer::error(
                turn.calls[0].id.clone(),
                turn.calls[0].name.clone(),
                "no price".into(),
            )],
        );
        conversation.messages.extend(results);
        // A host that rewrites the question, as a library that "tidies" history would.
        let mut edited = conversation.clone();
        let question = edited.messages[0].to_string().replace("ORD-1", "ORD-2");
        edited.messages[0] = serde_json::from_str(&question).unwrap();
        let err = model
            .respond(&edited.request(&request).unwrap())
            .unwrap_err();
        let TestModelError::PrefixChanged { path, was, now } = &err else {
            panic!("{api}: {err:?}")
        };
        assert!(path.contains("[0]"), "{api}: {path}");
        assert!(
            was.contains("ORD-1") && now.contains("ORD-2"),
            "{api}: {err}"
        );
        // And one whose tool list changed (a tool set edited between turns).
        let fewer = tools_but(Some("add_note"));
        let err = model
            .respond(
                &conversation
                    .request(&request.clone().tools(&fewer))
                    .unwrap(),
            )
            .unwrap_err();
        let TestModelError::PrefixChanged { path, .. } = &err else {
            panic!("{api}: {err:?}")
        };
        assert!(
            path.contains("tools") || path.contains("Tools"),
            "{api}: {err}"
        );
    }
}

/// A model's usage as each API reports it, cache figures included (shapes from each provider's
/// documentation), read into one [`Usage`](tool_runtime::agent::Usage): input tokens always
/// count the cached ones, as OpenTelemetry's conventions count them.
#[test]
fn cache_usage_is_read_from_every_apis_responses() {
    let cases: [(Api, Value, [u64; 4]); 5] = [
        (
            Api::OPENAI_CHAT,
            json!({"usage": {"prompt_tokens": 2006, "completion_tokens": 300,
                "prompt_tokens_details": {"cached_tokens": 1920}}}),
            [2006, 300, 1920, 0],
        ),
        (
            Api::OPENAI_RESPONSES,
            json!({"usage": {"input_tokens": 2006, "output_tokens": 300,
                "input_tokens_details": {"cached_tokens": 1920, "cache_write_tokens": 64}}}),
            [2006, 300, 1920, 64],
        ),
        (
            Api::ANTHROPIC,
            json!({"usage": {"input_tokens": 21, "cache_creation_input_tokens": 188086,
                "cache_read_input_tokens": 0, "output_tokens": 393,
                "cache_creation": {"ephemeral_5m_input_tokens": 188086, "ephemeral_1h_input_tokens": 0}}}),
            [188107, 393, 0, 188086],
        ),
        (
            Api::GEMINI,
            json!({"usageMetadata": {"promptTokenCount": 4123, "cachedContentTokenCount": 4096,
                "candidatesTokenCount": 57, "thoughtsTokenCount": 40, "totalTokenCount": 4220}}),
            [4123, 97, 4096, 0],
        ),
        (
            Api::BEDROCK_CONVERSE,
            json!({"usage": {"inputTokens": 12, "outputTokens": 44, "totalTokens": 5100,
                "cacheReadInputTokens": 4096, "cacheWriteInputTokens": 948}}),
            [5056, 44, 4096, 948],
        ),
    ];
    for (api, raw, [input, output, read, write]) in cases {
        let info = api.provider().read_info(&raw);
        assert_eq!(info.input_tokens, Some(input), "{api}");
        assert_eq!(info.output_tokens, Some(output), "{api}");
        assert_eq!(info.cache_read_tokens.unwrap_or(0), read, "{api}");
        assert_eq!(info.cache_write_tokens.unwrap_or(0), write, "{api}");
    }
    // Anthropic says which thinking blocks it dropped rather than refuse the request.
    let dropped = json!({"usage": {"input_tokens": 1, "output_tokens": 1},
        "input_transformations": [{"type": "thinking_dropped", "path": "messages.3.content.0",
            "reason": "prefix_binding_mismatch"}, {"type": "something_later"}]});
    assert_eq!(
        Api::ANTHROPIC
            .provider()
            .read_info(&dropped)
            .thinking_dropped,
        1
    );
}

/// A turn's usage, written by each API's writer, streamed or not, reads back as it was given;
/// and a test model's own estimate shows the cache's share growing as a conversation appends,
/// and falling when its start changes.
#[test]
fn a_test_models_usage_reads_back_in_every_api_with_the_caches_share() {
    use tool_runtime::provider::TurnUsage;
    let tools = tools();
    let request = Request::new("model").tools(&tools);
    for &api in Api::BUILT_IN {
        for stream in [false, true] {
            let given = TurnUsage::new(2_000, 50).cached(1_500, 300);
            let model = TestModel::scripted(
                api,
                [
                    Turn::call("lookup_price", json!({"order": "ORD-1"})).with_usage(given),
                    Turn::text("It costs 4."),
                ],
            );
            let agent = Agent::new(&tools);
            let finished = if stream {
                let events: Vec<AgentEvent> = pollster::block_on(
                    model
                        .run_streamed(&agent, &Context::new(), "Price?", &request)
                        .collect(),
                );
                match events.into_iter().last() {
                    Some(AgentEvent::Done(done)) => done.unwrap(),
                    other => panic!("{api}: {other:?}"),
                }
            } else {
                pollster::block_on(model.run(
                    &Agent::new(&tools),
                    &Context::new(),
                    "Price?",
                    &request,
                ))
                .unwrap()
            };
            let usage = finished.usage();
            // Gemini and OpenAI report no cache writes (OpenAI's only where it says).
            let writes = matches!(api.id(), "anthropic" | "bedrock-converse");
            let second = usage.input_tokens - 2_000;
            assert!(
                second > 0,
                "{api} {stream}: the estimate of the second request"
            );
            assert_eq!(
                usage.output_tokens - 50,
                {
                    // "It costs 4." is 11 bytes: 3 tokens at four bytes a token.
                    3
                },
                "{api} {stream}"
            );
            let read_second = usage.cache_read_tokens - 1_500;
            assert!(
                read_second > 0 && read_second < second,
                "{api} {stream}: {usage:?}"
            );
            if writes {
                assert_eq!(
                    usage.cache_write_tokens - 300,
                    second - read_second,
                    "{api} {stream}: a marked request writes what it did not read"
                );
            } else {
                assert_eq!(usage.cache_write_tokens, 0, "{api} {stream}");
            }
        }
    }
    // Unmarked requests to Anthropic neither read nor write a cache.
    let model = TestModel::scripted(
        Api::ANTHROPIC,
        [
            Turn::call("lookup_price", json!({"order": "ORD-1"})),
            Turn::text("4."),
        ],
    );
    let unmarked = request
        .clone()
        .cache(tool_runtime::provider::Cache::default().without_marks());
    let finished =
        pollster::block_on(model.run(&Agent::new(&tools), &Context::new(), "Price?", &unmarked))
            .unwrap();
    let usage = finished.usage();
    assert_eq!(
        (usage.cache_read_tokens, usage.cache_write_tokens),
        (0, 0),
        "{usage:?}"
    );
    assert!(usage.input_tokens > 0);
    // A conversation whose start changed (a host edits its first message) reads only what it
    // kept before the edit.
    let model = TestModel::scripted(
        Api::OPENAI_CHAT,
        [Turn::text("One."), Turn::text("Two."), Turn::text("Three.")],
    )
    .allowing_prefix_changes();
    let send = |c: &Conversation| model.respond(&c.request(&request).unwrap()).unwrap();
    let mut conversation = Conversation::new(Api::OPENAI_CHAT);
    conversation.push_user("First question, long enough to be worth a cache of its own.");
    let read = |raw: &Value| {
        Api::OPENAI_CHAT
            .provider()
            .read_info(raw)
            .cache_read_tokens
            .unwrap_or(0)
    };
    assert_eq!(
        read(&send(&conversation)),
        0,
        "nothing before the first request"
    );
    conversation.push_user("Second.");
    let appended = read(&send(&conversation));
    conversation.messages[0] = Api::OPENAI_CHAT.provider().user_message("Edited.");
    conversation.push_user("Third.");
    let edited = read(&send(&conversation));
    // (The tool list before the messages is still read from the cache; the edited message
    // and everything after it are not.)
    let first = "First question, long enough to be worth a cache of its own.".len() as u64 / 4;
    assert!(edited + first <= appended, "{appended} {edited}");
    assert!(model.prefix_kept() < 1.0);
}

#[test]
fn requests_carry_the_cache_hints_each_api_takes() {
    use tool_runtime::provider::{Cache, CacheTtl, PrefixMismatch};
    let tools = tools();
    let request = Request::new("model").tools(&tools).system("Be brief.");
    let written = |api: Api, request: &Request<'_>| {
        let mut conversation = Conversation::new(api);
        conversation.push_user("hi");
        conversation.request(request).unwrap()
    };
    // Anthropic: automatic caching, the mark on the last block; an hour when asked.
    let http = written(Api::ANTHROPIC, &request);
    assert_eq!(http.body["cache_control"], json!({"type": "ephemeral"}));
    let hour = request
        .clone()
        .cache(Cache::default().ttl(CacheTtl::OneHour));
    assert_eq!(
        written(Api::ANTHROPIC, &hour).body["cache_control"],
        json!({"type": "ephemeral", "ttl": "1h"})
    );
    let unmarked = request.clone().cache(Cache::default().without_marks());
    assert!(
        written(Api::ANTHROPIC, &unmarked)
            .body
            .get("cache_control")
            .is_none()
    );
    // Bedrock: a cache point after the system text, after the tools, and closing the last
    // message; none when unmarked.
    let body = written(Api::BEDROCK_CONVERSE, &request).body;
    let point = json!({"cachePoint": {"type": "default"}});
    assert_eq!(body["system"].as_array().unwrap().last(), Some(&point));
    assert_eq!(
        body["toolConfig"]["tools"].as_array().unwrap().last(),
        Some(&point)
    );
    assert_eq!(
        body["messages"][0]["content"].as_array().unwrap().last(),
        Some(&point)
    );
    assert!(
        !written(Api::BEDROCK_CONVERSE, &unmarked)
            .body
            .to_string()
            .contains("cachePoint")
    );
    // OpenAI: the key and the retention, when the host gives them.
    let keyed = request
        .clone()
        .cache(Cache::default().retention("24h"))
        .cache_key("conversation-42");
    for api in [Api::OPENAI_CHAT, Api::OPENAI_RESPONSES] {
        let body = written(api, &keyed).body;
        assert_eq!(body["prompt_cache_key"], "conversation-42", "{api}");
        assert_eq!(body["prompt_cache_retention"], "24h", "{api}");
        assert!(
            written(api, &request)
                .body
                .get("prompt_cache_key")
                .is_none(),
            "{api}"
        );
    }
    // Gemini's explicit cache holds the system text and the tools: the request leaves them out.
    let cached = request
        .clone()
        .cache(Cache::default().cached_content("cachedContents/abc123"));
    let body = written(Api::GEMINI, &cached).body;
    assert_eq!(body["cachedContent"], "cachedContents/abc123");
    for left_out in ["systemInstruction", "tools", "toolConfig"] {
        assert!(body.get(left_out).is_none(), "{left_out}");
    }
    // The prefix check's behaviour, where the host asks for one.
    let dropping = request.clone().prefix_mismatch(PrefixMismatch::DropBlock);
    let http = written(Api::ANTHROPIC, &dropping);
    assert_eq!(
        http.body["thinking"]["block_binding"],
        json!({"prefix_mismatch_behavior": "drop_block"})
    );
    assert!(
        http.headers
            .iter()
            .any(|(k, v)| k == "anthropic-beta"
                && v.contains("thinking-binding-controls-2026-08-01")),
        "{:?}",
        http.headers
    );
    // A host's own thinking settings merge with it.
    let adaptive = dropping.extra("thinking", json!({"type": "adaptive"}));
    let thinking = &written(Api::ANTHROPIC, &adaptive).body["thinking"];
    assert_eq!(thinking["type"], "adaptive");
    assert_eq!(
        thinking["block_binding"]["prefix_mismatch_behavior"],
        "drop_block"
    );
    let bedrock = written(
        Api::BEDROCK_CONVERSE,
        &request.clone().prefix_mismatch(PrefixMismatch::Error),
    );
    assert_eq!(
        bedrock.body["additionalModelRequestFields"]["thinking"]["block_binding"]["prefix_mismatch_behavior"],
        "error"
    );
}

/// A run stopped by its budget goes on from where it stopped, with a larger budget, and its
/// usage carried on; calls past the tool-call limit do not run.
#[test]
fn a_budget_stops_a_run_which_goes_on_with_a_larger_one() {
    use tool_runtime::agent::{AgentError, Budget, Limit, Stopped};
    let tools = tools();
    let request = Request::new("model").tools(&tools);
    // A model that looks up a price twice per turn, three turns, then answers.
    let model = TestModel::function(Api::OPENAI_CHAT, |sent| {
        let turns = sent
            .messages
            .iter()
            .filter(|m| matches!(m, Message::Model { .. }))
            .count();
        if turns < 3 {
            Turn::call("lookup_price", json!({"order": "ORD-1"}))
                .and_call("lookup_price", json!({"order": "ORD-2"}))
        } else {
            Turn::text("Both cost 4.")
        }
    });
    let cx = Context::new();
    let agent = Agent::new(&tools).budget(Budget::new().tool_calls(3));
    let err = pollster::block_on(model.run(&agent, &cx, "Prices of ORD-1 and ORD-2?", &request))
        .unwrap_err();
    let AgentError::OverBudget(stopped) = err else {
        panic!("{err:?}")
    };
    assert_eq!(
        stopped.limit,
        Limit::ToolCalls {
            allowed: 3,
            used: 3,
            asked: 2
        }
    );
    assert_eq!(stopped.usage.tool_calls, 3);
    assert_eq!(stopped.usage.requests, 2);
    // The call past the limit is answered as not run: the conversation is whole.
    let last = model.requests().len();
    let saved = serde_json::to_string(&*stopped).unwrap();
    let stopped: Stopped = serde_json::from_str(&saved).unwrap();
    let text = stopped.conversation.messages.last().unwrap().to_string();
    assert!(text.contains("budget of tool calls is spent"), "{text}");
    // Stopped again at once under the same budget, without a request.
    let err =
        pollster::block_on(agent.resume_stopped(&cx, stopped.clone(), model.sender(&request)))
            .unwrap_err();
    assert!(matches!(err, AgentError::OverBudget(_)), "{err:?}");
    // A larger budget: it goes on, and only appends.
    let larger = Agent::new(&tools).budget(Budget::new().tool_calls(10).requests(10));
    let finished =
        pollster::block_on(larger.resume_stopped(&cx, stopped, model.sender(&request))).unwrap();
    let Finished::Answered { usage, .. } = finished else {
        panic!("{finished:?}")
    };
    assert_eq!(usage.requests, 4);
    assert_eq!(usage.tool_calls, 5);
    assert!(model.requests().len() > last);
    assert_eq!(model.prefix_kept(), 1.0);
}

/// A provider's token counts are untrusted: sums past `u64::MAX` stay at it, in what a
/// response reads and in a run's usage, so a budget still stops the run (before, a debug build
/// panicked in the agent, and a release build wrapped the sum to a small number under any
/// budget).
#[test]
fn token_counts_past_the_largest_number_stay_at_it_and_a_budget_still_stops() {
    use tool_runtime::agent::{AgentError, Budget, Limit};
    use tool_runtime::provider::TurnUsage;
    let max = u64::MAX;
    let anthropic = json!({"usage": {"input_tokens": max, "cache_read_input_tokens": 1,
        "cache_creation_input_tokens": 1, "output_tokens": 0}});
    let info = Api::ANTHROPIC.provider().read_info(&anthropic);
    assert_eq!(info.input_tokens, Some(max));
    let gemini = json!({"usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": max,
        "thoughtsTokenCount": 1}});
    assert_eq!(
        Api::GEMINI.provider().read_info(&gemini).output_tokens,
        Some(max)
    );
    // Two turns of just over half the largest number each: their sum passes it.
    let half = max / 2 + 1;
    let tools = tools();
    let request = Request::new("model").tools(&tools);
    let model = TestModel::scripted(
        Api::OPENAI_CHAT,
        [
            Turn::call("lookup_price", json!({"order": "ORD-1"}))
                .with_usage(TurnUsage::new(half, half)),
            Turn::call("lookup_price", json!({"order": "ORD-2"}))
                .with_usage(TurnUsage::new(half, half)),
            Turn::text("Both cost 4."),
        ],
    );
    let agent = Agent::new(&tools).budget(Budget::new().input_tokens(max - 1));
    let err =
        pollster::block_on(model.run(&agent, &Context::new(), "Prices?", &request)).unwrap_err();
    let AgentError::OverBudget(stopped) = err else {
        panic!("{err:?}")
    };
    assert_eq!(
        stopped.limit,
        Limit::InputTokens {
            allowed: max - 1,
            used: max
        }
    );
    assert_eq!(stopped.usage.output_tokens, max);
    assert_eq!(stopped.usage.requests, 2);
}
