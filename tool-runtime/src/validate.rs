//! Validation at the model/code boundary: the canonical schema, compiled once, checks a call's
//! arguments and reports every violation with its path, what was expected and what was received.
//!
//! The validator interprets the same schema the model is shown, so the two cannot disagree. It
//! also normalises what JSON Schema calls equal (`250.0` is the integer `250`) and fills in
//! declared defaults, so that serde only ever sees values the schema accepts.

use std::collections::HashMap;
use std::fmt;

use regex::Regex;
use serde_json::{Map, Value};

/// One segment of a path into the arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    Key(String),
    Index(usize),
}

/// Where in the arguments a violation is: empty for the arguments object itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Path(pub Vec<Segment>);

impl Path {
    /// The path as a JSON Pointer (RFC 6901), for programs: `/items/0/qty`.
    pub fn pointer(&self) -> String {
        let mut s = String::new();
        for seg in &self.0 {
            s.push('/');
            match seg {
                Segment::Key(k) => s.push_str(&k.replace('~', "~0").replace('/', "~1")),
                Segment::Index(i) => s.push_str(&i.to_string()),
            }
        }
        s
    }
}

/// The path as a reader writes it: `items[0].qty`, or `(arguments)` for the root.
impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("(arguments)");
        }
        for (i, seg) in self.0.iter().enumerate() {
            match seg {
                Segment::Key(k) if i == 0 => f.write_str(k)?,
                Segment::Key(k) => write!(f, ".{k}")?,
                Segment::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

/// What kind of rule a value broke.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ViolationKind {
    /// The arguments are not JSON at all.
    Syntax,
    /// Wrong JSON type (`"25"` where an integer is expected).
    Type,
    /// Not one of the allowed values.
    NotAllowed { did_you_mean: Option<String> },
    /// Outside `minimum`/`maximum`.
    Range,
    /// String length or list size outside its bounds.
    Length,
    /// Does not match `pattern`.
    Pattern,
    /// A required argument or field is absent.
    Missing,
    /// A field the schema does not have.
    Unknown { did_you_mean: Option<String> },
    /// Matches none of the alternatives of a union.
    NoAlternative,
    /// Passed the schema but the Rust type still refused it.
    Decode,
    /// Breaks a business rule of the type (`#[arg(validate = ..)]`).
    Rule,
}

/// One broken rule: where, what was expected, what was received.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    pub path: Path,
    pub kind: ViolationKind,
    pub expected: String,
    /// The received value as compact JSON (cut to 80 characters); `None` when absent.
    pub received: Option<String>,
}

impl Violation {
    /// A broken business rule: at `path` (a field name, or `items[0].qty`), what the rule wants,
    /// and the value received.
    pub fn rule(
        path: &str,
        expected: impl Into<String>,
        received: impl serde::Serialize,
    ) -> Violation {
        let received = serde_json::to_value(received).unwrap_or(Value::Null);
        Violation {
            path: Path(
                path.split('.')
                    .filter(|s| !s.is_empty())
                    .map(|s| Segment::Key(s.to_owned()))
                    .collect(),
            ),
            kind: ViolationKind::Rule,
            expected: expected.into(),
            received: Some(render(&received)),
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = &self.path;
        match (&self.kind, &self.received) {
            (ViolationKind::Missing, _) => {
                write!(f, "`{path}` is missing: expected {}", self.expected)
            }
            (ViolationKind::Unknown { did_you_mean }, _) => {
                write!(f, "`{path}` is not a known field; {}", self.expected)?;
                if let Some(s) = did_you_mean {
                    write!(f, " (did you mean `{s}`?)")?;
                }
                Ok(())
            }
            (ViolationKind::Syntax, Some(r)) => write!(f, "{}: {r}", self.expected),
            (kind, received) => {
                write!(f, "`{path}`: expected {}", self.expected)?;
                if let Some(r) = received {
                    write!(f, ", received {r}")?;
                }
                if let ViolationKind::NotAllowed {
                    did_you_mean: Some(s),
                } = kind
                {
                    write!(f, " (did you mean {s}?)")?;
                }
                Ok(())
            }
        }
    }
}

/// How many violations the repair message lists; the structured list keeps all of them.
const MAX_IN_MESSAGE: usize = 20;

/// All violations of one call, in document order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Violations(pub Vec<Violation>);

impl Violations {
    /// The repair message for the model: every violation, then what to do.
    pub fn repair_message(&self) -> String {
        let mut s = String::from("The arguments were not valid:\n");
        for v in self.0.iter().take(MAX_IN_MESSAGE) {
            s.push_str("- ");
            s.push_str(&v.to_string());
            s.push('\n');
        }
        if self.0.len() > MAX_IN_MESSAGE {
            s.push_str(&format!(
                "- and {} more like these\n",
                self.0.len() - MAX_IN_MESSAGE
            ));
        }
        s.push_str("Fix every item above and call the tool again with the complete arguments.");
        s
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Violation> {
        self.0.iter()
    }
}

impl fmt::Display for Violations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.repair_message())
    }
}

