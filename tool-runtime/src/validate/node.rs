//! The compiled schema and its rules, once. The complete validator (`check.rs`) and the
//! single-pass decoder (`decode.rs`) both ask these functions whether a value holds; neither
//! has a rule of its own. `Node::check_scalar` and `Node::integer_range` destructure the node
//! without `..`, as the decoder's `Checked::new` does, so a keyword added to [`Node`] does not
//! compile until the rules say what it means.

use serde_json::Value;

use super::format::Format;
use super::number::Numeric;
use super::pattern::Pattern;

/// Whether two names are the same text: a key against a property's name, a call's tool name
/// against a tool's. `==` on `str` calls `memcmp` when the lengths are only known at run time;
/// names are short, and comparing them a word at a time costs a third of that.
#[inline]
pub(crate) fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n < 4 {
        return a == b;
    }
    if n < 8 {
        let half = |s: &[u8], i: usize| {
            let mut w = [0u8; 4];
            w.copy_from_slice(&s[i..i + 4]);
            u32::from_ne_bytes(w)
        };
        return half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4);
    }
    let word = |s: &[u8], i: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&s[i..i + 8]);
        u64::from_ne_bytes(w)
    };
    let mut i = 0;
    while i + 8 < n {
        if word(a, i) != word(b, i) {
            return false;
        }
        i += 8;
    }
    // The last eight bytes, overlapping the words already compared.
    word(a, n - 8) == word(b, n - 8)
}

/// JSON types as bits: a node's `type` is a set of them.
pub(crate) const NULL: u8 = 1;
pub(crate) const BOOL: u8 = 2;
/// Integers (a number with no fraction).
pub(crate) const INT: u8 = 4;
/// Numbers with a fraction; `"type": "number"` is `NUM | INT`.
pub(crate) const NUM: u8 = 8;
pub(crate) const STR: u8 = 16;
pub(crate) const ARR: u8 = 32;
pub(crate) const OBJ: u8 = 64;

pub(crate) fn type_bit(name: &str) -> Option<u8> {
    Some(match name {
        "null" => NULL,
        "boolean" => BOOL,
        "integer" => INT,
        "number" => NUM | INT,
        "string" => STR,
        "array" => ARR,
        "object" => OBJ,
        _ => return None,
    })
}

/// One compiled schema node.
#[derive(Debug, Default)]
pub(crate) struct Node {
    /// `type`; `None` admits every type.
    pub(crate) types: Option<u8>,
    /// The allowed values, from `enum`, `const`, or a union whose every branch is a `const`.
    pub(crate) choices: Option<Choices>,
    /// `oneOf` (exactly one branch) or `anyOf` (at least one), when its branches are not all
    /// constants (those are in `choices`).
    pub(crate) union: Option<Union>,
    pub(crate) minimum: Option<Numeric>,
    pub(crate) maximum: Option<Numeric>,
    pub(crate) exclusive_minimum: Option<Numeric>,
    pub(crate) exclusive_maximum: Option<Numeric>,
    /// String length in characters.
    pub(crate) min_length: Option<u64>,
    pub(crate) max_length: Option<u64>,
    /// `pattern`: ECMA-262, unanchored.
    pub(crate) pattern: Option<Pattern>,
    /// `format`, where it asserts something (see [`Format`]); other formats only describe.
    pub(crate) format: Option<Format>,
    /// `formatMinimum`/`formatMaximum` of a date: its first and last day, `YYYY-MM-DD` (which
    /// compare as text as they do as days).
    pub(crate) first_day: Option<String>,
    pub(crate) last_day: Option<String>,
    pub(crate) items: Option<Box<Node>>,
    pub(crate) min_items: Option<u64>,
    pub(crate) max_items: Option<u64>,
    pub(crate) properties: Vec<Prop>,
    /// `required` names that are not properties: no object can satisfy them.
    pub(crate) required_unknown: Vec<String>,
    /// `additionalProperties: false`.
    pub(crate) closed: bool,
    /// The required properties among the first 64, a bit each (by property index).
    pub(crate) required_bits: u64,
    /// `$ref` to a `$defs` entry, by index.
    pub(crate) reference: Option<usize>,
    /// The bounds above as one inclusive range, when they are all an integer is asked
    /// ([`Node::integer_range`]): the usual `range = 1..=500` argument, checked in two compares.
    pub(crate) integer_range: Option<(i128, i128)>,
}

