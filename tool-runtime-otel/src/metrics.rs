//! The histograms: the toolkit's duration events (`histogram.{name} = seconds`, on the
//! targets `tool_runtime::metrics` and `tool_runtime_mcp::metrics`), and the durations of the
//! tool calls the observer records ([`Histograms::execute_tool`]), recorded into histograms
//! made once, with the conventions' unit (`s`) and advised bucket boundaries; the event's other
//! fields are the measurement's attributes. A tool's calls carry the same few attribute values
//! again and again: each thread keeps the histograms it recorded into last, each bound to its
//! attributes (the SDK's bound instruments), and reuses one while an event's fields repeat
//! them, so no attribute list is built, hashed or looked up in the SDK's map (shared by every
//! thread, under a lock) per call; threads recording into one series still share its lock.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::RwLock;
use std::sync::atomic::{AtomicU64, Ordering};

use opentelemetry::metrics::{BoundHistogram, Histogram, Meter, MeterProvider as _};
use opentelemetry::{Key, KeyValue, Value};
use opentelemetry_sdk::metrics::SdkMeterProvider;
use tracing::Event;
use tracing::field::{Field, Visit};

/// The GenAI conventions' advice for durations (`gen_ai.client.operation.duration`), used for
/// a tool's execution.
const GEN_AI_SECONDS: &[f64] = &[
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];

/// The MCP conventions' advice for operation durations.
const MCP_SECONDS: &[f64] = &[
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The histograms the toolkit records: name, description, boundaries.
const KNOWN: [(&str, &str, &[f64]); 3] = [
    (
        "gen_ai.execute_tool.duration",
        "The duration of a single tool execution.",
        GEN_AI_SECONDS,
    ),
    (
        "mcp.server.operation.duration",
        "MCP request or notification duration as observed on the receiver.",
        MCP_SECONDS,
    ),
    (
        "mcp.client.operation.duration",
        "The duration of the MCP request or notification as observed on the sender.",
        MCP_SECONDS,
    ),
];

/// The histograms (see the module's documentation).
pub(crate) struct Histograms {
    /// Tells these histograms (one [`Telemetry`](crate::Telemetry)'s) from another's in a
    /// thread's [`Recent`].
    id: u64,
    meter: Meter,
    known: [Histogram<f64>; 3],
    /// Histograms of other names, made when first seen (no unit: only the name says it).
    others: RwLock<HashMap<&'static str, Histogram<f64>>>,
}

impl Histograms {
    pub(crate) fn new(provider: &SdkMeterProvider) -> Self {
        let meter = provider.meter("tool-runtime");
        let known = KNOWN.map(|(name, description, boundaries)| {
            meter
                .f64_histogram(name)
                .with_unit("s")
                .with_description(description)
                .with_boundaries(boundaries.to_vec())
                .build()
        });
        static IDS: AtomicU64 = AtomicU64::new(0);
        Histograms {
            id: IDS.fetch_add(1, Ordering::Relaxed),
            meter,
            known,
            others: RwLock::default(),
        }
    }

    /// The histogram named `name`: one of the toolkit's, or one made when first seen.
    fn histogram(&self, name: &'static str) -> Histogram<f64> {
        if let Some(i) = KNOWN.iter().position(|(known, ..)| *known == name) {
            return self.known[i].clone();
        }
        let found = self
            .others
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .cloned();
        found.unwrap_or_else(|| {
            let made = self.meter.f64_histogram(name).build();
            self.others
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .insert(name, made.clone());
            made
        })
    }
}

impl Histograms {
    /// Records a tool call's duration (seconds), by the tool's name and, for a failure, the
    /// error's type: the attributes of the toolkit's duration event for a call.
    pub(crate) fn execute_tool(&self, seconds: f64, tool: &Value, error_type: Option<&str>) {
        let attributes = || {
            let name = KeyValue::new(Key::from_static_str("gen_ai.tool.name"), tool.clone());
            match error_type {
                None => vec![name],
                Some(kind) => vec![
                    name,
                    KeyValue::new(
                        Key::from_static_str("error.type"),
                        crate::values::text(kind),
                    ),
                ],
            }
        };
        with_recent(
            |recent| {
                let signature = &mut recent.signature;
                signature.clear();
                signature.extend_from_slice(&self.id.to_le_bytes());
                // Apart from any event's: an event's signature goes on with a field's name.
                signature.push(0xfd);
                signature.extend_from_slice(tool.as_str().as_bytes());
                if let Some(kind) = error_type {
                    signature.push(0xff);
                    signature.extend_from_slice(kind.as_bytes());
                }
                recent
                    .bound(|| self.known[0].bind(&attributes()))
                    .record(seconds);
            },
            || self.known[0].record(seconds, &attributes()),
        );
    }

    /// Records a duration event (of a metrics target) into its histogram.
    pub(crate) fn on_event(&self, event: &Event<'_>) {
        with_recent(
            |recent| {
                recent.signature.clear();
                recent.signature.extend_from_slice(&self.id.to_le_bytes());
                let mut read = Signature {
                    bytes: &mut recent.signature,
                    value: None,
                };
                event.record(&mut read);
                let Some((name, value)) = read.value else {
                    return;
                };
                let bind = || {
                    let mut measured = Measurement::default();
                    event.record(&mut measured);
                    self.histogram(name).bind(&measured.attributes)
                };
                recent.bound(bind).record(value);
            },
            || {
                let mut read = Measurement::default();
                event.record(&mut read);
                if let Some((name, value)) = read.value {
                    self.histogram(name).record(value, &read.attributes);
                }
            },
        );
    }
}

/// Runs `bound` with this thread's [`Recent`]; `unbound` when there is none to have: while
/// this thread records (an SDK's own event), or once its locals are torn down.
fn with_recent(bound: impl FnOnce(&mut Recent), unbound: impl FnOnce()) {
    let ran = RECENT
        .try_with(|recent| {
            recent
                .try_borrow_mut()
                .map(|mut recent| bound(&mut recent))
                .is_ok()
        })
        .unwrap_or(false);
    if !ran {
        unbound();
    }
}

/// How many bound histograms a thread keeps: a server's tools and outcomes in use at once.
const RECENT_BOUND: usize = 64;

/// How many measurements a kept histogram takes before it is bound again: a series bound while
/// its histogram was at the SDK's cardinality limit (so recording into the overflow series)
/// gets its own once there is room, and under delta temporality a series stops being held
/// past the collections it had no measurement in.
const REBIND_AFTER: u32 = 1 << 16;

thread_local! {
    static RECENT: RefCell<Recent> = RefCell::new(Recent::default());
}

/// The histograms this thread recorded into last, each bound to its attributes, with the
/// signature of what they were bound from (the [`Histograms`]' id, then the event's fields or
/// the tool call's name and error type) and how many measurements it took since.
#[derive(Default)]
struct Recent {
    bound: Vec<(Vec<u8>, BoundHistogram<f64>, u32)>,
    /// Where the next one goes when all places are taken.
    next: usize,
    /// The signature of what is being recorded.
    signature: Vec<u8>,
}

impl Recent {
    /// The histogram bound under the current signature (bound again every [`REBIND_AFTER`]
    /// measurements), or the one `bind` makes, kept.
    fn bound(&mut self, bind: impl FnOnce() -> BoundHistogram<f64>) -> &BoundHistogram<f64> {
        let at = match self.bound.iter().position(|(s, ..)| *s == self.signature) {
            Some(at) => {
                let (_, histogram, uses) = &mut self.bound[at];
                *uses += 1;
                if *uses >= REBIND_AFTER {
                    *histogram = bind();
                    *uses = 0;
                }
                at
            }
            None => {
                let entry = (self.signature.clone(), bind(), 0);
                if self.bound.len() < RECENT_BOUND {
                    self.bound.push(entry);
                    self.bound.len() - 1
                } else {
                    let at = self.next;
                    self.bound[at] = entry;
                    self.next = (at + 1) % RECENT_BOUND;
                    at
                }
            }
        };
        &self.bound[at].1
    }
}

/// An event's fields written as bytes, to find the histogram bound from the same ones:
/// each field's name, `0xff` and its kind, then its value's length (four bytes) and the value
/// (a string's bytes, a number's eight); the histogram's name followed by `0xfe`, its value
/// apart. No field name holds those bytes, which are never in UTF-8.
struct Signature<'a> {
    bytes: &'a mut Vec<u8>,
    value: Option<(&'static str, f64)>,
}

impl Signature<'_> {
    fn field(&mut self, field: &Field, kind: u8, value: &[u8]) {
        self.bytes.extend_from_slice(field.name().as_bytes());
        self.bytes.push(0xff);
        self.bytes.push(kind);
        self.bytes
            .extend_from_slice(&(value.len() as u32).to_le_bytes());
        self.bytes.extend_from_slice(value);
    }

    fn number(&mut self, field: &Field, value: f64) -> bool {
        match field.name().strip_prefix("histogram.") {
            Some(name) => {
                // Which histogram is part of the signature; its value is not.
                self.bytes.extend_from_slice(name.as_bytes());
                self.bytes.push(0xfe);
                self.value = Some((name, value));
                true
            }
            None => false,
        }
    }
}

