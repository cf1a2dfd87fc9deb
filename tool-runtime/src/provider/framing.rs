//! How a streamed response's body is cut into events: server-sent events for most APIs, AWS's
//! binary event stream for Bedrock's `ConverseStream`; and, for the test kit, events written
//! back into a body.

use std::error::Error;
#[cfg(feature = "aws-event-stream")]
use std::pin::Pin;

use futures_util::stream::{Stream, StreamExt};

use super::error::ReadError;
use super::stream::{MAX_RESPONSE_BYTES, StreamEvent};

/// How an API frames its streamed response body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Framing {
    /// Server-sent events (`text/event-stream`): Chat Completions, Responses, Anthropic,
    /// Gemini with `alt=sse`.
    ServerSentEvents,
    /// AWS's binary event stream (`application/vnd.amazon.eventstream`): Bedrock
    /// `ConverseStream`. Read with the `aws-event-stream` feature.
    AwsEventStream,
}

/// The events of a streamed body, boxed: what [`Framing::events`] returns.
pub type EventStream = std::pin::Pin<Box<dyn Stream<Item = Result<StreamEvent, Boxed>> + Send>>;

impl Framing {
    /// The body's media type.
    pub fn content_type(self) -> &'static str {
        match self {
            Framing::ServerSentEvents => "text/event-stream",
            Framing::AwsEventStream => "application/vnd.amazon.eventstream",
        }
    }

    /// The events of a response body's bytes (`reqwest::Response::bytes_stream`, a hyper
    /// body's data frames), cut as this framing says. Without the `aws-event-stream` feature
    /// an AWS event stream is one error.
    pub fn events<S, B, E>(self, bytes: S) -> EventStream
    where
        S: Stream<Item = Result<B, E>> + Send + 'static,
        B: bytes::Buf + Send + 'static,
        E: Error + Send + Sync + 'static,
    {
        match self {
            Framing::ServerSentEvents => Box::pin(sse_events(bytes)),
            #[cfg(feature = "aws-event-stream")]
            Framing::AwsEventStream => Box::pin(aws_events(bytes)),
            #[cfg(not(feature = "aws-event-stream"))]
            Framing::AwsEventStream => {
                drop(bytes);
                Box::pin(futures_util::stream::once(async {
                    Err(ReadError::Unsupported {
                        what: "AWS event streams without tool-runtime's `aws-event-stream` feature",
                    }
                    .into())
                }))
            }
        }
    }

    /// `events` written as a body in this framing (what a stand-in server sends). `None` for
    /// an AWS event stream without the `aws-event-stream` feature.
    pub fn encode(self, events: &[StreamEvent]) -> Option<Vec<u8>> {
        match self {
            Framing::ServerSentEvents => {
                let mut body = String::new();
                for e in events {
                    if let Some(name) = &e.event {
                        body.push_str(&format!("event: {name}\n"));
                    }
                    for line in e.data.split('\n') {
                        body.push_str(&format!("data: {line}\n"));
                    }
                    body.push('\n');
                }
                Some(body.into_bytes())
            }
            #[cfg(feature = "aws-event-stream")]
            Framing::AwsEventStream => Some(aws_encode(events)),
            #[cfg(not(feature = "aws-event-stream"))]
            Framing::AwsEventStream => None,
        }
    }
}

/// Each event as an event stream message: `:message-type` `event`, `:event-type` its name,
/// `:content-type` `application/json`, its data as the payload.
#[cfg(feature = "aws-event-stream")]
fn aws_encode(events: &[StreamEvent]) -> Vec<u8> {
    use aws_smithy_eventstream::frame::write_message_to;
    use aws_smithy_types::event_stream::{Header, HeaderValue, Message};

    let mut body = Vec::new();
    for e in events {
        let message = Message::new(e.data.clone().into_bytes())
            .add_header(Header::new(
                ":message-type",
                HeaderValue::String("event".into()),
            ))
            .add_header(Header::new(
                ":event-type",
                HeaderValue::String(e.event.clone().unwrap_or_default().into()),
            ))
            .add_header(Header::new(
                ":content-type",
                HeaderValue::String("application/json".into()),
            ));
        // Writing into a Vec fails only for a message over the format's limits.
        let _ = write_message_to(&message, &mut body);
    }
    body
}