pub(crate) const NULL: u8 = 1;
pub(crate) const BOOL: u8 = 2;
pub(crate) const INT: u8 = 4;
pub(crate) const NUM: u8 = 8;
pub(crate) const STR: u8 = 16;
pub(crate) const ARR: u8 = 32;
pub(crate) const OBJ: u8 = 64;

fn type_bit(name: &str) -> Option<u8> {
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

/// A number as JSON Schema compares it: exact for integers.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Numeric {
    Int(i128),
    Float(f64),
}

impl Numeric {
    pub(crate) fn of(n: &serde_json::Number) -> Numeric {
        if let Some(i) = n.as_i64() {
            Numeric::Int(i as i128)
        } else if let Some(u) = n.as_u64() {
            Numeric::Int(u as i128)
        } else {
            Numeric::Float(n.as_f64().unwrap_or(f64::NAN))
        }
    }

    pub(crate) fn cmp(self, other: Numeric) -> Option<std::cmp::Ordering> {
        match (self, other) {
            (Numeric::Int(a), Numeric::Int(b)) => Some(a.cmp(&b)),
            (a, b) => a.as_f64().partial_cmp(&b.as_f64()),
        }
    }

    fn as_f64(self) -> f64 {
        match self {
            Numeric::Int(i) => i as f64,
            Numeric::Float(f) => f,
        }
    }
}

impl fmt::Display for Numeric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Numeric::Int(i) => write!(f, "{i}"),
            Numeric::Float(x) => write!(f, "{x}"),
        }
    }
}

/// One compiled schema node. Read by the single-pass decoder too (`decode.rs`).
#[derive(Debug, Default)]
pub(crate) struct Node {
    pub(crate) types: Option<u8>,
    pub(crate) allowed: Option<Vec<Value>>,
    pub(crate) one_of: Vec<Node>,
    pub(crate) any_of: Vec<Node>,
    pub(crate) minimum: Option<Numeric>,
    pub(crate) maximum: Option<Numeric>,
    pub(crate) exclusive_minimum: Option<Numeric>,
    pub(crate) exclusive_maximum: Option<Numeric>,
    pub(crate) min_length: Option<u64>,
    pub(crate) max_length: Option<u64>,
    pub(crate) pattern: Option<Regex>,
    pub(crate) items: Option<Box<Node>>,
    pub(crate) min_items: Option<u64>,
    pub(crate) max_items: Option<u64>,
    pub(crate) properties: Vec<Prop>,
    pub(crate) required: Vec<String>,
    pub(crate) closed: bool,
    pub(crate) reference: Option<usize>,
    /// The allowed values, from `enum`, `const`, or a union whose every branch is a `const`.
    pub(crate) choices: Option<Vec<Value>>,
    /// A union whose branches are not all constants (tagged enums).
    pub(crate) complex_union: bool,
    /// The bounds as an inclusive integer range, for checking integers without floats.
    pub(crate) int_range: Option<(i128, i128)>,
}

