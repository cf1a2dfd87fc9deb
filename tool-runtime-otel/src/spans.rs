//! The layer: each `tracing` span the filter lets through becomes an OpenTelemetry span,
//! written straight from its fields into the [`SpanData`] the SDK's batch processor exports, and
//! each duration event of the toolkit's metrics targets a histogram measurement (see
//! [`metrics`](crate::metrics)). One layer for both: every span operation walks each layer
//! of a subscriber, and a filtered layer looks the span up to know whether it is its own. The
//! one span it does not take is a tool call's: the layer exposes the core's observer, which
//! records calls directly ([`calls`](crate::calls)); a span or event made while a call runs on
//! this thread is the call's.
//!
//! The sampling decision is taken when a span starts: a span whose trace is not sampled keeps
//! its ids (to carry its trace on) and nothing else, so its fields are never read, copied or
//! stored, and the toolkit's spans inside it are not made at all (`SpanLayer`'s `enabled`). A
//! root span is the one exception: its remote parent may arrive just after it starts
//! ([`W3c`](crate::W3c) sets it from the request), and that parent's decision is the trace's,
//! so a root span records its fields until then. Fields named `otel.name`, `otel.kind`,
//! `otel.status_code` and `otel.status_description` set the span's name, kind and status;
//! every other field is an attribute; an event inside a sampled span is a span event (an
//! `ERROR` event marks the span's status as an error when nothing else set it).

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::time::SystemTime;

use opentelemetry::trace::{SpanContext, SpanId, SpanKind, Status, TraceId};
use opentelemetry::{Key, KeyValue, Value};
use opentelemetry_sdk::trace::SpanEvents;
use tool_runtime::observe::{self, Observer};
use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Metadata, Subscriber};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::{Context, Filter};
use tracing_subscriber::registry::LookupSpan;

use crate::calls::{self, CallSpan, Calls, Merge, Owner};
use crate::metrics::Histograms;
use crate::sampler::Sampler;
use crate::span_data::{self, Body, Carried, Sink, Traced, new_span_id, span_context};
use crate::values::text;

/// What the layer keeps of one span.
struct Kept {
    trace_id: TraceId,
    span_id: SpanId,
    /// The parent's id, and whether it came from another process.
    parent: Option<(SpanId, bool)>,
    sampled: bool,
    /// No parent, local or remote, yet: a remote one may still be set.
    root: bool,
    /// A tool call is recorded on it (one span per call): a second call gets its own span.
    claimed: bool,
    /// What the remote parent carried on for the trace (its `tracestate`, the baggage).
    carried: Option<Arc<Carried>>,
    /// Its name, kind, fields and start; `None` when its trace is not sampled.
    body: Option<Box<Body>>,
}

/// The layer (see the module's documentation).
pub(crate) struct SpanLayer<S> {
    /// Where spans go; `None` when only metrics are exported.
    sink: Option<Arc<Sink>>,
    histograms: Option<Arc<Histograms>>,
    hooks: Hooks,
    /// What records the toolkit's tool calls (see [`calls`](crate::calls)); `None` when
    /// the host asked for calls as `tracing` spans.
    observer: Option<Observer>,
    _subscriber: std::marker::PhantomData<fn(S)>,
}

/// What [`W3c`](crate::W3c) reaches through the dispatcher, typed by the subscriber the layer
/// is in (found with `downcast_ref`, as `tracing-error` and `tracing-opentelemetry` do).
pub(crate) struct Hooks {
    sampler: Sampler,
    /// The mark of the calls this layer's observer records.
    calls: Option<Owner>,
    context: fn(&tracing::Dispatch, &Id) -> Option<Traced>,
    set_parent: fn(&tracing::Dispatch, &Id, &SpanContext, Carried, &Sampler),
}

impl Hooks {
    /// The call of this layer's observer that a span or event made now belongs to (see
    /// [`calls::running`]).
    pub(crate) fn running(&self, current: Option<&Id>) -> Option<Arc<CallSpan>> {
        calls::running(self.calls?, current)
    }

