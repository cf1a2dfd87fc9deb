//! A request's body: read as it arrives, within the caller's share of the bytes all bodies in
//! flight may take and at a rate the sender must keep up; then checked (depth, values, a key
//! given twice) before anything parses it; and for `tools/call`, the arguments cut out of what
//! rmcp parses, so they are read once, from their text, by the tool's own decoder.
//!
//! Memory per request is then a small multiple of its body: the body itself, and the parsed
//! envelope of at most [`HttpConfig::max_envelope_values`] values (rmcp's reader keeps several
//! copies of what it parses, about 150 bytes per value in all); the arguments are parsed by the
//! call, one call at a time per caller's turn.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::response::Response;
use http_body_util::BodyExt;
use serde::de::DeserializeSeed;
use serde_json::Value;
use tool_runtime::json::Distinct;

use super::HttpConfig;
use super::reply::{refuse, retry_later, too_large};

/// JSON nesting a request may have (serde_json refuses deeper).
const MAX_NESTING: usize = 127;

/// The bytes of request bodies being read or handled: over all callers, and each caller's.
/// Counted as they arrive (what is held in memory), given back when the request's response
/// ends.
pub(super) struct Budget {
    total: usize,
    per_caller: usize,
    /// The part of `total` only a caller holding no body bytes may take: a crowd of one
    /// caller's bodies cannot keep another caller's first body out.
    reserve: usize,
    state: Mutex<Held>,
}

#[derive(Default)]
struct Held {
    total: usize,
    callers: HashMap<String, usize>,
}

/// Bytes one request holds; given back when dropped.
pub(super) struct BodyBytes {
    budget: Arc<Budget>,
    owner: String,
    bytes: usize,
}

/// Why a body's next bytes could not be taken.
enum Over {
    /// This caller's share is full: its own excess is refused.
    Caller,
    /// Every caller's bodies together fill the budget.
    Server,
}