impl Visit for Signature<'_> {
    fn record_f64(&mut self, field: &Field, value: f64) {
        if !self.number(field, value) {
            self.field(field, b'f', &value.to_le_bytes());
        }
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        if !self.number(field, value as f64) {
            self.field(field, b'u', &value.to_le_bytes());
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        if !self.number(field, value as f64) {
            self.field(field, b'i', &value.to_le_bytes());
        }
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.field(field, b'b', &[u8::from(value)]);
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.field(field, b's', value.as_bytes());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.field(field, b'd', format!("{value:?}").as_bytes());
    }
}

/// One event read: the histogram's name and value, and its attributes.
#[derive(Default)]
struct Measurement {
    value: Option<(&'static str, f64)>,
    attributes: Vec<KeyValue>,
}

impl Measurement {
    fn attribute(&mut self, field: &Field, value: Value) {
        if self.attributes.is_empty() {
            // The toolkit's events carry at most four.
            self.attributes.reserve_exact(4);
        }
        self.attributes
            .push(KeyValue::new(Key::from_static_str(field.name()), value));
    }

    fn number(&mut self, field: &Field, value: f64) -> bool {
        match field.name().strip_prefix("histogram.") {
            Some(name) => {
                self.value = Some((name, value));
                true
            }
            None => false,
        }
    }
}

impl Visit for Measurement {
    fn record_f64(&mut self, field: &Field, value: f64) {
        if !self.number(field, value) {
            self.attribute(field, Value::F64(value));
        }
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        if !self.number(field, value as f64) {
            self.attribute(field, Value::I64(value as i64));
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        if !self.number(field, value as f64) {
            self.attribute(field, Value::I64(value));
        }
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.attribute(field, Value::Bool(value));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.attribute(field, crate::values::text(value));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.attribute(field, Value::from(format!("{value:?}")));
    }
}
