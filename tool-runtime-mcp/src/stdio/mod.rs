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
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

use bytes::Bytes;

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientNotification, ClientRequest, JsonRpcMessage,
    NumberOrString,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio_util::sync::CancellationToken;
use tool_runtime::json::Distinct;

use crate::arguments::RawArguments;

mod direct;
pub(crate) use direct::Lane;

/// Lines longer than this are refused (rmcp's own limit is 16 MiB).
pub(crate) const MAX_LINE: usize = 8 * 1024 * 1024;
/// Requests read and not yet answered, by default.
pub(crate) const MAX_IN_FLIGHT: usize = 256;
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

/// One line as rmcp's message: a `tools/call` request, the line nearly every exchange is made
/// of, read in one pass straight into rmcp's `CallToolRequestParams`; any other line through
/// rmcp's own reader (which buffers the line to find out what kind of message it is).
///
/// A call's arguments are cut out of the line first (see [`crate::arguments`]): the rest is
/// read with `{}` in their place and the call carries their text, which its validator reads
/// exactly. Arguments that give a key twice (or are not JSON) stay in the line, which is then
/// refused whole.
fn read_message(line: &[u8]) -> Result<RxJsonRpcMessage<RoleServer>, Option<Value>> {
    if let Some(range) = crate::arguments::in_call(line)
        && !tool_runtime::json::has_duplicate_keys(&line[range.clone()])
    {
        let arguments = RawArguments(Bytes::copy_from_slice(&line[range.clone()]));
        let rest = crate::arguments::without(line, range);
        let mut message = read_whole(&rest)?;
        if let JsonRpcMessage::Request(request) = &mut message
            && let ClientRequest::CallToolRequest(call) = &mut request.request
        {
            call.extensions.insert(arguments);
        }
        return Ok(message);
    }
    read_whole(line)
}

/// [`read_message`] of a line whose arguments, if any, were cut out.
fn read_whole(line: &[u8]) -> Result<RxJsonRpcMessage<RoleServer>, Option<Value>> {
    if let Ok(Some(call)) = CallLine::read(line) {
        // Its keys are known to be distinct: `CallLine` took each member once and read the
        // params through `Distinct`.
        return Ok(call);
    }
    serde_json::from_slice(line)
        .map_err(|e| refusal(line, &e))
        .and_then(|m| ambiguous_answer(m, line))
}

/// A `tools/call` request read member by member, in one pass that also refuses a key given twice
/// at any depth; `None` for any other line, or one this reading is not sure about (a member
/// given twice, members of a response), which rmcp's reader then takes.
struct CallLine;

impl CallLine {
    fn read(line: &[u8]) -> Result<Option<RxJsonRpcMessage<RoleServer>>, serde_json::Error> {
        use serde::Deserializer as _;
        let mut de = serde_json::Deserializer::from_slice(line);
        let call = (&mut de).deserialize_map(CallLine)?;
        de.end()?;
        Ok(call)
    }
}

