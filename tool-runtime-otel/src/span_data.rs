//! What a recorded span is made of, whichever way it was recorded (a `tracing` span through
//! the layer, or a tool call through the core's observer): its body, what its trace carried
//! from another process, where it goes when it ends, and its ids.

use std::borrow::Cow;
use std::cell::Cell;
use std::sync::Arc;
use std::time::SystemTime;

use opentelemetry::trace::{
    SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanLinks, SpanProcessor};

use crate::sampler::Sampler;

/// A recorded span's name, kind, status, start, attributes and events.
pub(crate) struct Body {
    pub(crate) name: Cow<'static, str>,
    pub(crate) kind: SpanKind,
    pub(crate) status: Status,
    pub(crate) start: SystemTime,
    pub(crate) attributes: Vec<KeyValue>,
    pub(crate) events: SpanEvents,
}

/// A span's context, and what its trace carried.
pub(crate) type Traced = (SpanContext, Option<Arc<Carried>>);

/// What a trace's remote parent carried, passed on to every hop after it.
#[derive(Debug, Default)]
pub(crate) struct Carried {
    pub(crate) trace_state: TraceState,
    pub(crate) baggage: Option<String>,
}

/// A local span's context: its ids, whether its trace is kept, and the `tracestate` its trace
/// carried from another process.
pub(crate) fn span_context(
    trace_id: TraceId,
    span_id: SpanId,
    sampled: bool,
    carried: Option<&Carried>,
) -> SpanContext {
    let flags = if sampled {
        TraceFlags::SAMPLED
    } else {
        TraceFlags::default()
    };
    let state = carried.map_or_else(TraceState::default, |c| c.trace_state.clone());
    SpanContext::new(trace_id, span_id, flags, false, state)
}

/// Where the spans go.
pub(crate) struct Sink {
    pub(crate) processor: Box<dyn SpanProcessor>,
    pub(crate) scope: InstrumentationScope,
}

impl Sink {
    /// Sends a span that ended now: its context, its parent's id (and whether the parent came
    /// from another process), its body.
    #[inline]
    pub(crate) fn send(&self, context: SpanContext, parent: Option<(SpanId, bool)>, body: Body) {
        let (parent_span_id, parent_span_is_remote) = parent.unwrap_or((SpanId::INVALID, false));
        self.processor.on_end(SpanData {
            span_context: context,
            parent_span_id,
            parent_span_is_remote,
            span_kind: body.kind,
            name: body.name,
            start_time: body.start,
            end_time: SystemTime::now(),
            attributes: body.attributes,
            dropped_attributes_count: 0,
            events: body.events,
            links: SpanLinks::default(),
            status: body.status,
            instrumentation_scope: self.scope.clone(),
        });
    }
}

thread_local! {
    /// A fast generator of ids, seeded per thread from the standard library's random keys.
    static IDS: Cell<u64> = Cell::new({
        use std::hash::{BuildHasher, Hasher};
        std::collections::hash_map::RandomState::new().build_hasher().finish() | 1
    });
}

/// The next random 64 bits (SplitMix64): ids need to be unique and evenly spread (a trace's
/// sampling reads its id), not secret.
fn random() -> u64 {
    IDS.with(|state| {
        let next = state.get().wrapping_add(0x9E37_79B9_7F4A_7C15);
        state.set(next);
        let mut z = next;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    })
}

pub(crate) fn new_span_id() -> SpanId {
    loop {
        let id = random();
        if id != 0 {
            return SpanId::from(id);
        }
    }
}

fn new_trace_id() -> TraceId {
    let high = u128::from(random()) << 64;
    TraceId::from(high | u128::from(random().max(1)))
}

/// What the next root span on this thread is told of its remote parent before it is made.
enum Pending {
    /// This one: the span continues its trace, and its sampling decision is the parent's.
    Parent(SpanContext, Carried),
    /// None will come: the span starts a trace, decided by the sampler there and then.
    None,
}

thread_local! {
    /// What the next root span on this thread takes (set by
    /// [`W3c::before_span`](crate::W3c), taken by the span, cleared by `extract`).
    static PENDING: std::cell::RefCell<Option<Pending>> =
        const { std::cell::RefCell::new(None) };
}

/// The remote parent of the next root span made on this thread (`parent` invalid: it has none).
pub(crate) fn expect_parent(parent: SpanContext, carried: Carried) {
    let pending = if parent.is_valid() {
        Pending::Parent(parent, carried)
    } else {
        Pending::None
    };
    PENDING.with(|p| *p.borrow_mut() = Some(pending));
}

/// Forgets what no span took.
pub(crate) fn forget_parent() {
    PENDING.with(|p| p.borrow_mut().take());
}

/// How a span with no local parent starts.
pub(crate) struct Root {
    pub(crate) trace_id: TraceId,
    /// The remote parent's id (and `true`: it came from another process), if it has one.
    pub(crate) parent: Option<(SpanId, bool)>,
    pub(crate) sampled: bool,
    /// What the remote parent carried on for the trace.
    pub(crate) carried: Option<Arc<Carried>>,
    /// Whether it was told of its remote parent, or of having none, before it was made: if
    /// not, one may still be set, and that parent's decision would be the trace's.
    pub(crate) told: bool,
}

/// Starts a span with no local parent: it continues the remote parent this thread was told
/// of (with that parent's decision, by the sampler's rule), else starts a trace the sampler
/// decides now.
pub(crate) fn root(sampler: &Sampler) -> Root {
    match PENDING.with(|p| p.borrow_mut().take()) {
        Some(Pending::Parent(remote, carried)) => {
            let trace_id = remote.trace_id();
            Root {
                trace_id,
                parent: Some((remote.span_id(), true)),
                sampled: sampler.with_parent(remote.is_sampled(), trace_id),
                carried: Some(Arc::new(carried)),
                told: true,
            }
        }
        Some(Pending::None) => new_root(sampler, true),
        None => new_root(sampler, false),
    }
}

/// A span that starts a trace, decided by the sampler now.
fn new_root(sampler: &Sampler, told: bool) -> Root {
    let trace_id = new_trace_id();
    Root {
        trace_id,
        parent: None,
        sampled: sampler.root(trace_id),
        carried: None,
        told,
    }
}