    /// The span's context, and what its trace carried (to carry both to another process).
    pub(crate) fn context(&self, dispatch: &tracing::Dispatch, id: &Id) -> Option<Traced> {
        (self.context)(dispatch, id)
    }

    /// Gives a root span the remote parent its request carried (and so that parent's
    /// sampling decision, by the sampler's rule).
    pub(crate) fn set_parent(
        &self,
        dispatch: &tracing::Dispatch,
        id: &Id,
        parent: &SpanContext,
        baggage: Option<String>,
    ) {
        let carried = Carried {
            trace_state: parent.trace_state().clone(),
            baggage,
        };
        (self.set_parent)(dispatch, id, parent, carried, &self.sampler)
    }
}

impl<S> SpanLayer<S>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    pub(crate) fn new(
        sink: Option<Arc<Sink>>,
        histograms: Option<Histograms>,
        sampler: Sampler,
        content: bool,
        observe_calls: bool,
        one_span_per_call: bool,
    ) -> Self {
        let histograms = histograms.map(Arc::new);
        let merge = one_span_per_call.then_some(Merge {
            target: Self::target_of,
            absorb: Self::absorb_of,
        });
        let calls = observe_calls.then(|| {
            Calls::new(
                sink.clone(),
                histograms.clone(),
                sampler.clone(),
                content,
                Self::context_of,
                merge,
            )
        });
        SpanLayer {
            hooks: Hooks {
                calls: calls.as_ref().map(Calls::owner),
                sampler,
                context: Self::context_of,
                set_parent: Self::set_parent_of,
            },
            observer: calls.map(Observer::new),
            histograms,
            sink,
            _subscriber: std::marker::PhantomData,
        }
    }

    /// The context of `id`, or of its closest ancestor the layer keeps.
    fn context_of(dispatch: &tracing::Dispatch, id: &Id) -> Option<Traced> {
        let registry = dispatch.downcast_ref::<S>()?;
        let span = registry.span(id)?;
        span.scope().find_map(|span| {
            let extensions = span.extensions();
            let kept = extensions.get::<Kept>()?;
            Some((context(kept), kept.carried.clone()))
        })
    }

    /// Claims `id` for a call of `tool`, and gives its context: when the layer keeps it, it
    /// traces the execution of `tool` (its `gen_ai.operation.name` is `execute_tool`, its
    /// `gen_ai.tool.name` the tool's), and no call claimed it before (a call resumed after an
    /// approval, or run again after a question, in the same request gets a span of its own).
    fn target_of(dispatch: &tracing::Dispatch, id: &Id, tool: &str) -> Option<Traced> {
        let registry = dispatch.downcast_ref::<S>()?;
        let span = registry.span(id)?;
        let mut extensions = span.extensions_mut();
        let kept = extensions.get_mut::<Kept>()?;
        let body = kept
            .body
            .as_deref()
            .filter(|_| kept.sampled && !kept.claimed)?;
        let is = |key: &str, value: &str| {
            body.attributes
                .iter()
                .any(|kv| kv.key.as_str() == key && kv.value.as_str() == value)
        };
        if !(is("gen_ai.operation.name", "execute_tool") && is("gen_ai.tool.name", tool)) {
            return None;
        }
        kept.claimed = true;
        Some((context(kept), kept.carried.clone()))
    }

    /// Adds a call's attributes (those the span does not have, and not its `error.type`) and
    /// events to `id`, if it is still the span `span_id`. Not the call's status: the span's
    /// owner records how its request ended (a tool's error answered as a result, or a
    /// question asked and the call run again, is not the request's failure).
    fn absorb_of(dispatch: &tracing::Dispatch, id: &Id, span_id: SpanId, call: Body) {
        let Some(span) = dispatch.downcast_ref::<S>().and_then(|r| r.span(id)) else {
            return;
        };
        let mut extensions = span.extensions_mut();
        let Some(Kept {
            body: Some(body),
            span_id: kept_id,
            ..
        }) = extensions.get_mut::<Kept>()
        else {
            return;
        };
        if *kept_id != span_id {
            return;
        }
        for kv in call.attributes {
            if kv.key.as_str() != "error.type" && !body.attributes.iter().any(|a| a.key == kv.key) {
                body.attributes.push(kv);
            }
        }
        body.events.events.extend(call.events.events);
    }

    fn set_parent_of(
        dispatch: &tracing::Dispatch,
        id: &Id,
        parent: &SpanContext,
        carried: Carried,
        sampler: &Sampler,
    ) {
        let Some(registry) = dispatch.downcast_ref::<S>() else {
            return;
        };
        let Some(span) = registry.span(id) else {
            return;
        };
        let mut extensions = span.extensions_mut();
        let Some(kept) = extensions.get_mut::<Kept>() else {
            return;
        };
        if !kept.root || !parent.is_valid() {
            return;
        }
        kept.root = false;
        kept.trace_id = parent.trace_id();
        kept.parent = Some((parent.span_id(), true));
        kept.carried = Some(Arc::new(carried));
        kept.sampled =
            sampler.with_parent(parent.is_sampled(), kept.trace_id) && kept.body.is_some();
        if !kept.sampled {
            kept.body = None;
        }
    }
}