impl<'de> serde::de::Visitor<'de> for CallLine {
    type Value = Option<RxJsonRpcMessage<RoleServer>>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON-RPC message")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut version, mut id, mut method, mut params) = (None, None, None, None);
        let mut unsure = false;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match &*key {
                "jsonrpc" if version.is_none() => version = Some(map.next_value::<&str>()?),
                "id" if id.is_none() => id = Some(map.next_value::<NumberOrString>()?),
                "method" if method.is_none() => {
                    method = Some(map.next_value::<std::borrow::Cow<'de, str>>()?)
                }
                // Read as a call's params whatever the method: params of another method do not fit,
                // and the line goes to rmcp's reader.
                "params" if params.is_none() => {
                    params = Some(
                        map.next_value_seed(Distinct(PhantomData::<Box<CallToolRequestParams>>))?,
                    )
                }
                _ => {
                    unsure = true;
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        let (Some("2.0"), Some(id), Some("tools/call"), Some(params), false) =
            (version, id, method.as_deref(), params, unsure)
        else {
            return Ok(None);
        };
        let mut params = *params;
        // As rmcp's reader does: `_meta` travels in the request's extensions.
        let meta = params.meta.take();
        let mut request = CallToolRequest::new(params);
        if let Some(meta) = meta {
            request.extensions.insert(meta);
        }
        Ok(Some(JsonRpcMessage::request(
            ClientRequest::CallToolRequest(request),
            id,
        )))
    }
}

/// A line that gives a key twice is refused before it is acted on: which value was meant cannot
/// be known, and another reader (a proxy, a log) may have read the other one. Keys are compared
/// as read (escapes decoded), on every message but the `tools/call` lines [`CallLine`] read (it
/// checks them as it reads). A request becomes an invalid request, an answer to an elicitation
/// an error answer; a notification is dropped.
fn ambiguous_answer(
    message: RxJsonRpcMessage<RoleServer>,
    line: &[u8],
) -> Result<RxJsonRpcMessage<RoleServer>, Option<Value>> {
    if !tool_runtime::json::has_duplicate_keys(line) {
        return Ok(message);
    }
    match message {
        JsonRpcMessage::Response(r) => Ok(JsonRpcMessage::error(
            rmcp::model::ErrorData::invalid_request("the answer gives a key more than once", None),
            Some(r.id),
        )),
        JsonRpcMessage::Request(r) => {
            let id = serde_json::to_value(&r.id).unwrap_or(Value::Null);
            Err(Some(error(
                id,
                -32600,
                "invalid request: a key is given more than once",
            )))
        }
        // A client's error answer or a notification that gives a key twice: nothing to answer,
        // so the log says why it was not acted on.
        JsonRpcMessage::Notification(_) => {
            tracing::warn!("a notification that gives a key more than once was dropped");
            Err(None)
        }
        JsonRpcMessage::Error(_) => {
            tracing::warn!("an error answer that gives a key more than once was dropped");
            Err(None)
        }
    }
}

/// What to do with a line rmcp's message type does not take: the error it is answered with, or
/// `None` for a notification rmcp would ignore too.
/// JSON-RPC ids are strings or integers; any other id is answered as `null`.
fn plain_id(id: &Value) -> Value {
    if id.is_string() || id.is_i64() {
        id.clone()
    } else {
        Value::Null
    }
}

fn refusal(line: &[u8], parse_error: &serde_json::Error) -> Option<Value> {
    let id = scan_id(line).unwrap_or(Value::Null);
    if nesting(line) > MAX_NESTING {
        return Some(error(id, -32600, "request nested too deeply"));
    }
    if parse_error.is_syntax() || parse_error.is_eof() {
        return Some(error(id, -32700, "parse error: the line is not JSON"));
    }
    let value: Value = serde_json::from_slice(line).ok()?;
    let Some(obj) = value.as_object() else {
        return Some(error(
            Value::Null,
            -32600,
            "invalid request: expected a JSON-RPC object",
        ));
    };
    let Some(id) = obj.get("id") else {
        // A notification of the wrong shape: nothing to answer.
        return None;
    };
    let Some(method) = obj.get("method") else {
        if obj.contains_key("result") || obj.contains_key("error") {
            // A response of the wrong shape: answering a response would
            // start a loop.
            return None;
        }
        // An id without a method is a request that names nothing to do.
        return Some(error(
            plain_id(id),
            -32600,
            "invalid request: an object with an `id` needs a `method`",
        ));
    };
    let arguments = obj.get("params").and_then(|p| p.get("arguments"));
    if method == "tools/call" && arguments.is_some_and(|a| !a.is_object() && !a.is_null()) {
        return Some(error(
            id.clone(),
            -32602,
            "invalid params: `arguments` must be an object",
        ));
    }
    Some(error(
        plain_id(id),
        -32600,
        &format!("invalid request: {parse_error}"),
    ))
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
                } else if let Some(refused) = crate::task::listen_without_extension(text) {
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

/// The deepest nesting of arrays and objects in a line, outside strings.
fn nesting(line: &[u8]) -> usize {
    let mut scan = Scan::new(line);
    scan.by_ref().for_each(drop);
    scan.deepest
}

/// The top-level `"id"` of a JSON object, found without parsing it (the line may be too deep or
/// too long to parse).
fn scan_id(line: &[u8]) -> Option<Value> {
    let value = top_level_value(line, b"\"id\"")?;
    serde_json::from_slice::<Value>(value)
        .ok()
        .filter(|v| v.is_string() || v.is_number())
}

/// The text of the scalar value of top-level member `key` (quoted) of a JSON object, found by
/// scanning: `None` when there is none, or it is not followed by `,` or `}`.
fn top_level_value<'l>(line: &'l [u8], key: &[u8]) -> Option<&'l [u8]> {
    let (_, quoted) = Scan::new(line).find(|(depth, q)| *depth == 1 && &line[q.clone()] == key)?;
    let rest = line.get(quoted.end() + 1..)?;
    let colon = rest.iter().position(|b| !b.is_ascii_whitespace())?;
    if rest[colon] != b':' {
        return None;
    }
    let value = &rest[colon + 1..];
    let end = value
        .iter()
        .enumerate()
        .skip_while(|(_, b)| b.is_ascii_whitespace())
        .find(|(_, b)| matches!(b, b',' | b'}'))
        .map(|(j, _)| j)?;
    Some(&value[..end])
}

/// A JSON line read without parsing: yields each string (the range of its quotes) with the depth
/// of arrays and objects it sits in, and keeps the deepest depth seen.
struct Scan<'l> {
    line: &'l [u8],
    at: usize,
    depth: usize,
    deepest: usize,
}

