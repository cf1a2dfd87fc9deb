//! Streamed responses of the five model APIs: recorded event streams assembled into the whole
//! response each API would have returned, split at random bytes, broken in every way the
//! stream can break; and the agent loop over them (a call starts before the response ends,
//! the conversation is the unstreamed one, dropping the stream cancels, a stall ends the run).
//!
//! The recordings (`tests/recorded/stream/`) are written from each API's streaming reference:
//! Chat Completions <https://platform.openai.com/docs/api-reference/chat-streaming> (tool-call
//! fragments by `index`, a usage chunk, `[DONE]`), Responses
//! <https://platform.openai.com/docs/api-reference/responses-streaming> (a reasoning item with
//! its summary and `encrypted_content`, `function_call_arguments.delta`/`.done`,
//! `response.completed`), Anthropic <https://docs.anthropic.com/en/docs/build-with-claude/streaming>
//! (`thinking_delta` and `signature_delta`, `input_json_delta`, `ping`), Gemini
//! <https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent> (`alt=sse`
//! chunks, thought parts, a `thoughtSignature`), Bedrock
//! <https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html>
//! (the events as the AWS SDK decodes them). Each `.json` beside a stream is the whole response
//! the API returns for the same turn unstreamed.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{Stream, StreamExt, stream};
use proptest::prelude::*;
use serde_json::{Value, json};
use tool_runtime::agent::{
    Agent, AgentError, AgentEvent, Conversation, Finished, Outcome, read_turn,
};
use tool_runtime::provider::{
    Api, CallArguments, Delta, Finish, ReadError, ResponseStream, StreamEvent, aws_events,
    sse_events,
};
use tool_runtime::{Context, Tool, ToolSet, tool};

type Boxed = Box<dyn std::error::Error + Send + Sync>;