impl Node {
    #[inline]
    pub(crate) fn in_range(&self, n: Numeric) -> bool {
        use std::cmp::Ordering::*;
        if let (Numeric::Int(i), Some((lo, hi))) = (n, self.int_range) {
            return lo <= i && i <= hi;
        }
        let below = self.minimum.is_some_and(|m| n.cmp(m) == Some(Less))
            || self
                .exclusive_minimum
                .is_some_and(|m| n.cmp(m) != Some(Greater));
        let above = self.maximum.is_some_and(|m| n.cmp(m) == Some(Greater))
            || self
                .exclusive_maximum
                .is_some_and(|m| n.cmp(m) != Some(Less));
        !(below || above || n.as_f64().is_nan())
    }

    /// Whether `types` admits the JSON type bit `bit`; a node without `type` admits all.
    #[inline]
    pub(crate) fn admits(&self, bit: u8) -> bool {
        self.types.is_none_or(|t| t & bit != 0)
    }
}

#[derive(Debug)]
pub(crate) struct Prop {
    pub(crate) name: String,
    pub(crate) node: Node,
    pub(crate) default: Option<Value>,
    /// Listed in the object's `required`.
    pub(crate) required: bool,
}

/// A schema compiled for validation. Built once per tool.
#[derive(Debug)]
pub struct Validator {
    root: Node,
    defs: Vec<Node>,
}

/// A schema this validator cannot enforce exactly; reported when a tool set is built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError(pub String);

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SchemaError {}

struct Compiler<'a> {
    def_names: HashMap<&'a str, usize>,
}

impl Validator {
    /// Compiles a canonical schema. Keywords that assert something and are not supported are an
    /// error rather than silently ignored.
    pub fn new(schema: &Value) -> Result<Validator, SchemaError> {
        let empty = Map::new();
        let defs_map = schema
            .get("$defs")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let mut cx = Compiler {
            def_names: HashMap::new(),
        };
        for (i, name) in defs_map.keys().enumerate() {
            cx.def_names.insert(name.as_str(), i);
        }
        let mut defs = Vec::with_capacity(defs_map.len());
        for def in defs_map.values() {
            defs.push(cx.node(def)?);
        }
        let root = cx.node(schema)?;
        Ok(Validator { root, defs })
    }

    /// Checks `value` in place (normalising integral floats, filling defaults) and returns every
    /// violation found.
    pub fn validate(&self, value: &mut Value) -> Violations {
        let mut out = Vec::new();
        let mut path = Vec::new();
        self.check(&self.root, value, &mut path, &mut out);
        Violations(out)
    }

    fn check(&self, node: &Node, v: &mut Value, path: &mut Vec<Segment>, out: &mut Vec<Violation>) {
        if let Some(i) = node.reference {
            return self.check(&self.defs[i], v, path, out);
        }
        if let Some(types) = node.types {
            if types & INT != 0 && types & NUM != NUM {
                normalise_integral(v);
            }
            if !type_matches(types, v) {
                out.push(violation(
                    path,
                    ViolationKind::Type,
                    describe(node, self),
                    Some(v),
                ));
                return;
            }
        }
        if let Some(choices) = &node.choices
            && !choices.contains(v)
        {
            out.push(not_allowed(path, choices, v));
            return;
        }
        match v {
            Value::Number(n) => self.check_number(node, Numeric::of(n), v, path, out),
            Value::String(s) => {
                let len = s.chars().count() as u64;
                if node.min_length.is_some_and(|m| len < m)
                    || node.max_length.is_some_and(|m| len > m)
                {
                    let what = length_text(node.min_length, node.max_length, "character");
                    out.push(violation(
                        path,
                        ViolationKind::Length,
                        format!("a string of {what}"),
                        Some(v),
                    ));
                } else if let Some(re) = &node.pattern
                    && !re.is_match(s)
                {
                    let e = format!("a string matching the pattern `{}`", re.as_str());
                    out.push(violation(path, ViolationKind::Pattern, e, Some(v)));
                }
            }
            Value::Array(items) => {
                let len = items.len() as u64;
                if node.min_items.is_some_and(|m| len < m)
                    || node.max_items.is_some_and(|m| len > m)
                {
                    let what = length_text(node.min_items, node.max_items, "item");
                    out.push(violation(
                        path,
                        ViolationKind::Length,
                        format!("a list of {what}"),
                        Some(v),
                    ));
                } else if let Some(item) = &node.items {
                    for (i, x) in items.iter_mut().enumerate() {
                        path.push(Segment::Index(i));
                        self.check(item, x, path, out);
                        path.pop();
                    }
                }
            }
            Value::Object(map) if node.types.is_some_and(|t| t & OBJ != 0) => {
                self.check_object(node, map, path, out)
            }
            _ => {}
        }
        // A union of constants was settled by `choices` above.
        if node.complex_union || node.allowed.is_some() {
            if !node.one_of.is_empty() {
                self.check_union(&node.one_of, true, v, path, out);
            } else if !node.any_of.is_empty() {
                self.check_union(&node.any_of, false, v, path, out);
            }
        }
    }

