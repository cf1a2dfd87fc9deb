//! A guard in front of rmcp's stdio transport: every request line gets exactly one answer.
//!
//! rmcp 3.11 on its own drops some lines without answering (the client then waits forever): text
//! that is not JSON, a request nested deeper than serde_json's recursion limit, a line over its
//! size limit. It answers `tools/call` with non-object `arguments` as "method not found", and two
//! requests in flight with the same id get one answer. The guard answers those lines itself with
//! the right JSON-RPC error and forwards everything else unchanged.

use std::collections::HashSet;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};

use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, ReadBuf};
use tokio::sync::mpsc;

/// Lines longer than this are refused (rmcp's own limit is 16 MiB).
pub const MAX_LINE: usize = 8 * 1024 * 1024;

/// What to do with one line from the client.
#[derive(Debug, PartialEq)]
pub(crate) enum Verdict {
    /// Send it on to rmcp; the id (if a request) is now in flight.
    Forward(Option<String>),
    /// Answer it here with this error response.
    Answer(Value),
    /// A blank line: nothing to do.
    Skip,
}

pub(crate) struct Guard {
    in_flight: Mutex<HashSet<String>>,
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

impl Guard {
    pub(crate) fn new() -> Self {
        Guard {
            in_flight: Mutex::new(HashSet::new()),
        }
    }

    /// Judges one line (without its newline). `too_long` means the line was cut at [`MAX_LINE`].
    pub(crate) fn judge(&self, line: &[u8], too_long: bool) -> Verdict {
        if line.iter().all(u8::is_ascii_whitespace) && !too_long {
            return Verdict::Skip;
        }
        if !too_long && let Some(request) = Envelope::read(line) {
            return self.admit(request);
        }
        self.judge_parsed(line, too_long)
    }

    /// [`Guard::judge`] for the lines the quick reading leaves: a full parse decides.
    fn judge_parsed(&self, line: &[u8], too_long: bool) -> Verdict {
        let id = scan_id(line).unwrap_or(Value::Null);
        if too_long {
            return Verdict::Answer(error(id, -32600, "request too large"));
        }
        let value: Value = match serde_json::from_slice(line) {
            Ok(v) => v,
            Err(e) if e.to_string().contains("recursion limit") => {
                return Verdict::Answer(error(id, -32600, "request nested too deeply"));
            }
            Err(_) => {
                return Verdict::Answer(error(id, -32700, "parse error: the line is not JSON"));
            }
        };
        let Some(obj) = value.as_object() else {
            return Verdict::Answer(error(
                Value::Null,
                -32600,
                "invalid request: expected a JSON-RPC object",
            ));
        };
        let arguments = match obj.get("params").and_then(|p| p.get("arguments")) {
            None => Arguments::Absent,
            Some(a) if a.is_object() || a.is_null() => Arguments::Fine,
            Some(_) => Arguments::NotAnObject,
        };
        self.admit(Envelope {
            id: obj.get("id").cloned(),
            method: obj.get("method").cloned(),
            params: Params { arguments },
        })
    }

    /// The verdict on a JSON object line, from the members the guard looks at.
    fn admit(&self, request: Envelope) -> Verdict {
        let (Some(id), Some(method)) = (request.id, request.method) else {
            return Verdict::Forward(None);
        };
        if method.as_str() == Some("tools/call")
            && request.params.arguments == Arguments::NotAnObject
        {
            return Verdict::Answer(error(
                id,
                -32602,
                "invalid params: `arguments` must be an object",
            ));
        }
        let key = id.to_string();
        let mut in_flight = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        if !in_flight.insert(key.clone()) {
            return Verdict::Answer(error(
                id,
                -32600,
                "invalid request: a request with this id is still in flight",
            ));
        }
        Verdict::Forward(Some(key))
    }

    /// Notes a line the server sends: a response ends its request's flight.
    pub(crate) fn answered(&self, line: &[u8]) {
        if let Some(id) = scan_id(line) {
            // A response has `result` or `error`; a request from the server has `method`. rmcp
            // writes `result` right after the id, so this stops early on the common line.
            let is_response = top_level_value(line, b"\"result\"").is_some()
                || top_level_value(line, b"\"error\"").is_some();
            if is_response {
                self.in_flight
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&id.to_string());
            }
        }
    }
}

/// The members of a request line the guard looks at, read in one pass without building a
/// `Value` for the rest (which is only checked to be JSON).
#[derive(serde::Deserialize)]
struct Envelope {
    /// Present (even as `null`) or not.
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    method: Option<Value>,
    #[serde(default)]
    params: Params,
}

impl Envelope {
    /// A JSON object line the quick reading is sure about; anything else (not an object, nested
    /// near serde_json's recursion limit, a repeated member, not JSON) is left to the full parse,
    /// which decides how to answer it.
    fn read(line: &[u8]) -> Option<Envelope> {
        let start = line.iter().position(|b| !b.is_ascii_whitespace())?;
        if line[start] != b'{' || nesting(line) > 100 {
            return None;
        }
        serde_json::from_slice(line).ok()
    }
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    serde::Deserialize::deserialize(d).map(Some)
}

