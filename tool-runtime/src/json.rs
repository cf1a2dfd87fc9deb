//! JSON text read the way the boundary reads it, without building a value: whether a text gives
//! a key twice, and how large and deep it is. A transport asks these before it parses a request,
//! so an ambiguous or oversized one is refused before it costs memory.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher, RandomState};

use serde::Deserializer;

use crate::decode::Key;
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

/// Whether JSON text gives some object key twice, at any depth, comparing member names after
/// their escapes are read (`"a"` and `"\u0061"` are the same key) — or is not JSON at all: which
/// value was meant cannot be known. Its numbers are checked as JSON numbers, never converted (a
/// number serde_json's own reading would take for out of range, such as one a hair under the
/// largest double written with many digits, is JSON all the same). It keeps only the keys of the
/// objects it is in.
///
/// ```
/// use tool_runtime::json::has_duplicate_keys;
/// assert!(!has_duplicate_keys(br#"{"a": 1, "b": {"a": 2}}"#));
/// assert!(has_duplicate_keys(br#"{"approve": false, "approve": true}"#));
/// assert!(has_duplicate_keys(br#"{"input\u0052esponses": 1, "inputResponses": 2}"#));
/// assert!(!has_duplicate_keys(br#"{"x": 1.797693134862315708145274e308}"#));
/// assert!(has_duplicate_keys(br#"{"x": 1,}"#));
/// let deep = "[".repeat(200) + &"]".repeat(200);
/// assert!(has_duplicate_keys(deep.as_bytes()));
/// ```
pub fn has_duplicate_keys(text: &[u8]) -> bool {
    // The syntax first (serde_json skips an ignored value's numbers without converting them),
    // then the keys, from the text that is now known to be JSON.
    if serde_json::from_slice::<de::IgnoredAny>(text).is_err() {
        return true;
    }
    let Ok(text) = std::str::from_utf8(text) else {
        return true;
    };
    keys_repeat(text).unwrap_or(true)
}

/// Containers nested deeper than this are refused, as serde_json refuses them when it reads a
/// value.
const MAX_DEPTH: usize = 128;

/// Whether an object of `text` (JSON) gives a key twice; `None` if the text surprised it or is
/// nested deeper than [`MAX_DEPTH`].
fn keys_repeat(text: &str) -> Option<bool> {
    let b = text.as_bytes();
    // Per open container: its keys when it is an object, and whether a key comes next.
    let mut open: Vec<Option<(Seen<'_>, bool)>> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let start = i;
                let mut escaped = false;
                i += 1;
                while *b.get(i)? != b'"' {
                    if b[i] == b'\\' {
                        escaped = true;
                        i += 1;
                    }
                    i += 1;
                }
                if let Some(Some((seen, key_next @ true))) = open.last_mut() {
                    *key_next = false;
                    let literal = text.get(start..=i)?;
                    let key = if escaped {
                        Cow::Owned(serde_json::from_str::<String>(literal).ok()?)
                    } else {
                        Cow::Borrowed(&literal[1..literal.len() - 1])
                    };
                    if seen.insert::<serde_json::Error>(key).is_err() {
                        return Some(true);
                    }
                }
            }
            b'{' => open.push(Some((Seen::default(), true))),
            b'[' => open.push(None),
            _ if open.len() > MAX_DEPTH => return None,
            b'}' | b']' => {
                open.pop()?;
            }
            b',' => {
                if let Some(Some((_, key_next))) = open.last_mut() {
                    *key_next = true;
                }
            }
            _ => {}
        }
        i += 1;
    }
    Some(false)
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
        let mut seen = Seen::default();
        while let Some(key) = map.next_key_seed(Key)? {
            seen.insert(key)?;
            map.next_value_seed(Unique)?;
        }
        Ok(())
    }
}

