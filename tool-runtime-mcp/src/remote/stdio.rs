//! A remote server over stdio: its process, and its output read through a guard that turns an
//! answer too large for one message into that request's error at once. (rmcp's own reader
//! drops such a line and the request would wait out its whole time limit, then tell the model
//! the tool ran too long.)

use std::pin::Pin;
use std::process::Stdio;
use std::task::{Context, Poll};

use rmcp::RoleClient;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// The most one message from a remote server over stdio may hold (rmcp's own limit, and that of
/// one event over HTTP).
pub(super) const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// How much of a too-large message's start and end is kept to find its `id`.
const KEPT: usize = 512;

/// The process and the transport over its pipes; dropping it kills the process.
pub(super) struct ChildTransport {
    transport: AsyncRwTransport<RoleClient, Guard<ChildStdout>, ChildStdin>,
    _child: Child,
}

/// Starts `command` with its input and output piped (its error output as the command says).
pub(super) fn spawn(mut command: Command) -> std::io::Result<ChildTransport> {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn()?;
    let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
        return Err(std::io::Error::other("the process has no pipes"));
    };
    // The guard cuts a line at the limit, so rmcp's reader never drops one itself.
    let transport = AsyncRwTransport::new(Guard::new(stdout, MAX_MESSAGE_BYTES), stdin)
        .with_max_line_length(MAX_MESSAGE_BYTES + KEPT);
    Ok(ChildTransport {
        transport,
        _child: child,
    })
}

impl rmcp::transport::Transport<RoleClient> for ChildTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: rmcp::service::TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.transport.send(item)
    }

    fn receive(
        &mut self,
    ) -> impl Future<Output = Option<rmcp::service::RxJsonRpcMessage<RoleClient>>> + Send {
        self.transport.receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.transport.close()
    }
}

/// Output read line by line as it passes: a line longer than `max` is cut there (the part
/// passed on ends with a newline, which the reader ignores as text that is not JSON), the rest
/// of it is dropped, and in its place comes an error answer to its request, found by the `id`
/// at its start or its end. A line whose id cannot be found ends the output: every request in
/// flight then fails at once as a lost connection, and the next call reconnects.
pub(super) struct Guard<R> {
    inner: R,
    max: usize,
    /// Bytes of the current line passed on so far.
    passed: usize,
    /// The start of the current line, and (once it is too large) its last bytes.
    head: Vec<u8>,
    tail: Vec<u8>,
    /// Bytes of a too-large line dropped so far (`None` while the line fits).
    dropped: Option<usize>,
    /// Bytes to hand out before reading more, and whether the output ends after them.
    pending: Vec<u8>,
    ended: bool,
    scratch: Box<[u8]>,
}

impl<R> Guard<R> {
    pub(super) fn new(inner: R, max: usize) -> Self {
        Guard {
            inner,
            max,
            passed: 0,
            head: Vec::new(),
            tail: Vec::new(),
            dropped: None,
            pending: Vec::new(),
            ended: false,
            scratch: vec![0; 64 * 1024].into_boxed_slice(),
        }
    }

    /// Takes `bytes` read from the server; what is passed on goes to `out`.
    fn take(&mut self, mut bytes: &[u8], out: &mut Vec<u8>) {
        while !bytes.is_empty() && !self.ended {
            let newline = bytes.iter().position(|&b| b == b'\n');
            let line_end = newline.map_or(bytes.len(), |i| i + 1);
            let (line, rest) = bytes.split_at(line_end);
            bytes = rest;
            let body = line.strip_suffix(b"\n").unwrap_or(line);
            match self.dropped.as_mut() {
                None => {
                    let room = self.max - self.passed;
                    if body.len() <= room {
                        out.extend_from_slice(line);
                        keep_head(&mut self.head, body);
                        self.passed += body.len();
                    } else {
                        out.extend_from_slice(&body[..room]);
                        out.push(b'\n');
                        keep_head(&mut self.head, &body[..room]);
                        self.passed += room;
                        self.dropped = Some(body.len() - room);
                        keep_tail(&mut self.tail, &body[room..]);
                    }
                }
                Some(dropped) => {
                    *dropped += body.len();
                    keep_tail(&mut self.tail, body);
                }
            }
            if newline.is_some() {
                self.line_ended(out);
            }
        }
    }

