//! The fast path at the boundary: arguments are validated against the compiled schema *while*
//! serde deserializes them from the JSON text, in one pass, with no intermediate `Value`.
//!
//! It only ever answers "valid, here are the typed arguments" or "not valid". Any doubt (a
//! violation, a duplicate key, a tagged union) makes it give up, and the caller takes the
//! complete path (`Validator::validate` over a `Value`), which reports every violation. So the two
//! paths accept exactly the same inputs; `tests/differential.rs` and `tests/fuzz.rs` check it.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::value::{BorrowedStrDeserializer, StringDeserializer};
use serde::de::{self, DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::de::StrRead;

use crate::arg::{RangeArg, ToolArg};
use crate::arguments::{Arguments, Repr};
use crate::error::ToolError;
use crate::schema::FieldSchema;
use crate::validate::node::{ARR, Members, Node, OBJ, Scalar};
use crate::validate::number::Numeric;
use crate::validate::{
    Path, SchemaError, Segment, Validator, Violation, ViolationKind, Violations, violation,
};

/// A call's arguments on their way into the tool's parameters.
pub struct Input<'t> {
    pub(crate) arguments: Arguments<'t>,
    pub(crate) validator: &'t Validator,
    /// Decode and check the parameters' rules only: the call is about to be held for
    /// approval, and must not be held if its own rules refuse it.
    pub(crate) check_only: bool,
}

impl Input<'_> {
    /// Whether the tool is only to be checked, not run (see [`Input::check_only`]).
    #[inline]
    pub fn check_only(&self) -> bool {
        self.check_only
    }

    /// The complete path: parse, validate against the whole schema (every violation, defaults
    /// filled in), and hand back the arguments object.
    pub(crate) fn into_checked_map(self) -> Result<serde_json::Map<String, Value>, ToolError> {
        let nulls = self.arguments.nulls;
        let value = match self.arguments.repr {
            Repr::Text(t) if t.trim().is_empty() => self
                .validator
                .validate_text("{}", nulls)
                .map_err(ToolError::InvalidArguments)?,
            Repr::Text(t) => self
                .validator
                .validate_text(&t, nulls)
                .map_err(ToolError::InvalidArguments)?,
            Repr::Value(v) => {
                let mut v = *v;
                let violations = self.validator.validate_reading(&mut v, nulls);
                if !violations.is_empty() {
                    return Err(ToolError::InvalidArguments(violations));
                }
                v
            }
            Repr::NotAFunction(call) => {
                return Err(ToolError::InvalidArguments(Violations(vec![violation(
                    &[],
                    ViolationKind::Type,
                    "a function call (`\"type\": \"function\"`) whose arguments are a JSON object"
                        .into(),
                    Some(&call),
                )])));
            }
        };
        match value {
            Value::Object(map) => Ok(map),
            _ => Err(ToolError::Schema(SchemaError(
                "the input schema's root is not an object".into(),
            ))),
        }
    }
}

/// A seed that checks what `inner` deserializes against `node`.
pub(crate) struct Checked<'v, S> {
    pub(crate) inner: S,
    pub(crate) v: &'v Validator,
    pub(crate) node: &'v Node,
}

impl<'v, S> Checked<'v, S> {
    pub(crate) fn new(inner: S, v: &'v Validator, node: &'v Node) -> Self {
        let node = v.resolve(node);
        // Where this path enforces each keyword: a field added to `Node` stops the build here
        // until it has a place.
        let Node {
            types: _,             // Node::check_number, check_str, check_scalar; check_type
            choices: _,           // the same; lists and objects: the complete path
            union: _,             // captured and checked whole (`Checked::captured`)
            minimum: _,           // Node::check_number
            maximum: _,           // Node::check_number
            exclusive_minimum: _, // Node::check_number
            exclusive_maximum: _, // Node::check_number
            integer_range: _,     // Node::check_number
            min_length: _,        // Node::check_str
            max_length: _,        // Node::check_str
            pattern: _,           // Node::check_str
            format: _,            // Node::check_str
            first_day: _,         // Node::check_str
            last_day: _,          // Node::check_str
            items: _,             // CheckedSeq
            min_items: _,         // CheckedSeq, Node::check_count
            max_items: _,         // CheckedSeq, Node::check_count
            properties: _,        // Members (CheckedMap, Fill)
            required_unknown: _,  // Members (CheckedMap, Fill)
            required_bits: _,     // Members (CheckedMap, Fill)
            closed: _,            // Members (CheckedMap, Fill)
            reference: _,         // resolved above
        } = node;
        Checked { inner, v, node }
    }

