//! Each call is one `execute_tool` span by OpenTelemetry's GenAI conventions (the tool's name,
//! the call's id, `error.type` and status `ERROR` when it fails), with its outcome and duration;
//! arguments and results appear only as TRACE events of `tool_runtime::values`.

use std::sync::{Arc, Mutex};

use tool_runtime::{Context, ToolSet, tool};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

#[tool(description = "Jumlahkan dua bilangan bulat dan kembalikan hasilnya.")]
fn tambah(
    #[arg(description = "Bilangan pertama", range = -1000..=1000)] a: i32,
    #[arg(description = "Bilangan kedua", range = -1000..=1000)] b: i32,
) -> i32 {
    a + b
}

#[tool(description = "Selalu gagal dengan galatnya sendiri, untuk menguji jejak kegagalan.")]
fn gagal() -> Result<i32, std::io::Error> {
    Err(std::io::Error::other("disk penuh"))
}

/// What a subscriber saw: each span's name and fields, and each event's target and fields.
#[derive(Default)]
struct Seen {
    spans: Vec<(String, Vec<(String, String)>)>,
    /// Each span's metadata (what `current_span` answers with).
    metadata: Vec<&'static Metadata<'static>>,
    /// Each span's parent (an index into `spans`).
    parents: Vec<Option<usize>>,
    events: Vec<(String, Vec<(String, String)>)>,
}

struct Collect {
    seen: Arc<Mutex<Seen>>,
    /// The spans entered, innermost last (one thread: the tests block on their futures).
    entered: Mutex<Vec<u64>>,
    /// Only events of these targets are wanted (as a host's filter would say).
    values: bool,
}

struct Fields<'a>(&'a mut Vec<(String, String)>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push((field.name().into(), format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name().into(), value.into()));
    }
}

impl Subscriber for Collect {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target() != "tool_runtime::values" || self.values
    }
    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let mut seen = self.seen.lock().unwrap();
        let mut fields = Vec::new();
        attrs.record(&mut Fields(&mut fields));
        let parent = match attrs.parent() {
            Some(id) => Some(id.into_u64()),
            None if attrs.is_contextual() => self.entered.lock().unwrap().last().copied(),
            None => None,
        };
        seen.parents.push(parent.map(|p| p as usize - 1));
        seen.metadata.push(attrs.metadata());
        seen.spans.push((attrs.metadata().name().into(), fields));
        Id::from_u64(seen.spans.len() as u64)
    }
    fn record(&self, span: &Id, values: &Record<'_>) {
        let mut seen = self.seen.lock().unwrap();
        let i = span.into_u64() as usize - 1;
        values.record(&mut Fields(&mut seen.spans[i].1));
    }
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = Vec::new();
        event.record(&mut Fields(&mut fields));
        let target = event.metadata().target().to_owned();
        self.seen.lock().unwrap().events.push((target, fields));
    }
    fn enter(&self, span: &Id) {
        self.entered.lock().unwrap().push(span.into_u64());
    }
    fn exit(&self, span: &Id) {
        let mut entered = self.entered.lock().unwrap();
        if let Some(i) = entered.iter().rposition(|s| *s == span.into_u64()) {
            entered.remove(i);
        }
    }
    fn current_span(&self) -> tracing_core::span::Current {
        let Some(id) = self.entered.lock().unwrap().last().copied() else {
            return tracing_core::span::Current::none();
        };
        let metadata = self.seen.lock().unwrap().metadata[id as usize - 1];
        tracing_core::span::Current::new(Id::from_u64(id), metadata)
    }
}

/// A field's value: the last recorded, as a span's later `record` overrides what it began with.
fn field<'a>(fields: &'a [(String, String)], name: &str) -> Option<&'a str> {
    fields
        .iter()
        .rev()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

fn traced(values: bool, run: impl FnOnce()) -> Seen {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let collect = Collect {
        seen: seen.clone(),
        entered: Mutex::default(),
        values,
    };
    tracing::subscriber::with_default(collect, run);
    Arc::into_inner(seen).unwrap().into_inner().unwrap()
}

