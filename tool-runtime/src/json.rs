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
        let mut seen = Seen::default();
        while let Some(key) = map.next_key_seed(Key)? {
            seen.insert(key)?;
            map.next_value_seed(Unique)?;
        }
        Ok(())
    }
}

/// The keys of one object read so far. Borrowed from the text unless a key has escapes: no
/// allocation per key.
#[derive(Default)]
struct Seen<'de> {
    few: Vec<Cow<'de, str>>,
    many: HashSet<Cow<'de, str>>,
}

impl<'de> Seen<'de> {
    /// Records `key`; an error if the object gave it before.
    fn insert<E: de::Error>(&mut self, key: Cow<'de, str>) -> Result<(), E> {
        let repeated = if self.many.is_empty() {
            let seen = self.few.contains(&key);
            self.few.push(key);
            if self.few.len() > LINEAR {
                self.many.extend(self.few.drain(..));
            }
            seen
        } else {
            !self.many.insert(key)
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

    distinct! {
        deserialize_any();
        deserialize_bool();
        deserialize_i8();
        deserialize_i16();
        deserialize_i32();
        deserialize_i64();
        deserialize_i128();
        deserialize_u8();
        deserialize_u16();
        deserialize_u32();
        deserialize_u64();
        deserialize_u128();
        deserialize_f32();
        deserialize_f64();
        deserialize_char();
        deserialize_str();
        deserialize_string();
        deserialize_bytes();
        deserialize_byte_buf();
        deserialize_option();
        deserialize_unit();
        deserialize_unit_struct(name: &'static str);
        deserialize_newtype_struct(name: &'static str);
        deserialize_seq();
        deserialize_tuple(len: usize);
        deserialize_tuple_struct(name: &'static str, len: usize);
        deserialize_map();
        deserialize_struct(name: &'static str, fields: &'static [&'static str]);
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
        deserialize_identifier();
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