    fn wrap<T>(&self, inner: T, node: &'v Node) -> Checked<'v, T> {
        Checked::new(inner, self.v, node)
    }
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Checked<'_, S> {
    type Value = S::Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        let Checked { inner, v, node } = self;
        inner.deserialize(Checked { inner: d, v, node })
    }
}

fn refuse<E: de::Error>() -> E {
    E::custom("not valid for the schema")
}

/// A checked `Deserializer`: forwards every request to `inner` with a checking visitor. A node
/// that is a tagged union is checked on a captured `Value` instead.
macro_rules! forward {
    ($($method:ident ( $($arg:ident : $ty:ty),* );)*) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, D::Error> {
            if self.node.union.is_some() {
                return self.captured()?.$method($($arg,)* visitor).map_err(D::Error::custom);
            }
            let visitor = self.wrap(visitor, self.node);
            self.inner.$method($($arg,)* visitor)
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Checked<'_, D> {
    type Error = D::Error;

    deserializer_methods!(forward);
    forward! {
        deserialize_ignored_any();
    }

    /// serde_json reads an `f32` straight into an `f32`, and the check would see the rounded
    /// number (`3.4028235e38` becomes `f32::MAX`): the number is read as the `f64` the text says
    /// (as the complete path reads it), checked, and then narrowed.
    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        if self.node.union.is_some() {
            return self
                .captured()?
                .deserialize_f32(visitor)
                .map_err(D::Error::custom);
        }
        let visitor = self.wrap(visitor, self.node);
        self.inner.deserialize_f64(visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        if self.node.union.is_some() {
            return self
                .captured()?
                .deserialize_enum(name, variants, visitor)
                .map_err(D::Error::custom);
        }
        // Any other enum node is a union of constants: a unit variant, read from a JSON string
        // only (serde would also read `{"variant": null}`, which the schema refuses). A data
        // variant that reaches here is refused, and the complete path decides.
        let Checked { inner, v, node } = self;
        inner.deserialize_str(UnitVariant {
            inner: visitor,
            checked: Checked { inner: (), v, node },
        })
    }
}

impl<'de, D: Deserializer<'de>> Checked<'_, D> {
    /// A tagged union's value, captured whole and checked against the node.
    fn captured(self) -> Result<Value, D::Error> {
        // serde_json reads the numbers in it: they are checked for its rounding once the pass
        // ends (see `fill`).
        read_an_f64();
        let mut value = Value::deserialize(self.inner)?;
        if self.v.holds(self.node, &mut value) {
            Ok(value)
        } else {
            Err(refuse())
        }
    }
}

/// A unit variant read from a JSON string only, checked, then handed to the enum's visitor.
struct UnitVariant<'v, V> {
    inner: V,
    checked: Checked<'v, ()>,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for UnitVariant<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<V::Value, E> {
        self.checked.check_str(s)?;
        self.inner.visit_enum(BorrowedStrDeserializer::new(s))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<V::Value, E> {
        self.checked.check_str(s)?;
        self.inner.visit_enum(de::value::StrDeserializer::new(s))
    }
}

impl<'v, V> Checked<'v, V> {
    #[inline]
    fn check_type<E: de::Error>(&self, bit: u8) -> Result<(), E> {
        if self.node.admits(bit) {
            Ok(())
        } else {
            Err(refuse())
        }
    }

    #[inline]
    fn check_scalar<E: de::Error>(&self, v: Scalar<'_>) -> Result<(), E> {
        self.node.check_scalar(v).map_err(|_| refuse())
    }

    #[inline]
    fn check_str<E: de::Error>(&self, s: &str) -> Result<(), E> {
        self.node.check_str(s).map_err(|_| refuse())
    }

