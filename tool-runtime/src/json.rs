//! JSON text read the way the boundary reads it, without building a value: whether a text gives
//! a key twice, and how large and deep it is. A transport asks these before it parses a request,
//! so an ambiguous or oversized one is refused before it costs memory.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use serde::Deserializer;

use crate::decode::Key;
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

/// Whether JSON text gives some object key twice, at any depth, comparing member names after
/// their escapes are read (`"a"` and `"\u0061"` are the same key) — or is not JSON at all: which
/// value was meant cannot be known. It reads the text once and keeps only the keys of the object
/// it is in.
///
/// ```
/// use tool_runtime::json::has_duplicate_keys;
/// assert!(!has_duplicate_keys(br#"{"a": 1, "b": {"a": 2}}"#));
/// assert!(has_duplicate_keys(br#"{"approve": false, "approve": true}"#));
/// assert!(has_duplicate_keys(br#"{"input\u0052esponses": 1, "inputResponses": 2}"#));
/// ```
pub fn has_duplicate_keys(text: &[u8]) -> bool {
    let mut de = serde_json::Deserializer::from_slice(text);
    (&mut de).deserialize_any(Unique).is_err() || de.end().is_err()
}

/// Objects with more keys than this are checked with a hash set.
const LINEAR: usize = 16;

/// A value whose objects give each key once.
struct Unique;

impl<'de> DeserializeSeed<'de> for Unique {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Unique {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Unique)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut few: Vec<Cow<'de, str>> = Vec::new();
        let mut many: HashSet<Cow<'de, str>> = HashSet::new();
        // Borrowed from the text unless the key has escapes: no allocation per key.
        while let Some(key) = map.next_key_seed(Key)? {
            let repeated = if many.is_empty() {
                let seen = few.contains(&key);
                few.push(key);
                if few.len() > LINEAR {
                    many.extend(few.drain(..));
                }
                seen
            } else {
                !many.insert(key)
            };
            if repeated {
                return Err(de::Error::custom("a key is given twice"));
            }
            map.next_value_seed(Unique)?;
        }
        Ok(())
    }
}

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