    fn check_number(
        &self,
        node: &Node,
        n: Numeric,
        v: &Value,
        path: &[Segment],
        out: &mut Vec<Violation>,
    ) {
        if !node.in_range(n) {
            out.push(violation(
                path,
                ViolationKind::Range,
                describe(node, self),
                Some(v),
            ));
        }
    }

    fn check_object(
        &self,
        node: &Node,
        map: &mut Map<String, Value>,
        path: &mut Vec<Segment>,
        out: &mut Vec<Violation>,
    ) {
        for name in &node.required {
            if !map.contains_key(name) {
                let prop = node.properties.iter().find(|p| &p.name == name);
                let expected =
                    prop.map_or_else(|| "a value".to_owned(), |p| describe(&p.node, self));
                path.push(Segment::Key(name.clone()));
                out.push(violation(path, ViolationKind::Missing, expected, None));
                path.pop();
            }
        }
        if node.closed {
            for key in map.keys() {
                if !node.properties.iter().any(|p| &p.name == key) {
                    let did_you_mean =
                        closest(key, node.properties.iter().map(|p| p.name.as_str()));
                    let known: Vec<_> = node
                        .properties
                        .iter()
                        .map(|p| format!("`{}`", p.name))
                        .collect();
                    let expected = if known.is_empty() {
                        "this takes no fields".to_owned()
                    } else {
                        format!("the fields are {}", known.join(", "))
                    };
                    path.push(Segment::Key(key.clone()));
                    out.push(violation(
                        path,
                        ViolationKind::Unknown { did_you_mean },
                        expected,
                        None,
                    ));
                    path.pop();
                }
            }
        }
        for p in &node.properties {
            match map.get_mut(&p.name) {
                Some(x) => {
                    path.push(Segment::Key(p.name.clone()));
                    self.check(&p.node, x, path, out);
                    path.pop();
                }
                None => {
                    if let Some(d) = &p.default {
                        map.insert(p.name.clone(), d.clone());
                    }
                }
            }
        }
    }

    fn check_union(
        &self,
        branches: &[Node],
        exactly_one: bool,
        v: &mut Value,
        path: &mut Vec<Segment>,
        out: &mut Vec<Violation>,
    ) {
        let mut matched: Option<Value> = None;
        let mut matches = 0;
        let mut tagged: Option<Vec<Violation>> = None;
        for b in branches {
            let mut candidate = v.clone();
            let mut errs = Vec::new();
            self.check(b, &mut candidate, path, &mut errs);
            if errs.is_empty() {
                matches += 1;
                if matched.is_none() {
                    matched = Some(candidate);
                }
                if !exactly_one {
                    break;
                }
            } else if tagged.is_none() && self.tag_matches(b, v) {
                tagged = Some(errs);
            }
        }
        match (matches, matched) {
            (1, Some(m)) => *v = m,
            (n, Some(m)) if !exactly_one || n == 0 => *v = m,
            (_, Some(_)) => out.push(violation(
                path,
                ViolationKind::NoAlternative,
                "a value that matches exactly one alternative".into(),
                Some(v),
            )),
            (_, None) => match tagged {
                Some(errs) => out.extend(errs),
                None => {
                    let alts: Vec<String> = branches.iter().map(|b| describe(b, self)).collect();
                    out.push(violation(
                        path,
                        ViolationKind::NoAlternative,
                        alts.join(", or "),
                        Some(v),
                    ));
                }
            },
        }
    }

