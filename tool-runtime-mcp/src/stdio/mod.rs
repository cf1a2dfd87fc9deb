//! The stdio transport: newline-delimited JSON-RPC on a pair of streams, as an rmcp
//! [`Transport`]. It reads each line once, into rmcp's message type, and guarantees what rmcp's
//! own `AsyncRwTransport` does not:
//!
//! - **Every request line gets exactly one answer.** rmcp drops a line that is not JSON without
//!   answering ([rust-sdk#938]), drops a line over its size limit
//!   (`transport/async_rw.rs`, `Step::Oversized`), answers a well-formed line of the wrong shape
//!   with an id-less "Invalid request", and lets two requests in flight share an id (one of
//!   them never gets its own answer). Here each of those lines is answered with the JSON-RPC
//!   error it deserves and its id, and a request still unanswered when the transport closes is
//!   answered then.
//! - **Bounded work and memory.** rmcp starts a task for every request it reads and for every
//!   response it sends, with no limit. Here at most `max_in_flight` requests are read and not
//!   yet answered; a client that stops reading the answers stops being read from, so memory
//!   stays flat.
//! - **A plain call without rmcp's per-request tasks.** A `tools/call` of an initialized session
//!   that carries no `_meta` is run here and answered straight to the writer (see `direct.rs`).
//!
//! `tests/rmcp_behaviour.rs` (in `examples/tests`) checks that rmcp still behaves as described;
//! when one of those tests fails, the workaround here may no longer be needed.
//!
//! [rust-sdk#938]: https://github.com/modelcontextprotocol/rust-sdk/issues/938

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::RoleServer;
use rmcp::ServiceExt;
use rmcp::model::{ClientNotification, JsonRpcMessage, NumberOrString};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

use crate::handler::Served;
use crate::server::McpServer;

mod direct;
mod line;
pub(crate) use direct::Lane;
use line::{read_message, scan_id};

/// Lines longer than this are refused (rmcp's own limit is 16 MiB).
pub(crate) const MAX_LINE: usize = 8 * 1024 * 1024;
/// Answers queued for the writer before senders wait.
const WRITE_QUEUE: usize = 64;
/// JSON-RPC nesting serde_json accepts.
const MAX_NESTING: usize = 127;
/// JSON values in one line, at most: memory to parse a line grows with them, not with its bytes
/// (a 4 MB line of `{},` is 1.3 million values).
pub(crate) const MAX_VALUES: usize = 100_000;

/// The requests read and not yet answered, by key: each holds one in-flight permit until its
/// answer is written.
#[derive(Default)]
struct InFlight {
    by_key: HashMap<String, Request>,
}

struct Request {
    id: Value,
    _permit: OwnedSemaphorePermit,
    /// Its answer is queued for the writer.
    queued: bool,
    /// Cancels the call when this transport runs it itself.
    cancel: Option<CancellationToken>,
}

impl InFlight {
    fn admit(&mut self, key: String, id: Value, permit: OwnedSemaphorePermit, queued: bool) {
        self.by_key.insert(
            key,
            Request {
                id,
                _permit: permit,
                queued,
                cancel: None,
            },
        );
    }
}

/// A line for the client, and the request it answers (if any).
struct Outgoing {
    line: Vec<u8>,
    answers: Option<String>,
}

/// The stdio transport for rmcp's server.
pub(crate) struct StdioTransport<R> {
    input: BufReader<R>,
    line: Vec<u8>,
    /// The line being read is over [`MAX_LINE`]; its head is kept, the rest skipped.
    too_long: bool,
    permits: Arc<Semaphore>,
    /// A permit taken for the next line, kept across a cancelled `receive`.
    permit: Option<OwnedSemaphorePermit>,
    in_flight: Arc<Mutex<InFlight>>,
    out: Option<mpsc::Sender<Outgoing>>,
    /// This transport's own answers (to lines it does not pass on), waiting for the writer. They
    /// are handed over at the start of the next `receive`, with a reserved place in the writer's
    /// queue: rmcp polls `receive` inside a `select!` and may drop it at any await, and an answer
    /// kept here is never lost to that.
    backlog: std::collections::VecDeque<Outgoing>,
    /// The plain calls this transport runs itself.
    lane: Lane,
}