/// The allowed values of a node, in the schema's order; the strings among them also apart, so a
/// string (an enum's variant, the usual case) is compared with strings only.
#[derive(Debug)]
pub(crate) struct Choices {
    values: Vec<Value>,
    strings: Vec<Box<str>>,
}

impl Choices {
    pub(crate) fn new(values: Vec<Value>) -> Self {
        let strings = values
            .iter()
            .filter_map(|v| Some(v.as_str()?.into()))
            .collect();
        Choices { values, strings }
    }

    /// Whether the scalar `v` is one of the choices.
    #[inline]
    fn admits(&self, v: Scalar<'_>) -> bool {
        match v {
            Scalar::Str(s) => self.admits_str(s),
            _ => self.values.iter().any(|c| scalar_equals(v, c)),
        }
    }

    #[inline]
    fn admits_str(&self, s: &str) -> bool {
        self.strings.iter().any(|c| same_name(c, s))
    }
}

impl std::ops::Deref for Choices {
    type Target = [Value];
    fn deref(&self) -> &[Value] {
        &self.values
    }
}

#[derive(Debug)]
pub(crate) struct Union {
    pub(crate) branches: Vec<Node>,
    pub(crate) exactly_one: bool,
}

#[derive(Debug)]
pub(crate) struct Prop {
    pub(crate) name: String,
    pub(crate) node: Node,
    pub(crate) default: Option<Value>,
    /// Listed in the object's `required`.
    pub(crate) required: bool,
}

/// A JSON value that is not a list or an object, as both paths read it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Scalar<'a> {
    Null,
    Bool(bool),
    Number(Numeric),
    Str(&'a str),
}

impl Scalar<'_> {
    fn type_bit(self) -> u8 {
        match self {
            Scalar::Null => NULL,
            Scalar::Bool(_) => BOOL,
            Scalar::Number(n) if n.is_integer() => INT,
            Scalar::Number(_) => NUM,
            Scalar::Str(_) => STR,
        }
    }
}

/// The rule a value broke: the complete validator words it, the decoder gives up on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Broken {
    Type,
    NotAllowed,
    Range,
    Length,
    Pattern,
    Format,
    /// A member a closed object has no property for.
    Unknown,
    /// A member given twice.
    Duplicate,
}

impl Node {
    /// Whether the node's `type` admits the JSON type `bit`.
    #[inline]
    pub(crate) fn admits(&self, bit: u8) -> bool {
        self.types.is_none_or(|t| t & bit != 0)
    }

    /// Whether the node takes integers and nothing else numeric: a number written with a
    /// fraction or an exponent is then read from its text, exactly.
    #[inline]
    pub(crate) fn integers_only(&self) -> bool {
        self.admits(INT) && !self.admits(NUM)
    }

    /// Every rule a scalar can break, checked in the order the validator reports the first.
    #[inline]
    pub(crate) fn check_scalar(&self, v: Scalar<'_>) -> Result<(), Broken> {
        // Where each keyword is enforced: a field added to `Node` stops the build here until it
        // has a place.
        let Node {
            types: _,             // each of the three below
            choices: _,           // each of the three below
            union: _,             // the walkers, which recurse into each branch
            minimum: _,           // check_number
            maximum: _,           // check_number
            exclusive_minimum: _, // check_number
            exclusive_maximum: _, // check_number
            min_length: _,        // check_str
            max_length: _,        // check_str
            pattern: _,           // check_str
            format: _,            // check_str
            first_day: _,         // check_str
            last_day: _,          // check_str
            items: _,             // lists and objects only
            min_items: _,
            max_items: _,
            properties: _,
            required_unknown: _,
            required_bits: _,
            closed: _,
            reference: _,     // resolved before any rule is asked
            integer_range: _, // check_number: the bounds, for an integer
        } = self;
        match v {
            Scalar::Number(n) => self.check_number(n),
            Scalar::Str(s) => self.check_str(s),
            Scalar::Null | Scalar::Bool(_) => self.check_type_and_choices(v),
        }
    }

