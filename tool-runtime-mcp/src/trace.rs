//! One trace across MCP hops: W3C trace context (`traceparent`, `tracestate`, `baggage`) carried
//! in a request's `params._meta`, as OpenTelemetry's MCP conventions say (on HTTP also in the
//! request's headers of the same names; `_meta` wins when both are there).
//!
//! The toolkit's spans are `tracing` spans and it keeps no OpenTelemetry dependency: a
//! [`Propagator`] turns the context a request carried into its server span's parent, and the
//! current span into the context a remote call carries. The crate `tool-runtime-otel` has one
//! (`tool_runtime_otel::W3c`) and sets up the export; with `tracing-opentelemetry` alone, a
//! propagator is a few lines:
//!
//! ```ignore
//! use opentelemetry::propagation::TextMapPropagator;
//! use opentelemetry_sdk::propagation::TraceContextPropagator;
//! use tracing_opentelemetry::OpenTelemetrySpanExt;
//!
//! struct W3c;
//!
//! impl tool_runtime_mcp::trace::Propagator for W3c {
//!     fn extract(&self, span: &tracing::Span, carried: &TraceContext) {
//!         let parent = TraceContextPropagator::new().extract(&carried.fields());
//!         span.set_parent(parent);
//!     }
//!     fn inject(&self, span: &tracing::Span) -> Option<TraceContext> {
//!         let mut fields = std::collections::HashMap::new();
//!         TraceContextPropagator::new().inject_context(&span.context(), &mut fields);
//!         TraceContext::from_fields(|k| fields.get(k).cloned())
//!     }
//! }
//! ```
//!
//! Set it on the server ([`McpServer::with_propagator`](crate::McpServer::with_propagator)) and
//! on the remote servers a gateway calls
//! ([`RemoteOptions::propagator`](crate::remote::RemoteOptions::propagator)).

use std::collections::HashMap;

/// The `_meta` keys (and HTTP headers) of W3C trace context.
const KEYS: [&str; 3] = ["traceparent", "tracestate", "baggage"];

/// A W3C trace context as a request carries it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TraceContext {
    /// `version-traceid-parentid-flags`, e.g.
    /// `00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01`.
    pub traceparent: String,
    /// Vendors' entries, if any.
    pub tracestate: Option<String>,
    /// W3C baggage, if any.
    pub baggage: Option<String>,
}

impl TraceContext {
    /// A context of `traceparent` alone.
    pub fn new(traceparent: impl Into<String>) -> Self {
        TraceContext {
            traceparent: traceparent.into(),
            tracestate: None,
            baggage: None,
        }
    }

    /// Read from fields by name (`traceparent`, `tracestate`, `baggage`); `None` without a
    /// well-formed `traceparent`.
    pub fn from_fields(mut get: impl FnMut(&str) -> Option<String>) -> Option<Self> {
        let traceparent = get("traceparent").filter(|t| well_formed(t))?;
        Some(TraceContext {
            traceparent,
            tracestate: get("tracestate"),
            baggage: get("baggage"),
        })
    }

    /// Its fields by name, as text-map propagators read them.
    pub fn fields(&self) -> HashMap<String, String> {
        let mut fields = HashMap::from([(KEYS[0].to_owned(), self.traceparent.clone())]);
        if let Some(state) = &self.tracestate {
            fields.insert(KEYS[1].to_owned(), state.clone());
        }
        if let Some(baggage) = &self.baggage {
            fields.insert(KEYS[2].to_owned(), baggage.clone());
        }
        fields
    }

    /// Written into a request's `_meta`.
    #[cfg(feature = "client")]
    pub(crate) fn write_into(&self, meta: &mut serde_json::Map<String, serde_json::Value>) {
        for (key, value) in self.fields() {
            meta.insert(key, value.into());
        }
    }
}

/// Whether `traceparent` has W3C's shape: `2 hex - 32 hex - 16 hex - 2 hex`, the ids not all
/// zero (a context that breaks it is ignored, as the specification says).
fn well_formed(traceparent: &str) -> bool {
    let parts: Vec<&str> = traceparent.split('-').collect();
    let hex = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit());
    parts.len() >= 4
        && hex(parts[0], 2)
        && parts[0] != "ff"
        && hex(parts[1], 32)
        && hex(parts[2], 16)
        && hex(parts[3], 2)
        && parts[1].bytes().any(|b| b != b'0')
        && parts[2].bytes().any(|b| b != b'0')
        && (parts[0] != "00" || parts.len() == 4)
}

/// Turns carried trace context into spans' parents, and spans into the context to carry: the
/// bridge to a tracing backend (OpenTelemetry's, through `tool-runtime-otel` or
/// `tracing-opentelemetry`).
pub trait Propagator: Send + Sync + 'static {
    /// Called on the request's thread just before its server span is made, with what the
    /// request carried (a context whose `traceparent` is empty when it carried none);
    /// [`extract`](Self::extract) on that span follows when it carried one. A
    /// backend that samples a trace when its first span starts decides here (from the remote
    /// parent's decision, or its own when there is none), so a span of a trace it does not keep
    /// is never built. By default nothing.
    fn before_span(&self, carried: &TraceContext) {
        let _ = carried;
    }

    /// Makes `carried` (what a request brought) the parent of `span` (its server span).
    fn extract(&self, span: &tracing::Span, carried: &TraceContext);

    /// The context of `span` (a remote call's client span) for the request the call sends;
    /// `None` when it has none. Called also when the span is disabled (a backend may not make
    /// the spans of a trace it does not keep, and still carry that trace on, marked not
    /// sampled, so the next hop does not start one of its own).
    fn inject(&self, span: &tracing::Span) -> Option<TraceContext>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_well_formed_traceparent_is_read() {
        let good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        for (traceparent, read) in [
            (good, true),
            (
                "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-later",
                true,
            ),
            (
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-more",
                false,
            ),
            (
                "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                false,
            ),
            (
                "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
                false,
            ),
            (
                "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
                false,
            ),
            (
                "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
                false,
            ),
            (
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902bz-01",
                false,
            ),
            ("", false),
        ] {
            let got =
                TraceContext::from_fields(|k| (k == "traceparent").then(|| traceparent.into()));
            assert_eq!(got.is_some(), read, "{traceparent:?}");
        }
        let all = TraceContext::from_fields(|k| {
            Some(format!("{k}-value"))
                .filter(|_| k != "traceparent")
                .or(Some(good.into()))
        });
        let all = all.unwrap();
        assert_eq!(all.tracestate.as_deref(), Some("tracestate-value"));
        assert_eq!(all.baggage.as_deref(), Some("baggage-value"));
        assert_eq!(all.fields().len(), 3);
    }
}