/// The key of a request id: its JSON text (`1` and `"1"` differ).
fn key_of(id: &NumberOrString) -> String {
    match id {
        NumberOrString::Number(n) => n.to_string(),
        NumberOrString::String(s) => Value::from(&**s).to_string(),
    }
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

impl<R: AsyncRead + Unpin + Send> StdioTransport<R> {
    /// The transport on `input` and `output`, and the task that writes to `output`: it ends,
    /// with everything written, once the transport is closed or dropped.
    pub(crate) fn new<W>(
        input: R,
        output: W,
        max_in_flight: usize,
        lane: Lane,
    ) -> (Self, tokio::task::JoinHandle<std::io::Result<()>>)
    where
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let in_flight = Arc::new(Mutex::new(InFlight::default()));
        let (tx, rx) = mpsc::channel(WRITE_QUEUE);
        let writer = tokio::spawn(write_lines(output, rx, in_flight.clone()));
        let transport = StdioTransport {
            input: BufReader::new(input),
            line: Vec::new(),
            too_long: false,
            permits: Arc::new(Semaphore::new(max_in_flight.max(1))),
            permit: None,
            in_flight,
            out: Some(tx),
            backlog: std::collections::VecDeque::new(),
            lane,
        };
        (transport, writer)
    }

    /// Reads up to the next newline into `self.line`; `false` at the end of input. A cancelled
    /// call keeps what it read, and the next call goes on with the same line.
    async fn read_line(&mut self) -> std::io::Result<bool> {
        loop {
            let chunk = self.input.fill_buf().await?;
            if chunk.is_empty() {
                return Ok(!self.line.is_empty() || self.too_long);
            }
            let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
                Some(n) => (n, true),
                None => (chunk.len(), false),
            };
            if self.line.len() + take <= MAX_LINE {
                self.line.extend_from_slice(&chunk[..take]);
            } else {
                self.too_long = true;
            }
            self.input.consume(if done { take + 1 } else { take });
            if done {
                return Ok(true);
            }
        }
    }

    /// Queues an answer of this transport's own to a line it will not pass on. It takes no await:
    /// the answer waits in the backlog until `receive` hands it to the writer.
    fn answer(&mut self, response: Value, permit: OwnedSemaphorePermit) {
        let id = response["id"].clone();
        let mut key = (!id.is_null()).then(|| id.to_string());
        if let Some(k) = &key {
            let mut in_flight = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
            if in_flight.by_key.contains_key(k) {
                // That id's request keeps its place and its own answer.
                key = None;
            } else {
                in_flight.admit(k.clone(), id, permit, true);
            }
        }
        let line = response.to_string().into_bytes();
        self.backlog.push_back(Outgoing { line, answers: key });
    }

    /// Hands the backlog to the writer, one reserved place at a time. Cancel-safe: an answer
    /// leaves the backlog only together with its place in the queue.
    async fn flush_backlog(&mut self) -> Option<()> {
        while !self.backlog.is_empty() {
            let out = self.out.as_ref()?;
            let place = out.reserve().await.ok()?;
            if let Some(answer) = self.backlog.pop_front() {
                place.send(answer);
            }
        }
        Some(())
    }
}