    #[inline]
    fn check_number<E: de::Error>(&self, n: Numeric) -> Result<(), E> {
        self.node.check_number(n).map_err(|_| refuse())
    }

    /// A list or object that must be one of a few constants is compared whole, by the
    /// complete path.
    #[inline]
    fn no_choices<E: de::Error>(&self) -> Result<(), E> {
        match self.node.choices {
            Some(_) => Err(refuse()),
            None => Ok(()),
        }
    }
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Checked<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<V::Value, E> {
        self.check_scalar(Scalar::Bool(b))?;
        self.inner.visit_bool(b)
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<V::Value, E> {
        self.check_number(Numeric::Int(n.into()))?;
        self.inner.visit_i64(n)
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<V::Value, E> {
        self.check_number(Numeric::Int(n.into()))?;
        self.inner.visit_u64(n)
    }

    fn visit_f64<E: de::Error>(self, f: f64) -> Result<V::Value, E> {
        // Where only integers are taken, a number written with a fraction or an exponent is
        // left to the complete path, which reads it from its own text: the `f64` here may have
        // rounded `9007199254740993.0` or `4503599627370496.5` to another integer. Integers
        // written as integers arrive exactly, through `visit_i64`/`visit_u64`.
        if self.node.integers_only() {
            return Err(refuse());
        }
        // serde_json may have rounded it: checked once the pass ends (see `fill`).
        read_an_f64();
        self.check_number(Numeric::of_f64(f))?;
        self.inner.visit_f64(f)
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<V::Value, E> {
        self.check_str(s)?;
        self.inner.visit_str(s)
    }

    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<V::Value, E> {
        self.check_str(s)?;
        self.inner.visit_borrowed_str(s)
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<V::Value, E> {
        self.check_str(&s)?;
        self.inner.visit_string(s)
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.check_scalar(Scalar::Null)?;
        self.inner.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.check_scalar(Scalar::Null)?;
        self.inner.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        let inner = self.wrap(d, self.node);
        self.inner.visit_some(inner)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        let inner = self.wrap(d, self.node);
        self.inner.visit_newtype_struct(inner)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.check_type(ARR)?;
        self.no_choices()?;
        let node = self.node;
        let items = CheckedSeq {
            seq,
            v: self.v,
            node,
            count: 0,
        };
        let value = self.inner.visit_seq(items)?;
        Ok(value)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.check_type(OBJ)?;
        self.no_choices()?;
        let access = CheckedMap::new(map, self.v, self.node);
        self.inner.visit_map(access)
    }
}

/// A list: every item checked against `items`, and the count against `minItems`/`maxItems`.
struct CheckedSeq<'v, A> {
    seq: A,
    v: &'v Validator,
    node: &'v Node,
    count: u64,
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for CheckedSeq<'_, A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        let item = match &self.node.items {
            Some(items) => self
                .seq
                .next_element_seed(Checked::new(seed, self.v, items))?,
            None => {
                // Items without rules: serde_json reads their numbers unchecked.
                read_an_f64();
                self.seq.next_element_seed(seed)?
            }
        };
        match item {
            Some(x) => {
                self.count += 1;
                // Past the maximum, no later count can hold: give up early.
                if self.node.max_items.is_some_and(|m| self.count > m) {
                    return Err(refuse());
                }
                Ok(Some(x))
            }
            None => match self.node.check_count(self.count) {
                Ok(()) => Ok(None),
                Err(_) => Err(refuse()),
            },
        }
    }

    fn size_hint(&self) -> Option<usize> {
        self.seq.size_hint()
    }
}

/// An object: its members as [`Members`] rules them, each value checked against its property,
/// and declared defaults supplied for absent keys.
struct CheckedMap<'v, A> {
    map: A,
    v: &'v Validator,
    node: &'v Node,
    members: Members<'v>,
    current: Option<usize>,
    /// After the input's last key: the next property to consider for a default.
    defaults_from: Option<usize>,
}

impl<'v, A> CheckedMap<'v, A> {
    fn new(map: A, v: &'v Validator, node: &'v Node) -> Self {
        CheckedMap {
            map,
            v,
            node,
            members: Members::new(node),
            current: None,
            defaults_from: None,
        }
    }
}