fn recorded(name: &str) -> String {
    let path = format!("{}/recorded/stream/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The SSE recordings, and Bedrock's (one decoded event per line).
const STREAMS: &[(Api, &str)] = &[
    (Api::OPENAI_CHAT, "openai-chat"),
    (Api::OPENAI_CHAT, "openai-chat-refusal"),
    (Api::OPENAI_RESPONSES, "openai-responses"),
    (Api::ANTHROPIC, "anthropic"),
    (Api::ANTHROPIC, "anthropic-refusal"),
    (Api::GEMINI, "gemini"),
    (Api::BEDROCK_CONVERSE, "bedrock-converse"),
];

/// The events of a body delivered in `chunks`, through the SSE reader.
fn sse_from_chunks(chunks: Vec<Vec<u8>>) -> Vec<StreamEvent> {
    let body = stream::iter(
        chunks
            .into_iter()
            .map(|c| Ok::<_, std::io::Error>(std::io::Cursor::new(c))),
    );
    pollster::block_on(sse_events(body).map(|e| e.unwrap()).collect())
}

fn events(name: &str) -> Vec<StreamEvent> {
    if name.starts_with("bedrock") {
        return recorded(&format!("{name}.jsonl"))
            .lines()
            .map(StreamEvent::data)
            .collect();
    }
    sse_from_chunks(vec![recorded(&format!("{name}.sse")).into_bytes()])
}

fn whole(name: &str) -> Value {
    serde_json::from_str(&recorded(&format!("{name}.json"))).unwrap()
}

/// The assembled response and each delta with the number of the event that produced it
/// (`events.len()` for the end of the stream).
fn assemble(api: Api, events: &[StreamEvent]) -> (Value, Vec<(usize, Delta)>) {
    let mut stream = ResponseStream::new(api);
    let mut deltas = Vec::new();
    for (i, event) in events.iter().enumerate() {
        let added = stream.push(event).unwrap_or_else(|e| panic!("{e}"));
        deltas.extend(added.into_iter().map(|d| (i, d)));
    }
    let (response, last) = stream.finish().unwrap_or_else(|e| panic!("{e}"));
    deltas.extend(last.into_iter().map(|d| (events.len(), d)));
    (response, deltas)
}

#[test]
fn each_api_stream_assembles_into_the_response_it_sends_whole() {
    for &(api, name) in STREAMS {
        let events = events(name);
        let (response, deltas) = assemble(api, &events);
        let expected = whole(name);
        assert_eq!(response, expected, "{name}");
        // Read exactly as the unstreamed response: calls, text, stop reason, the turn kept.
        let streamed = read_turn(api, &response).unwrap();
        assert_eq!(streamed, read_turn(api, &expected).unwrap(), "{name}");
        // The calls handed out while streaming are the response's, byte for byte, in order.
        let calls: Vec<_> = deltas
            .iter()
            .filter_map(|(_, d)| match d {
                Delta::Call(c) => Some(c.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(calls, streamed.calls, "{name}");
        // The text deltas make the answer text.
        let text: String = deltas
            .iter()
            .filter_map(|(_, d)| match d {
                Delta::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            Some(text).filter(|t| !t.is_empty()),
            streamed.reply.text,
            "{name}"
        );
        // Each call is ready at the event that completes it, not at the end of the response.
        let at: Vec<usize> = deltas
            .iter()
            .filter(|(_, d)| matches!(d, Delta::Call(_)))
            .map(|(at, _)| *at)
            .collect();
        let expected: &[usize] = match name {
            // `call_a`'s JSON is complete and `call_b` has started; `call_b` at `finish_reason`.
            "openai-chat" => &[5, 7],
            // `response.output_item.done` of each.
            "openai-responses" => &[13, 18],
            // `content_block_stop` of each `tool_use`.
            "anthropic" => &[15, 18],
            // Each `functionCall` part arrives whole.
            "gemini" => &[2, 3],
            // `contentBlockStop` of each `toolUse`.
            "bedrock-converse" => &[8, 11],
            _ => &[],
        };
        assert_eq!(at, expected, "{name}");
    }
}

#[test]
fn reasoning_goes_back_with_its_signatures() {
    let thinking = |name: &str, api: Api| -> String {
        let (_, deltas) = assemble(api, &events(name));
        deltas
            .into_iter()
            .filter_map(|(_, d)| match d {
                Delta::Thinking(t) => Some(t),
                _ => None,
            })
            .collect()
    };
    let anthropic = read_turn(
        Api::ANTHROPIC,
        &assemble(Api::ANTHROPIC, &events("anthropic")).0,
    )
    .unwrap();
    assert_eq!(
        anthropic.append[0]["content"][0],
        json!({"type": "thinking", "thinking": "Sari bertanya soal cuti; cek kuotanya.",
               "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"})
    );
    assert_eq!(
        thinking("anthropic", Api::ANTHROPIC),
        "Sari bertanya soal cuti; cek kuotanya."
    );
    let gemini = read_turn(Api::GEMINI, &assemble(Api::GEMINI, &events("gemini")).0).unwrap();
    assert_eq!(gemini.append[0]["parts"][1]["thoughtSignature"], "c2lnLTE=");
    assert_eq!(
        thinking("gemini", Api::GEMINI),
        "Pengguna ingin tahu sisa cutinya."
    );
    let responses = read_turn(
        Api::OPENAI_RESPONSES,
        &assemble(Api::OPENAI_RESPONSES, &events("openai-responses")).0,
    )
    .unwrap();
    assert_eq!(responses.append[0]["encrypted_content"], "gAAAAABenc==");
    let bedrock = read_turn(
        Api::BEDROCK_CONVERSE,
        &assemble(Api::BEDROCK_CONVERSE, &events("bedrock-converse")).0,
    )
    .unwrap();
    assert_eq!(
        bedrock.append[0]["content"][0]["reasoningContent"]["reasoningText"]["signature"],
        "sig-bedrock-1"
    );
}

#[test]
fn a_refusal_mid_stream_is_read_as_a_refusal() {
    for (api, name, message) in [
        (
            Api::OPENAI_CHAT,
            "openai-chat-refusal",
            "Maaf, saya tidak bisa membantu permintaan itu.",
        ),
        (
            Api::ANTHROPIC,
            "anthropic-refusal",
            "Saya bisa bantu soal cuti, tetapi tidak itu.",
        ),
    ] {
        let turn = read_turn(api, &assemble(api, &events(name)).0).unwrap();
        assert_eq!(
            turn.reply.finish,
            Finish::Refused {
                message: message.into()
            }
        );
        assert!(turn.calls.is_empty());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// The same bytes cut anywhere (inside a line, a JSON string, a UTF-8 character) give the
    /// same events, the same calls and the same response.
    #[test]
    fn split_at_random_bytes_the_assembly_is_identical(
        which in 0usize..6,
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..24),
    ) {
        let sse: Vec<_> = STREAMS.iter().filter(|(_, n)| !n.starts_with("bedrock")).collect();
        let &&(api, name) = &sse[which % sse.len()];
        let bytes = recorded(&format!("{name}.sse")).into_bytes();
        let mut at: Vec<usize> = cuts.iter().map(|i| i.index(bytes.len())).collect();
        at.sort_unstable();
        let mut chunks = Vec::new();
        let mut from = 0;
        for cut in at.into_iter().chain([bytes.len()]) {
            chunks.push(bytes[from..cut].to_vec());
            from = cut;
        }
        let split = sse_from_chunks(chunks);
        prop_assert_eq!(&split, &events(name));
        prop_assert_eq!(assemble(api, &split), assemble(api, &events(name)));
    }
}

/// The error a stream ends with.
/// An error and its causes, as an error reporter prints them: `what: why: ...`.
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(&format!(": {c}"));
        cause = c.source();
    }
    text
}

fn broken(api: Api, events: &[StreamEvent]) -> String {
    let mut stream = ResponseStream::new(api);
    for event in events {
        if let Err(e) = stream.push(event) {
            return chain(&e);
        }
    }
    match stream.finish() {
        Err(e) => chain(&e),
        Ok((response, _)) => panic!("assembled a broken stream: {response}"),
    }
}

fn anthropic_event(data: Value) -> StreamEvent {
    StreamEvent::named(data["type"].as_str().unwrap(), data.to_string())
}

#[test]
fn event_types_added_later_are_passed_over() {
    // Anthropic: "your code should handle unknown event types gracefully".
    let mut anthropic = events("anthropic");
    anthropic.insert(
        3,
        anthropic_event(json!({"type": "content_block_pause", "index": 0})),
    );
    assert_eq!(assemble(Api::ANTHROPIC, &anthropic).0, whole("anthropic"));
    let mut responses = events("openai-responses");
    responses.insert(
        5,
        StreamEvent::named("keepalive", r#"{"type":"keepalive","sequence_number":0}"#),
    );
    assert_eq!(
        assemble(Api::OPENAI_RESPONSES, &responses).0,
        whole("openai-responses")
    );
    let mut bedrock = events("bedrock-converse");
    bedrock.insert(
        2,
        StreamEvent::data(r#"{"contentBlockPause": {"contentBlockIndex": 0}}"#),
    );
    assert_eq!(
        assemble(Api::BEDROCK_CONVERSE, &bedrock).0,
        whole("bedrock-converse")
    );
    // Chat: a compatible server's chunk that is not `chat.completion.chunk` (Azure's first).
    let mut chat = events("openai-chat");
    chat.insert(0, StreamEvent::data(
        r#"{"id":"","object":"","created":0,"model":"","choices":[],"prompt_filter_results":[]}"#,
    ));
    let (response, _) = assemble(Api::OPENAI_CHAT, &chat);
    assert_eq!(response["choices"], whole("openai-chat")["choices"]);
}

/// Whether assembling and reading `events` ends (in a result or an error) without a panic.
fn reads_without_panic(api: Api, events: &[StreamEvent]) -> bool {
    std::panic::catch_unwind(|| {
        let mut stream = ResponseStream::new(api);
        for e in events {
            if stream.push(e).is_err() {
                return;
            }
        }
        if let Ok((response, _)) = stream.finish() {
            let _ = read_turn(api, &response);
        }
    })
    .is_ok()
}

/// Every value of every recorded event replaced, one at a time, by values of the wrong type:
/// the assembly may fail, never panic.
#[test]
fn provider_data_of_the_wrong_type_is_an_error_never_a_panic() {
    fn paths(v: &Value, at: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        let children: Vec<(String, &Value)> = match v {
            Value::Object(m) => m.iter().map(|(k, v)| (k.clone(), v)).collect(),
            Value::Array(a) => a
                .iter()
                .enumerate()
                .map(|(i, v)| (i.to_string(), v))
                .collect(),
            _ => return,
        };
        for (key, child) in children {
            at.push(key);
            out.push(at.clone());
            paths(child, at, out);
            at.pop();
        }
    }
    fn replace(v: &mut Value, path: &[String], with: &Value) {
        let mut slot = v;
        for key in path {
            slot = match slot {
                Value::Object(m) => m.get_mut(key).unwrap(),
                Value::Array(a) => &mut a[key.parse::<usize>().unwrap()],
                _ => unreachable!(),
            };
        }
        *slot = with.clone();
    }
    let wrong = [
        json!(null),
        json!(7),
        json!("x"),
        json!([]),
        json!({}),
        json!([{}]),
    ];
    let mut tried = 0;
    for &(api, name) in STREAMS {
        let events = events(name);
        for (i, event) in events.iter().enumerate() {
            let Ok(data) = serde_json::from_str::<Value>(&event.data) else {
                continue;
            };
            let mut all = vec![Vec::new()];
            paths(&data, &mut Vec::new(), &mut all);
            for path in all {
                for with in &wrong {
                    let mut changed = data.clone();
                    replace(&mut changed, &path, with);
                    let mut broken = events.clone();
                    broken[i].data = changed.to_string();
                    assert!(
                        reads_without_panic(api, &broken),
                        "{name}: event {i} with {path:?} = {with}"
                    );
                    tried += 1;
                }
            }
        }
    }
    // And a stray event of each wrong shape after the last one.
    for &(api, name) in STREAMS {
        for with in &wrong {
            let mut more = events(name);
            let last = more.last().unwrap().clone();
            more.push(StreamEvent {
                data: with.to_string(),
                ..last
            });
            assert!(
                reads_without_panic(api, &more),
                "{name}: a last event {with}"
            );
            tried += 1;
        }
    }
    assert!(tried > 3000, "{tried}");
}

#[test]
fn a_response_over_the_size_limit_is_cut_off() {
    let mut stream = ResponseStream::new(Api::ANTHROPIC).max_bytes(1000);
    let mut result = Ok(Vec::new());
    for event in events("anthropic") {
        result = stream.push(&event);
        if result.is_err() {
            break;
        }
    }
    let e = result.unwrap_err();
    assert!(e.error.to_string().contains("exceed 1000 bytes"), "{e}");
}

#[test]
fn a_broken_stream_ends_with_an_error_naming_the_event() {
    let anthropic = events("anthropic");
    let n = anthropic.len();
    // Truncated: the body ended before `message_stop`.
    assert_eq!(
        broken(Api::ANTHROPIC, &anthropic[..n - 2]),
        "Anthropic Messages stream, the end of the stream after 19 events: the stream ended \
         before `message_stop`"
    );
    // Out of order: a delta for a block that has not started.
    let mut out_of_order = anthropic.clone();
    out_of_order.swap(11, 12);
    assert_eq!(
        broken(Api::ANTHROPIC, &out_of_order),
        "Anthropic Messages stream, event 12 (content_block_delta): a delta for block 2, which \
         never started"
    );
    // A fragment that never completes its JSON.
    let mut cut_json = anthropic.clone();
    cut_json[14] = anthropic_event(json!({"type": "content_block_delta", "index": 2,
        "delta": {"type": "input_json_delta", "partial_json": "01"}}));
    let message = broken(Api::ANTHROPIC, &cut_json);
    assert!(
        message.starts_with(
            "Anthropic Messages stream, event 16 (content_block_stop): the input of block 2 \
             (\"tool_use\") ended with incomplete JSON"
        ),
        "{message}"
    );
    // An unknown delta inside a block: skipping it could lose part of the block.
    let mut unknown = anthropic.clone();
    unknown.insert(
        3,
        anthropic_event(json!({"type": "content_block_delta", "index": 0,
        "delta": {"type": "thinking_summary_delta", "text": "?"}})),
    );
    assert_eq!(
        broken(Api::ANTHROPIC, &unknown),
        "Anthropic Messages stream, event 4 (content_block_delta): unknown delta type \
         \"thinking_summary_delta\""
    );
    // An error event from the provider.
    let mut overloaded = anthropic[..5].to_vec();
    overloaded.push(anthropic_event(json!({"type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"}})));
    assert_eq!(
        broken(Api::ANTHROPIC, &overloaded),
        "Anthropic Messages stream, event 6 (error): the provider sent an error: \
         \"overloaded_error\": \"Overloaded\""
    );

    // Chat: a call whose arguments never complete before `finish_reason`.
    let mut chat = events("openai-chat");
    chat.remove(6);
    assert_eq!(
        broken(Api::OPENAI_CHAT, &chat),
        "OpenAI Chat Completions stream, event 7 (chat.completion.chunk): tool call 1 ended with \
         incomplete JSON arguments: {\"a\": 2, "
    );
    // Chat: the token limit cut a call off.
    let mut cut = events("openai-chat")[..7].to_vec();
    cut.remove(6);
    cut.push(StreamEvent::data(
        r#"{"id":"chatcmpl-9","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}"#,
    ));
    assert_eq!(
        broken(Api::OPENAI_CHAT, &cut),
        "OpenAI Chat Completions stream, event 7 (chat.completion.chunk): the response was cut \
         off (`finish_reason` length) before tool call 1 was complete: {\"a\": 2, "
    );
    // Chat: cut before `finish_reason`.
    assert_eq!(
        broken(Api::OPENAI_CHAT, &events("openai-chat")[..6]),
        "OpenAI Chat Completions stream, the end of the stream after 6 events: the stream ended \
         before a chunk with `finish_reason`"
    );
    // Responses: `.done` arguments that differ from the deltas.
    let mut responses = events("openai-responses");
    responses[11].data = responses[11].data.replace("K-001", "K-002");
    let message = broken(Api::OPENAI_RESPONSES, &responses);
    assert!(
        message.starts_with(
            "OpenAI Responses stream, event 13 (response.function_call_arguments.done): output \
             item 1's arguments are"
        ),
        "{message}"
    );
    // Responses: a call whose deltas, `.done` and `output_item.done` all agree on arguments
    // that are not complete JSON ends the run, as in the other APIs; it never reaches a tool.
    let cut_short: Vec<StreamEvent> = events("openai-responses")
        .into_iter()
        .map(|mut e| {
            e.data = e.data.replace(r#"\"K-001\"}"#, r#"\"K-001\""#);
            e
        })
        .collect();
    let message = broken(Api::OPENAI_RESPONSES, &cut_short);
    assert!(
        message.starts_with(
            "OpenAI Responses stream, event 13 (response.function_call_arguments.done): output \
             item 1 (call \"call_a\") ended with incomplete JSON"
        ),
        "{message}"
    );
    // Chat: a chunk of another shape than the API's is an error, never passed over (a stream of
    // them would assemble into an empty answer).
    for wrong in [
        "null",
        "[]",
        "5",
        r#""chunk""#,
        r#"{"choices": "nope"}"#,
        r#"{"choices": {}}"#,
        r#"{"choices": [5]}"#,
        r#"{"choices": [null]}"#,
        r#"{"choices": [{"index": "0", "delta": {"content": "x"}}]}"#,
        r#"{"choices": [{"index": 0, "delta": "x"}]}"#,
        r#"{"choices": [{"index": 0, "delta": {"content": 5}}]}"#,
        r#"{"choices": [{"index": 0, "delta": {"content": ["x"]}}]}"#,
        r#"{"choices": [{"index": 0, "delta": {"refusal": {}}}]}"#,
        r#"{"choices": [{"index": 0, "delta": {"tool_calls": {}}}]}"#,
        r#"{"choices": [{"index": 0, "delta": {}, "finish_reason": 1}]}"#,
        r#"{"choices": [], "usage": "many"}"#,
    ] {
        let mut chat = events("openai-chat");
        chat.insert(2, StreamEvent::data(wrong));
        let message = broken(Api::OPENAI_CHAT, &chat);
        assert!(
            message.starts_with("OpenAI Chat Completions stream, event 3"),
            "{wrong}: {message}"
        );
        // Alone, before `[DONE]`: never an empty answer.
        let alone = [StreamEvent::data(wrong), StreamEvent::data("[DONE]")];
        let message = broken(Api::OPENAI_CHAT, &alone);
        assert!(message.contains("event 1"), "{wrong}: {message}");
    }
    // Responses: cut off by the token limit before the second call was done.
    let mut incomplete = events("openai-responses")[..16].to_vec();
    let mut last = whole("openai-responses");
    last["status"] = json!("incomplete");
    last["incomplete_details"] = json!({"reason": "max_output_tokens"});
    last["output"][2]["status"] = json!("incomplete");
    incomplete.push(StreamEvent::named(
        "response.incomplete",
        json!({"type": "response.incomplete", "sequence_number": 99, "response": last}).to_string(),
    ));
    assert_eq!(
        broken(Api::OPENAI_RESPONSES, &incomplete),
        "OpenAI Responses stream, event 17 (response.incomplete): the response was cut off \
         (\"max_output_tokens\") before call \"call_b\" was complete"
    );
    // Gemini: no chunk with a `finishReason`.
    let gemini = events("gemini");
    assert_eq!(
        broken(Api::GEMINI, &gemini[..gemini.len() - 1]),
        "Gemini generateContent stream, the end of the stream after 3 events: the stream ended \
         before a chunk with `finishReason`"
    );
    // Bedrock: an exception event, and a stream without `messageStop`.
    let bedrock = events("bedrock-converse");
    let mut throttled = bedrock[..3].to_vec();
    throttled.push(StreamEvent::named(
        "throttlingException",
        r#"{"message": "Too many requests"}"#,
    ));
    assert_eq!(
        broken(Api::BEDROCK_CONVERSE, &throttled),
        "Amazon Bedrock Converse stream, event 4 (throttlingException): the provider sent an \
         error: throttlingException: \"Too many requests\""
    );
    // An error the provider sent is told apart from a broken stream: a host may retry it.
    let mut stream = ResponseStream::new(Api::BEDROCK_CONVERSE);
    let e = throttled.iter().find_map(|e| stream.push(e).err()).unwrap();
    assert!(matches!(e.error, ReadError::Provider { .. }), "{e:?}");
    assert_eq!(
        broken(Api::BEDROCK_CONVERSE, &bedrock[..12]),
        "Amazon Bedrock Converse stream, the end of the stream after 12 events: the stream \
         ended before `messageStop`"
    );
}

// ---- The agent loop over streams.

#[tool(description = "Menjumlahkan dua bilangan bulat dan mengembalikan hasilnya.")]
fn jumlah(
    #[arg(description = "Bilangan pertama", range = -1000..=1000)] a: i32,
    #[arg(description = "Bilangan kedua", range = -1000..=1000)] b: i32,
) -> i32 {
    a + b
}

/// `cek_sisa_cuti` of the recordings, defined at run time; counts its runs.
fn cek_sisa_cuti(runs: Arc<AtomicUsize>) -> Tool {
    let schema = json!({"type": "object", "additionalProperties": false, "required": ["nik"],
        "properties": {"nik": {"type": "string", "description": "NIK karyawan, mis. K-001",
                               "pattern": "^K-[0-9]{3}$"}}});
    Tool::define(
        "cek_sisa_cuti",
        "Ambil sisa kuota cuti tahunan seorang karyawan berdasarkan NIK.",
        schema,
    )
    .build_fn(move |args| {
        let runs = runs.clone();
        async move {
            runs.fetch_add(1, Ordering::SeqCst);
            Ok(json!({"nik": args["nik"], "sisa_hari": 12}))
        }
    })
    .unwrap()
}

fn tools(runs: Arc<AtomicUsize>) -> ToolSet {
    ToolSet::new([jumlah::tool()])
        .unwrap()
        .with_tools([cek_sisa_cuti(runs)])
        .unwrap()
}

type EventStream = futures_util::stream::BoxStream<'static, Result<StreamEvent, Boxed>>;

fn ready(events: Vec<StreamEvent>) -> EventStream {
    stream::iter(events.into_iter().map(Ok)).boxed()
}

fn collect(stream: tool_runtime::agent::AgentStream<'_>) -> Vec<AgentEvent> {
    pollster::block_on(stream.collect())
}

#[test]
fn a_streamed_turn_goes_into_the_conversation_exactly_as_the_unstreamed_one() {
    for (api, name) in [
        (Api::OPENAI_CHAT, "openai-chat"),
        (Api::OPENAI_RESPONSES, "openai-responses"),
        (Api::ANTHROPIC, "anthropic"),
        (Api::GEMINI, "gemini"),
        (Api::BEDROCK_CONVERSE, "bedrock-converse"),
    ] {
        let runs = Arc::new(AtomicUsize::new(0));
        let set = tools(runs.clone());
        let agent = Agent::new(&set).max_turns(1);
        let cx = Context::new();
        let mut start = Conversation::new(api);
        start.push_user("Berapa sisa cuti saya, dan berapa 2 + 3?");

        let unstreamed = pollster::block_on(agent.run(&cx, start.clone(), |_: &Conversation| {
            let raw = whole(name);
            async move { Ok::<_, String>(raw) }
        }))
        .unwrap();
        let streamed = collect(agent.run_streamed(&cx, start, |_: &Conversation| {
            let events = events(name);
            async move { Ok::<_, Boxed>(ready(events)) }
        }));
        let Some(AgentEvent::Done(Ok(done))) = streamed.last() else {
            panic!("{name}: {streamed:?}");
        };
        assert_eq!(done, &unstreamed, "{name}");
        assert!(matches!(done, Finished::TurnLimit { .. }), "{name}");
        assert_eq!(
            runs.load(Ordering::SeqCst),
            2,
            "{name}: each run ran the tool once"
        );
        // Each call was announced, then its outcome, and both answers are successes.
        let started = streamed
            .iter()
            .filter(|e| matches!(e, AgentEvent::CallStarted(_)))
            .count();
        let finished: Vec<_> = streamed
            .iter()
            .filter_map(|e| match e {
                AgentEvent::CallFinished(Outcome::Answered(a)) => Some(a.is_error),
                _ => None,
            })
            .collect();
        assert_eq!((started, finished), (2, vec![false, false]), "{name}");
    }
}

fn anthropic_jumlah_turn() -> Vec<StreamEvent> {
    let message = json!({"id": "msg_02", "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-5", "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": 40, "output_tokens": 1}});
    [
        json!({"type": "message_start", "message": message}),
        json!({"type": "content_block_start", "index": 0,
               "content_block": {"type": "tool_use", "id": "toolu_9", "name": "jumlah", "input": {}}}),
        json!({"type": "content_block_delta", "index": 0,
               "delta": {"type": "input_json_delta", "partial_json": "{\"a\": 2, \"b\": 3}"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null},
               "usage": {"output_tokens": 20}}),
        json!({"type": "message_stop"}),
    ]
    .into_iter()
    .map(anthropic_event)
    .collect()
}

fn anthropic_answer(text: &str) -> Vec<StreamEvent> {
    let message = json!({"id": "msg_03", "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-5", "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": 60, "output_tokens": 1}});
    let (a, b) = text.split_at(text.len() / 2);
    [
        json!({"type": "message_start", "message": message}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": a}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": b}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null},
               "usage": {"output_tokens": 9}}),
        json!({"type": "message_stop"}),
    ]
    .into_iter()
    .map(anthropic_event)
    .collect()
}

#[test]
fn a_call_starts_before_the_response_ends() {
    // `jumlah` tells the stream when it runs; the stream's last events wait for that.
    let (tx, rx) = tokio::sync::oneshot::channel();
    let tx = Arc::new(Mutex::new(Some(tx)));
    let signalling = Tool::define(
        "jumlah",
        "Menjumlahkan dua bilangan bulat dan mengembalikan hasilnya.",
        jumlah::tool().input_schema().clone(),
    )
    .build_fn(move |args| {
        if let Some(tx) = tx.lock().unwrap().take() {
            let _ = tx.send(());
        }
        async move {
            Ok(json!(
                args["a"].as_i64().unwrap() + args["b"].as_i64().unwrap()
            ))
        }
    })
    .unwrap();
    let set = ToolSet::new(Vec::<Tool>::new())
        .unwrap()
        .with_tools([signalling])
        .unwrap();
    // The idle limit turns "the call waited for the end of the response" into a failure
    // instead of a hang.
    let agent = Agent::new(&set).idle_timeout(Duration::from_secs(5));
    let cx = Context::new();
    let rx = Arc::new(Mutex::new(Some(rx)));
    let mut conversation = Conversation::new(Api::ANTHROPIC);
    conversation.push_user("Berapa 2 + 3?");
    let mut turn = 0;
    let run = agent.run_streamed(&cx, conversation, move |_: &Conversation| {
        turn += 1;
        let stream: EventStream = if turn == 1 {
            let mut events = anthropic_jumlah_turn();
            let last = events.split_off(4);
            let ran = rx.lock().unwrap().take().unwrap();
            let gate = stream::once(async move {
                ran.await.unwrap();
                None
            });
            stream::iter(events.into_iter().map(Some))
                .chain(gate)
                .chain(stream::iter(last.into_iter().map(Some)))
                .filter_map(|e| async move { e.map(Ok) })
                .boxed()
        } else {
            ready(anthropic_answer("Hasilnya 5."))
        };
        async move { Ok::<_, Boxed>(stream) }
    });
    let events = collect(run);
    let kinds: Vec<String> = events
        .iter()
        .map(|e| match e {
            AgentEvent::Text(t) => format!("text {t}"),
            AgentEvent::CallStarted(c) => format!("started {}", c.name),
            AgentEvent::CallFinished(Outcome::Answered(a)) => format!("finished {}", a.name),
            AgentEvent::Done(Ok(Finished::Answered { reply, .. })) => {
                format!("answered {}", reply.text.clone().unwrap_or_default())
            }
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "started jumlah",
            "finished jumlah",
            "text Hasil",
            "text nya 5.",
            "answered Hasilnya 5."
        ]
    );
}

#[test]
fn a_stalled_stream_ends_the_run_and_nothing_incomplete_runs() {
    let runs = Arc::new(AtomicUsize::new(0));
    let set = tools(runs.clone());
    let agent = Agent::new(&set).idle_timeout(Duration::from_millis(200));
    let cx = Context::new();
    // `cek_sisa_cuti`'s arguments are still arriving when the provider goes quiet.
    let anthropic = events("anthropic");
    let sent = anthropic[..14].to_vec();
    let run = agent.run_streamed(
        &cx,
        Conversation::new(Api::ANTHROPIC),
        move |_: &Conversation| {
            let stalled = ready(sent.clone()).chain(stream::pending()).boxed();
            async move { Ok::<_, Boxed>(stalled) }
        },
    );
    let events = collect(run);
    let Some(AgentEvent::Done(Err(AgentError::Stream(e)))) = events.last() else {
        panic!("{events:?}");
    };
    assert_eq!(
        chain(e),
        "Anthropic Messages stream, the stream: no event for 200ms; the provider stalled"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::CallStarted(_)))
    );
}