/// Server-sent events from a response body's bytes (`reqwest::Response::bytes_stream`, a
/// hyper body's data frames), for the APIs that stream SSE (Chat Completions, Responses,
/// Anthropic, Gemini with `alt=sse`). Comments and events without data are skipped; an event
/// cut off by the end of the body is dropped, as the SSE standard says; a body over
/// [`MAX_RESPONSE_BYTES`](crate::provider::MAX_RESPONSE_BYTES) is cut off with an error.
pub fn sse_events<S, B, E>(
    bytes: S,
) -> impl Stream<Item = Result<StreamEvent, Box<dyn Error + Send + Sync>>> + Send
where
    S: Stream<Item = Result<B, E>> + Send,
    B: bytes::Buf + Send,
    E: Error + Send + Sync + 'static,
{
    sse_stream::SseStream::from_bytes_stream(capped(bytes)).filter_map(|event| async move {
        match event {
            Ok(sse) => sse.data.map(|data| {
                Ok(StreamEvent {
                    event: sse.event,
                    data,
                })
            }),
            Err(e) => Some(Err(ReadError::malformed(format!(
                "the event stream is unreadable: {e}"
            ))
            .into())),
        }
    })
}

type Boxed = Box<dyn Error + Send + Sync>;

/// The whole body, capped at [`MAX_RESPONSE_BYTES`](crate::provider::MAX_RESPONSE_BYTES): a
/// chunk past it is an error.
fn capped<S, B, E>(bytes: S) -> impl Stream<Item = Result<B, std::io::Error>> + Send
where
    S: Stream<Item = Result<B, E>> + Send,
    B: bytes::Buf + Send,
    E: Error + Send + Sync + 'static,
{
    let mut seen = 0usize;
    bytes.map(move |chunk| {
        let chunk = chunk.map_err(std::io::Error::other)?;
        seen = seen.saturating_add(bytes::Buf::remaining(&chunk));
        if seen > MAX_RESPONSE_BYTES {
            return Err(std::io::Error::other(format!(
                "the response body exceeds {} bytes",
                MAX_RESPONSE_BYTES
            )));
        }
        Ok(chunk)
    })
}

