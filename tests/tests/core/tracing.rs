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
    events: Vec<(String, Vec<(String, String)>)>,
}

struct Collect {
    seen: Arc<Mutex<Seen>>,
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
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

fn field<'a>(fields: &'a [(String, String)], name: &str) -> Option<&'a str> {
    fields
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

fn traced(values: bool, run: impl FnOnce()) -> Seen {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let collect = Collect {
        seen: seen.clone(),
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