#[test]
fn each_call_is_an_execute_tool_span_by_the_conventions_and_no_values() {
    let set = ToolSet::new([tambah::tool(), gagal::tool()]).unwrap();
    let cx = Context::new();
    let seen = traced(false, || {
        set.call(&cx, "tambah", r#"{"a": 2, "b": 3}"#)
            .call_id("call_1")
            .blocking()
            .unwrap();
        set.call(&cx, "tambah", r#"{"a": "2", "b": 3}"#)
            .blocking()
            .unwrap_err();
        set.call(&cx, "gagal", "{}").blocking().unwrap_err();
    });
    let calls: Vec<_> = seen
        .spans
        .iter()
        .filter(|(n, _)| n == "execute_tool")
        .map(|(_, f)| f)
        .collect();
    assert_eq!(calls.len(), 3, "{:?}", seen.spans);
    for fields in &calls {
        assert_eq!(field(fields, "gen_ai.operation.name"), Some("execute_tool"));
        assert_eq!(field(fields, "gen_ai.tool.type"), Some("function"));
        assert_eq!(field(fields, "otel.kind"), Some("internal"));
        assert!(field(fields, "duration_us").is_some(), "{fields:?}");
    }
    let [ok, invalid, failed] = calls[..] else {
        unreachable!()
    };
    assert_eq!(field(ok, "otel.name"), Some("execute_tool tambah"));
    assert_eq!(field(ok, "gen_ai.tool.name"), Some("tambah"));
    assert_eq!(field(ok, "gen_ai.tool.call.id"), Some("call_1"));
    assert_eq!(
        field(ok, "gen_ai.tool.description"),
        Some("Jumlahkan dua bilangan bulat dan kembalikan hasilnya.")
    );
    assert_eq!(field(ok, "outcome"), Some("ok"));
    assert_eq!(field(ok, "error.type"), None);
    assert_eq!(field(ok, "otel.status_code"), None);
    assert_eq!(field(invalid, "gen_ai.tool.call.id"), None);
    assert_eq!(field(invalid, "error.type"), Some("invalid_arguments"));
    assert_eq!(field(invalid, "otel.status_code"), Some("ERROR"));
    assert_eq!(field(failed, "otel.name"), Some("execute_tool gagal"));
    assert_eq!(field(failed, "error.type"), Some("tool_error"));
    assert_eq!(field(failed, "otel.status_code"), Some("ERROR"));
    let values: Vec<_> = seen
        .events
        .iter()
        .filter(|(target, _)| target == "tool_runtime::values")
        .collect();
    assert!(values.is_empty(), "no values unless asked: {values:?}");
    // Each call's duration, as the conventions' histogram, with its tool and error type.
    let durations: Vec<_> = seen
        .events
        .iter()
        .filter(|(target, _)| target == "tool_runtime::metrics")
        .map(|(_, f)| f)
        .collect();
    assert_eq!(durations.len(), 3, "{durations:?}");
    for (fields, error) in
        durations
            .iter()
            .zip([None, Some("invalid_arguments"), Some("tool_error")])
    {
        let seconds: f64 = field(fields, "histogram.gen_ai.execute_tool.duration")
            .unwrap()
            .parse()
            .unwrap();
        assert!((0.0..10.0).contains(&seconds), "{fields:?}");
        assert_eq!(field(fields, "error.type"), error, "{fields:?}");
    }
    assert_eq!(field(durations[2], "gen_ai.tool.name"), Some("gagal"));
}

#[test]
fn a_host_that_asks_sees_arguments_and_results() {
    let set = ToolSet::new([tambah::tool()]).unwrap();
    let seen = traced(true, || {
        set.call(&Context::new(), "tambah", r#"{"a": 2, "b": 3}"#)
            .blocking()
            .unwrap();
    });
    let values: Vec<_> = seen
        .events
        .iter()
        .filter(|(t, _)| t == "tool_runtime::values")
        .flat_map(|(_, f)| f.clone())
        .collect();
    assert!(
        values.contains(&("arguments".into(), r#"{"a": 2, "b": 3}"#.into())),
        "{values:?}"
    );
    assert!(
        values.contains(&("output".into(), "5".into())),
        "{values:?}"
    );
}

#[test]
fn a_host_that_asks_gets_the_conventions_attributes_with_the_result_redacted() {
    let set = ToolSet::new([tambah::tool(), examples::cuaca::cuaca_terkini::tool()]).unwrap();
    let cx = Context::new();
    let run = || {
        set.call(&cx, "tambah", r#"{"a": 2, "b": 3}"#)
            .blocking()
            .unwrap();
        let weather = set
            .call(&cx, "cuaca-terkini", r#"{"kota": "Surabaya"}"#)
            .blocking()
            .unwrap();
        // What the tool returned holds its source data; what a person may see does not.
        assert!(weather.json().contains("sumber"), "{}", weather.json());
    };
    let spans = |seen: &Seen| -> Vec<Vec<(String, String)>> {
        seen.spans
            .iter()
            .filter(|(n, _)| n == "execute_tool")
            .map(|(_, f)| f.clone())
            .collect()
    };
    let asked = traced(true, run);
    let calls = spans(&asked);
    assert_eq!(
        field(&calls[0], "gen_ai.tool.call.arguments"),
        Some(r#"{"a": 2, "b": 3}"#)
    );
    assert_eq!(field(&calls[0], "gen_ai.tool.call.result"), Some("5"));
    let shown = field(&calls[1], "gen_ai.tool.call.result").unwrap();
    assert!(
        shown.contains("Surabaya") && !shown.contains("sumber"),
        "{shown}"
    );
    assert!(
        !asked
            .events
            .iter()
            .flat_map(|(_, f)| f)
            .any(|(_, v)| v.contains("sumber")),
        "an event carried the unredacted result"
    );
    // Not asked: neither attribute, and no events of the target.
    let quiet = traced(false, run);
    for call in spans(&quiet) {
        assert_eq!(field(&call, "gen_ai.tool.call.arguments"), None);
        assert_eq!(field(&call, "gen_ai.tool.call.result"), None);
    }
}

/// A recorded response of `api` (four calls of the HR tools, and the API's token usage).
fn recorded(api: tool_runtime::Api) -> serde_json::Value {
    let path = format!(
        "{}/recorded/agent/{}.json",
        env!("CARGO_MANIFEST_DIR"),
        api.id()
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn an_agent_run_is_invoke_agent_with_a_chat_span_per_turn_and_the_usage_of_each() {
    use examples::hr::{Peran, Session, domain::Db};
    use tool_runtime::Api;
    use tool_runtime::agent::{Agent, Conversation, Finished};
    use tool_runtime::provider::{Request, Turn};

    let tools = examples::hr::tool_set();
    let cx = Session::new("K-001", Peran::Karyawan).context(Arc::new(Db::in_memory().unwrap()));
    // Each API's recorded response: its provider's conventions name, response id and model,
    // and the input and output tokens it reports.
    let expected = [
        (
            Api::OPENAI_CHAT,
            "openai",
            Some("chatcmpl-rec-001"),
            Some("gpt-4.1-2025-04-14"),
            "812",
            "96",
        ),
        (
            Api::OPENAI_RESPONSES,
            "openai",
            Some("resp_rec_001"),
            Some("gpt-4.1-2025-04-14"),
            "790",
            "101",
        ),
        (
            Api::ANTHROPIC,
            "anthropic",
            Some("msg_rec_001"),
            Some("claude-sonnet-4-5-20250929"),
            "845",
            "120",
        ),
        (
            Api::GEMINI,
            "gcp.gemini",
            None,
            Some("gemini-2.5-flash"),
            "801",
            "88",
        ),
        (
            Api::BEDROCK_CONVERSE,
            "aws.bedrock",
            None,
            None,
            "845",
            "120",
        ),
    ];
    for (api, provider, id, model, input, output) in expected {
        let calls = recorded(api);
        let answer = api
            .provider()
            .write_response(&Turn::text("Selesai."))
            .unwrap();
        let seen = traced(false, || {
            let mut sent = 0;
            let send = |conversation: &Conversation| {
                sent += 1;
                // The request the host sends names its model (written inside the turn's span).
                let _ = conversation.request(&Request::new("model-uji"));
                let reply = if sent == 1 {
                    calls.clone()
                } else {
                    answer.clone()
                };
                async move { Ok::<_, String>(reply) }
            };
            let mut conversation = Conversation::new(api);
            conversation.push_user("Berapa sisa cuti saya?");
            let finished = pollster::block_on(Agent::new(&tools).run(&cx, conversation, send));
            assert!(
                matches!(finished, Ok(Finished::Answered { .. })),
                "{api}: {finished:?}"
            );
        });
        let named = |name: &str| -> Vec<usize> {
            (0..seen.spans.len())
                .filter(|&i| seen.spans[i].0 == name)
                .collect()
        };
        let runs = named("gen_ai.invoke_agent");
        assert_eq!(runs.len(), 1, "{api}");
        let run = &seen.spans[runs[0]].1;
        assert_eq!(field(run, "gen_ai.operation.name"), Some("invoke_agent"));
        assert_eq!(field(run, "gen_ai.provider.name"), Some(provider), "{api}");
        let chats = named("gen_ai.chat");
        assert_eq!(chats.len(), 2, "{api}: one chat span per turn");
        let first = &seen.spans[chats[0]].1;
        assert_eq!(field(first, "otel.kind"), Some("client"));
        assert_eq!(field(first, "gen_ai.operation.name"), Some("chat"));
        assert_eq!(
            field(first, "gen_ai.provider.name"),
            Some(provider),
            "{api}"
        );
        assert_eq!(field(first, "gen_ai.response.id"), id, "{api}");
        assert_eq!(field(first, "gen_ai.response.model"), model, "{api}");
        assert_eq!(
            field(first, "gen_ai.request.model"),
            Some("model-uji"),
            "{api}"
        );
        assert_eq!(field(first, "otel.name"), Some("chat model-uji"), "{api}");
        assert_eq!(
            field(first, "gen_ai.usage.input_tokens"),
            Some(input),
            "{api}"
        );
        assert_eq!(
            field(first, "gen_ai.usage.output_tokens"),
            Some(output),
            "{api}"
        );
        // The run's span carries the sums of its turns (the written answer reports none).
        let (in_sum, out_sum): (u64, u64) = chats.iter().fold((0, 0), |(i, o), &c| {
            let f = &seen.spans[c].1;
            let n = |k| field(f, k).map_or(0, |v: &str| v.parse::<u64>().unwrap());
            (
                i + n("gen_ai.usage.input_tokens"),
                o + n("gen_ai.usage.output_tokens"),
            )
        });
        assert_eq!(
            field(run, "gen_ai.usage.input_tokens"),
            Some(in_sum.to_string().as_str())
        );
        assert_eq!(
            field(run, "gen_ai.usage.output_tokens"),
            Some(out_sum.to_string().as_str())
        );
        // Turns and tool calls are the run's children: a call is never inside a chat span.
        for &chat in &chats {
            assert_eq!(seen.parents[chat], Some(runs[0]), "{api}");
        }
        // Each recorded call of a tool the set has (one names a tool that does not exist).
        let known = tool_runtime::agent::read_turn(api, &calls)
            .unwrap()
            .calls
            .iter()
            .filter(|c| tools.names().any(|n| n == c.name))
            .count();
        assert_eq!(known, 3, "{api}");
        let executed = named("execute_tool");
        assert_eq!(executed.len(), known, "{api}");
        for &call in &executed {
            assert_eq!(seen.parents[call], Some(runs[0]), "{api}");
        }
    }
}

#[test]
fn a_failed_turn_marks_its_chat_span_and_the_run() {
    use tool_runtime::Api;
    use tool_runtime::agent::{Agent, Conversation};

    let tools = ToolSet::new([tambah::tool()]).unwrap();
    let seen = traced(false, || {
        let send = |_: &Conversation| async { Err::<serde_json::Value, _>("connection refused") };
        let (agent, cx) = (Agent::new(&tools), Context::new());
        let run = agent.run(&cx, Conversation::new(Api::ANTHROPIC), send);
        assert_eq!(pollster::block_on(run).unwrap_err().kind(), "transport");
    });
    for name in ["gen_ai.invoke_agent", "gen_ai.chat"] {
        let (_, fields) = seen.spans.iter().find(|(n, _)| n == name).unwrap();
        assert_eq!(field(fields, "error.type"), Some("transport"), "{name}");
        assert_eq!(field(fields, "otel.status_code"), Some("ERROR"), "{name}");
    }
}

#[test]
fn a_streamed_turn_is_a_chat_span_with_the_usage_its_stream_reported() {
    use futures_util::{StreamExt, stream};
    use tool_runtime::Api;
    use tool_runtime::agent::{Agent, Conversation};
    use tool_runtime::provider::StreamEvent;

    let tools = ToolSet::new([tambah::tool()]).unwrap();
    // Each recording's usage, as its last events report it.
    for (api, name, input, output) in [
        (Api::OPENAI_CHAT, "openai-chat", "82", "41"),
        (Api::OPENAI_RESPONSES, "openai-responses", "90", "60"),
        (Api::ANTHROPIC, "anthropic", "120", "87"),
        (Api::GEMINI, "gemini", "70", "30"),
        (Api::BEDROCK_CONVERSE, "bedrock-converse", "75", "44"),
    ] {
        let dir = format!("{}/recorded/stream", env!("CARGO_MANIFEST_DIR"));
        let events: Vec<StreamEvent> = if api == Api::BEDROCK_CONVERSE {
            std::fs::read_to_string(format!("{dir}/{name}.jsonl"))
                .unwrap()
                .lines()
                .map(StreamEvent::data)
                .collect()
        } else {
            let body = std::fs::read(format!("{dir}/{name}.sse")).unwrap();
            let body = stream::iter([Ok::<_, std::io::Error>(std::io::Cursor::new(body))]);
            pollster::block_on(
                tool_runtime::provider::sse_events(body)
                    .map(|e| e.unwrap())
                    .collect(),
            )
        };
        let seen = traced(false, || {
            let agent = Agent::new(&tools).max_turns(1);
            let cx = Context::new();
            let run = agent.run_streamed(&cx, Conversation::new(api), |_: &Conversation| {
                let events = stream::iter(events.clone().into_iter().map(Ok::<_, std::io::Error>));
                async move { Ok::<_, std::io::Error>(events) }
            });
            let _: Vec<_> = pollster::block_on(run.collect());
        });
        let (_, chat) = seen
            .spans
            .iter()
            .find(|(n, _)| n == "gen_ai.chat")
            .unwrap_or_else(|| panic!("{name}: no chat span"));
        assert_eq!(
            field(chat, "gen_ai.usage.input_tokens"),
            Some(input),
            "{name}"
        );
        assert_eq!(
            field(chat, "gen_ai.usage.output_tokens"),
            Some(output),
            "{name}"
        );
        let (_, run) = seen
            .spans
            .iter()
            .find(|(n, _)| n == "gen_ai.invoke_agent")
            .unwrap();
        assert_eq!(
            field(run, "gen_ai.usage.input_tokens"),
            Some(input),
            "{name}"
        );
    }
}

/// A turn whose response reports the cache's share of its prompt: the `chat` span carries it
/// (`gen_ai.usage.cache_read.input_tokens`, `gen_ai.usage.cache_write.input_tokens`, both counted
/// in `gen_ai.usage.input_tokens` too, as the conventions ask), the run's span their sums, and
/// the run reports the same usage.
#[test]
fn a_turns_cache_figures_are_on_its_span_and_in_the_runs_usage() {
    use serde_json::json;
    use tool_runtime::agent::{Agent, Conversation};
    use tool_runtime::{Api, Context, ToolSet};

    let tools = ToolSet::new(Vec::<tool_runtime::ToolRef>::new()).unwrap();
    // Anthropic's shape: the input tokens without the cache's, the two cache figures apart.
    let answer = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
        "content": [{"type": "text", "text": "Selesai."}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 12, "cache_read_input_tokens": 1731,
                  "cache_creation_input_tokens": 517, "output_tokens": 40}});
    let mut usage = None;
    let seen = traced(false, || {
        let send = |_: &Conversation| {
            let reply = answer.clone();
            async move { Ok::<_, String>(reply) }
        };
        let mut conversation = Conversation::new(Api::ANTHROPIC);
        conversation.push_user("Halo");
        let finished =
            pollster::block_on(Agent::new(&tools).run(&Context::new(), conversation, send));
        usage = Some(finished.unwrap().usage());
    });
    let usage = usage.unwrap();
    assert_eq!(
        (
            usage.input_tokens,
            usage.cache_read_tokens,
            usage.cache_write_tokens,
            usage.output_tokens
        ),
        (2260, 1731, 517, 40)
    );
    for name in ["gen_ai.chat", "gen_ai.invoke_agent"] {
        let span = &seen.spans.iter().find(|(n, _)| n == name).unwrap().1;
        assert_eq!(
            field(span, "gen_ai.usage.input_tokens"),
            Some("2260"),
            "{name}"
        );
        assert_eq!(
            field(span, "gen_ai.usage.cache_read.input_tokens"),
            Some("1731"),
            "{name}"
        );
        assert_eq!(
            field(span, "gen_ai.usage.cache_write.input_tokens"),
            Some("517"),
            "{name}"
        );
    }
}

/// What an observer was told, in order.
#[derive(Clone, Default)]
struct Told(Arc<Mutex<Vec<String>>>);

struct TellingObserver(Told);

struct TellingCall(Told);

impl tool_runtime::observe::CallObserver for TellingObserver {
    fn start(
        &self,
        call: &tool_runtime::observe::CallStart<'_>,
    ) -> Option<Box<dyn tool_runtime::observe::ObservedCall>> {
        self.0.0.lock().unwrap().push(format!(
            "start {} {} {:?}",
            call.tool.name(),
            call.span_name,
            call.call_id
        ));
        Some(Box::new(TellingCall(self.0.clone())))
    }
}

impl tool_runtime::observe::ObservedCall for TellingCall {
    fn enter(&self) {
        self.0.0.lock().unwrap().push("enter".into());
    }
    fn exit(&self) {
        self.0.0.lock().unwrap().push("exit".into());
    }
    fn wants_values(&self) -> bool {
        true
    }
    fn arguments(&self, text: &str) {
        self.0.0.lock().unwrap().push(format!("arguments {text}"));
    }
    fn finish(self: Box<Self>, end: &tool_runtime::observe::CallEnd<'_>) {
        self.0.0.lock().unwrap().push(format!(
            "finish {} {:?} {:?}",
            end.outcome, end.error_type, end.result
        ));
    }
}

/// The collecting subscriber with an observer (as `tool-runtime-otel`'s layer exposes one).
struct Observing {
    observer: tool_runtime::observe::Observer,
    collect: Collect,
}

impl Subscriber for Observing {
    fn enabled(&self, m: &Metadata<'_>) -> bool {
        self.collect.enabled(m)
    }
    fn new_span(&self, span: &Attributes<'_>) -> Id {
        self.collect.new_span(span)
    }
    fn record(&self, span: &Id, values: &Record<'_>) {
        self.collect.record(span, values)
    }
    fn record_follows_from(&self, span: &Id, follows: &Id) {
        self.collect.record_follows_from(span, follows)
    }
    fn event(&self, event: &Event<'_>) {
        self.collect.event(event)
    }
    fn enter(&self, span: &Id) {
        self.collect.enter(span)
    }
    fn exit(&self, span: &Id) {
        self.collect.exit(span)
    }
    fn current_span(&self) -> tracing_core::span::Current {
        self.collect.current_span()
    }
    // SAFETY: the pointer returned for `Observer` points at `self.observer`, which lives as
    // long as `self`; for `Self`, at `self`.
    unsafe fn downcast_raw(&self, id: std::any::TypeId) -> Option<*const ()> {
        if id == std::any::TypeId::of::<Self>() {
            Some(self as *const Self as *const ())
        } else if id == std::any::TypeId::of::<tool_runtime::observe::Observer>() {
            Some(&self.observer as *const _ as *const ())
        } else {
            None
        }
    }
}

/// A subscriber with an observer: each call is told to it (started, entered and left around
/// its run, its arguments and result when it wants values, its outcome), and no duration event
/// is sent; the span is still made for the subscriber.
#[test]
fn a_subscriber_with_an_observer_is_told_each_call() {
    let set = ToolSet::new([tambah::tool(), gagal::tool()]).unwrap();
    let told = Told::default();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let subscriber = Observing {
        observer: tool_runtime::observe::Observer::new(TellingObserver(told.clone())),
        collect: Collect {
            seen: seen.clone(),
            entered: Mutex::default(),
            values: false,
        },
    };
    tracing::subscriber::with_default(subscriber, || {
        let cx = Context::new();
        set.call(&cx, "tambah", r#"{"a": 2, "b": 3}"#)
            .blocking()
            .unwrap();
        set.call(&cx, "gagal", "{}").blocking().unwrap_err();
    });
    assert_eq!(
        *told.0.lock().unwrap(),
        [
            "start tambah execute_tool tambah None",
            "enter",
            r#"arguments {"a": 2, "b": 3}"#,
            "exit",
            r#"finish ok None Some("5")"#,
            "start gagal execute_tool gagal None",
            "enter",
            "arguments {}",
            "exit",
            r#"finish failed Some("tool_error") None"#,
        ]
    );
    let seen = seen.lock().unwrap();
    // The span and the duration event are still made for the subscriber's other layers, under
    // the targets an observing layer turns off for itself.
    let targets: Vec<_> = seen.metadata.iter().map(|m| m.target()).collect();
    assert_eq!(targets, [tool_runtime::observe::SPAN_TARGET; 2]);
    assert_eq!(field(&seen.spans[0].1, "outcome"), Some("ok"));
    assert_eq!(field(&seen.spans[1].1, "error.type"), Some("tool_error"));
    let events: Vec<_> = seen
        .events
        .iter()
        .map(|(target, _)| target.as_str())
        .collect();
    assert_eq!(events, [tool_runtime::observe::METRICS_TARGET; 2]);
}

/// A call the observer does not keep (its trace is not sampled) makes no span, for any layer.
#[test]
fn a_call_the_observer_does_not_keep_makes_no_span() {
    struct NotKept;
    impl tool_runtime::observe::CallObserver for NotKept {
        fn start(
            &self,
            _: &tool_runtime::observe::CallStart<'_>,
        ) -> Option<Box<dyn tool_runtime::observe::ObservedCall>> {
            Some(Box::new(NotKeptCall))
        }
    }
    struct NotKeptCall;
    impl tool_runtime::observe::ObservedCall for NotKeptCall {
        fn sampled(&self) -> bool {
            false
        }
        fn enter(&self) {}
        fn exit(&self) {}
        fn finish(self: Box<Self>, _: &tool_runtime::observe::CallEnd<'_>) {}
    }
    let set = ToolSet::new([tambah::tool()]).unwrap();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let subscriber = Observing {
        observer: tool_runtime::observe::Observer::new(NotKept),
        collect: Collect {
            seen: seen.clone(),
            entered: Mutex::default(),
            values: false,
        },
    };
    tracing::subscriber::with_default(subscriber, || {
        set.call(&Context::new(), "tambah", r#"{"a": 2, "b": 3}"#)
            .blocking()
            .unwrap();
    });
    let seen = seen.lock().unwrap();
    assert!(seen.spans.is_empty(), "{:?}", seen.spans);
    // Its duration still goes to the other layers.
    assert_eq!(seen.events.len(), 1, "{:?}", seen.events);
}