impl<R: AsyncRead + Unpin + Send + 'static> Transport<RoleServer> for StdioTransport<R> {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let answers = match &item {
            JsonRpcMessage::Response(r) => Some(key_of(&r.id)),
            JsonRpcMessage::Error(e) => e.id.as_ref().map(key_of),
            _ => None,
        };
        if let Some(key) = &answers {
            let mut in_flight = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(r) = in_flight.by_key.get_mut(key) {
                r.queued = true;
            }
        }
        let line = serde_json::to_vec(&item).map_err(std::io::Error::other);
        let out = self.out.clone();
        async move {
            let out = out.ok_or(std::io::ErrorKind::NotConnected)?;
            out.send(Outgoing {
                line: line?,
                answers,
            })
            .await
            .map_err(|_| std::io::ErrorKind::BrokenPipe.into())
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            // Our own answers first: each holds a place of the read-ahead until it is written.
            self.flush_backlog().await?;
            // Backpressure: no new line is read while `max_in_flight` requests are unanswered.
            let permit = match self.permit.take() {
                Some(p) => p,
                None => self.permits.clone().acquire_owned().await.ok()?,
            };
            self.permit = Some(permit);
            match self.read_line().await {
                Ok(true) => {}
                Ok(false) | Err(_) => {
                    self.lane.input_ended();
                    return None;
                }
            }
            let permit = self.permit.take()?;
            let too_long = std::mem::replace(&mut self.too_long, false);
            // Read from the line buffer, which is cleared (keeping its capacity) before anything
            // is answered.
            let read = {
                let text = self.line.strip_suffix(b"\r").unwrap_or(&self.line);
                if too_long {
                    Err(Some(error(
                        scan_id(text).unwrap_or(Value::Null),
                        -32600,
                        "request too large",
                    )))
                } else if text.iter().all(u8::is_ascii_whitespace) {
                    Err(None)
                } else if tool_runtime::json::shape(text).values > MAX_VALUES {
                    Err(Some(error(
                        scan_id(text).unwrap_or(Value::Null),
                        -32600,
                        &format!("request too large: more than {MAX_VALUES} JSON values"),
                    )))
                } else if let Some(refused) = crate::extension::listen_without_extension(text) {
                    let id = scan_id(text).unwrap_or(Value::Null);
                    Err(Some(
                        serde_json::json!({"jsonrpc": "2.0", "id": id, "error": refused}),
                    ))
                } else {
                    read_message(text)
                }
            };
            self.line.clear();
            let message = match read {
                Ok(m) => m,
                Err(Some(response)) => {
                    self.answer(response, permit);
                    continue;
                }
                Err(None) => continue,
            };
            match &message {
                JsonRpcMessage::Request(r) => {
                    let id = r.id.clone().into_json_value();
                    let refused = {
                        let mut in_flight =
                            self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
                        match in_flight.by_key.entry(key_of(&r.id)) {
                            std::collections::hash_map::Entry::Occupied(_) => Some(permit),
                            std::collections::hash_map::Entry::Vacant(v) => {
                                v.insert(Request {
                                    id: id.clone(),
                                    _permit: permit,
                                    queued: false,
                                    cancel: None,
                                });
                                None
                            }
                        }
                    };
                    if let Some(permit) = refused {
                        // Answered without a key: the first request keeps its place and its
                        // own answer.
                        drop(permit);
                        let e = error(
                            id,
                            -32600,
                            "invalid request: a request with this id is still in flight",
                        );
                        self.backlog.push_back(Outgoing {
                            line: e.to_string().into_bytes(),
                            answers: None,
                        });
                        continue;
                    }
                }
                JsonRpcMessage::Notification(n) => {
                    // rmcp never answers a cancelled request: its place is free again.
                    if let ClientNotification::CancelledNotification(c) = &n.notification
                        && let Some(id) = &c.params.request_id
                    {
                        let mut in_flight =
                            self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
                        if let Some(cancel) =
                            in_flight.by_key.remove(&key_of(id)).and_then(|r| r.cancel)
                        {
                            cancel.cancel();
                        }
                    }
                }
                // The client's answers to the server's own requests (elicitation).
                JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_) => {}
            }
            let message = match &self.out {
                Some(out) => self.lane.take(message, &self.in_flight, out),
                None => Some(message),
            };
            if let Some(message) = message {
                return Some(message);
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.lane.stop().await;
        // Every request still unanswered gets its answer now (the client may still read).
        let unanswered: Vec<(String, Value)> = {
            let in_flight = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
            in_flight
                .by_key
                .iter()
                .filter(|(_, r)| !r.queued)
                .map(|(k, r)| (k.clone(), r.id.clone()))
                .collect()
        };
        if let Some(out) = self.out.take() {
            for answer in std::mem::take(&mut self.backlog) {
                let _ = out.send(answer).await;
            }
            for (key, id) in unanswered {
                let e = error(
                    id,
                    -32603,
                    "the server stopped before this request finished; nothing more will happen for it",
                );
                let line = e.to_string().into_bytes();
                let _ = out
                    .send(Outgoing {
                        line,
                        answers: Some(key),
                    })
                    .await;
            }
        }
        Ok(())
    }
}