    /// Whether `v` carries the discriminating constant of branch `b` (a serde tag).
    fn tag_matches(&self, b: &Node, v: &Value) -> bool {
        let b = self.resolve(b);
        let Value::Object(map) = v else { return false };
        b.properties.iter().any(|p| {
            let node = self.resolve(&p.node);
            matches!(&node.allowed, Some(a) if a.len() == 1 && map.get(&p.name) == Some(&a[0]))
        })
    }

    pub(crate) fn root(&self) -> &Node {
        &self.root
    }

    /// Checks one node of the schema, as `validate` does for the root; true when it holds.
    pub(crate) fn holds(&self, node: &Node, value: &mut Value) -> bool {
        let mut out = Vec::new();
        self.check(node, value, &mut Vec::new(), &mut out);
        out.is_empty()
    }

    #[inline]
    pub(crate) fn resolve<'a>(&'a self, node: &'a Node) -> &'a Node {
        match node.reference {
            Some(i) => &self.defs[i],
            None => node,
        }
    }
}

impl<'a> Compiler<'a> {
    fn node(&mut self, schema: &'a Value) -> Result<Node, SchemaError> {
        let obj = match schema {
            Value::Bool(true) => return Ok(Node::default()),
            Value::Object(o) => o,
            other => return Err(SchemaError(format!("unsupported schema `{other}`"))),
        };
        let mut n = Node::default();
        for (key, val) in obj {
            match key.as_str() {
                "type" => {
                    let mut mask = 0;
                    let names: Vec<&Value> = match val {
                        Value::Array(a) => a.iter().collect(),
                        one => vec![one],
                    };
                    for t in names {
                        mask |= t.as_str().and_then(type_bit).ok_or_else(|| bad(key, val))?;
                    }
                    n.types = Some(mask);
                }
                "enum" => n.allowed = Some(val.as_array().ok_or_else(|| bad(key, val))?.clone()),
                "const" => n.allowed = Some(vec![val.clone()]),
                "oneOf" => n.one_of = self.list(key, val)?,
                "anyOf" => n.any_of = self.list(key, val)?,
                "minimum" => n.minimum = Some(number(key, val)?),
                "maximum" => n.maximum = Some(number(key, val)?),
                "exclusiveMinimum" => n.exclusive_minimum = Some(number(key, val)?),
                "exclusiveMaximum" => n.exclusive_maximum = Some(number(key, val)?),
                "minLength" => n.min_length = Some(count(key, val)?),
                "maxLength" => n.max_length = Some(count(key, val)?),
                "minItems" => n.min_items = Some(count(key, val)?),
                "maxItems" => n.max_items = Some(count(key, val)?),
                "pattern" => {
                    let p = val.as_str().ok_or_else(|| bad(key, val))?;
                    let re = Regex::new(p)
                        .map_err(|e| SchemaError(format!("invalid `pattern` {p:?}: {e}")))?;
                    n.pattern = Some(re);
                }
                "items" => n.items = Some(Box::new(self.node(val)?)),
                "additionalProperties" => match val {
                    Value::Bool(b) => n.closed = !b,
                    _ => {
                        return Err(SchemaError(
                            "`additionalProperties` must be a boolean".into(),
                        ));
                    }
                },
                "required" => {
                    let names = val.as_array().ok_or_else(|| bad(key, val))?;
                    n.required = names
                        .iter()
                        .filter_map(|s| s.as_str().map(str::to_owned))
                        .collect();
                }
                "properties" => {
                    let props = val.as_object().ok_or_else(|| bad(key, val))?;
                    for (name, s) in props {
                        n.properties.push(Prop {
                            name: name.clone(),
                            node: self.node(s)?,
                            default: s.get("default").cloned(),
                            required: false,
                        });
                    }
                }
                "$ref" => {
                    let r = val.as_str().ok_or_else(|| bad(key, val))?;
                    let name = r.strip_prefix("#/$defs/").unwrap_or(r);
                    let i = self
                        .def_names
                        .get(name)
                        .ok_or_else(|| SchemaError(format!("unresolved `$ref` {r:?}")))?;
                    n.reference = Some(*i);
                }
                // Annotations: they describe, they do not assert.
                "description" | "title" | "default" | "examples" | "format" | "$defs"
                | "$schema" | "$id" | "$comment" | "deprecated" | "readOnly" | "writeOnly" => {}
                other => {
                    return Err(SchemaError(format!(
                        "the keyword `{other}` is not supported by the argument validator"
                    )));
                }
            }
        }
        for p in &mut n.properties {
            p.required = n.required.contains(&p.name);
        }
        let branches = if n.one_of.is_empty() {
            &n.any_of
        } else {
            &n.one_of
        };
        let union_consts: Option<Vec<Value>> = branches
            .iter()
            .map(|b| match &b.allowed {
                Some(a) if a.len() == 1 && b.reference.is_none() => Some(a[0].clone()),
                _ => None,
            })
            .collect();
        n.complex_union = !branches.is_empty() && union_consts.is_none();
        n.int_range = Some((
            lowest_integer(n.minimum, n.exclusive_minimum),
            highest_integer(n.maximum, n.exclusive_maximum),
        ));
        n.choices = match (&n.allowed, union_consts) {
            (Some(a), _) => Some(a.clone()),
            (None, Some(c)) if !c.is_empty() => Some(c),
            _ => None,
        };
        Ok(n)
    }