impl Budget {
    pub(super) fn new(config: &HttpConfig) -> Self {
        let total = config.max_body_bytes_in_flight.max(config.max_body_bytes);
        Budget {
            total,
            per_caller: config.max_body_bytes_per_caller.clamp(1, total),
            reserve: config.max_body_bytes.min(total / 2),
            state: Mutex::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Held> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// An empty claim of `owner`'s.
    pub(super) fn claim(self: &Arc<Self>, owner: &str) -> BodyBytes {
        BodyBytes {
            budget: self.clone(),
            owner: owner.to_owned(),
            bytes: 0,
        }
    }
}

impl BodyBytes {
    /// Takes `more` bytes for this request.
    fn grow(&mut self, more: usize) -> Result<(), Over> {
        let budget = &self.budget;
        let mut held = budget.lock();
        let mine = held.callers.get(&self.owner).copied().unwrap_or(0);
        if mine + more > budget.per_caller {
            return Err(Over::Caller);
        }
        // Only a caller holding nothing (this request's bytes aside) may take the reserve.
        let others = mine - self.bytes;
        let room = if others == 0 {
            budget.total
        } else {
            budget.total - budget.reserve
        };
        if held.total + more > room {
            return Err(Over::Server);
        }
        held.total += more;
        *held.callers.entry(self.owner.clone()).or_default() += more;
        self.bytes += more;
        Ok(())
    }
}

impl Drop for BodyBytes {
    fn drop(&mut self) {
        if self.bytes == 0 {
            return;
        }
        let mut held = self.budget.lock();
        held.total -= self.bytes;
        if let Some(n) = held.callers.get_mut(&self.owner) {
            *n -= self.bytes;
            if *n == 0 {
                held.callers.remove(&self.owner);
            }
        }
    }
}

/// The body, whole, if it is no larger than `max_body_bytes`, each byte taken from `bytes`
/// (the caller's share) as it arrives, and the sender keeps up: after `body_read_timeout`, at
/// least `min_body_rate` bytes a second on average. A sender that falls behind is cut there,
/// however long the body it announced.
pub(super) async fn read(
    mut body: Body,
    bytes: &mut BodyBytes,
    config: &HttpConfig,
) -> Result<Bytes, Box<Response>> {
    let rate = config.min_body_rate.max(1) as f64;
    let start = Instant::now();
    // The frames as they came (no copy), joined once at the end.
    let mut frames: Vec<Bytes> = Vec::new();
    let mut length = 0usize;
    loop {
        let due = start + config.body_read_timeout + Duration::from_secs_f64(length as f64 / rate);
        let frame = match tokio::time::timeout_at(due.into(), body.frame()).await {
            Err(_) => {
                let mut response = refuse(
                    http::StatusCode::REQUEST_TIMEOUT,
                    -32600,
                    "the body did not arrive in time",
                    Value::Null,
                );
                response.headers_mut().insert(
                    http::header::CONNECTION,
                    http::HeaderValue::from_static("close"),
                );
                return Err(Box::new(response));
            }
            Ok(None) => {
                return Ok(match frames.len() {
                    1 => frames.pop().unwrap_or_default(),
                    _ => {
                        let mut whole = Vec::with_capacity(length);
                        for frame in &frames {
                            whole.extend_from_slice(frame);
                        }
                        Bytes::from(whole)
                    }
                });
            }
            Ok(Some(Err(_))) => {
                return Err(Box::new(refuse(
                    http::StatusCode::BAD_REQUEST,
                    -32600,
                    "the body could not be read",
                    Value::Null,
                )));
            }
            Ok(Some(Ok(frame))) => frame,
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if length + data.len() > config.max_body_bytes {
            return Err(Box::new(too_large(config.max_body_bytes)));
        }
        match bytes.grow(data.len()) {
            Ok(()) => {
                length += data.len();
                frames.push(data);
            }
            Err(Over::Caller) => {
                return Err(Box::new(retry_later(
                    http::StatusCode::TOO_MANY_REQUESTS,
                    "this caller's request bodies in flight take its whole share; try again when one ends",
                    Value::Null,
                )));
            }
            Err(Over::Server) => {
                return Err(Box::new(retry_later(
                    http::StatusCode::SERVICE_UNAVAILABLE,
                    "the server is reading as many request bodies as it may; try again shortly",
                    Value::Null,
                )));
            }
        }
    }
}

/// The members of a JSON-RPC body the checks look at.
#[derive(serde::Deserialize)]
pub(super) struct Envelope {
    #[serde(default)]
    pub(super) method: Option<String>,
    #[serde(default)]
    pub(super) id: Option<Value>,
}

/// A checked body: its envelope, the body rmcp reads, and a `tools/call`'s arguments cut out
/// of it (their text).
pub(super) struct Checked {
    pub(super) envelope: Envelope,
    pub(super) body: Bytes,
    pub(super) arguments: Option<Bytes>,
}

/// A body refused with 400 and a JSON-RPC error `code`.
fn bad<T>(code: i64, message: &str) -> Result<T, Box<Response>> {
    Err(Box::new(refuse(
        http::StatusCode::BAD_REQUEST,
        code,
        message,
        Value::Null,
    )))
}

/// A body rmcp may parse: not deeper than serde_json reads, not more values than
/// `max_json_values`, JSON-RPC, no key given twice; a `tools/call`'s arguments are cut out
/// (rmcp reads `{}` in their place) and, what is left, at most `max_envelope_values` values.
pub(super) fn check(
    bytes: Bytes,
    shape: tool_runtime::json::Shape,
    config: &HttpConfig,
) -> Result<Checked, Box<Response>> {
    if shape.depth > MAX_NESTING {
        return bad(-32600, "invalid request: nested too deeply");
    }
    if shape.values > config.max_json_values {
        return bad(
            -32600,
            &format!(
                "invalid request: more than {} JSON values",
                config.max_json_values
            ),
        );
    }
    let too_many = || {
        bad(
            -32600,
            &format!(
                "invalid request: more than {} JSON values outside a call's arguments",
                config.max_envelope_values
            ),
        )
    };
    // The fewest values the envelope can hold (as if this were a `tools/call`), counted before
    // the envelope is read: a large body outside the arguments costs one scan, not a parse.
    let found = crate::arguments::arguments_at(&bytes);
    let inside = found.as_ref().map_or(0, |range| {
        tool_runtime::json::shape(&bytes[range.clone()]).values
    });
    if shape.values.saturating_sub(inside) > config.max_envelope_values {
        return too_many();
    }
    let envelope = envelope(&bytes)?;
    if envelope.method.as_deref() == Some("subscriptions/listen")
        && let Some(error) = crate::extension::listen_without_extension(&bytes)
    {
        // (The protocol answers this error with 400.)
        let body = serde_json::json!({"jsonrpc": "2.0", "id": envelope.id, "error": error});
        return Err(Box::new(axum::response::IntoResponse::into_response((
            http::StatusCode::BAD_REQUEST,
            axum::Json(body),
        ))));
    }
    let (body, arguments, outside) = match envelope.method.as_deref() {
        Some("tools/call") => match found {
            Some(range) => {
                let spliced = crate::arguments::without(&bytes, range.clone());
                let arguments = bytes.slice(range);
                (
                    Bytes::from(spliced),
                    Some(arguments),
                    shape.values.saturating_sub(inside),
                )
            }
            None => (bytes, None, shape.values),
        },
        _ => (bytes, None, shape.values),
    };
    if outside > config.max_envelope_values {
        return too_many();
    }
    Ok(Checked {
        envelope,
        body,
        arguments,
    })
}

/// The envelope, every key of the body checked once (a key given twice is refused: which value
/// was meant cannot be known, and another reader may have read the other one).
fn envelope(bytes: &[u8]) -> Result<Envelope, Box<Response>> {
    // One pass reads the envelope and checks every key; a body it refuses is read again below
    // to say what is wrong with it.
    let mut de = serde_json::Deserializer::from_slice(bytes);
    if let Ok(envelope) = Distinct(PhantomData::<Envelope>).deserialize(&mut de)
        && de.end().is_ok()
    {
        return Ok(envelope);
    }
    let envelope: Envelope = match serde_json::from_slice(bytes) {
        Ok(e) => e,
        Err(e) if e.is_syntax() || e.is_eof() => {
            return bad(-32700, "parse error: the body is not JSON");
        }
        Err(_) => return bad(-32600, "invalid request: expected a JSON-RPC object"),
    };
    if tool_runtime::json::has_duplicate_keys(bytes) {
        return bad(-32600, "invalid request: a key is given more than once");
    }
    Ok(envelope)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_callers_share_and_the_reserve_bound_its_bodies() {
        let config = HttpConfig {
            max_body_bytes: 100,
            max_body_bytes_in_flight: 400,
            max_body_bytes_per_caller: 250,
            ..HttpConfig::default()
        };
        let budget = Arc::new(Budget::new(&config));
        let (mut a, mut b) = (budget.claim("mallory"), budget.claim("mallory"));
        assert!(a.grow(200).is_ok());
        assert!(matches!(b.grow(60), Err(Over::Caller)), "past his share");
        assert!(b.grow(50).is_ok());
        let mut c = budget.claim("eve");
        assert!(c.grow(50).is_ok(), "eve holds nothing: the reserve is hers");
        let mut d = budget.claim("eve");
        assert!(
            matches!(d.grow(40), Err(Over::Server)),
            "she now holds some: not the reserve"
        );
        let mut sari = budget.claim("sari");
        assert!(
            sari.grow(90).is_ok(),
            "a newcomer's first body always has room"
        );
        drop((a, b, c, d, sari));
        assert_eq!(budget.lock().total, 0);
        assert!(budget.lock().callers.is_empty());
    }
}