/// The keys of one object read so far. Borrowed from the text unless a key has escapes: no
/// allocation per key. Past [`LINEAR`] keys only a 64-bit keyed hash of each is kept (8 bytes a
/// key rather than the key's 24): an object of many keys costs little more than its text. Two
/// keys of one hash would be refused as one given twice; with a hash keyed at random per object
/// that is as likely as guessing 64 random bits.
#[derive(Default)]
struct Seen<'de> {
    few: Vec<Cow<'de, str>>,
    many: Option<(RandomState, HashSet<u64, BuildHasherDefault<Hashed>>)>,
}

/// A hasher for values that are hashes already.
#[derive(Default)]
struct Hashed(u64);

impl Hasher for Hashed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

impl<'de> Seen<'de> {
    /// Records `key`; an error if the object gave it before.
    fn insert<E: de::Error>(&mut self, key: Cow<'de, str>) -> Result<(), E> {
        let repeated = match &mut self.many {
            None => {
                let seen = self.few.contains(&key);
                self.few.push(key);
                if self.few.len() > LINEAR {
                    let state = RandomState::new();
                    let hashes = self.few.drain(..).map(|k| state.hash_one(&k)).collect();
                    self.many = Some((state, hashes));
                }
                seen
            }
            Some((state, hashes)) => !hashes.insert(state.hash_one(&key)),
        };
        if repeated {
            return Err(E::custom("a key is given twice"));
        }
        Ok(())
    }
}

/// Reads a value as the seed `S` does, refusing it when some object in it, at any depth, gives a
/// key twice (serde_json would keep the last value): one pass does both the reading and the
/// [`has_duplicate_keys`] check. Members the reader ignores are still checked.
///
/// Made for the messages of a protocol, whose objects are keyed by strings. Its limits:
/// - keys reach the reader as strings, so a map keyed by numbers, booleans or newtypes is refused
///   (serde_json itself parses such keys);
/// - a [`RawValue`](https://docs.rs/serde_json/latest/serde_json/value/struct.RawValue.html)
///   inside (serde_json's `raw_value` feature) is captured unread, so its keys are not checked;
/// - ignored members are read, so serde_json's depth limit (128) and number range apply to them.
///
/// ```
/// use serde::de::DeserializeSeed;
/// use std::marker::PhantomData;
/// use tool_runtime::json::Distinct;
/// let read = |text: &str| {
///     let mut de = serde_json::Deserializer::from_str(text);
///     Distinct(PhantomData::<serde_json::Value>).deserialize(&mut de)
/// };
/// assert!(read(r#"{"a": 1, "b": {"a": 2}}"#).is_ok());
/// assert!(read(r#"{"a": 1, "b": {"a": 2, "\u0061": 3}}"#).is_err());
/// ```
pub struct Distinct<S>(pub S);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Distinct<S> {
    type Value = S::Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(Distinct(d))
    }
}