    #[inline]
    fn check_type_and_choices(&self, v: Scalar<'_>) -> Result<(), Broken> {
        if !self.admits(v.type_bit()) {
            return Err(Broken::Type);
        }
        if let Some(choices) = &self.choices
            && !choices.admits(v)
        {
            return Err(Broken::NotAllowed);
        }
        Ok(())
    }

    /// The rules of a number (its type, the choices, the bounds).
    #[inline]
    pub(crate) fn check_number(&self, n: Numeric) -> Result<(), Broken> {
        debug_assert_eq!(
            self.integer_range,
            self.integer_range(),
            "a stale integer range"
        );
        if let (Numeric::Int(i), Some((low, high))) = (n, self.integer_range) {
            return if low <= i && i <= high {
                Ok(())
            } else {
                Err(Broken::Range)
            };
        }
        self.check_each_bound(n)
    }

    /// [`Node::check_number`] without the integer range: every rule asked on its own.
    fn check_each_bound(&self, n: Numeric) -> Result<(), Broken> {
        use std::cmp::Ordering::{Equal, Greater, Less};
        self.check_type_and_choices(Scalar::Number(n))?;
        let out = self
            .minimum
            .is_some_and(|b| !matches!(n.cmp(b), Some(Greater | Equal)))
            || self
                .maximum
                .is_some_and(|b| !matches!(n.cmp(b), Some(Less | Equal)))
            || self
                .exclusive_minimum
                .is_some_and(|b| n.cmp(b) != Some(Greater))
            || self
                .exclusive_maximum
                .is_some_and(|b| n.cmp(b) != Some(Less))
            || n.is_nan();
        if out {
            return Err(Broken::Range);
        }
        Ok(())
    }

    /// The inclusive range of integers the node takes, when nothing but its bounds can refuse
    /// an integer (integers are of its type, no choices) and every bound is an integer: what
    /// [`Node::check_number`] asks an integer instead of each bound.
    pub(crate) fn integer_range(&self) -> Option<(i128, i128)> {
        // Every keyword that could refuse an integer is folded into the range or rules it out: a
        // field added to `Node` stops the build here until it says which.
        let Node {
            types: _, // must admit integers
            choices,  // none
            union: _, // checked by the walkers, branch by branch
            minimum,
            maximum,
            exclusive_minimum,
            exclusive_maximum,
            integer_range: _,
            min_length: _, // strings only
            max_length: _,
            pattern: _,
            format: _,
            first_day: _,
            last_day: _,
            items: _, // lists and objects only
            min_items: _,
            max_items: _,
            properties: _,
            required_unknown: _,
            required_bits: _,
            closed: _,
            reference: _, // resolved before any rule is asked
        } = self;
        if !self.admits(INT) || choices.is_some() {
            return None;
        }
        let bound = |b: Option<Numeric>, shift: i128, none: i128| match b {
            None => Some(none),
            Some(Numeric::Int(i)) => i.checked_add(shift),
            Some(_) => None,
        };
        let low = bound(*minimum, 0, i128::MIN)?.max(bound(*exclusive_minimum, 1, i128::MIN)?);
        let high = bound(*maximum, 0, i128::MAX)?.min(bound(*exclusive_maximum, -1, i128::MAX)?);
        Some((low, high))
    }