    fn line_ended(&mut self, out: &mut Vec<u8>) {
        if let Some(dropped) = self.dropped.take() {
            let size = self.passed + dropped;
            match id_of(&self.head, &self.tail) {
                Some(id) => {
                    tracing::warn!(bytes = size, id, "a remote server's answer is too large");
                    let message = format!(
                        "its answer is {size} bytes, more than the {} one message may hold",
                        self.max
                    );
                    let error = serde_json::json!({
                        "jsonrpc": "2.0",
                        "id": serde_json::from_str::<serde_json::Value>(id).unwrap_or_default(),
                        "error": {"code": -32603, "message": message},
                    });
                    out.extend_from_slice(error.to_string().as_bytes());
                    out.push(b'\n');
                }
                None => {
                    tracing::warn!(
                        bytes = size,
                        "a remote server sent a message too large to read, without an id: \
                         closing the connection"
                    );
                    self.ended = true;
                }
            }
        }
        self.passed = 0;
        self.head.clear();
        self.tail.clear();
    }
}

fn keep_head(head: &mut Vec<u8>, bytes: &[u8]) {
    let room = KEPT.saturating_sub(head.len());
    head.extend_from_slice(&bytes[..room.min(bytes.len())]);
}

fn keep_tail(tail: &mut Vec<u8>, bytes: &[u8]) {
    tail.extend_from_slice(&bytes[bytes.len().saturating_sub(KEPT)..]);
    let excess = tail.len().saturating_sub(KEPT);
    tail.drain(..excess);
}

/// The request id of a JSON-RPC answer whose middle is lost: a top-level `"id"` member near its
/// start (`{"jsonrpc":"2.0","id":7,...`) or as its last members (`...,"jsonrpc":"2.0","id":7}`,
/// as the TypeScript SDK writes). Only a number or a string without escapes counts.
fn id_of<'a>(head: &'a [u8], tail: &'a [u8]) -> Option<&'a str> {
    id_at_top(head).or_else(|| id_at_end(tail))
}

/// A member `"id"` of the outermost object, read from the start of the text.
fn id_at_top(text: &[u8]) -> Option<&str> {
    let mut depth = 0usize;
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'"' => {
                let end = i
                    + 1
                    + text[i + 1..]
                        .iter()
                        .position(|&b| b == b'"' || b == b'\\')?;
                if text[end] == b'\\' {
                    return None;
                }
                let key = &text[i + 1..end];
                let after = skip_space(text, end + 1);
                if depth == 1 && key == b"id" && text.get(after) == Some(&b':') {
                    return scalar(text, skip_space(text, after + 1)).map(|(id, _)| id);
                }
                i = end + 1;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.checked_sub(1)?,
            _ => {}
        }
        i += 1;
    }
    None
}

/// A member `"id"` among the last members of the outermost object: after its value only
/// `"jsonrpc":"2.0"` may follow before the closing brace.
fn id_at_end(text: &[u8]) -> Option<&str> {
    let at = text.windows(4).rposition(|w| w == b"\"id\"")?;
    let colon = skip_space(text, at + 4);
    if text.get(colon) != Some(&b':') {
        return None;
    }
    let (id, end) = scalar(text, skip_space(text, colon + 1))?;
    let rest: Vec<u8> = text[end..]
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    (rest == b"}" || rest == br#","jsonrpc":"2.0"}"#).then_some(id)
}

/// A number or a string without escapes starting at `i`, as its JSON text, and where it ends.
fn scalar(text: &[u8], i: usize) -> Option<(&str, usize)> {
    let end = match text.get(i)? {
        b'"' => {
            i + 2
                + text[i + 1..]
                    .iter()
                    .position(|&b| b == b'"' || b == b'\\')?
        }
        b'-' | b'0'..=b'9' => {
            i + text[i..]
                .iter()
                .position(|b| !matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))?
        }
        _ => return None,
    };
    if text[end - 1] == b'\\' {
        return None;
    }
    let id = std::str::from_utf8(&text[i..end]).ok()?;
    serde_json::from_str::<serde_json::Value>(id).ok()?;
    Some((id, end))
}

