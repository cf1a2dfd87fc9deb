//! A guard in front of rmcp's stdio transport: every request line gets exactly one answer.
//!
//! rmcp 3.11 on its own drops some lines without answering (the client then waits forever): text
//! that is not JSON, a request nested deeper than serde_json's recursion limit, a line over its
//! size limit. It answers `tools/call` with non-object `arguments` as "method not found", and two
//! requests in flight with the same id get one answer. The guard answers those lines itself with
//! the right JSON-RPC error and forwards everything else unchanged.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
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
            let is_response = serde_json::from_slice::<Value>(line)
                .ok()
                .is_some_and(|v| v.get("method").is_none());
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
                if depth == 1 && &line[start..=i.min(line.len() - 1)] == b"\"id\"" {
                    let rest = &line[i + 1..];
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
                    return serde_json::from_slice::<Value>(&value[..end])
                        .ok()
                        .filter(|v| v.is_string() || v.is_number());
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

/// Reads one line of at most [`MAX_LINE`] bytes; the rest of a longer line is discarded.
/// `None` at the end of input.
async fn read_line<R: AsyncBufRead + Unpin>(
    r: &mut R,
    buf: &mut Vec<u8>,
) -> std::io::Result<Option<bool>> {
    buf.clear();
    let mut too_long = false;
    loop {
        let chunk = r.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(if buf.is_empty() && !too_long {
                None
            } else {
                Some(too_long)
            });
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(n) => (n, true),
            None => (chunk.len(), false),
        };
        if !too_long && buf.len() + take <= MAX_LINE {
            buf.extend_from_slice(&chunk[..take]);
        } else {
            too_long = true;
        }
        r.consume(if done { take + 1 } else { take });
        if done {
            return Ok(Some(too_long));
        }
    }
}

/// Runs the guard between the client's `input`/`output` and rmcp's end of `server`.
pub(crate) async fn run<I, O>(
    input: I,
    output: O,
    server: tokio::io::DuplexStream,
) -> std::io::Result<()>
where
    I: tokio::io::AsyncRead + Unpin,
    O: AsyncWrite + Unpin + Send + 'static,
{
    let guard = Arc::new(Guard::new());
    let (from_server, mut to_server) = tokio::io::split(server);
    let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();

    // One writer for the client: forwarded server lines and the guard's own answers.
    let writer = tokio::spawn(async move {
        let mut output = output;
        while let Some(mut batch) = rx.recv().await {
            // Whatever else is ready goes out in the same write.
            batch.push(b'\n');
            while batch.len() < 1 << 20
                && let Ok(mut line) = rx.try_recv()
            {
                batch.append(&mut line);
                batch.push(b'\n');
            }
            if output.write_all(&batch).await.is_err() || output.flush().await.is_err() {
                break;
            }
        }
    });

    let server_lines = {
        let guard = guard.clone();
        let tx = tx.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(from_server).split(b'\n');
            while let Ok(Some(line)) = lines.next_segment().await {
                guard.answered(&line);
                if tx.send(line).is_err() {
                    break;
                }
            }
        })
    };

    let mut input = BufReader::new(input);
    let mut buf = Vec::new();
    while let Some(too_long) = read_line(&mut input, &mut buf).await? {
        match guard.judge(&buf, too_long) {
            Verdict::Skip => {}
            Verdict::Answer(response) => {
                let _ = tx.send(response.to_string().into_bytes());
            }
            Verdict::Forward(_) => {
                to_server.write_all(&buf).await?;
                to_server.write_all(b"\n").await?;
                to_server.flush().await?;
            }
        }
    }
    // The client closed its input: let rmcp see the end, then drain what it still sends.
    to_server.shutdown().await?;
    drop(to_server);
    let _ = server_lines.await;
    drop(tx);
    let _ = writer.await;
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