    fn list(&mut self, key: &str, val: &'a Value) -> Result<Vec<Node>, SchemaError> {
        let items = val.as_array().ok_or_else(|| bad(key, val))?;
        items.iter().map(|s| self.node(s)).collect()
    }
}

/// The smallest integer at or above `minimum` and above `exclusiveMinimum`.
fn lowest_integer(min: Option<Numeric>, exclusive: Option<Numeric>) -> i128 {
    let a = match min {
        Some(Numeric::Int(m)) => m,
        Some(Numeric::Float(f)) => f.ceil().clamp(i128::MIN as f64, i128::MAX as f64) as i128,
        None => i128::MIN,
    };
    let b = match exclusive {
        Some(Numeric::Int(m)) => m.saturating_add(1),
        Some(Numeric::Float(f)) => {
            (f.floor().clamp(i128::MIN as f64, i128::MAX as f64) as i128).saturating_add(1)
        }
        None => i128::MIN,
    };
    a.max(b)
}

/// The largest integer at or below `maximum` and below `exclusiveMaximum`.
fn highest_integer(max: Option<Numeric>, exclusive: Option<Numeric>) -> i128 {
    let a = match max {
        Some(Numeric::Int(m)) => m,
        Some(Numeric::Float(f)) => f.floor().clamp(i128::MIN as f64, i128::MAX as f64) as i128,
        None => i128::MAX,
    };
    let b = match exclusive {
        Some(Numeric::Int(m)) => m.saturating_sub(1),
        Some(Numeric::Float(f)) => {
            (f.ceil().clamp(i128::MIN as f64, i128::MAX as f64) as i128).saturating_sub(1)
        }
        None => i128::MAX,
    };
    a.min(b)
}

fn bad(key: &str, val: &Value) -> SchemaError {
    SchemaError(format!("invalid value for `{key}`: {val}"))
}

fn number(key: &str, val: &Value) -> Result<Numeric, SchemaError> {
    match val {
        Value::Number(n) => Ok(Numeric::of(n)),
        _ => Err(bad(key, val)),
    }
}

fn count(key: &str, val: &Value) -> Result<u64, SchemaError> {
    val.as_u64().ok_or_else(|| bad(key, val))
}

/// JSON Schema: "a number with a zero fractional part is an integer". Rewrite `250.0` as `250` so
/// that serde, which is stricter, accepts what the schema accepts.
fn normalise_integral(v: &mut Value) {
    let Value::Number(n) = v else { return };
    if n.is_f64() {
        let f = n.as_f64().unwrap_or(f64::NAN);
        if f.fract() == 0.0 && f.is_finite() {
            if f >= 0.0 && f <= u64::MAX as f64 && (f as u64) as f64 == f {
                *v = Value::from(f as u64);
            } else if f < 0.0 && f >= i64::MIN as f64 {
                *v = Value::from(f as i64);
            }
        }
    }
}