/// A response whose `jumlah` call is complete, after which nothing more arrives.
fn call_then_silence() -> EventStream {
    ready(anthropic_jumlah_turn()[..4].to_vec())
        .chain(stream::pending())
        .boxed()
}

/// Counts the drops of the future of a call that never ends.
struct DropCount(Arc<AtomicUsize>);

impl Drop for DropCount {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn dropping_the_host_stream_cancels_the_running_call() {
    let dropped = Arc::new(AtomicUsize::new(0));
    let count = dropped.clone();
    let forever = Tool::define(
        "jumlah",
        "Menjumlahkan dua bilangan bulat, tetapi tidak pernah selesai.",
        jumlah::tool().input_schema().clone(),
    )
    .build_fn(move |_| {
        let guard = DropCount(count.clone());
        async move {
            let _guard = guard;
            std::future::pending::<()>().await;
            Ok(json!(5))
        }
    })
    .unwrap();
    let set = ToolSet::new(Vec::<Tool>::new())
        .unwrap()
        .with_tools([forever])
        .unwrap();
    let agent = Agent::new(&set).idle_timeout(Duration::from_secs(5));
    let cx = Context::new();
    let mut run = agent.run_streamed(
        &cx,
        Conversation::new(Api::ANTHROPIC),
        |_: &Conversation| {
            // The response never ends after the call: only the host can stop the run.
            let stream = call_then_silence();
            async move { Ok::<_, Boxed>(stream) }
        },
    );
    let first = pollster::block_on(run.next());
    assert!(
        matches!(&first, Some(AgentEvent::CallStarted(c)) if c.name == "jumlah"),
        "{first:?}"
    );
    // Let the call start, then drop the stream: its future is dropped, never finished.
    let mut task = std::task::Context::from_waker(std::task::Waker::noop());
    assert!(run.poll_next_unpin(&mut task).is_pending());
    assert_eq!(dropped.load(Ordering::SeqCst), 0);
    drop(run);
    assert_eq!(dropped.load(Ordering::SeqCst), 1);
}

/// `jumlah` needing approval, alone in a set.
fn held_jumlah() -> ToolSet {
    let held = Tool::define(
        "jumlah",
        "Menjumlahkan dua bilangan bulat; perlu persetujuan.",
        jumlah::tool().input_schema().clone(),
    )
    .needs_approval(true)
    .build_fn(|_| async { Ok(json!(5)) })
    .unwrap();
    ToolSet::new(Vec::<Tool>::new())
        .unwrap()
        .with_tools([held])
        .unwrap()
}

#[test]
fn a_held_call_of_a_failed_turn_cannot_be_approved_later() {
    let set = held_jumlah();
    let agent = Agent::new(&set);
    let cx = Context::new();
    let run = agent.run_streamed(
        &cx,
        Conversation::new(Api::ANTHROPIC),
        |_: &Conversation| {
            // The call is complete and held; then the stream breaks.
            let mut events = anthropic_jumlah_turn()[..4].to_vec();
            events.push(anthropic_event(json!({"type": "content_block_pause"})));
            async move { Ok::<_, Boxed>(ready(events)) }
        },
    );
    let events = collect(run);
    let pending = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::CallFinished(Outcome::Waiting { pending, .. }) => Some(pending.clone()),
            _ => None,
        })
        .expect("the call was held");
    assert!(matches!(
        events.last(),
        Some(AgentEvent::Done(Err(AgentError::Stream(_))))
    ));
    let resumed = pollster::block_on(set.resume(&cx, &pending.ticket));
    assert!(resumed.is_err(), "{resumed:?}");
}