/// Forwards each request with the visitor wrapped, so nested values are read through
/// [`Distinct`] too.
macro_rules! distinct {
    ($($method:ident ( $($arg:ident : $ty:ty),* );)*) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, D::Error> {
            self.0.$method($($arg,)* Distinct(visitor))
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Distinct<D> {
    type Error = D::Error;

    deserializer_methods!(distinct);
    distinct! {
        deserialize_f32();
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
    }

    /// A value the reader skips is walked all the same (serde_json would skip it unread).
    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_any(Unique)?;
        visitor.visit_unit()
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Distinct<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<V::Value, E> {
        self.0.visit_bool(v)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<V::Value, E> {
        self.0.visit_i64(v)
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<V::Value, E> {
        self.0.visit_i128(v)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<V::Value, E> {
        self.0.visit_u64(v)
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<V::Value, E> {
        self.0.visit_u128(v)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<V::Value, E> {
        self.0.visit_f64(v)
    }
    fn visit_char<E: de::Error>(self, v: char) -> Result<V::Value, E> {
        self.0.visit_char(v)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<V::Value, E> {
        self.0.visit_str(v)
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<V::Value, E> {
        self.0.visit_borrowed_str(v)
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<V::Value, E> {
        self.0.visit_string(v)
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<V::Value, E> {
        self.0.visit_bytes(v)
    }
    fn visit_borrowed_bytes<E: de::Error>(self, v: &'de [u8]) -> Result<V::Value, E> {
        self.0.visit_borrowed_bytes(v)
    }
    fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<V::Value, E> {
        self.0.visit_byte_buf(v)
    }
    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.0.visit_none()
    }
    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.0.visit_unit()
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.0.visit_some(Distinct(d))
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.0.visit_newtype_struct(Distinct(d))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.0.visit_seq(Distinct(seq))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.0.visit_map(DistinctMap {
            map,
            seen: Seen::default(),
        })
    }
    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.0.visit_enum(Distinct(data))
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Distinct<A> {
    type Error = A::Error;
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        self.0.next_element_seed(Distinct(seed))
    }
    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

/// An object's members: each key read as text, refused if given before, then handed to the
/// reader's own key seed.
struct DistinctMap<'de, A> {
    map: A,
    seen: Seen<'de>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for DistinctMap<'de, A> {
    type Error = A::Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        let Some(key) = self.map.next_key_seed(Key)? else {
            return Ok(None);
        };
        let read = match &key {
            Cow::Borrowed(k) => seed.deserialize(de::value::BorrowedStrDeserializer::new(k)),
            Cow::Owned(k) => seed.deserialize(de::value::StrDeserializer::new(k)),
        };
        self.seen.insert(key)?;
        read.map(Some)
    }
    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.map.next_value_seed(Distinct(seed))
    }
    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

impl<'de, A: de::EnumAccess<'de>> de::EnumAccess<'de> for Distinct<A> {
    type Error = A::Error;
    type Variant = Distinct<A::Variant>;
    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Self::Variant), A::Error> {
        let (value, variant) = self.0.variant_seed(seed)?;
        Ok((value, Distinct(variant)))
    }
}

impl<'de, A: de::VariantAccess<'de>> de::VariantAccess<'de> for Distinct<A> {
    type Error = A::Error;
    fn unit_variant(self) -> Result<(), A::Error> {
        self.0.unit_variant()
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        self.0.newtype_variant_seed(Distinct(seed))
    }
    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        self.0.tuple_variant(len, Distinct(visitor))
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        self.0.struct_variant(fields, Distinct(visitor))
    }
}

pub use crate::validate::parse::{Shape, member, shape};

/// `serde_json::from_str`, with every number read by its own digits whatever serde_json's
/// features: an integer within 64 bits exactly, any other number as its nearest `f64`.
/// (serde_json reads a number with a fraction or an exponent exactly only with its
/// `float_roundtrip` feature, which a library must not turn on for its users' whole program;
/// without it, `4503599627370495.5` may come out a unit in the last place off, here the integer
/// `4503599627370495`.) A key given twice keeps its last value, as serde_json does. For text
/// whose numbers a tool will see: arguments kept to run later and read back from a store.
///
/// ```
/// use serde_json::Value;
/// let text = r#"{"offset": 4503599627370495.5}"#;
/// let exact: Value = tool_runtime::json::from_str(text).unwrap();
/// assert_eq!(exact["offset"].as_f64(), Some(4503599627370495.5));
/// ```
pub fn from_str<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, serde_json::Error> {
    let value = crate::validate::parse::exact(text)?.value;
    serde_json::from_value(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::{Value, json};
    use std::collections::BTreeMap;
    use std::marker::PhantomData;

    /// `T` read through [`Distinct`], or the error's text.
    fn read<T: for<'de> Deserialize<'de>>(text: &str) -> Result<T, String> {
        let mut de = serde_json::Deserializer::from_str(text);
        let value = Distinct(PhantomData::<T>)
            .deserialize(&mut de)
            .map_err(|e| e.to_string())?;
        de.end().map_err(|e| e.to_string())?;
        Ok(value)
    }

    #[allow(dead_code)]
    #[derive(Deserialize, Debug, PartialEq)]
    struct Envelope {
        name: String,
        #[serde(default)]
        items: Vec<Option<Value>>,
    }

    #[allow(dead_code)]
    #[derive(Deserialize, Debug, PartialEq)]
    enum External {
        Unit,
        Data { x: Value },
    }

    #[allow(dead_code)]
    #[derive(Deserialize, Debug, PartialEq)]
    #[serde(tag = "t")]
    enum Internal {
        A { x: Value },
    }

    #[allow(dead_code)]
    #[derive(Deserialize, Debug, PartialEq)]
    #[serde(untagged)]
    enum Untagged {
        N(u32),
        M(BTreeMap<String, Value>),
    }

    #[allow(dead_code)]
    #[derive(Deserialize, Debug, PartialEq)]
    struct Flat {
        name: String,
        #[serde(flatten)]
        rest: BTreeMap<String, Value>,
    }

    #[test]
    fn reads_what_serde_json_reads_when_every_key_is_given_once() {
        let text =
            r#"{"name": "a\u0062", "items": [null, {"k": [1, {"k": 2}]}], "extra": {"k": 1}}"#;
        assert_eq!(
            read::<Envelope>(text),
            Ok(serde_json::from_str::<Envelope>(text).unwrap())
        );
        let text = r#"{"a": {"b": [1.5, "x", true, null]}, "\u0062": 2}"#;
        assert_eq!(read::<Value>(text), Ok(serde_json::from_str(text).unwrap()));
        assert_eq!(
            read::<External>(r#"{"Data": {"x": {"a": 1}}}"#),
            Ok(External::Data { x: json!({"a": 1}) })
        );
        assert_eq!(read::<External>(r#""Unit""#), Ok(External::Unit));
        assert_eq!(
            read::<Internal>(r#"{"t": "A", "x": {"a": 1}}"#),
            Ok(Internal::A { x: json!({"a": 1}) })
        );
        assert_eq!(read::<Untagged>("7"), Ok(Untagged::N(7)));
        assert_eq!(
            read::<Flat>(r#"{"name": "n", "b": {"c": 1}}"#).map(|f| f.rest.len()),
            Ok(1)
        );
    }

    #[test]
    fn refuses_a_key_given_twice_wherever_it_is() {
        let twice = [
            // At the top, spelled the same or with an escape.
            r#"{"name": "a", "name": "b"}"#,
            r#"{"name": "a", "n\u0061me": "b"}"#,
            // In a list item, under an `Option`.
            r#"{"name": "a", "items": [null, {"k": 1, "k": 2}]}"#,
            // In a member the struct does not have (ignored, still read).
            r#"{"name": "a", "extra": [{"k": 1, "k": 2}]}"#,
        ];
        for text in twice {
            assert!(read::<Envelope>(text).is_err(), "{text}");
            assert!(has_duplicate_keys(text.as_bytes()), "{text}");
        }
        assert!(read::<External>(r#"{"Data": {"x": {"a": 1, "a": 2}}}"#).is_err());
        assert!(read::<Internal>(r#"{"t": "A", "x": {"a": 1, "a": 2}}"#).is_err());
        assert!(read::<Internal>(r#"{"t": "A", "t": "A", "x": 1}"#).is_err());
        assert!(read::<Untagged>(r#"{"a": 1, "a": 2}"#).is_err());
        assert!(read::<Flat>(r#"{"name": "n", "b": {"c": 1, "c": 2}}"#).is_err());
        assert!(read::<Flat>(r#"{"name": "n", "b": 1, "b": 2}"#).is_err());
        // Past 16 keys the keys seen are kept in a set.
        let many: Vec<String> = (0..40).map(|i| format!(r#""k{i}": {i}"#)).collect();
        let text = format!("{{{}, \"k39\": 0}}", many.join(", "));
        assert!(read::<Value>(&text).is_err());
        assert!(read::<Value>(&format!("{{{}}}", many.join(", "))).is_ok());
    }

    #[test]
    fn map_keys_reach_the_reader_as_strings() {
        // The documented limit: serde_json parses a number key, `Distinct` hands it on as text.
        let text = r#"{"1": "a"}"#;
        assert!(serde_json::from_str::<BTreeMap<u32, String>>(text).is_ok());
        assert!(read::<BTreeMap<u32, String>>(text).is_err());
        assert!(read::<BTreeMap<String, String>>(text).is_ok());
    }
}