/// The layer's filter: the targets it records; unless every trace is kept, each of the
/// toolkit's span callsites is asked at each span (`SpanLayer`'s `enabled` then says whether
/// the span is inside a trace not kept).
pub(crate) struct Sampled {
    pub(crate) targets: Targets,
    /// The sampler keeps every trace: no span is ever inside one not kept.
    pub(crate) every_trace: bool,
}

/// Whether a span is one of the toolkit's own (its target is one of the toolkit's crates).
fn toolkit(metadata: &Metadata<'_>) -> bool {
    metadata.is_span() && metadata.target().starts_with("tool_runtime")
}

/// Whether a span or event is an observed call's, made for the subscriber's other layers: this
/// layer's observer records the call ([`calls`](crate::calls)).
fn observed(metadata: &Metadata<'_>) -> bool {
    matches!(
        metadata.target(),
        observe::SPAN_TARGET | observe::METRICS_TARGET
    )
}

impl<S> Filter<S> for Sampled
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn enabled(&self, metadata: &Metadata<'_>, cx: &Context<'_, S>) -> bool {
        !observed(metadata) && Filter::<S>::enabled(&self.targets, metadata, cx)
    }

    fn callsite_enabled(&self, metadata: &'static Metadata<'static>) -> Interest {
        if observed(metadata) {
            return Interest::never();
        }
        let interest = Filter::<S>::callsite_enabled(&self.targets, metadata);
        if !self.every_trace && toolkit(metadata) && !interest.is_never() {
            // Asked at each span: whether its trace is kept.
            Interest::sometimes()
        } else {
            interest
        }
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Filter::<S>::max_level_hint(&self.targets)
    }
}

/// The span context of a kept span.
fn context(kept: &Kept) -> SpanContext {
    span_context(
        kept.trace_id,
        kept.span_id,
        kept.sampled,
        kept.carried.as_deref(),
    )
}

