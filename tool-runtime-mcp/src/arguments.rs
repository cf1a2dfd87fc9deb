//! A `tools/call`'s arguments as their text. Every transport cuts them out of the message
//! before rmcp parses it (rmcp reads `{}` in their place) and hands the text to the call, whose
//! validator reads every number by its own digits: serde_json, which rmcp parses with, reads a
//! number with a fraction or an exponent exactly only with its `float_roundtrip` feature, and
//! without it can turn `4503599627370495.5` into the integer `4503599627370495`. Where a call's
//! arguments are needed as a value (an approval binds to them, a tool that asks runs again with
//! them), they are parsed exactly from the same text.

use std::ops::Range;

use bytes::Bytes;
use serde_json::{Map, Value, json};
use tool_runtime::json::member;

/// A `tools/call`'s arguments as their text, put in the request's extensions by the transport
/// that cut them out of the message (stdio's reader, the HTTP server's body check).
#[derive(Clone, Debug)]
pub(crate) struct RawArguments(pub(crate) Bytes);

/// A call's arguments: their text, as a transport cut them out of the message, or a value (a
/// call whose arguments were kept as one: a task answered later, a server served by another
/// transport).
pub(crate) enum CallArguments {
    Text(Bytes),
    Value(Value),
}

impl CallArguments {
    /// The arguments to check, leaving them for the call.
    pub(crate) fn peek(&self) -> tool_runtime::Arguments<'_> {
        match self {
            CallArguments::Text(text) => tool_runtime::Arguments::text(as_str(text)),
            CallArguments::Value(v) => tool_runtime::Arguments::value(v.clone()),
        }
    }

    /// The arguments as a JSON value, every number read exactly (text that is not a JSON
    /// object: an empty object, which the tool's validation refuses as it would have refused
    /// the text).
    pub(crate) fn to_value(&self) -> Value {
        match self {
            CallArguments::Text(text) => parse(text).map_or_else(|_| json!({}), Value::Object),
            CallArguments::Value(v) => v.clone(),
        }
    }

    /// The arguments for the call: borrowing the text, or taking the value.
    pub(crate) fn take(&mut self) -> tool_runtime::Arguments<'_> {
        match self {
            CallArguments::Text(text) => tool_runtime::Arguments::text(as_str(text)),
            CallArguments::Value(v) => tool_runtime::Arguments::value(std::mem::take(v)),
        }
    }
}

/// The text as `str` (a transport checked it to be JSON, so UTF-8; anything else reads as text
/// the validator refuses).
fn as_str(text: &[u8]) -> &str {
    std::str::from_utf8(text).unwrap_or("not UTF-8")
}

/// Arguments text as a JSON object, every number read by its own digits.
pub(crate) fn parse(text: &[u8]) -> Result<Map<String, Value>, String> {
    let text = std::str::from_utf8(text).map_err(|e| e.to_string())?;
    match tool_runtime::json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(format!("expected a JSON object, got {other}")),
        Err(e) => Err(e.to_string()),
    }
}

/// Where a `tools/call`'s arguments are in `message` (JSON with no key given twice): the byte
/// range of `params.arguments`, when the message's `method` is `tools/call` and its arguments
/// are an object. Keys are compared unescaped.
pub(crate) fn in_call(message: &[u8]) -> Option<Range<usize>> {
    let method = &message[member(message, 0, "method")?];
    // Written as is nearly always; with escapes (`tools\/call`), read.
    if method != b"\"tools/call\"" && serde_json::from_slice::<String>(method).ok()? != "tools/call"
    {
        return None;
    }
    arguments_at(message)
}

/// `message` with the bytes of `range` replaced by `{}`: what rmcp reads once the arguments are
/// cut out.
pub(crate) fn without(message: &[u8], range: Range<usize>) -> Vec<u8> {
    let mut spliced = Vec::with_capacity(message.len() - range.len() + 2);
    spliced.extend_from_slice(&message[..range.start]);
    spliced.extend_from_slice(b"{}");
    spliced.extend_from_slice(&message[range.end..]);
    spliced
}

/// Where `params.arguments` is in a message already checked to be JSON with no key given
/// twice: the byte range of its value, when it is an object. Keys are compared unescaped.
pub(crate) fn arguments_at(message: &[u8]) -> Option<Range<usize>> {
    let params = member(message, 0, "params")?;
    let arguments = member(message, params.start, "arguments")?;
    (message[arguments.start] == b'{').then_some(arguments)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arguments_are_found_however_the_message_is_written() {
        let cases = [
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":[1,{"b":"}"}]}}}"#,
                Some(r#"{"a":[1,{"b":"}"}]}"#),
            ),
            (
                r#"{ "params" : { "_meta" : {"x": "\"arguments\""}, "arguments" : {} , "name":"t"} }"#,
                Some("{}"),
            ),
            (
                r#"{"params":{"argument\u0073":{"k":1}}}"#,
                Some(r#"{"k":1}"#),
            ),
            (r#"{"params":{"arguments":[1]}}"#, None),
            (r#"{"params":{"name":"t"}}"#, None),
            (r#"{"arguments":{"k":1}}"#, None),
            (r#"{"params":"{\"arguments\":{}}"}"#, None),
        ];
        for (body, want) in cases {
            let got = arguments_at(body.as_bytes()).map(|r| &body[r]);
            assert_eq!(got, want, "{body}");
        }
    }

    #[test]
    fn only_a_calls_arguments_are_cut_out() {
        let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"t","arguments":{"n":4503599627370495.5}}}"#;
        let range = in_call(call.as_bytes()).unwrap();
        assert_eq!(&call[range.clone()], r#"{"n":4503599627370495.5}"#);
        assert_eq!(
            String::from_utf8(without(call.as_bytes(), range)).unwrap(),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"t","arguments":{}}}"#
        );
        let prompt = r#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"p","arguments":{"k":"v"}}}"#;
        assert_eq!(in_call(prompt.as_bytes()), None);
    }

    #[test]
    fn arguments_are_parsed_by_their_digits() {
        let text = br#"{"a": 4503599627370495.5, "b": 0.30000000000000004}"#;
        let map = parse(text).unwrap();
        assert_eq!(map["a"].as_f64(), Some(4503599627370495.5));
        assert_eq!(map["b"].as_f64(), Some(0.30000000000000004));
        assert!(parse(b"[1]").is_err());
    }
}