    /// The rules of a string (its type, the choices, length, pattern, format and days).
    #[inline]
    pub(crate) fn check_str(&self, s: &str) -> Result<(), Broken> {
        if !self.admits(STR) {
            return Err(Broken::Type);
        }
        if let Some(choices) = &self.choices
            && !choices.admits_str(s)
        {
            return Err(Broken::NotAllowed);
        }
        if self.min_length.is_some() || self.max_length.is_some() {
            let n = s.chars().count() as u64;
            if self.min_length.is_some_and(|m| n < m) || self.max_length.is_some_and(|m| n > m) {
                return Err(Broken::Length);
            }
        }
        if let Some(re) = &self.pattern
            && !re.is_match(s)
        {
            return Err(Broken::Pattern);
        }
        if self.format.is_some_and(|f| !f.holds(s)) {
            return Err(Broken::Format);
        }
        let early = self.first_day.as_deref().is_some_and(|d| s < d);
        let late = self.last_day.as_deref().is_some_and(|d| s > d);
        if early || late {
            return Err(Broken::Range);
        }
        Ok(())
    }

    /// The rules of a list's item count.
    pub(crate) fn check_count(&self, count: u64) -> Result<(), Broken> {
        let (min, max) = (self.min_items, self.max_items);
        if min.is_some_and(|m| count < m) || max.is_some_and(|m| count > m) {
            return Err(Broken::Length);
        }
        Ok(())
    }

    /// Whether a non-scalar value (a list or object as a whole) is one of the `choices`.
    pub(crate) fn allows_value(&self, v: &Value) -> bool {
        self.choices
            .as_ref()
            .is_none_or(|c| c.iter().any(|c| json_equals(v, c)))
    }
}

/// The rules of an object's members, written once for every walker (the complete validator, the
/// decoder of nested objects, the decoder of a tool's arguments): which keys the object takes, no
/// key twice, which properties must be present, which defaults fill the absent ones.
pub(crate) struct Members<'n> {
    node: &'n Node,
    /// The properties seen: a bit each for the first 64, a list beyond.
    seen: u64,
    seen_more: Vec<bool>,
    /// The property after the last key's: where the next key usually is, as models write the
    /// members in the schema's order.
    next: usize,
    /// The `required` names without a property that an open object was given.
    given_unknown: Vec<usize>,
}

/// A member a complete object lacks.
pub(crate) enum Missing<'n> {
    /// A required property, by index.
    Property(usize),
    /// A `required` name no property describes, absent.
    Unknown(&'n str),
}

impl<'n> Members<'n> {
    pub(crate) fn new(node: &'n Node) -> Self {
        Members {
            node,
            seen: 0,
            seen_more: Vec::new(),
            next: 0,
            given_unknown: Vec::new(),
        }
    }

    fn is_seen(&self, i: usize) -> bool {
        match i {
            0..64 => self.seen & (1 << i) != 0,
            _ => self.seen_more.get(i - 64).copied().unwrap_or(false),
        }
    }

    /// A member's key: the index of its property, or `None` for a key an open object takes
    /// without rules. A key a closed object has no property for is [`Broken::Unknown`]; a
    /// property given twice is [`Broken::Duplicate`].
    #[inline]
    pub(crate) fn key(&mut self, key: &str) -> Result<Option<usize>, Broken> {
        let props = &self.node.properties;
        let i = match props.get(self.next) {
            Some(p) if same_name(&p.name, key) => Some(self.next),
            _ => props.iter().position(|p| same_name(&p.name, key)),
        };
        let Some(i) = i else {
            if self.node.closed {
                return Err(Broken::Unknown);
            }
            if let Some(r) = self.node.required_unknown.iter().position(|r| r == key) {
                self.given_unknown.push(r);
            }
            return Ok(None);
        };
        if self.is_seen(i) {
            return Err(Broken::Duplicate);
        }
        self.next = i + 1;
        match i {
            0..64 => self.seen |= 1 << i,
            _ => {
                if self.seen_more.len() < i - 63 {
                    self.seen_more.resize(i - 63, false);
                }
                self.seen_more[i - 64] = true;
            }
        }
        Ok(Some(i))
    }