/// A stream type check: the host stream is `Send`, so a web server can forward it.
#[allow(dead_code)]
fn host_stream_is_send<'a>(agent: &'a Agent<'a>, cx: &'a Context) -> impl Stream + Send + 'a {
    agent.run_streamed(
        cx,
        Conversation::new(Api::GEMINI),
        |_: &Conversation| async { Ok::<_, Boxed>(ready(Vec::new())) },
    )
}

#[tool(description = "Menghitung langkah demi langkah sampai `langkah`, melaporkan kemajuan.")]
fn hitung_langkah(
    #[arg(description = "Jumlah langkah", range = 1..=10)] langkah: u32,
    #[ctx] progress: &tool_runtime::Progress,
) -> u32 {
    for i in 1..=langkah {
        progress.report(
            f64::from(i),
            Some(f64::from(langkah)),
            Some(&format!("langkah {i}")),
        );
    }
    langkah
}

#[test]
fn a_tool_reports_progress_on_the_host_stream_between_start_and_finish() {
    let set = ToolSet::new([hitung_langkah::tool()]).unwrap();
    let agent = Agent::new(&set).max_turns(1);
    let cx = Context::new();
    let events = collect(agent.run_streamed(
        &cx,
        Conversation::new(Api::ANTHROPIC),
        |_: &Conversation| {
            let events: Vec<StreamEvent> = anthropic_jumlah_turn()
                .into_iter()
                .map(|e| StreamEvent {
                    data: e
                        .data
                        .replace("\"jumlah\"", "\"hitung_langkah\"")
                        .replace(r#"{\"a\": 2, \"b\": 3}"#, r#"{\"langkah\": 3}"#),
                    ..e
                })
                .collect();
            async move { Ok::<_, Boxed>(ready(events)) }
        },
    ));
    let seen: Vec<String> = events
        .iter()
        .map(|e| match e {
            AgentEvent::CallStarted(c) => format!("started {}", c.id.as_deref().unwrap()),
            AgentEvent::Progress {
                call_id, report, ..
            } => format!(
                "{} {}/{} {}",
                call_id.as_deref().unwrap(),
                report.progress,
                report.total.unwrap(),
                report.message.as_deref().unwrap()
            ),
            AgentEvent::CallFinished(Outcome::Answered(a)) => format!("finished {}", a.text()),
            AgentEvent::Done(Ok(_)) => "done".into(),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        seen,
        [
            "started toolu_9",
            "toolu_9 1/3 langkah 1",
            "toolu_9 2/3 langkah 2",
            "toolu_9 3/3 langkah 3",
            "finished 3",
            "done"
        ]
    );
}

#[test]
fn progress_only_goes_up_and_stops_when_cancelled() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let progress = tool_runtime::Progress::new(move |r| sink.lock().unwrap().push(r.progress));
    for p in [1.0, 3.0, 2.0, 3.0, f64::NAN, 4.0] {
        progress.report(p, None, None);
    }
    progress.cancel();
    assert!(progress.is_cancelled());
    progress.report(5.0, None, None);
    assert_eq!(*seen.lock().unwrap(), [1.0, 3.0, 4.0]);
}

/// A run whose call is held for approval while the rest of the response never comes: the
/// stream, and the held call.
fn held_mid_turn<'a>(
    agent: &'a Agent<'a>,
    cx: &'a Context,
) -> (
    tool_runtime::agent::AgentStream<'a>,
    tool_runtime::PendingCall,
) {
    let mut run = agent.run_streamed(cx, Conversation::new(Api::ANTHROPIC), |_: &Conversation| {
        let stream = call_then_silence();
        async move { Ok::<_, Boxed>(stream) }
    });
    let pending = pollster::block_on(async {
        while let Some(event) = run.next().await {
            if let AgentEvent::CallFinished(Outcome::Waiting { pending, .. }) = event {
                return pending;
            }
        }
        panic!("the call was never held");
    });
    (run, pending)
}