/// Reads a key as text without copying when the input allows it.
pub(crate) struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Cow<'de, str>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }
    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(s))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(s.to_owned()))
    }
    fn visit_string<E: de::Error>(self, s: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(s))
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for CheckedMap<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        if let Some(from) = self.defaults_from {
            return self.next_default(from, seed);
        }
        let Some(key) = self.map.next_key_seed(Key)? else {
            if !self.members.complete() {
                return Err(refuse());
            }
            return self.next_default(0, seed);
        };
        let index = self.members.key(&key).map_err(|_| refuse())?;
        self.current = index;
        let key = match key {
            Cow::Borrowed(k) => seed.deserialize(BorrowedStrDeserializer::<A::Error>::new(k)),
            Cow::Owned(k) => seed.deserialize(StringDeserializer::<A::Error>::new(k)),
        };
        key.map(Some)
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        if self.defaults_from.is_some() {
            let prop = &self.node.properties[self.current.ok_or_else(refuse)?];
            let default = prop.default.clone().ok_or_else(refuse)?;
            return seed.deserialize(default).map_err(A::Error::custom);
        }
        match self.current.take() {
            Some(i) => {
                let node = &self.node.properties[i].node;
                self.map.next_value_seed(Checked::new(seed, self.v, node))
            }
            None => {
                // A member without rules: serde_json reads its numbers unchecked.
                read_an_f64();
                self.map.next_value_seed(seed)
            }
        }
    }

    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

impl<'de, A: MapAccess<'de>> CheckedMap<'_, A> {
    /// Offers the next absent property that has a default, as if the input had it.
    fn next_default<K: DeserializeSeed<'de>>(
        &mut self,
        from: usize,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        let next = self.members.defaults(from).next().map(|(i, _)| i);
        match next {
            Some(i) => {
                let name: &str = &self.node.properties[i].name;
                seed.deserialize(de::value::StrDeserializer::<A::Error>::new(name))
                    .map(Some)
            }
            None => {
                self.defaults_from = Some(self.node.properties.len());
                Ok(None)
            }
        }
    }
}

/// One parameter's destination, filled either in one pass from the JSON text or from a value
/// the complete validator has accepted. `Option<T>` is the only implementation; a tool's
/// parameters are a slice of `&mut dyn Slot`, so the code that walks the arguments object is
/// compiled once for all tools instead of once per parameter list.
pub trait Slot {
    /// Reads the value the deserializer is at, checked against its schema.
    fn read_text<'de>(
        &mut self,
        de: &mut serde_json::Deserializer<StrRead<'de>>,
        schema: SlotSchema<'_>,
    ) -> Result<(), serde_json::Error>;
    /// Reads a value that is already known to be valid (or a default, or `null` when absent).
    fn read_value(&mut self, value: &Value) -> Result<(), serde_json::Error>;
}

impl<T: de::DeserializeOwned> Slot for Option<T> {
    fn read_text<'de>(
        &mut self,
        de: &mut serde_json::Deserializer<StrRead<'de>>,
        SlotSchema { v, node }: SlotSchema<'_>,
    ) -> Result<(), serde_json::Error> {
        *self = Some(Checked::new(PhantomData::<T>, v, node).deserialize(de)?);
        Ok(())
    }

    fn read_value(&mut self, value: &Value) -> Result<(), serde_json::Error> {
        // An owned value: the same instantiation as a tagged union's in `Checked`.
        *self = Some(T::deserialize(value.clone())?);
        Ok(())
    }
}

/// The compiled schema of one parameter.
#[derive(Clone, Copy)]
pub struct SlotSchema<'v> {
    v: &'v Validator,
    node: &'v Node,
}

/// The arguments object: each known key's value goes to its slot.
struct Fill<'s, 'v, 'a> {
    v: &'v Validator,
    names: &'static [&'static str],
    slots: &'s mut [&'a mut dyn Slot],
}

/// The value of one key, handed to its slot.
struct SlotSeed<'s, 'v> {
    slot: &'s mut dyn Slot,
    schema: SlotSchema<'v>,
}