impl<S> tracing_subscriber::Layer<S> for SpanLayer<S>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    /// Sampling decided before a span is built: one of the toolkit's spans inside a trace not
    /// kept is not made at all (for any layer: `tracing` makes a disabled span, which costs
    /// nothing), so a request outside the sample costs its own span, not its children's. The
    /// calls still count in the histograms (the toolkit times a call whose span is off when
    /// they are recorded), and the trace still goes on to the next hop: [`W3c`](crate::W3c)
    /// carries the context of the span around it, marked not sampled. A host's own spans are
    /// left to the other layers.
    fn enabled(&self, metadata: &Metadata<'_>, ctx: Context<'_, S>) -> bool {
        if self.sink.is_none()
            || matches!(self.hooks.sampler, Sampler::AlwaysOn)
            || !toolkit(metadata)
        {
            return true;
        }
        // Inside a call recorded directly: whether its trace is kept.
        if let Some(call) = self.hooks.running(ctx.current_span().id()) {
            return call.sampled;
        }
        // The current span as this layer sees it (the closest ancestor it records).
        ctx.lookup_current().is_none_or(|parent| {
            parent
                .extensions()
                .get::<Kept>()
                .is_none_or(|kept| kept.sampled || kept.root)
        })
    }

    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        // An observed call is recorded through the observer. The filter turns its span off,
        // but a callsite's interest cached while another subscriber alone was set (scoped
        // subscribers on other threads) can let one through: never recorded twice.
        if self.sink.is_none() || observed(attrs.metadata()) {
            return;
        }
        let Some(span) = ctx.span(id) else {
            return;
        };
        // A span made inside a call recorded directly is the call's child.
        let call = attrs
            .is_contextual()
            .then(|| self.hooks.running(ctx.current_span().id()))
            .flatten();
        let parent = match call {
            Some(call) => Some((
                call.trace_id,
                call.span_id,
                call.sampled,
                call.carried.clone(),
            )),
            None => span.parent().and_then(|p| {
                let extensions = p.extensions();
                extensions
                    .get::<Kept>()
                    .map(|k| (k.trace_id, k.span_id, k.sampled, k.carried.clone()))
            }),
        };
        let (trace_id, parent, sampled, root, carried) = match parent {
            Some((trace_id, span_id, sampled, carried)) => {
                (trace_id, Some((span_id, false)), sampled, false, carried)
            }
            None => {
                let start = span_data::root(&self.hooks.sampler);
                (
                    start.trace_id,
                    start.parent,
                    start.sampled,
                    !start.told,
                    start.carried,
                )
            }
        };
        // A root span told nothing of its remote parent records its fields whatever the first
        // decision: that parent's decision may still come (`extract`).
        let body = (sampled || root).then(|| {
            let metadata = attrs.metadata();
            let mut body = Box::new(Body {
                name: Cow::Borrowed(metadata.name()),
                kind: SpanKind::Internal,
                status: Status::Unset,
                start: SystemTime::now(),
                attributes: Vec::with_capacity(metadata.fields().len()),
                events: SpanEvents::default(),
            });
            attrs.record(&mut Fields(&mut body));
            body
        });
        span.extensions_mut().insert(Kept {
            trace_id,
            span_id: new_span_id(),
            parent,
            sampled,
            root,
            claimed: false,
            carried,
            body,
        });
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else {
            return;
        };
        let mut extensions = span.extensions_mut();
        if let Some(Kept {
            body: Some(body), ..
        }) = extensions.get_mut::<Kept>()
        {
            values.record(&mut Fields(body));
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        if observed(event.metadata()) {
            // An observed call's duration: recorded by the observer.
            return;
        }
        if crate::METRIC_TARGETS.contains(&event.metadata().target()) {
            if let Some(histograms) = &self.histograms {
                histograms.on_event(event);
            }
            return;
        }
        // An event inside a call recorded directly is the call's.
        if event.is_contextual()
            && let Some(call) = self.hooks.running(ctx.current_span().id())
        {
            call.with_body(|body| add_event(body, event));
            return;
        }
        let Some(span) = ctx.event_span(event) else {
            return;
        };
        let mut extensions = span.extensions_mut();
        if let Some(Kept {
            body: Some(body), ..
        }) = extensions.get_mut::<Kept>()
        {
            add_event(body, event);
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else {
            return;
        };
        let Some(mut kept) = span.extensions_mut().remove::<Kept>() else {
            return;
        };
        let Some(body) = kept.body.take().filter(|_| kept.sampled) else {
            return;
        };
        let Some(sink) = &self.sink else {
            return;
        };
        sink.send(context(&kept), kept.parent, *body);
    }

    // SAFETY: the pointer returned for `Hooks` points at `self.hooks`, for `Observer` at
    // `self.observer`, which live as long as `self`; for `Self`, at `self`.
    unsafe fn downcast_raw(&self, id: std::any::TypeId) -> Option<*const ()> {
        if id == std::any::TypeId::of::<Self>() {
            Some(self as *const Self as *const ())
        } else if id == std::any::TypeId::of::<Hooks>() {
            Some(&self.hooks as *const Hooks as *const ())
        } else if id == std::any::TypeId::of::<Observer>() {
            self.observer
                .as_ref()
                .map(|observer| observer as *const Observer as *const ())
        } else {
            None
        }
    }
}