impl<'l> Scan<'l> {
    fn new(line: &'l [u8]) -> Self {
        Scan {
            line,
            at: 0,
            depth: 0,
            deepest: 0,
        }
    }
}

impl Iterator for Scan<'_> {
    type Item = (usize, std::ops::RangeInclusive<usize>);

    fn next(&mut self) -> Option<Self::Item> {
        let line = self.line;
        while self.at < line.len() {
            match line[self.at] {
                b'"' => {
                    let start = self.at;
                    self.at += 1;
                    while self.at < line.len() && line[self.at] != b'"' {
                        if line[self.at] == b'\\' {
                            self.at += 1;
                        }
                        self.at += 1;
                    }
                    let end = self.at.min(line.len() - 1);
                    self.at += 1;
                    return Some((self.depth, start..=end));
                }
                b'{' | b'[' => {
                    self.depth += 1;
                    self.deepest = self.deepest.max(self.depth);
                }
                b'}' | b']' => self.depth = self.depth.saturating_sub(1),
                _ => {}
            }
            self.at += 1;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_top_level_id_without_parsing() {
        assert_eq!(
            scan_id(br#"{"jsonrpc":"2.0","id":7,"method":"x"}"#),
            Some(json!(7))
        );
        assert_eq!(
            scan_id(br#"{"params":{"id":1},"id":"a b"}"#),
            Some(json!("a b"))
        );
        let deep = format!(
            r#"{{"id":3,"params":{}{}}}"#,
            "[".repeat(500),
            "]".repeat(500)
        );
        assert_eq!(scan_id(deep.as_bytes()), Some(json!(3)));
        assert_eq!(nesting(deep.as_bytes()), 501);
        assert_eq!(scan_id(b"not json"), None);
    }

    #[test]
    fn a_call_that_gives_a_key_twice_at_any_depth_is_refused() {
        let refused = |line: &str| match read_message(line.as_bytes()) {
            Err(Some(answer)) => answer["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("a key is given more than once")),
            _ => false,
        };
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"n":1,"n":2}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","arguments":{"a":[{"b":1,"\u0062":2}]}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":1,"progressToken":2}}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"t","extra":{"x":1,"x":2}}}"#,
            // rmcp's reader took this one as another request, which was then not checked.
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t","name":"u"}}"#,
        ] {
            assert!(refused(line), "{line}");
        }
        // rmcp's reader refuses a member of the envelope given twice.
        let line = r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","method":"tools/call","params":{"name":"t"}}"#;
        assert!(
            matches!(read_message(line.as_bytes()), Err(Some(a)) if a["error"]["code"] == -32600),
            "{line}"
        );
        // Keys of sibling objects are apart: read in the one pass, not left to rmcp's reader.
        let line = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t","arguments":{"a":{"n":1},"b":{"n":2}}}}"#;
        assert!(
            matches!(CallLine::read(line.as_bytes()), Ok(Some(_))),
            "{line}"
        );
        // Other requests are checked too (by the second pass); a notification is dropped.
        assert!(refused(
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"cursor":"a","cursor":"b"}}"#
        ));
        assert!(matches!(
            read_message(
                br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"requestId":2}}"#
            ),
            Err(None)
        ));
    }

    #[test]
    fn a_call_line_reads_as_rmcps_own_reader_reads_it() {
        let lines = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":[1,{"b":"}"}]}}}"#,
            r#"{"params":{"arguments":{"x":1},"name":"t"},"method":"tools/call","id":"a b","jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":7}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t","arguments":{},"requestState":"s","inputResponses":{}}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"t","extra":true}}"#,
        ];
        for line in lines {
            let ours = CallLine::read(line.as_bytes()).unwrap().expect(line);
            let theirs: RxJsonRpcMessage<RoleServer> =
                serde_json::from_slice(line.as_bytes()).unwrap();
            assert_eq!(
                serde_json::to_value(&ours).unwrap(),
                serde_json::to_value(&theirs).unwrap(),
                "{line}"
            );
        }
        // Lines it leaves to rmcp's reader.
        for line in [
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":6,"id":7,"method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"t"},"result":{}}"#,
            r#"{"jsonrpc":"1.0","id":9,"method":"tools/call","params":{"name":"t"}}"#,
        ] {
            assert!(
                matches!(CallLine::read(line.as_bytes()), Ok(None)),
                "{line}"
            );
        }
    }

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