impl<'de> DeserializeSeed<'de> for SlotSeed<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        // `Fill` only ever runs on a `serde_json::Deserializer` over a `&str` (see `fill`), whose
        // map access hands each value over as `&mut` that deserializer: so `D` is that type, and
        // a slot's typed reading is compiled once per parameter type rather than once per tool.
        match as_str_deserializer::<'de, '_, D>(d) {
            Some(de) => self
                .slot
                .read_text(de, self.schema)
                .map_err(D::Error::custom),
            None => Err(refuse()),
        }
    }
}

/// `d` as the concrete deserializer `fill` made, or `None` for any other type.
fn as_str_deserializer<'de, 'x, D: Deserializer<'de> + 'x>(
    d: D,
) -> Option<&'x mut serde_json::Deserializer<StrRead<'de>>> {
    type Target<'x, 'de> = &'x mut serde_json::Deserializer<StrRead<'de>>;
    if typeid::of::<D>() != typeid::of::<Target<'x, 'de>>() {
        return None;
    }
    let d = std::mem::ManuallyDrop::new(d);
    // SAFETY: `D` is `&'y mut serde_json::Deserializer<StrRead<'r>>` for some lifetimes: the type
    // ids, which ignore lifetimes, are equal. `'r` is `'de`, because that deserializer implements
    // `Deserializer<'r>` only for its own input lifetime and `D: Deserializer<'de>`; `'y` outlives
    // `'x` because `D: 'x`. `d` is in a `ManuallyDrop` and never used again, so reading its bits as
    // the target type moves the one `&mut` out exactly once.
    Some(unsafe { std::mem::transmute_copy::<D, Target<'x, 'de>>(&d) })
}

impl<'de> Visitor<'de> for Fill<'_, '_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the arguments object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let root = self.v.root();
        let props = &root.properties;
        let order = self.v.slot_order(self.names);
        let slot_of = |p: usize| match order {
            None => p,
            Some(order) => order[p],
        };
        let mut members = Members::new(root);
        while let Some(key) = map.next_key_seed(Key)? {
            let Some(p) = members.key(&key).map_err(|_| refuse())? else {
                // A key an open root takes without rules: no parameter reads it.
                map.next_value::<de::IgnoredAny>()?;
                continue;
            };
            let slot = self.slots.get_mut(slot_of(p)).ok_or_else(refuse)?;
            map.next_value_seed(SlotSeed {
                slot: &mut **slot,
                schema: SlotSchema {
                    v: self.v,
                    node: &props[p].node,
                },
            })?;
        }
        if !members.complete() {
            return Err(refuse());
        }
        // Every parameter the input left out: its default, or `null` (an `Option`).
        for p in members.absent() {
            let value = props[p].default.as_ref().unwrap_or(&Value::Null);
            let slot = self.slots.get_mut(slot_of(p)).ok_or_else(refuse)?;
            slot.read_value(value).map_err(A::Error::custom)?;
        }
        Ok(())
    }
}

/// Fills `slots` from `text`, the arguments of a tool whose parameters are named `names` (in the
/// order of the schema's properties). `false` means "not valid, or not sure": take the complete
/// path, which overwrites every slot.
pub(crate) fn fill(
    text: &str,
    v: &Validator,
    names: &'static [&'static str],
    slots: &mut [&mut dyn Slot],
) -> bool {
    if names.len() != v.root().properties.len() || names.len() != slots.len() {
        return false;
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let filled = de.deserialize_map(Fill { v, names, slots });
    filled.is_ok() && de.end().is_ok()
}

/// [`fill`], refusing (for the complete path) arguments whose numbers serde_json may have read
/// inexactly: it parses a number with a fraction or an exponent exactly only with its
/// `float_roundtrip` feature, which a toolkit must not turn on for its users' whole program;
/// without it, when the text holds a number its fast reading cannot promise, the complete
/// path reads every number by its own digits.
fn fill_exactly(
    text: &str,
    v: &Validator,
    names: &'static [&'static str],
    slots: &mut [&mut dyn Slot],
) -> bool {
    READ_AN_F64.set(false);
    fill(text, v, names, slots)
        && !(READ_AN_F64.get() && crate::validate::number::serde_json_may_round(text))
}

