//! One line as rmcp's message, or the answer it deserves: a `tools/call` read in one pass, any
//! other line through rmcp's reader, a key given twice refused, and the id of a line too deep or
//! too long to parse found by scanning it.

use std::marker::PhantomData;

use bytes::Bytes;

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, JsonRpcMessage, NumberOrString,
};
use rmcp::service::RxJsonRpcMessage;
use serde_json::Value;
use tool_runtime::json::Distinct;

use crate::arguments::RawArguments;

use super::{MAX_NESTING, error};

/// One line as rmcp's message: a `tools/call` request, the line nearly every exchange is made
/// of, read in one pass straight into rmcp's `CallToolRequestParams`; any other line through
/// rmcp's own reader (which buffers the line to find out what kind of message it is).
///
/// A call's arguments are cut out of the line first (see [`crate::arguments`]): the rest is
/// read with `{}` in their place and the call carries their text, which its validator reads
/// exactly. Arguments that give a key twice (or are not JSON) stay in the line, which is then
/// refused whole.
pub(super) fn read_message(line: &[u8]) -> Result<RxJsonRpcMessage<RoleServer>, Option<Value>> {
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
pub(super) fn read_whole(line: &[u8]) -> Result<RxJsonRpcMessage<RoleServer>, Option<Value>> {
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
pub(super) fn ambiguous_answer(
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
pub(super) fn plain_id(id: &Value) -> Value {
    if id.is_string() || id.is_i64() {
        id.clone()
    } else {
        Value::Null
    }
}

pub(super) fn refusal(line: &[u8], parse_error: &serde_json::Error) -> Option<Value> {
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

/// The deepest nesting of arrays and objects in a line, outside strings.
pub(super) fn nesting(line: &[u8]) -> usize {
    let mut scan = Scan::new(line);
    scan.by_ref().for_each(drop);
    scan.deepest
}

/// The top-level `"id"` of a JSON object, found without parsing it (the line may be too deep or
/// too long to parse).
pub(super) fn scan_id(line: &[u8]) -> Option<Value> {
    let value = top_level_value(line, b"\"id\"")?;
    serde_json::from_slice::<Value>(value)
        .ok()
        .filter(|v| v.is_string() || v.is_number())
}

/// The text of the scalar value of top-level member `key` (quoted) of a JSON object, found by
/// scanning: `None` when there is none, or it is not followed by `,` or `}`.
pub(super) fn top_level_value<'l>(line: &'l [u8], key: &[u8]) -> Option<&'l [u8]> {
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
    use serde_json::json;

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
}