fn type_matches(types: u8, v: &Value) -> bool {
    let bit = match v {
        Value::Null => NULL,
        Value::Bool(_) => BOOL,
        Value::Number(n) => {
            let integral = n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0);
            if integral { INT } else { NUM & !INT }
        }
        Value::String(_) => STR,
        Value::Array(_) => ARR,
        Value::Object(_) => OBJ,
    };
    types & bit != 0
}

fn json_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// The received value for a message: compact JSON, cut to 80 characters, and its JSON type.
fn render(v: &Value) -> String {
    let mut s = v.to_string();
    if s.chars().count() > 80 {
        s = s.chars().take(77).collect::<String>() + "...";
    }
    match v {
        Value::Null => s,
        _ => format!("{s} ({})", json_type_name(v)),
    }
}

fn violation(
    path: &[Segment],
    kind: ViolationKind,
    expected: String,
    received: Option<&Value>,
) -> Violation {
    Violation {
        path: Path(path.to_vec()),
        kind,
        expected,
        received: received.map(render),
    }
}

fn not_allowed(path: &[Segment], allowed: &[Value], v: &Value) -> Violation {
    let did_you_mean = v.as_str().and_then(|s| {
        allowed
            .iter()
            .filter_map(Value::as_str)
            .find(|a| {
                a.eq_ignore_ascii_case(s)
                    || a.replace(['-', '_', ' '], "")
                        .eq_ignore_ascii_case(&s.replace(['-', '_', ' '], ""))
            })
            .map(|a| format!("{a:?}"))
    });
    violation(
        path,
        ViolationKind::NotAllowed { did_you_mean },
        one_of_text(allowed),
        Some(v),
    )
}

fn one_of_text(allowed: &[Value]) -> String {
    match allowed {
        [one] => format!("exactly {one}"),
        _ => {
            let vals: Vec<String> = allowed.iter().map(Value::to_string).collect();
            format!("one of {}", vals.join(", "))
        }
    }
}

fn length_text(min: Option<u64>, max: Option<u64>, unit: &str) -> String {
    let plural = |n: u64| {
        if n == 1 {
            unit.to_owned()
        } else {
            format!("{unit}s")
        }
    };
    match (min, max) {
        (Some(a), Some(b)) if a == b => format!("exactly {a} {}", plural(a)),
        (Some(a), Some(b)) => format!("{a} to {b} {}", plural(b)),
        (Some(a), None) => format!("at least {a} {}", plural(a)),
        (None, Some(b)) => format!("at most {b} {}", plural(b)),
        (None, None) => format!("any number of {unit}s"),
    }
}

/// What a node accepts, in words: "an integer from 1 to 500", "one of \"harian\", ...".
fn describe(node: &Node, v: &Validator) -> String {
    let node = v.resolve(node);
    if let Some(choices) = &node.choices {
        return one_of_text(choices);
    }
    let Some(types) = node.types else {
        return "a value".into();
    };
    let mut parts = Vec::new();
    let numeric = |word: &str| {
        let lo = node
            .minimum
            .map(|m| (m, ""))
            .or(node.exclusive_minimum.map(|m| (m, "more than ")));
        let hi = node
            .maximum
            .map(|m| (m, ""))
            .or(node.exclusive_maximum.map(|m| (m, "less than ")));
        match (lo, hi) {
            (Some((a, "")), Some((b, ""))) => format!("{word} from {a} to {b}"),
            (Some((a, x)), Some((b, y))) => format!(
                "{word} {}{a} and {}{b}",
                if x.is_empty() { "at least " } else { x },
                if y.is_empty() { "at most " } else { y }
            ),
            (Some((a, "")), None) => format!("{word} of at least {a}"),
            (Some((a, x)), None) => format!("{word} {x}{a}"),
            (None, Some((b, ""))) => format!("{word} of at most {b}"),
            (None, Some((b, y))) => format!("{word} {y}{b}"),
            (None, None) => word.to_owned(),
        }
    };
    if types & NUM == NUM {
        parts.push(numeric("a number"));
    } else if types & INT != 0 {
        parts.push(numeric("an integer"));
    }
    if types & STR != 0 {
        parts.push(match (node.min_length, node.max_length) {
            (None, None) => "a string".to_owned(),
            (a, b) => format!("a string of {}", length_text(a, b, "character")),
        });
    }
    if types & BOOL != 0 {
        parts.push("true or false".into());
    }
    if types & ARR != 0 {
        parts.push(match (node.min_items, node.max_items) {
            (None, None) => "a list".to_owned(),
            (a, b) => format!("a list of {}", length_text(a, b, "item")),
        });
    }
    if types & OBJ != 0 {
        parts.push("an object".into());
    }
    if types & NULL != 0 {
        parts.push("null".into());
    }
    parts.join(" or ")
}

