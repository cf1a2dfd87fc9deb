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
        let is_request = obj.contains_key("method") && obj.contains_key("id");
        if !is_request {
            return Verdict::Forward(None);
        }
        let id = obj["id"].clone();
        if obj.get("method").and_then(Value::as_str) == Some("tools/call") {
            let arguments = obj.get("params").and_then(|p| p.get("arguments"));
            if arguments.is_some_and(|a| !a.is_object() && !a.is_null()) {
                return Verdict::Answer(error(
                    id,
                    -32602,
                    "invalid params: `arguments` must be an object",
                ));
            }
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
            let is_response = top_level_value(line, b"\"method\"").is_none();
            if is_response {
                self.in_flight
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&id.to_string());
            }
        }
    }
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
    let mut depth = 0usize;
    let mut i = 0;
    while i < line.len() {
        match line[i] {
            b'"' => {
                let start = i;
                i += 1;
                while i < line.len() && line[i] != b'"' {
                    if line[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                if depth == 1 && &line[start..=i.min(line.len() - 1)] == key {
                    let rest = line.get(i + 1..)?;
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
                    return Some(&value[..end]);
                }
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
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
            let rest = this.partial.split_off(end + 1);
            let mut line = std::mem::replace(&mut this.partial, rest);
            line.pop();
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