/// Whether a request's `params.arguments` is absent, an object or `null`, or something else.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
enum Arguments {
    #[default]
    Absent,
    Fine,
    NotAnObject,
}

/// `params`, of any JSON type: only its `arguments` member matters.
#[derive(Default)]
struct Params {
    arguments: Arguments,
}

impl<'de> serde::Deserialize<'de> for Params {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Peek(true))
            .map(|arguments| Params { arguments })
    }
}

/// Reads any JSON value, keeping only its kind; with `true` (for `params`), what is reported is
/// the kind of an object's `arguments` member, and a `params` that is not an object has none.
struct Peek(bool);

impl Peek {
    /// The answer for a value that is neither an object nor `null`.
    fn other(&self) -> Arguments {
        if self.0 {
            Arguments::Absent
        } else {
            Arguments::NotAnObject
        }
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Peek {
    type Value = Arguments;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Arguments, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Peek {
    type Value = Arguments;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Arguments, E> {
        Ok(self.other())
    }
    fn visit_i64<E>(self, _: i64) -> Result<Arguments, E> {
        Ok(self.other())
    }
    fn visit_u64<E>(self, _: u64) -> Result<Arguments, E> {
        Ok(self.other())
    }
    fn visit_f64<E>(self, _: f64) -> Result<Arguments, E> {
        Ok(self.other())
    }
    fn visit_str<E>(self, _: &str) -> Result<Arguments, E> {
        Ok(self.other())
    }
    fn visit_unit<E>(self) -> Result<Arguments, E> {
        Ok(if self.0 {
            Arguments::Absent
        } else {
            Arguments::Fine
        })
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Arguments, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(self.other())
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Arguments, A::Error> {
        let mut found = if self.0 {
            Arguments::Absent
        } else {
            Arguments::Fine
        };
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if self.0 && key == "arguments" {
                found = map.next_value_seed(Peek(false))?;
            } else {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        Ok(found)
    }
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

/// The client's input as rmcp reads it: lines are judged as they arrive; rmcp only ever sees the
/// lines the guard forwards, and the guard's own answers go to the client's output directly.
pub(crate) struct GuardedInput<I> {
    inner: BufReader<I>,
    guard: Arc<Guard>,
    answers: mpsc::UnboundedSender<Vec<u8>>,
    /// The line being read, without its newline, at most [`MAX_LINE`] bytes.
    line: Vec<u8>,
    too_long: bool,
    /// Forwarded text rmcp has not read yet.
    ready: Vec<u8>,
    at: usize,
}

impl<I> GuardedInput<I> {
    fn finish_line(&mut self) {
        match self.guard.judge(&self.line, self.too_long) {
            Verdict::Skip => {}
            Verdict::Answer(response) => {
                let _ = self.answers.send(response.to_string().into_bytes());
            }
            Verdict::Forward(_) => {
                self.ready.extend_from_slice(&self.line);
                self.ready.push(b'\n');
            }
        }
        self.line.clear();
        self.too_long = false;
    }
}

impl<I: AsyncRead + Unpin> AsyncRead for GuardedInput<I> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.at < this.ready.len() {
                let n = buf.remaining().min(this.ready.len() - this.at);
                buf.put_slice(&this.ready[this.at..this.at + n]);
                this.at += n;
                if this.at == this.ready.len() {
                    this.ready.clear();
                    this.at = 0;
                }
                return Poll::Ready(Ok(()));
            }
            let chunk = ready!(Pin::new(&mut this.inner).poll_fill_buf(cx))?;
            if chunk.is_empty() {
                // End of input: judge a last line without a newline, then tell rmcp.
                if this.line.is_empty() && !this.too_long {
                    return Poll::Ready(Ok(()));
                }
                this.finish_line();
                continue;
            }
            let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
                Some(n) => (n, true),
                None => (chunk.len(), false),
            };
            // The rest of a line longer than the limit is discarded.
            if !this.too_long && this.line.len() + take <= MAX_LINE {
                this.line.extend_from_slice(&chunk[..take]);
            } else {
                this.too_long = true;
            }
            Pin::new(&mut this.inner).consume(if done { take + 1 } else { take });
            if done {
                this.finish_line();
            }
        }
    }
}

/// What rmcp writes: each complete line ends its request's flight and goes to the client's
/// output, in order with the guard's own answers.
pub(crate) struct GuardedOutput {
    guard: Arc<Guard>,
    lines: mpsc::UnboundedSender<Vec<u8>>,
    partial: Vec<u8>,
}

impl AsyncWrite for GuardedOutput {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        this.partial.extend_from_slice(buf);
        while let Some(end) = this.partial.iter().position(|&b| b == b'\n') {
            let line = if end + 1 == this.partial.len() {
                // The common case: exactly one whole line, handed on without a copy.
                let mut line = std::mem::take(&mut this.partial);
                line.pop();
                line
            } else {
                let line = this.partial[..end].to_vec();
                this.partial.drain(..=end);
                line
            };
            this.guard.answered(&line);
            if this.lines.send(line).is_err() {
                return Poll::Ready(Err(std::io::ErrorKind::BrokenPipe.into()));
            }
        }
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// The guarded pair of streams to serve rmcp on, and the task that writes to the client: it
/// ends, with everything written, once both halves are dropped.
pub(crate) fn guarded<I, O>(
    input: I,
    output: O,
) -> (
    GuardedInput<I>,
    GuardedOutput,
    tokio::task::JoinHandle<std::io::Result<()>>,
)
where
    I: AsyncRead + Unpin,
    O: AsyncWrite + Unpin + Send + 'static,
{
    let guard = Arc::new(Guard::new());
    let (tx, rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let writer = tokio::spawn(write_lines(output, rx));
    let input = GuardedInput {
        inner: BufReader::new(input),
        guard: guard.clone(),
        answers: tx.clone(),
        line: Vec::new(),
        too_long: false,
        ready: Vec::new(),
        at: 0,
    };
    let output = GuardedOutput {
        guard,
        lines: tx,
        partial: Vec::new(),
    };
    (input, output, writer)
}

/// One writer for the client: every line that is ready goes out in the same write.
async fn write_lines<O: AsyncWrite + Unpin>(
    mut output: O,
    mut rx: mpsc::UnboundedReceiver<Vec<u8>>,
) -> std::io::Result<()> {
    while let Some(mut batch) = rx.recv().await {
        batch.push(b'\n');
        while batch.len() < 1 << 20
            && let Ok(mut line) = rx.try_recv()
        {
            batch.append(&mut line);
            batch.push(b'\n');
        }
        output.write_all(&batch).await?;
        output.flush().await?;
    }
    Ok(())
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
        assert_eq!(scan_id(b"not json"), None);
    }

    #[test]
    fn the_quick_reading_judges_like_the_full_parse() {
        let deep = format!(
            r#"{{"id":1,"method":"x","params":{}{}}}"#,
            "[".repeat(150),
            "]".repeat(150)
        );
        let lines = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":[1,{"b":"}"}]}}}"#,
            r#"{"jsonrpc":"2.0","id":"x y","method":"tools/call","params":{"name":"t","arguments":null}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","arguments":[1]}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t","arguments":"a"}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":[1,2]}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":null}"#,
            r#"{"jsonrpc":"2.0","id":6,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":8,"method":7}"#,
            r#"{"id":9,"id":10,"method":"ping"}"#,
            r#"{"id":11,"method":"ping"} trailing"#,
            r#"[{"id":12,"method":"ping"}]"#,
            r#"{"id":13,"method":"x","params":{"s":""{[\"}}"#,
            deep.as_str(),
            "not json",
        ];
        for line in lines {
            assert_eq!(
                Guard::new().judge(line.as_bytes(), false),
                Guard::new().judge_parsed(line.as_bytes(), false),
                "{line}"
            );
        }
    }

    #[test]
    fn judges_each_kind_of_line() {
        let g = Guard::new();
        assert_eq!(g.judge(b"  ", false), Verdict::Skip);
        let Verdict::Answer(e) = g.judge(b"garbage", false) else {
            panic!()
        };
        assert_eq!(e["error"]["code"], -32700);
        let Verdict::Answer(e) = g.judge(
            br#"{"id":5,"method":"tools/call","params":{"name":"x","arguments":[1]}}"#,
            false,
        ) else {
            panic!()
        };
        assert_eq!(
            (e["id"].clone(), e["error"]["code"].clone()),
            (json!(5), json!(-32602))
        );
        assert!(matches!(
            g.judge(br#"{"id":6,"method":"tools/list"}"#, false),
            Verdict::Forward(Some(_))
        ));
        let Verdict::Answer(e) = g.judge(br#"{"id":6,"method":"tools/list"}"#, false) else {
            panic!()
        };
        assert_eq!(e["error"]["code"], -32600, "same id while in flight");
        g.answered(br#"{"jsonrpc":"2.0","id":6,"result":{}}"#);
        assert!(matches!(
            g.judge(br#"{"id":6,"method":"tools/list"}"#, false),
            Verdict::Forward(Some(_))
        ));
        let Verdict::Answer(e) = g.judge(br#"{"id":8,"method":"x"}"#, true) else {
            panic!()
        };
        assert_eq!(
            (e["id"].clone(), e["error"]["code"].clone()),
            (json!(8), json!(-32600))
        );
        assert!(matches!(
            g.judge(br#"{"method":"notifications/initialized"}"#, false),
            Verdict::Forward(None)
        ));
    }
}