/// An event as a span event of `body` (an `ERROR` event marks the span's status as an error
/// when nothing else set it).
fn add_event(body: &mut Body, event: &Event<'_>) {
    let mut fields = EventFields::default();
    event.record(&mut fields);
    if *event.metadata().level() == tracing::Level::ERROR && body.status == Status::Unset {
        body.status = Status::error(fields.message.clone().unwrap_or_default());
    }
    let name = fields
        .message
        .map_or(Cow::Borrowed(event.metadata().name()), Cow::Owned);
    body.events.events.push(opentelemetry::trace::Event::new(
        name,
        SystemTime::now(),
        fields.attributes,
        0,
    ));
}

/// Reads a span's fields into its body.
struct Fields<'a>(&'a mut Body);

impl Fields<'_> {
    /// The fields that are not attributes: `true` when `field` was one.
    fn special(&mut self, field: &Field, value: &str) -> bool {
        match field.name() {
            "otel.name" => self.0.name = Cow::Owned(value.to_owned()),
            "otel.kind" => {
                self.0.kind = match value {
                    "server" => SpanKind::Server,
                    "client" => SpanKind::Client,
                    "producer" => SpanKind::Producer,
                    "consumer" => SpanKind::Consumer,
                    _ => SpanKind::Internal,
                }
            }
            "otel.status_code" => match value {
                "ERROR" | "error" if !matches!(self.0.status, Status::Error { .. }) => {
                    self.0.status = Status::error("");
                }
                "OK" | "ok" => self.0.status = Status::Ok,
                _ => {}
            },
            "otel.status_description" => self.0.status = Status::error(value.to_owned()),
            _ => return false,
        }
        true
    }

    fn set(&mut self, field: &Field, value: Value) {
        self.0
            .attributes
            .push(KeyValue::new(Key::from_static_str(field.name()), value));
    }
}

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if !self.special(field, value) {
            self.set(field, text(value));
        }
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.set(field, Value::Bool(value));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.set(field, Value::I64(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        match i64::try_from(value) {
            Ok(v) => self.set(field, Value::I64(v)),
            Err(_) => self.set(field, Value::from(value.to_string())),
        }
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.set(field, Value::F64(value));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        let written = written(value);
        if field.name() == "otel.name" {
            self.0.name = Cow::Owned(written);
        } else if !self.special(field, &written) {
            self.set(field, Value::from(written));
        }
    }
}

/// A value written out (a name, an id, an address: a first buffer long enough for most, where
/// `format!` would start empty and grow it a few times).
fn written(value: &dyn fmt::Debug) -> String {
    use fmt::Write as _;
    let mut written = String::with_capacity(32);
    let _ = write!(written, "{value:?}");
    written
}

/// An event's message and its other fields.
#[derive(Default)]
struct EventFields {
    message: Option<String>,
    attributes: Vec<KeyValue>,
}

impl Visit for EventFields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "message" => self.message = Some(value.to_owned()),
            name => self
                .attributes
                .push(KeyValue::new(Key::from_static_str(name), value.to_owned())),
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        match field.name() {
            "message" => self.message = Some(format!("{value:?}")),
            name => self.attributes.push(KeyValue::new(
                Key::from_static_str(name),
                format!("{value:?}"),
            )),
        }
    }
}