/// Bedrock `ConverseStream`'s events from the response body's bytes, without the AWS SDK: the
/// body is AWS's binary event stream, whose messages (length prelude, headers, payload, CRCs)
/// `aws-smithy-eventstream` decodes and checks. Each message is an event named by its
/// `:event-type` header with its JSON payload as data; an exception by its `:exception-type`
/// (`throttlingException`, ...), which ends the turn. A message that fails its checksum, an
/// `error` message, a body that ends inside a message or passes
/// [`MAX_RESPONSE_BYTES`](crate::provider::MAX_RESPONSE_BYTES) is an error, after which the
/// stream ends.
#[cfg(feature = "aws-event-stream")]
pub fn aws_events<S, B, E>(bytes: S) -> impl Stream<Item = Result<StreamEvent, Boxed>> + Send
where
    S: Stream<Item = Result<B, E>> + Send,
    B: bytes::Buf + Send,
    E: Error + Send + Sync + 'static,
{
    use aws_smithy_eventstream::frame::{DecodedFrame, MessageFrameDecoder};
    use bytes::{Buf, BufMut};

    struct Reading<S> {
        body: Pin<Box<S>>,
        buffer: bytes::BytesMut,
        decoder: MessageFrameDecoder,
        /// Bytes of a message not decoded yet were read.
        inside: bool,
        /// The buffer starts with a message's prelude (not read by the decoder yet).
        at_start: bool,
        done: bool,
    }
    let start = Reading {
        body: Box::pin(capped(bytes)),
        buffer: bytes::BytesMut::new(),
        decoder: MessageFrameDecoder::new(),
        inside: false,
        at_start: true,
        done: false,
    };
    futures_util::stream::unfold(start, |mut r| async move {
        while !r.done {
            // A body that is not an event stream (an HTTP error's JSON, say) is refused at its
            // first bytes, not read to its end as one huge message.
            if r.at_start && r.buffer.len() >= 12 {
                let b = &r.buffer;
                let total = u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize;
                if !(16..=MAX_AWS_MESSAGE).contains(&total) {
                    r.done = true;
                    let start = String::from_utf8_lossy(&b[..b.len().min(200)]).into_owned();
                    let refused = format!(
                        "the body is not an AWS event stream (a message of {total} bytes \
                         announced): {start}"
                    );
                    return Some((Err(refused.into()), r));
                }
                r.at_start = false;
            }
            match r.decoder.decode_frame(&mut r.buffer) {
                Ok(DecodedFrame::Complete(message)) => {
                    r.at_start = true;
                    r.inside = r.buffer.has_remaining();
                    let headers: Vec<(&str, Option<&str>)> = message
                        .headers()
                        .iter()
                        .map(|h| {
                            (
                                h.name().as_str(),
                                h.value().as_string().ok().map(|v| v.as_str()),
                            )
                        })
                        .collect();
                    let event = aws_event(&headers, message.payload());
                    r.done = event.is_err();
                    return Some((event, r));
                }
                Ok(DecodedFrame::Incomplete) => {}
                Err(e) => {
                    r.done = true;
                    return Some((
                        Err(
                            ReadError::malformed(format!("the event stream is unreadable: {e}"))
                                .into(),
                        ),
                        r,
                    ));
                }
            }
            match r.body.next().await {
                Some(Ok(mut chunk)) => {
                    r.inside |= chunk.has_remaining();
                    while chunk.has_remaining() {
                        let part = chunk.chunk();
                        let n = part.len();
                        r.buffer.put_slice(part);
                        chunk.advance(n);
                    }
                }
                Some(Err(e)) => {
                    r.done = true;
                    return Some((Err(e.into()), r));
                }
                None => {
                    r.done = true;
                    if r.inside {
                        let cut = "the event stream ends inside a message".into();
                        return Some((Err(cut), r));
                    }
                }
            }
        }
        None
    })
}

/// The largest event stream message (AWS's limit is 16 MB).
#[cfg(feature = "aws-event-stream")]
const MAX_AWS_MESSAGE: usize = 16 << 20;

/// One event stream message, its string headers and payload, as an event.
#[cfg(feature = "aws-event-stream")]
fn aws_event(headers: &[(&str, Option<&str>)], payload: &[u8]) -> Result<StreamEvent, Boxed> {
    let header = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, v)| v.map(str::to_owned))
    };
    let data = std::str::from_utf8(payload)
        .map_err(|_| "an event stream message whose payload is not UTF-8")?;
    let (kind, name) = match header(":message-type").as_deref() {
        Some("event") => ("event", header(":event-type")),
        Some("exception") => ("exception", header(":exception-type")),
        Some("error") => {
            let code = header(":error-code").unwrap_or_default();
            let text = header(":error-message").unwrap_or_default();
            return Err(ReadError::malformed(format!(
                "the event stream sent an error: {code}: {text}"
            ))
            .into());
        }
        other => {
            return Err(
                ReadError::malformed(format!("an event stream message of type {other:?}")).into(),
            );
        }
    };
    let name = name.ok_or_else(|| {
        ReadError::malformed(format!("an {kind} message without its type header"))
    })?;
    Ok(StreamEvent::named(name, data))
}