/// One writer for the client: every answer that is ready goes out in the same write; a request's
/// place is freed once its answer is written.
async fn write_lines<W: AsyncWrite + Unpin>(
    mut output: W,
    mut rx: mpsc::Receiver<Outgoing>,
    in_flight: Arc<Mutex<InFlight>>,
) -> std::io::Result<()> {
    let mut batch = Vec::new();
    let mut answered = Vec::new();
    while let Some(first) = rx.recv().await {
        let mut next = Some(first);
        while let Some(Outgoing { mut line, answers }) = next.take() {
            batch.append(&mut line);
            batch.push(b'\n');
            answered.extend(answers);
            if batch.len() < 1 << 20 {
                next = rx.try_recv().ok();
            }
        }
        output.write_all(&batch).await?;
        output.flush().await?;
        batch.clear();
        let mut in_flight = in_flight.lock().unwrap_or_else(|e| e.into_inner());
        for key in answered.drain(..) {
            in_flight.by_key.remove(&key);
        }
    }
    Ok(())
}

impl McpServer {
    /// Serves on stdin/stdout until the client closes stdin. Nothing else is written to stdout,
    /// every request line gets exactly one answer, and at most
    /// [`Limits::max_in_flight`](crate::Limits::max_in_flight) requests are read ahead of their
    /// answers (see `stdio/`).
    ///
    /// When both streams are pipes (as MCP clients start servers) they are read and written on
    /// Tokio's reactor, through rmcp's `stdio_pipes`, rather than a blocking thread per
    /// operation; this needs a runtime with IO enabled, as `#[tokio::main]` makes.
    pub async fn serve_stdio(self) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let (input, output) = rmcp::transport::stdio_pipes();
        self.serve_lines(input, output).await
    }

    /// Serves newline-delimited JSON-RPC from `input` to `output` (the stdio transport on any
    /// pair of streams).
    pub async fn serve_lines<I, O>(
        self,
        input: I,
        output: O,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>>
    where
        I: tokio::io::AsyncRead + Unpin + Send + 'static,
        O: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let (lane, session) = Lane::new(self.clone());
        let (transport, writer) =
            StdioTransport::new(input, output, self.limits.max_in_flight, lane);
        let served = match Served(self).serve(transport).await {
            Ok(service) => {
                // From now on the transport runs plain calls of a session opened with
                // `initialize` itself (`stdio/direct.rs`); a session that began without one
                // (2026-07-28) keeps every request on rmcp, which checks its `_meta`.
                if service.peer().peer_info().is_some() {
                    let _ = session.set(service.peer().clone());
                }
                service.waiting().await.map(drop).map_err(Into::into)
            }
            Err(e) => Err(e.into()),
        };
        // The transport is closed by now: the writer finishes what is queued.
        writer.await??;
        served
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_keyed_by_their_json_text() {
        assert_ne!(
            key_of(&NumberOrString::Number(1)),
            key_of(&NumberOrString::String("1".into()))
        );
        assert_eq!(
            key_of(&NumberOrString::String("a\"b".into())),
            json!("a\"b").to_string()
        );
    }
}