    /// Whether the object lacks nothing once every member is read.
    #[inline]
    pub(crate) fn complete(&self) -> bool {
        let node = self.node;
        if node.properties.len() <= 64 && node.required_unknown.is_empty() {
            return self.seen & node.required_bits == node.required_bits;
        }
        self.missing().next().is_none()
    }

    /// The properties not given, in property order.
    pub(crate) fn absent(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.node.properties.len()).filter(|&i| !self.is_seen(i))
    }

    /// What the object lacks once every member is read: required properties, then `required`
    /// names no property describes.
    pub(crate) fn missing(&self) -> impl Iterator<Item = Missing<'n>> + '_ {
        let props = &self.node.properties;
        (0..props.len())
            .filter(|&i| props[i].required && !self.is_seen(i))
            .map(Missing::Property)
            .chain(
                self.node
                    .required_unknown
                    .iter()
                    .enumerate()
                    .filter(|(r, _)| !self.given_unknown.contains(r))
                    .map(|(_, name)| Missing::Unknown(name.as_str())),
            )
    }

    /// The absent properties that declare a default, in property order, from index `from`.
    pub(crate) fn defaults(&self, from: usize) -> impl Iterator<Item = (usize, &'n Value)> + '_ {
        let props = &self.node.properties;
        (from..props.len())
            .filter(|&i| !self.is_seen(i))
            .filter_map(|i| props[i].default.as_ref().map(|d| (i, d)))
    }
}

/// Scalar equality as JSON Schema defines it: numbers by value (`1.0` equals `1`).
fn scalar_equals(v: Scalar<'_>, c: &Value) -> bool {
    match (v, c) {
        (Scalar::Null, Value::Null) => true,
        (Scalar::Bool(a), Value::Bool(b)) => a == *b,
        (Scalar::Str(a), Value::String(b)) => same_name(a, b),
        (Scalar::Number(a), Value::Number(b)) => {
            a.cmp(Numeric::of(b)) == Some(std::cmp::Ordering::Equal)
        }
        _ => false,
    }
}