/// The known name closest to `unknown`, if it is close enough to be a likely typo or synonym.
fn closest<'a>(unknown: &str, known: impl Iterator<Item = &'a str>) -> Option<String> {
    let u = unknown.to_lowercase();
    known
        .map(|k| {
            let kl = k.to_lowercase();
            let contained = u.len() >= 3 && (kl.contains(&u) || u.contains(&kl));
            let score = if contained || kl.replace('_', "") == u.replace(['_', '-'], "") {
                1.0
            } else {
                strsim::jaro_winkler(&u, &kl)
            };
            (score, k)
        })
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(schema: Value, mut v: Value) -> (Value, Vec<ViolationKind>) {
        let errs = Validator::new(&schema).unwrap().validate(&mut v);
        (v, errs.iter().map(|e| e.kind.clone()).collect())
    }

    #[test]
    fn integers_compare_exactly_beyond_f64_precision() {
        let s = json!({"type": "integer", "maximum": 9007199254740993u64});
        assert!(check(s.clone(), json!(9007199254740993u64)).1.is_empty());
        assert_eq!(
            check(s, json!(9007199254740994u64)).1,
            [ViolationKind::Range]
        );
    }

    #[test]
    fn integral_floats_are_rewritten_as_integers() {
        let (v, errs) = check(json!({"type": "integer"}), json!(250.0));
        assert!(errs.is_empty());
        assert!(v.is_u64());
        let (v, _) = check(json!({"type": "integer"}), json!(-3.0));
        assert!(v.is_i64());
    }

    #[test]
    fn string_length_counts_characters_not_bytes() {
        let s = json!({"type": "string", "maxLength": 2});
        assert!(check(s.clone(), json!("éé")).1.is_empty());
        assert_eq!(check(s, json!("abc")).1, [ViolationKind::Length]);
    }

    #[test]
    fn exclusive_bounds_exclude_the_bound() {
        let s = json!({"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1});
        assert!(check(s.clone(), json!(0.5)).1.is_empty());
        assert_eq!(check(s.clone(), json!(0)).1, [ViolationKind::Range]);
        assert_eq!(check(s, json!(1.0)).1, [ViolationKind::Range]);
    }

    #[test]
    fn tagged_unions_report_the_errors_of_the_branch_the_tag_names() {
        let s = json!({"oneOf": [
            {"type": "object", "properties": {"status": {"const": "ok"}, "n": {"type": "integer"}}, "required": ["status", "n"], "additionalProperties": false},
            {"type": "object", "properties": {"status": {"const": "gagal"}}, "required": ["status"], "additionalProperties": false}
        ]});
        let errs = Validator::new(&s)
            .unwrap()
            .validate(&mut json!({"status": "ok", "n": "1"}));
        assert_eq!(errs.0.len(), 1);
        assert_eq!(errs.0[0].path.pointer(), "/n");
        assert!(check(s, json!({"status": "gagal"})).1.is_empty());
    }

    #[test]
    fn unsupported_assertions_are_refused_not_ignored() {
        let err = Validator::new(&json!({"type": "object", "patternProperties": {}})).unwrap_err();
        assert!(err.0.contains("patternProperties"));
    }

    #[test]
    fn paths_render_for_people_and_programs() {
        let p = Path(vec![
            Segment::Key("items".into()),
            Segment::Index(0),
            Segment::Key("a/b".into()),
        ]);
        assert_eq!(p.to_string(), "items[0].a/b");
        assert_eq!(p.pointer(), "/items/0/a~1b");
    }
}