#[test]
fn cancelling_the_host_stream_drops_the_turns_held_calls() {
    let set = held_jumlah();
    let agent = Agent::new(&set).idle_timeout(Duration::from_secs(5));
    let cx = Context::new();
    let (run, pending) = held_mid_turn(&agent, &cx);
    // The person leaves mid-turn: the held call goes with the turn.
    pollster::block_on(run.cancel());
    let resumed = pollster::block_on(set.resume(&cx, &pending.ticket));
    assert!(resumed.is_err(), "{resumed:?}");
}

#[test]
fn dropping_the_host_stream_drops_the_turns_held_calls_where_the_host_offloads() {
    let set = held_jumlah();
    let cx = Context::new();
    // With somewhere to run the store's work, dropping is enough.
    let agent = Agent::new(&set).offload(|job| job());
    let (run, pending) = held_mid_turn(&agent, &cx);
    drop(run);
    let resumed = pollster::block_on(set.resume(&cx, &pending.ticket));
    assert!(resumed.is_err(), "{resumed:?}");
    // Without, the call stays until it expires (or is rejected).
    let agent = Agent::new(&set);
    let (run, pending) = held_mid_turn(&agent, &cx);
    drop(run);
    assert!(pollster::block_on(set.reject(&pending.ticket)).unwrap());
}