thread_local! {
    /// Whether this thread's single pass read a number as an `f64` (see [`fill`]).
    static READ_AN_F64: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Notes that the single pass read a number as an `f64` (or let serde_json read values
/// unchecked): out of line, so the generic code that reads every value stays as small as it was.
#[cold]
#[inline(never)]
fn read_an_f64() {
    READ_AN_F64.set(true);
}

/// Decodes a call's arguments into the tool's parameter slots (one `Option<T>` per parameter,
/// in declaration order, named `names`): in one pass from the text when they are valid,
/// otherwise through the complete validator, which reports every violation (and every parameter
/// serde still refuses). On `Ok`, every slot is `Some`.
pub fn decode(
    input: Input<'_>,
    names: &'static [&'static str],
    slots: &mut [&mut dyn Slot],
) -> Result<(), ToolError> {
    let (complete_only, single_pass_only) = only();
    // Empty text fails here and is read as `{}` by the complete path.
    let fast = !complete_only
        && match &input.arguments.repr {
            Repr::Text(text) => fill_exactly(text, input.validator, names, slots),
            // Arguments a transport has already parsed (MCP): writing them back as text and taking
            // the single pass costs less than the complete validator.
            Repr::Value(v) => v
                .as_object()
                .and_then(|args| serde_json::to_string(args).ok())
                .is_some_and(|text| fill_exactly(&text, input.validator, names, slots)),
            Repr::NotAFunction(_) => false,
        };
    if fast {
        return Ok(());
    }
    if single_pass_only {
        return Err(ToolError::InvalidArguments(Violations(vec![Violation {
            path: Path::default(),
            kind: ViolationKind::Decode,
            expected: "a value the single-pass decoder accepts (only that path was asked for)"
                .into(),
            received: None,
        }])));
    }
    let args = input.into_checked_map()?;
    let mut errs = Vec::new();
    for (name, slot) in names.iter().zip(slots.iter_mut()) {
        if let Err(e) = slot.read_value(args.get(*name).unwrap_or(&Value::Null)) {
            errs.push(Violation {
                path: Path(vec![Segment::Key((*name).to_owned())]),
                kind: ViolationKind::Decode,
                expected: e.to_string(),
                received: None,
            });
        }
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(ToolError::InvalidArguments(Violations(errs)))
    }
}

/// The argument types most tools use, decoded and described here once: in debug builds (where
/// rustc shares generic code with dependents) a crate of tools reuses these copies instead of
/// compiling its own, which keeps its rebuilds short.
#[doc(hidden)]
pub fn common_instances() -> ([&'static dyn Slot; 30], [FieldSchema; 20]) {
    macro_rules! slots {
        ($($t:ty),*) => {
            [$(&None::<$t> as &dyn Slot, &None::<Option<$t>> as &dyn Slot),*]
        };
    }
    macro_rules! ranged {
        ($($t:ty),*) => {
            [$(FieldSchema::Ranged(<$t as RangeArg>::ranged_schema),
               FieldSchema::Ranged(<Option<$t> as RangeArg>::ranged_schema)),*,
             FieldSchema::Plain(<bool as ToolArg>::__schema),
             FieldSchema::Plain(<Option<bool> as ToolArg>::__schema),
             FieldSchema::Plain(<String as ToolArg>::__schema),
             FieldSchema::Plain(<Option<String> as ToolArg>::__schema),
             FieldSchema::Plain(<Vec<String> as ToolArg>::__schema),
             FieldSchema::Plain(<Option<Vec<String>> as ToolArg>::__schema)]
        };
    }
    (
        slots!(
            bool,
            String,
            Vec<String>,
            i8,
            i16,
            i32,
            i64,
            isize,
            u8,
            u16,
            u32,
            u64,
            usize,
            f32,
            f64
        ),
        ranged!(i32, i64, u8, u16, u32, u64, f64),
    )
}

/// One decoding path alone, for tests that check each against an independent validator (the
/// `testing` feature: never in a build without it).
#[cfg(feature = "testing")]
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Only {
    /// The single-pass decoder; what it is unsure of is refused instead of checked again.
    SinglePass,
    /// The complete validator.
    Complete,
}

#[cfg(feature = "testing")]
thread_local! {
    static ONLY: std::cell::Cell<Option<Only>> = const { std::cell::Cell::new(None) };
}

/// Makes calls on this thread take one decoding path (`None`: both, as always). A test hook.
#[cfg(feature = "testing")]
#[doc(hidden)]
pub fn decode_only(path: Option<Only>) {
    ONLY.set(path);
}

/// Whether this thread's calls take the complete path only, or the single pass only.
#[inline(always)]
fn only() -> (bool, bool) {
    #[cfg(feature = "testing")]
    {
        let only = ONLY.get();
        (only == Some(Only::Complete), only == Some(Only::SinglePass))
    }
    #[cfg(not(feature = "testing"))]
    {
        (false, false)
    }
}

/// A slot left empty after a successful `decode`: a bug in this crate, reported, not panicked.
#[cold]
pub fn unfilled() -> ToolError {
    ToolError::failed("internal error: an argument was not decoded")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn validator() -> Validator {
        Validator::new(&json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "minimum": 1, "maximum": 500},
                "kota": {"type": "string", "enum": ["jakarta", "medan"], "default": "medan"},
                "tags": {"type": "array", "items": {"type": "string", "maxLength": 3}, "maxItems": 2}
            },
            "required": ["n"],
            "additionalProperties": false
        }))
        .unwrap()
    }

    const NAMES: &[&str] = &["n", "kota", "tags"];

    fn decode(text: &str) -> Option<(u32, String, Vec<String>)> {
        let (mut n, mut kota, mut tags) = (None::<u32>, None::<String>, None::<Vec<String>>);
        if !fill(
            text,
            &validator(),
            NAMES,
            &mut [&mut n, &mut kota, &mut tags],
        ) {
            return None;
        }
        Some((n?, kota?, tags?))
    }

    #[test]
    fn valid_input_is_decoded_in_one_pass_with_defaults() {
        assert_eq!(
            decode(r#"{"n": 25, "tags": []}"#),
            Some((25, "medan".into(), vec![]))
        );
        assert_eq!(
            decode(r#"{"tags": ["ab"], "n": 250, "kota": "jakarta"}"#),
            Some((250, "jakarta".into(), vec!["ab".into()]))
        );
    }

    #[test]
    fn a_reference_to_a_reference_is_checked_in_one_pass_too() {
        let v = Validator::new(&json!({
            "$defs": {
                "Outer": {"$ref": "#/$defs/Inner"},
                "Inner": {"$ref": "#/$defs/Nik"},
                "Nik": {"type": "string", "pattern": "^[0-9]{6}$"}
            },
            "type": "object",
            "properties": {"nik": {"$ref": "#/$defs/Outer"}},
            "required": ["nik"],
            "additionalProperties": false
        }))
        .unwrap();
        let read = |text: &str| {
            let mut nik = None::<String>;
            fill(text, &v, &["nik"], &mut [&mut nik])
                .then_some(nik)
                .flatten()
        };
        assert_eq!(read(r#"{"nik": "123456"}"#).as_deref(), Some("123456"));
        assert_eq!(read(r#"{"nik": "12345x"}"#), None);
        assert_eq!(read(r#"{"nik": 123456}"#), None);
    }

    #[test]
    fn anything_doubtful_is_left_to_the_complete_path() {
        for text in [
            r#"{"n": "25", "tags": []}"#,
            r#"{"n": 0, "tags": []}"#,
            r#"{"n": 2.5, "tags": []}"#,
            // Integers spelled with a fraction or an exponent are read from their text there.
            r#"{"n": 250.0, "tags": []}"#,
            r#"{"n": 2.5e2, "tags": []}"#,
            r#"{"tags": []}"#,
            r#"{"n": 1, "tags": [], "extra": 1}"#,
            r#"{"n": 1, "n": 2, "tags": []}"#,
            r#"{"n": 1, "kota": "bandung", "tags": []}"#,
            r#"{"n": 1, "tags": ["abcd"]}"#,
            r#"{"n": 1, "tags": ["a", "b", "c"]}"#,
            r#"{"n": 1, "tags": []} trailing"#,
            "",
            "[1]",
        ] {
            assert_eq!(decode(text), None, "{text}");
        }
    }
}