fn skip_space(text: &[u8], mut i: usize) -> usize {
    while text.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

impl<R: AsyncRead + Unpin> AsyncRead for Guard<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        loop {
            if !this.pending.is_empty() {
                let n = this.pending.len().min(buf.remaining());
                buf.put_slice(&this.pending[..n]);
                this.pending.drain(..n);
                return Poll::Ready(Ok(()));
            }
            if this.ended {
                return Poll::Ready(Ok(()));
            }
            let mut scratch = std::mem::take(&mut this.scratch);
            let mut read = ReadBuf::new(&mut scratch);
            let polled = Pin::new(&mut this.inner).poll_read(cx, &mut read);
            let filled = read.filled().len();
            let result = match polled {
                Poll::Ready(Ok(())) if filled == 0 => {
                    this.ended = true;
                    None
                }
                Poll::Ready(Ok(())) => {
                    let mut out = std::mem::take(&mut this.pending);
                    this.take(&scratch[..filled], &mut out);
                    this.pending = out;
                    None
                }
                other => Some(other),
            };
            this.scratch = scratch;
            if let Some(other) = result {
                return other;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn through(max: usize, input: &[u8]) -> String {
        let mut guard = Guard::new(input, max);
        let mut out = Vec::new();
        let bytes = input.to_vec();
        // Fed in pieces of 3 bytes: lines and the limit cross the pieces.
        for piece in bytes.chunks(3) {
            guard.take(piece, &mut out);
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn lines_within_the_limit_pass_unchanged() {
        let input = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n{\"id\":2}\n";
        assert_eq!(through(64, input), String::from_utf8_lossy(input));
    }

    #[test]
    fn a_line_too_large_becomes_its_requests_error() {
        let big = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{{\"x\":\"{}\"}}}}\n{{\"id\":8}}\n",
            "a".repeat(500)
        );
        let out = through(100, big.as_bytes());
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3, "{out}");
        assert_eq!(lines[0].len(), 100);
        let error: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
        assert_eq!(error["id"], 7);
        assert_eq!(
            error["error"]["message"],
            format!(
                "its answer is {} bytes, more than the 100 one message may hold",
                big.lines().next().unwrap().len()
            )
        );
        assert_eq!(lines[2], "{\"id\":8}");
    }

    #[test]
    fn the_id_is_found_at_the_end_where_the_typescript_sdk_writes_it() {
        let big = format!(
            "{{\"result\":{{\"content\":[{{\"id\":1,\"text\":\"{}\"}}]}},\"jsonrpc\":\"2.0\",\"id\":\"r-9\"}}\n",
            "b".repeat(2000)
        );
        let out = through(100, big.as_bytes());
        let error: serde_json::Value = serde_json::from_str(out.lines().nth(1).unwrap()).unwrap();
        assert_eq!(error["id"], "r-9");
    }

    #[test]
    fn an_id_inside_the_result_is_not_taken_for_the_answers() {
        assert_eq!(id_at_top(br#"{"result":{"id":3,"#), None);
        assert_eq!(id_at_top(br#"{"jsonrpc":"2.0","id":3,"res"#), Some("3"));
        assert_eq!(id_at_end(br#"x"}],"id":4,"more":1}"#), None);
        assert_eq!(id_at_end(br#"x"}]},"id":4}"#), Some("4"));
    }

    #[test]
    fn a_line_too_large_without_an_id_ends_the_output() {
        let big = format!(
            "{{\"method\":\"x\",\"params\":\"{}\"}}\n{{\"id\":1}}\n",
            "c".repeat(300)
        );
        let out = through(100, big.as_bytes());
        assert_eq!(out.lines().count(), 1, "only the cut part: {out}");
    }
}