// ---- Where blocking tools run.

/// The sum, and the name of the thread that computed it.
fn sum_on_this_thread(a: i32, b: i32) -> String {
    let thread = std::thread::current();
    format!("{} di {}", a + b, thread.name().unwrap_or("?"))
}

#[tool(description = "Menjumlahkan dua bilangan dan menyebut thread yang menjalankannya.")]
fn jumlah_di(
    #[arg(description = "Bilangan pertama", range = -1000..=1000)] a: i32,
    #[arg(description = "Bilangan kedua", range = -1000..=1000)] b: i32,
) -> String {
    sum_on_this_thread(a, b)
}

/// An unstreamed Anthropic response calling `tool` with `{"a": 2, "b": 3}`.
fn anthropic_sum_call(tool: &str) -> Value {
    json!({"id": "msg_1", "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-5", "stop_reason": "tool_use", "stop_sequence": null,
        "usage": {"input_tokens": 40, "output_tokens": 20},
        "content": [{"type": "tool_use", "id": "toolu_1", "name": tool,
                     "input": {"a": 2, "b": 3}}]})
}

/// The jumlah turn, calling `jumlah_di`.
fn jumlah_di_turn() -> Vec<StreamEvent> {
    anthropic_jumlah_turn()
        .into_iter()
        .map(|e| StreamEvent {
            data: e.data.replace("\"jumlah\"", "\"jumlah_di\""),
            ..e
        })
        .collect()
}