/// Value equality as JSON Schema defines it: numbers by value, at any depth.
pub(crate) fn json_equals(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equals(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, a)| y.get(k).is_some_and(|b| json_equals(a, b)))
        }
        (Value::Null, b) => scalar_equals(Scalar::Null, b),
        (Value::Bool(x), b) => scalar_equals(Scalar::Bool(*x), b),
        (Value::String(x), b) => scalar_equals(Scalar::Str(x), b),
        (Value::Number(x), b) => scalar_equals(Scalar::Number(Numeric::of(x)), b),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::Validator;
    use super::*;
    use serde_json::json;

    /// Each schema, and whether its integers are checked as one range.
    fn number_nodes() -> Vec<(serde_json::Value, bool)> {
        vec![
            (
                json!({"type": "integer", "minimum": 1, "maximum": 500}),
                true,
            ),
            (
                json!({"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10}),
                true,
            ),
            (
                json!({"type": "integer", "minimum": 3, "exclusiveMinimum": 3, "maximum": 9, "exclusiveMaximum": 100}),
                true,
            ),
            (json!({"type": "number", "minimum": -5}), true),
            (json!({"type": "integer", "maximum": -5}), true),
            (json!({"type": "integer"}), true),
            // No `type`: every type, integers too.
            (json!({"minimum": 0, "maximum": 9}), true),
            (json!({"type": ["integer", "null"], "maximum": 9}), true),
            // Bounds written as whole floats are integers.
            (
                json!({"type": "integer", "minimum": 1.0, "maximum": 5e2}),
                true,
            ),
            // Nothing fits: every integer is out of range.
            (
                json!({"type": "integer", "minimum": 10, "maximum": 1}),
                true,
            ),
            (
                json!({"type": "integer", "exclusiveMaximum": i64::MIN}),
                true,
            ),
            (
                json!({"type": "integer", "exclusiveMinimum": u64::MAX}),
                true,
            ),
            // A bound with a fraction, choices, or a type without integers: each rule on its own.
            (
                json!({"type": "integer", "minimum": 1.5, "maximum": 9}),
                false,
            ),
            (json!({"type": "integer", "exclusiveMaximum": 10.5}), false),
            (
                json!({"type": "integer", "enum": [1, 2, 3], "maximum": 2}),
                false,
            ),
            (
                json!({"oneOf": [{"const": 1}, {"const": 7}], "maximum": 5}),
                false,
            ),
            (json!({"type": "string", "maximum": 5}), false),
            (json!({"type": "boolean"}), false),
        ]
    }

    #[test]
    fn an_integer_range_says_what_the_bounds_say() {
        let numbers: Vec<i128> = (-12..=12)
            .chain([
                499,
                500,
                501,
                i64::MIN.into(),
                u64::MAX.into(),
                i128::MIN,
                i128::MAX,
            ])
            .collect();
        for (schema, fast) in number_nodes() {
            let v =
                Validator::new(&json!({"type": "object", "properties": {"n": schema}})).unwrap();
            let node = &v.root().properties[0].node;
            assert_eq!(node.integer_range.is_some(), fast, "{schema}");
            for &i in &numbers {
                assert_eq!(
                    node.check_number(Numeric::Int(i)),
                    node.check_each_bound(Numeric::Int(i)),
                    "{i} against {schema}"
                );
            }
        }
    }

    #[test]
    fn members_are_found_in_any_order_and_each_once() {
        let mut properties = serde_json::Map::new();
        for i in 0..70 {
            properties.insert(format!("p{i:02}"), json!({"type": "integer"}));
        }
        let v = Validator::new(&json!({"type": "object", "properties": properties})).unwrap();
        let root = v.root();
        let index = |name: &str| root.properties.iter().position(|p| p.name == name);
        // In the schema's order, past the 64 tracked in one word.
        let mut m = Members::new(root);
        for i in 0..70 {
            let name = format!("p{i:02}");
            assert_eq!(m.key(&name), Ok(index(&name)), "{name}");
        }
        assert_eq!(m.key("p00"), Err(Broken::Duplicate));
        assert_eq!(m.key("p69"), Err(Broken::Duplicate));
        // Out of order, a key given again right after, and a key no property has (open object).
        let mut m = Members::new(root);
        assert_eq!(m.key("p05"), Ok(index("p05")));
        assert_eq!(m.key("p05"), Err(Broken::Duplicate));
        assert_eq!(m.key("p06"), Ok(index("p06")));
        assert_eq!(m.key("lain"), Ok(None));
        assert_eq!(m.key("p07"), Ok(index("p07")));
        assert_eq!(m.key("p01"), Ok(index("p01")));
        assert_eq!(m.key("p06"), Err(Broken::Duplicate));
        assert_eq!(m.key("p02"), Ok(index("p02")));
    }

    #[test]
    fn same_name_agrees_with_str_equality() {
        let base: String = ('a'..='z').chain('A'..='Z').collect();
        for n in 0..=40 {
            let a = &base[..n];
            let copy = String::from(a);
            assert!(super::same_name(a, &copy), "{a}");
            assert!(!super::same_name(a, &base[..n + 1]), "{a}");
            for i in 0..n {
                let mut b = a.as_bytes().to_vec();
                b[i] = b'_';
                let b = String::from_utf8(b).unwrap();
                assert!(!super::same_name(a, &b), "{a} vs {b}");
            }
        }
        // Bytes, not characters: the same length in bytes, one character apart.
        assert!(super::same_name("jumlah_pesértà", "jumlah_pesértà"));
        assert!(!super::same_name("jumlah_pesértà", "jumlah_pesérté"));
        assert!(!super::same_name("é", "ê"));
    }
}
