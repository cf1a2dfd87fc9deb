//! What a request brings to the server besides its params: its id, cancellation, `_meta`, the
//! HTTP request's parts and, in a session, the peer to notify or ask. rmcp's handlers get a
//! `RequestContext`, which only a running rmcp service can make; the calls the transports
//! answer themselves (`http/direct.rs`, `stdio/direct.rs`) come without one.

use rmcp::RoleServer;
use rmcp::model::{
    ClientCapabilities, Extensions, ProgressToken, ProtocolVersion, RequestId, RequestMetaObject,
};
use rmcp::service::{Peer, RequestContext};
use tokio_util::sync::CancellationToken;

/// One request as the server's handlers read it.
pub(crate) enum Incoming {
    /// Through rmcp's service: a session's request, or a stateless request the direct path
    /// left to rmcp.
    Served(RequestContext<RoleServer>),
    /// A request a transport answers itself: a stateless 2026-07-28 request on HTTP, a plain
    /// `tools/call` of an initialized stdio session.
    Direct(Direct),
}

/// A request answered without rmcp's per-request service.
pub(crate) struct Direct {
    pub(crate) ct: CancellationToken,
    pub(crate) id: RequestId,
    pub(crate) meta: RequestMetaObject,
    /// On HTTP, the request's `http::request::Parts`; on stdio, a call's arguments as their
    /// text.
    pub(crate) extensions: Extensions,
    /// The session's client (stdio): its version and capabilities are the ones it gave at
    /// `initialize`, and it can be notified and asked. A stateless request has none: it carries
    /// its version and capabilities in `_meta`.
    pub(crate) session: Option<Peer<RoleServer>>,
}

impl From<RequestContext<RoleServer>> for Incoming {
    fn from(context: RequestContext<RoleServer>) -> Self {
        Incoming::Served(context)
    }
}

impl Incoming {
    /// Cancelled when the client cancels the request.
    pub(crate) fn ct(&self) -> &CancellationToken {
        match self {
            Incoming::Served(c) => &c.ct,
            Incoming::Direct(d) => &d.ct,
        }
    }

    pub(crate) fn id(&self) -> &RequestId {
        match self {
            Incoming::Served(c) => &c.id,
            Incoming::Direct(d) => &d.id,
        }
    }

    fn meta(&self) -> &RequestMetaObject {
        match self {
            Incoming::Served(c) => &c.meta,
            Incoming::Direct(d) => &d.meta,
        }
    }

    /// The request's extensions: on HTTP its `http::request::Parts`; on stdio a call's
    /// arguments as their text ([`crate::arguments::RawArguments`]).
    pub(crate) fn extensions(&self) -> &Extensions {
        match self {
            Incoming::Served(c) => &c.extensions,
            Incoming::Direct(d) => &d.extensions,
        }
    }

    /// The client to notify or ask, in a session.
    pub(crate) fn peer(&self) -> Option<&Peer<RoleServer>> {
        match self {
            Incoming::Served(c) => Some(&c.peer),
            Incoming::Direct(d) => d.session.as_ref(),
        }
    }

    /// The request's protocol version: from its `_meta` (2026-07-28), else the session's.
    pub(crate) fn protocol_version(&self) -> Option<ProtocolVersion> {
        match self {
            Incoming::Served(c) => c.protocol_version(),
            Incoming::Direct(d) => d.meta.protocol_version().or_else(|| {
                let info = d.session.as_ref()?.peer_info()?;
                Some(info.protocol_version.clone())
            }),
        }
    }

    /// The client's capabilities: from the request's `_meta`, else (in a session) the ones it
    /// gave at `initialize`.
    pub(crate) fn client_capabilities(&self) -> Option<ClientCapabilities> {
        match self {
            Incoming::Served(c) => c.client_capabilities(),
            Incoming::Direct(d) => d.meta.client_capabilities().or_else(|| {
                let info = d.session.as_ref()?.peer_info()?;
                Some(info.capabilities.clone())
            }),
        }
    }

    /// The token the client gave for progress reports, if any.
    pub(crate) fn progress_token(&self) -> Option<ProgressToken> {
        self.meta().get_progress_token()
    }

    /// The W3C trace context the request carried: in its `_meta`, else (on HTTP) in its
    /// headers.
    pub(crate) fn trace_context(&self) -> Option<crate::trace::TraceContext> {
        let meta = &self.meta().0.0;
        let carried = crate::trace::TraceContext::from_fields(|k| {
            meta.get(k).and_then(|v| v.as_str()).map(str::to_owned)
        });
        #[cfg(feature = "http")]
        if carried.is_none()
            && let Some(parts) = self.parts()
        {
            // The three names made once: a header looked up by text is parsed each time.
            static NAMES: [::http::HeaderName; 3] = [
                ::http::HeaderName::from_static("traceparent"),
                ::http::HeaderName::from_static("tracestate"),
                ::http::HeaderName::from_static("baggage"),
            ];
            return crate::trace::TraceContext::from_fields(|k| {
                let name = NAMES.iter().find(|name| name.as_str() == k)?;
                parts
                    .headers
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned)
            });
        }
        carried
    }

    /// The HTTP request's parts (none on stdio).
    #[cfg(feature = "http")]
    pub(crate) fn parts(&self) -> Option<&::http::request::Parts> {
        self.extensions().get::<::http::request::Parts>()
    }
}