/// What the streamed run answered the call with, given where blocking tools go.
fn answered_with(offload: Option<fn(tool_runtime::agent::Job)>) -> String {
    let set = ToolSet::new([jumlah_di::tool()]).unwrap();
    let mut agent = Agent::new(&set).max_turns(1);
    if let Some(spawn) = offload {
        agent = agent.offload(spawn);
    }
    let cx = Context::new();
    let events = collect(agent.run_streamed(
        &cx,
        Conversation::new(Api::ANTHROPIC),
        |_: &Conversation| {
            let events = jumlah_di_turn();
            async move { Ok::<_, Boxed>(ready(events)) }
        },
    ));
    events
        .iter()
        .find_map(|e| match e {
            AgentEvent::CallFinished(Outcome::Answered(a)) => Some(a.text()),
            _ => None,
        })
        .expect("the call was answered")
}

fn on_a_named_thread(job: tool_runtime::agent::Job) {
    std::thread::Builder::new()
        .name("pekerja-blocking".into())
        .spawn(job)
        .unwrap();
}

#[test]
fn a_blocking_tool_runs_where_the_host_offloads_it() {
    // The tool's answer is a JSON string.
    let answer = |text: &str| json!(text).to_string();
    assert_eq!(
        answered_with(Some(on_a_named_thread)),
        answer("5 di pekerja-blocking")
    );
    // Without `offload`, on the thread that polls the run (this test's).
    let here = std::thread::current().name().unwrap().to_owned();
    assert_eq!(answered_with(None), answer(&format!("5 di {here}")));
    // A job the host drops: the call is answered with an error, never left waiting.
    let dropped = answered_with(Some(drop));
    assert!(dropped.contains("Agent::offload"), "{dropped}");

    // The unstreamed loop offloads the same way.
    let set = ToolSet::new([jumlah_di::tool()]).unwrap();
    let agent = Agent::new(&set).max_turns(1).offload(on_a_named_thread);
    let response = anthropic_sum_call("jumlah_di");
    let finished = pollster::block_on(agent.run(
        &Context::new(),
        Conversation::new(Api::ANTHROPIC),
        |_: &Conversation| {
            let response = response.clone();
            async move { Ok::<_, Boxed>(response) }
        },
    ))
    .unwrap();
    let Finished::TurnLimit { conversation, .. } = finished else {
        panic!("{finished:?}")
    };
    let results = serde_json::to_string(&conversation.messages).unwrap();
    assert!(results.contains("5 di pekerja-blocking"), "{results}");
}

#[tool(
    description = "Menjumlahkan dua bilangan setelah disetujui dan menyebut thread yang menjalankannya.",
    needs_approval
)]
fn jumlah_disetujui(
    #[arg(description = "Bilangan pertama", range = -1000..=1000)] a: i32,
    #[arg(description = "Bilangan kedua", range = -1000..=1000)] b: i32,
) -> String {
    sum_on_this_thread(a, b)
}

#[test]
fn an_approved_blocking_call_runs_where_the_host_offloads_it() {
    let set = ToolSet::new([jumlah_disetujui::tool()]).unwrap();
    let agent = Agent::new(&set).max_turns(1).offload(on_a_named_thread);
    let cx = Context::new();
    let response = anthropic_sum_call("jumlah_disetujui");
    let mut send = crate::checked::always(Api::ANTHROPIC, &set, response);
    let first = pollster::block_on(agent.run(&cx, Conversation::new(Api::ANTHROPIC), &mut send));
    let Ok(Finished::Paused(paused)) = first else {
        panic!("{first:?}")
    };
    let decided = pollster::block_on(agent.resume(
        &cx,
        paused,
        |_| tool_runtime::agent::Decision::Approve,
        send,
    ));
    let Ok(Finished::TurnLimit { conversation, .. }) = decided else {
        panic!("{decided:?}")
    };
    let results = serde_json::to_string(&conversation.messages).unwrap();
    assert!(results.contains("5 di pekerja-blocking"), "{results}");
}

// ---- Bedrock's binary event stream.

/// One AWS event stream message, written here from the format's description (a prelude of
/// total and header lengths with its CRC-32, string headers, the payload, the message's
/// CRC-32: <https://docs.aws.amazon.com/AmazonS3/latest/API/RESTSelectObjectAppendix.html>),
/// independently of the decoder under test.
fn aws_message(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut encoded = Vec::new();
    for (name, value) in headers {
        encoded.push(name.len() as u8);
        encoded.extend_from_slice(name.as_bytes());
        encoded.push(7); // a string
        encoded.extend_from_slice(&(value.len() as u16).to_be_bytes());
        encoded.extend_from_slice(value.as_bytes());
    }
    let total = (12 + encoded.len() + payload.len() + 4) as u32;
    let mut message = Vec::new();
    message.extend_from_slice(&total.to_be_bytes());
    message.extend_from_slice(&(encoded.len() as u32).to_be_bytes());
    message.extend_from_slice(&crc32fast::hash(&message).to_be_bytes());
    message.extend_from_slice(&encoded);
    message.extend_from_slice(payload);
    message.extend_from_slice(&crc32fast::hash(&message).to_be_bytes());
    message
}

