//! JSON text read exactly, for the complete validator: every number by its own digits (an
//! integral value written `9007199254740993.0` is that integer, not the nearest `f64`), and a key
//! given twice kept as a fact to report rather than silently resolved.
//!
//! serde_json checks the syntax first (so a syntax error reads as serde_json words it); then one
//! pass over the text builds the value, with each number's literal in hand when it is turned
//! into a `Value`.

use serde::de::{self, IgnoredAny};
use serde_json::{Map, Value};

use super::number::Numeric;
use super::violation::Segment;

/// How large and deep a JSON text is, counted without parsing it (see [`shape`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shape {
    /// The deepest nesting of arrays and objects.
    pub depth: usize,
    /// An upper bound of the values in it: each array and object, and each member or item after
    /// the first of one. Memory to hold the text as a parsed value grows with it.
    pub values: usize,
}

/// The [`Shape`] of a JSON text, from one pass over its bytes (strings skipped, escapes
/// included). Text that is not JSON gets a shape too; a parser refuses it later.
///
/// ```
/// use tool_runtime::json::shape;
/// let s = shape(br#"{"x": [{}, {}, {}], "s": "[,,{"}"#);
/// assert_eq!(s.depth, 3);
/// assert_eq!(s.values, 8);
/// ```
pub fn shape(text: &[u8]) -> Shape {
    let (mut depth, mut deepest, mut values) = (0usize, 0usize, 0usize);
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'"' => {
                i += 1;
                while i < text.len() && text[i] != b'"' {
                    if text[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'{' | b'[' => {
                depth += 1;
                deepest = deepest.max(depth);
                values += 1;
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            b',' => values += 1,
            _ => {}
        }
        i += 1;
    }
    Shape {
        depth: deepest,
        values,
    }
}

/// Where the value of member `key` of the JSON object starting at byte `at` of `text` (after
/// white space) is: its byte range, keys compared with their escapes read. For text already
/// known to be JSON with no key given twice (a message a transport checked, arguments
/// validated): one scan, nothing parsed but the keys that have escapes.
///
/// ```
/// use tool_runtime::json::member;
/// let text = br#"{"name": "quote", "arguments": {"kg": 2.5}}"#;
/// let at = member(text, 0, "arguments").unwrap();
/// assert_eq!(&text[at], br#"{"kg": 2.5}"#);
/// assert_eq!(member(text, 0, "missing"), None);
/// ```
pub fn member(text: &[u8], at: usize, key: &str) -> Option<std::ops::Range<usize>> {
    let mut i = skip_space(text, at);
    if text.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    loop {
        i = skip_space(text, i);
        match text.get(i)? {
            b'}' => return None,
            b',' => {
                i += 1;
                continue;
            }
            b'"' => {}
            _ => return None,
        }
        let name_end = skip_string(text, i)?;
        let name = &text[i..name_end];
        // Most names have no escapes: compared as they are written.
        let matches = if name.contains(&b'\\') {
            serde_json::from_slice::<String>(name).ok()? == key
        } else {
            &name[1..name.len() - 1] == key.as_bytes()
        };
        i = skip_space(text, name_end);
        if text.get(i) != Some(&b':') {
            return None;
        }
        let start = skip_space(text, i + 1);
        let end = skip_value(text, start)?;
        if matches {
            return Some(start..end);
        }
        i = end;
    }
}

fn skip_space(text: &[u8], mut i: usize) -> usize {
    while text.get(i).is_some_and(|b| b.is_ascii_whitespace()) {
        i += 1;
    }
    i
}

/// The index after the string starting at `i` (its opening quote).
fn skip_string(text: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    loop {
        match text.get(i)? {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
}

/// The index after the value starting at `i`.
fn skip_value(text: &[u8], i: usize) -> Option<usize> {
    match text.get(i)? {
        b'"' => skip_string(text, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match text.get(j)? {
                    b'"' => {
                        j = skip_string(text, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            let mut j = i;
            while text
                .get(j)
                .is_some_and(|b| !matches!(b, b',' | b'}' | b']') && !b.is_ascii_whitespace())
            {
                j += 1;
            }
            Some(j)
        }
    }
}

/// Containers nested deeper than this are refused, as serde_json refuses them.
const MAX_DEPTH: usize = 128;

pub(crate) struct Parsed {
    pub(crate) value: Value,
    /// Numbers a `Value` cannot hold as written, with what they are: an integer beyond 64 bits,
    /// or a fraction that its nearest `f64` lost.
    pub(crate) inexact: Vec<(Vec<Segment>, Numeric)>,
    /// Object keys given more than once (the last value is kept).
    pub(crate) duplicates: Vec<Vec<Segment>>,
}

/// Reads `text` as one JSON value.
pub(crate) fn exact(text: &str) -> Result<Parsed, serde_json::Error> {
    serde_json::from_str::<IgnoredAny>(text)?;
    let mut reader = Reader {
        text,
        at: 0,
        path: Vec::new(),
        out: Parsed {
            value: Value::Null,
            inexact: Vec::new(),
            duplicates: Vec::new(),
        },
    };
    let value = reader.value()?;
    reader.out.value = value;
    Ok(reader.out)
}

/// One pass over text serde_json has accepted: anything unexpected is an error, never a panic.
struct Reader<'t> {
    text: &'t str,
    at: usize,
    path: Vec<Segment>,
    out: Parsed,
}

fn broken() -> serde_json::Error {
    de::Error::custom("malformed JSON")
}

impl<'t> Reader<'t> {
    fn skip_ws(&mut self) {
        let bytes = self.text.as_bytes();
        while self.at < bytes.len() && matches!(bytes[self.at], b' ' | b'\t' | b'\n' | b'\r') {
            self.at += 1;
        }
    }

    /// The next byte after white space, not consumed.
    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.text.as_bytes().get(self.at).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        if self.peek() == Some(byte) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Result<Value, serde_json::Error> {
        match self.peek().ok_or_else(broken)? {
            b'{' | b'[' if self.path.len() >= MAX_DEPTH => {
                Err(de::Error::custom("recursion limit exceeded"))
            }
            b'{' => self.object(),
            b'[' => self.array(),
            b'"' => self.string().map(Value::String),
            b'-' | b'0'..=b'9' => self.number(),
            _ => self.literal(),
        }
    }

    fn object(&mut self) -> Result<Value, serde_json::Error> {
        self.at += 1;
        let mut map = Map::new();
        if self.eat(b'}') {
            return Ok(Value::Object(map));
        }
        loop {
            if self.peek() != Some(b'"') {
                return Err(broken());
            }
            let key = self.string()?;
            if !self.eat(b':') {
                return Err(broken());
            }
            self.path.push(Segment::Key(key));
            let value = self.value()?;
            let Some(Segment::Key(key)) = self.path.pop() else {
                return Err(broken());
            };
            if map.contains_key(&key) {
                let mut at = self.path.clone();
                at.push(Segment::Key(key.clone()));
                self.out.duplicates.push(at);
            }
            map.insert(key, value);
            if self.eat(b',') {
                continue;
            }
            return if self.eat(b'}') {
                Ok(Value::Object(map))
            } else {
                Err(broken())
            };
        }
    }

    fn array(&mut self) -> Result<Value, serde_json::Error> {
        self.at += 1;
        let mut list = Vec::new();
        if self.eat(b']') {
            return Ok(Value::Array(list));
        }
        loop {
            self.path.push(Segment::Index(list.len()));
            let item = self.value()?;
            self.path.pop();
            list.push(item);
            if self.eat(b',') {
                continue;
            }
            return if self.eat(b']') {
                Ok(Value::Array(list))
            } else {
                Err(broken())
            };
        }
    }

    /// A string at the cursor: copied as it is when it has no escapes, read by serde_json when
    /// it has.
    fn string(&mut self) -> Result<String, serde_json::Error> {
        let bytes = self.text.as_bytes();
        let start = self.at;
        let mut i = start + 1;
        let mut escaped = false;
        while i < bytes.len() && bytes[i] != b'"' {
            if bytes[i] == b'\\' {
                escaped = true;
                i += 1;
            }
            i += 1;
        }
        let end = i + 1;
        let literal = self.text.get(start..end).ok_or_else(broken)?;
        self.at = end;
        if escaped {
            serde_json::from_str(literal)
        } else {
            Ok(literal[1..literal.len() - 1].to_owned())
        }
    }

    fn number(&mut self) -> Result<Value, serde_json::Error> {
        let bytes = self.text.as_bytes();
        let start = self.at;
        while self.at < bytes.len()
            && matches!(
                bytes[self.at],
                b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'
            )
        {
            self.at += 1;
        }
        let text = &self.text[start..self.at];
        let n = Numeric::read(text)
            .ok_or_else(|| de::Error::custom(format!("`{text}` is not a number")))?;
        Ok(match n {
            Numeric::Int(_) => match n.as_64_bit() {
                Some(Ok(i)) => Value::from(i),
                Some(Err(u)) => Value::from(u),
                None => {
                    self.out.inexact.push((self.path.clone(), n));
                    Value::from(n.as_f64())
                }
            },
            Numeric::Float(f) => Value::from(f),
            Numeric::Fraction(f) | Numeric::Huge { nearest: f, .. } => {
                self.out.inexact.push((self.path.clone(), n));
                Value::from(f)
            }
        })
    }

    fn literal(&mut self) -> Result<Value, serde_json::Error> {
        let rest = &self.text[self.at..];
        for (word, value) in [
            ("true", Value::Bool(true)),
            ("false", Value::Bool(false)),
            ("null", Value::Null),
        ] {
            if rest.starts_with(word) {
                self.at += word.len();
                return Ok(value);
            }
        }
        Err(broken())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_are_read_by_their_digits() {
        let p = exact(r#"{"a": 9007199254740993.0, "b": [2.5e2, 4503599627370496.5], "c": 0.5}"#)
            .unwrap();
        assert_eq!(p.value["a"], json!(9007199254740993u64));
        assert_eq!(p.value["b"][0], json!(250));
        assert_eq!(
            p.inexact,
            [(
                vec![Segment::Key("b".into()), Segment::Index(1)],
                Numeric::Fraction(4503599627370496.0)
            )]
        );
        let wide = exact("-9223372036854775809").unwrap();
        assert_eq!(wide.inexact, [(vec![], Numeric::Int(-(1 << 63) - 1))]);
        assert_eq!(p.value["c"], json!(0.5));
    }

    #[test]
    fn a_key_given_twice_is_reported() {
        let p = exact(r#"{"a": 1, "b": {"c": 1, "c": 2}, "a": 3}"#).unwrap();
        assert_eq!(
            p.duplicates,
            [
                vec![Segment::Key("b".into()), Segment::Key("c".into())],
                vec![Segment::Key("a".into())]
            ]
        );
    }

    #[test]
    fn keys_with_escapes_and_deep_nesting() {
        let p = exact(r#"{"a\"b": "\u00e9"}"#).unwrap();
        assert_eq!(p.value, json!({"a\"b": "é"}));
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert!(exact(&deep).is_err());
        let ok = "[".repeat(100) + &"]".repeat(100);
        assert!(exact(&ok).is_ok());
    }
}
