//! JSON text read exactly, for the complete validator: every number by its own digits (an
//! integral value written `9007199254740993.0` is that integer, not the nearest `f64`), and a key
//! given twice kept as a fact to report rather than silently resolved.
//!
//! serde_json reads the syntax; each container's members are taken as raw text and read again
//! one level down, so a number's literal is in hand when it is turned into a `Value`.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::number::Numeric;
use super::violation::Segment;

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
    let raw: &RawValue = serde_json::from_str(text)?;
    let mut parsed = Parsed {
        value: Value::Null,
        inexact: Vec::new(),
        duplicates: Vec::new(),
    };
    parsed.value = read(raw.get(), &mut Vec::new(), &mut parsed)?;
    Ok(parsed)
}

fn read(text: &str, path: &mut Vec<Segment>, out: &mut Parsed) -> Result<Value, serde_json::Error> {
    match text.as_bytes().first() {
        Some(b'{' | b'[') if path.len() >= MAX_DEPTH => {
            Err(de::Error::custom("recursion limit exceeded"))
        }
        Some(b'{') => {
            let members = serde_json::Deserializer::from_str(text).deserialize_map(Members)?;
            let mut map = Map::with_capacity(members.len());
            for (key, raw) in members {
                path.push(Segment::Key(key.clone().into_owned()));
                let value = read(raw.get(), path, out)?;
                if map.insert(key.into_owned(), value).is_some() {
                    out.duplicates.push(path.clone());
                }
                path.pop();
            }
            Ok(Value::Object(map))
        }
        Some(b'[') => {
            let items = serde_json::Deserializer::from_str(text).deserialize_seq(Items)?;
            let mut list = Vec::with_capacity(items.len());
            for (i, raw) in items.into_iter().enumerate() {
                path.push(Segment::Index(i));
                list.push(read(raw.get(), path, out)?);
                path.pop();
            }
            Ok(Value::Array(list))
        }
        Some(b'-' | b'0'..=b'9') => {
            let n = Numeric::read(text)
                .ok_or_else(|| de::Error::custom(format!("`{text}` is not a number")))?;
            Ok(match n {
                Numeric::Int(_) => match n.as_64_bit() {
                    Some(Ok(i)) => Value::from(i),
                    Some(Err(u)) => Value::from(u),
                    None => {
                        out.inexact.push((path.clone(), n));
                        Value::from(n.as_f64())
                    }
                },
                Numeric::Float(f) => Value::from(f),
                Numeric::Fraction(f) => {
                    out.inexact.push((path.clone(), n));
                    Value::from(f)
                }
            })
        }
        _ => serde_json::from_str(text),
    }
}

/// An object's members in order, each value as raw text; a repeated key is kept.
struct Members;

impl<'de> Visitor<'de> for Members {
    type Value = Vec<(Cow<'de, str>, &'de RawValue)>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut members = Vec::new();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            members.push((key, map.next_value()?));
        }
        Ok(members)
    }
}

/// A list's items in order, each as raw text.
struct Items;

impl<'de> Visitor<'de> for Items {
    type Value = Vec<&'de RawValue>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(items)
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