/// The recorded Bedrock events as the body AWS sends: each a message with its type in
/// `:event-type` and the padding field `p` Bedrock adds to every event.
fn bedrock_body() -> Vec<u8> {
    let mut body = Vec::new();
    for line in recorded("bedrock-converse.jsonl").lines() {
        let event: Value = serde_json::from_str(line).unwrap();
        let (kind, mut data) = event
            .as_object()
            .unwrap()
            .clone()
            .into_iter()
            .next()
            .unwrap();
        data["p"] = json!("abcdefghijklmnopqrstu");
        let headers = [
            (":event-type", kind.as_str()),
            (":content-type", "application/json"),
            (":message-type", "event"),
        ];
        body.extend(aws_message(&headers, data.to_string().as_bytes()));
    }
    body
}

/// The events of an event stream body given in chunks of `size` bytes.
fn aws_read(body: &[u8], size: usize) -> Vec<Result<StreamEvent, String>> {
    let chunks: Vec<_> = body
        .chunks(size)
        .map(|c| Ok::<_, std::io::Error>(std::io::Cursor::new(c.to_vec())))
        .collect();
    let events = aws_events(stream::iter(chunks));
    pollster::block_on(events.map(|e| e.map_err(|e| e.to_string())).collect())
}

#[test]
fn bedrocks_binary_event_stream_reads_as_its_events() {
    let body = bedrock_body();
    for size in [1, 7, 64, body.len()] {
        let events: Vec<StreamEvent> = aws_read(&body, size)
            .into_iter()
            .map(Result::unwrap)
            .collect();
        assert_eq!(
            events.len(),
            recorded("bedrock-converse.jsonl").lines().count()
        );
        assert_eq!(
            assemble(Api::BEDROCK_CONVERSE, &events).0,
            whole("bedrock-converse"),
            "in chunks of {size}"
        );
    }
}

#[test]
fn a_broken_event_stream_is_an_error() {
    let body = bedrock_body();
    // One byte changed: the message fails its checksum.
    let mut flipped = body.clone();
    flipped[40] ^= 1;
    let read = aws_read(&flipped, 16);
    let error = read.last().unwrap().as_ref().unwrap_err();
    assert!(error.contains("unreadable"), "{error}");
    // Cut off in the middle of a message.
    let read = aws_read(&body[..body.len() - 5], 16);
    let error = read.last().unwrap().as_ref().unwrap_err();
    assert_eq!(error, "the event stream ends inside a message");
    // Not an event stream at all (an HTTP error's JSON): refused at once, its text shown.
    let denied = br#"{"message":"The security token included in the request is invalid."}"#;
    let read = aws_read(denied, denied.len());
    let error = read.last().unwrap().as_ref().unwrap_err();
    assert!(
        error.starts_with("the body is not an AWS event stream")
            && error.contains("The security token"),
        "{error}"
    );
    // In small chunks, at its first 12 bytes.
    let read = aws_read(denied, 8);
    let error = read.last().unwrap().as_ref().unwrap_err();
    assert!(error.ends_with(r#"{"message":"The "#), "{error}");
    // An exception ends the turn, named.
    let mut throttled = aws_message(
        &[(":event-type", "messageStart"), (":message-type", "event")],
        br#"{"role": "assistant"}"#,
    );
    throttled.extend(aws_message(
        &[
            (":exception-type", "throttlingException"),
            (":message-type", "exception"),
        ],
        br#"{"message": "Too many requests, please wait before trying again."}"#,
    ));
    let events: Vec<StreamEvent> = aws_read(&throttled, 9)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let error = broken(Api::BEDROCK_CONVERSE, &events);
    assert!(
        error.contains("throttlingException") && error.contains("Too many requests"),
        "{error}"
    );
    // An error message.
    let failed = aws_message(
        &[
            (":message-type", "error"),
            (":error-code", "InternalFailure"),
            (":error-message", "boom"),
        ],
        b"",
    );
    let read = aws_read(&failed, 4);
    assert_eq!(
        read,
        [Err(
            "the event stream sent an error: InternalFailure: boom".to_owned()
        )]
    );
}

/// A Chat stream whose call sends its arguments as the object itself (some OpenAI-compatible
/// servers do, as they do unstreamed) keeps them: the call is read with them, never run as `{}`;
/// arguments of any other kind are an error.
#[test]
fn chat_arguments_streamed_as_an_object_are_kept() {
    let chunk = |arguments: Value| {
        StreamEvent::data(
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c1",
                "type": "function", "function": {"name": "list_files", "arguments": arguments}}]},
                "finish_reason": null}]})
            .to_string(),
        )
    };
    let end = StreamEvent::data(
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}).to_string(),
    );
    let (response, deltas) = assemble(
        Api::OPENAI_CHAT,
        &[chunk(json!({"path": "/etc"})), end.clone()],
    );
    let turn = read_turn(Api::OPENAI_CHAT, &response).unwrap();
    assert_eq!(turn.calls.len(), 1);
    let as_object = |arguments: &CallArguments| match arguments {
        CallArguments::Text(text) => serde_json::from_str::<Value>(text).ok(),
        _ => None,
    };
    assert_eq!(
        as_object(&turn.calls[0].arguments),
        Some(json!({"path": "/etc"}))
    );
    assert!(
        deltas.iter().any(|(_, d)| matches!(d, Delta::Call(c)
            if as_object(&c.arguments) == Some(json!({"path": "/etc"})))),
        "{deltas:?}"
    );
    let mut stream = ResponseStream::new(Api::OPENAI_CHAT);
    let refused = stream.push(&chunk(json!(["/etc"])));
    assert!(
        matches!(&refused, Err(e) if matches!(&e.error, ReadError::Malformed { message }
            if message.contains("neither text nor one object"))),
        "{refused:?}"
    );
}

/// A Gemini stream whose prompt was blocked, followed by a chunk of usage alone, reads as the
/// refusal it is (the block was lost with the later chunk: an unreadable reply).
#[test]
fn a_gemini_block_followed_by_usage_is_a_refusal() {
    let events = [
        StreamEvent::data(json!({"promptFeedback": {"blockReason": "SAFETY"}}).to_string()),
        StreamEvent::data(
            json!({"usageMetadata": {"promptTokenCount": 12, "totalTokenCount": 12}}).to_string(),
        ),
    ];
    let (response, _) = assemble(Api::GEMINI, &events);
    let reply = tool_runtime::structured::read_reply(Api::GEMINI, &response);
    assert!(
        matches!(&reply, Ok(r) if matches!(r.finish, Finish::Refused { .. })),
        "{reply:?}"
    );
}
