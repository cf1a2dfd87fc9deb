//! The complete validator: walks a whole `Value`, asks the node's rules at every position and
//! reports every violation with its path, what was expected and what was received. It also
//! normalises what JSON Schema calls equal (`250.0` is the integer `250`) and fills in declared
//! defaults, so that serde only ever sees values the schema accepts.

use serde_json::{Map, Value};

use super::describe::{closest, describe, length_text, near_choice, one_of_text};
use super::node::{self, ARR, Broken, Members, Missing, Node, OBJ, Scalar, Union};
use super::number::Numeric;
use super::parse;
use super::violation::{Segment, Violation, ViolationKind, Violations, given_twice, violation};
use super::{Nulls, Validator, ViolationKind::Syntax};

/// One walk over a value: the schema, and the numbers its `Value` cannot hold as written (from
/// [`parse::exact`]; none for values that came already parsed).
struct Walk<'a> {
    v: &'a Validator,
    inexact: &'a [(Vec<Segment>, Numeric)],
    nulls: Nulls,
}

impl Validator {
    /// Checks `value` in place (normalising integral floats, filling defaults) and returns every
    /// violation found.
    pub fn validate(&self, value: &mut Value) -> Violations {
        self.validate_reading(value, Nulls::Refused)
    }

    /// [`Validator::validate`], with `null` at an optional property read as `nulls` says.
    pub(crate) fn validate_reading(&self, value: &mut Value, nulls: Nulls) -> Violations {
        let mut out = Vec::new();
        let walk = Walk {
            v: self,
            inexact: &[],
            nulls,
        };
        walk.check(&self.root, value, &mut Vec::new(), &mut out);
        Violations(out)
    }

    /// The violations of `value` as property `name` checked against `node` (a node of this
    /// validator's schema).
    pub(crate) fn check_at(&self, node: &Node, name: &str, value: &Value) -> Vec<Violation> {
        let mut out = Vec::new();
        let walk = Walk {
            v: self,
            inexact: &[],
            nulls: Nulls::Refused,
        };
        let mut value = value.clone();
        walk.check(
            node,
            &mut value,
            &mut vec![Segment::Key(name.to_owned())],
            &mut out,
        );
        out
    }

    /// Parses JSON text exactly (numbers by their own digits, a key given twice reported) and
    /// validates it, `null` at an optional property read as `nulls` says: the value,
    /// normalised and with defaults, or every violation.
    pub(crate) fn validate_text(&self, text: &str, nulls: Nulls) -> Result<Value, Violations> {
        // The complete validator reads the text into a tree (about 100 bytes a value): past a
        // bound, one violation says so and no tree is built.
        let values = parse::shape(text.as_bytes()).values;
        if values > Self::MAX_CHECKED_VALUES {
            return Err(Violations(vec![Violation {
                path: Default::default(),
                kind: ViolationKind::TooLarge,
                expected: format!(
                    "arguments of at most {} JSON values (send only what the tool needs)",
                    Self::MAX_CHECKED_VALUES
                ),
                received: Some(format!("{values} values")),
            }]));
        }
        let parsed = parse::exact(text).map_err(|e| {
            Violations(vec![Violation {
                path: Default::default(),
                kind: Syntax,
                expected: "the arguments must be one JSON object".into(),
                received: Some(format!("text that is not valid JSON ({e})")),
            }])
        })?;
        let mut value = parsed.value;
        let mut out: Vec<Violation> = parsed
            .duplicates
            .into_iter()
            .map(|path| given_twice(&path))
            .collect();
        let walk = Walk {
            v: self,
            inexact: &parsed.inexact,
            nulls,
        };
        walk.check(&self.root, &mut value, &mut Vec::new(), &mut out);
        if out.is_empty() {
            Ok(value)
        } else {
            Err(Violations(out))
        }
    }

    /// Checks one node of the schema, as `validate` does for the root; true when it holds.
    pub(crate) fn holds(&self, node: &Node, value: &mut Value) -> bool {
        let mut out = Vec::new();
        let walk = Walk {
            v: self,
            inexact: &[],
            nulls: Nulls::Refused,
        };
        walk.check(node, value, &mut Vec::new(), &mut out);
        out.is_empty()
    }
}

impl Walk<'_> {
    fn check(&self, node: &Node, v: &mut Value, path: &mut Vec<Segment>, out: &mut Vec<Violation>) {
        let node = self.v.resolve(node);
        match v {
            Value::Array(_) => {
                if !node.admits(ARR) {
                    return out.push(self.broken(node, Broken::Type, path, v));
                }
                if !node.allows_value(v) {
                    return out.push(self.broken(node, Broken::NotAllowed, path, v));
                }
                let Value::Array(items) = v else { return };
                if node.check_count(items.len() as u64).is_err() {
                    let what = length_text(node.min_items, node.max_items, "item");
                    let e = format!("a list of {what}");
                    out.push(violation(path, ViolationKind::Length, e, Some(v)));
                } else if let Some(item) = &node.items {
                    for (i, x) in items.iter_mut().enumerate() {
                        path.push(Segment::Index(i));
                        self.check(item, x, path, out);
                        path.pop();
                    }
                }
            }
            Value::Object(_) => {
                if !node.admits(OBJ) {
                    return out.push(self.broken(node, Broken::Type, path, v));
                }
                if !node.allows_value(v) {
                    return out.push(self.broken(node, Broken::NotAllowed, path, v));
                }
                if let Value::Object(map) = v {
                    self.check_object(node, map, path, out);
                }
            }
            _ => {
                let n = self.number(v, path);
                if node.integers_only()
                    && let Some(n) = n
                {
                    normalise_integral(v, n);
                }
                let s = match &*v {
                    Value::Null => Scalar::Null,
                    Value::Bool(b) => Scalar::Bool(*b),
                    Value::String(s) => Scalar::Str(s),
                    _ => Scalar::Number(n.unwrap_or(Numeric::Float(f64::NAN))),
                };
                if let Err(broken) = node.check_scalar(s) {
                    return out.push(self.broken(node, broken, path, v));
                }
                // A number equal to one of the choices (`1.0` for `1`) is handed on in the
                // choice's own spelling, which is what serde is written to read.
                if let (Some(choices), Value::Number(_)) = (&node.choices, &*v)
                    && let Some(c) = choices.iter().find(|c| node::json_equals(v, c))
                {
                    *v = c.clone();
                }
            }
        }
        if let Some(union) = &node.union {
            self.check_union(union, v, path, out);
        }
    }

    /// The number at `path`, as exactly as its source allows.
    fn number(&self, v: &Value, path: &[Segment]) -> Option<Numeric> {
        let Value::Number(n) = v else { return None };
        let written = self.inexact.iter().find(|(p, _)| p == path);
        Some(written.map_or_else(|| Numeric::of(n), |(_, exact)| *exact))
    }

    /// The violation for a broken rule, in words.
    fn broken(&self, node: &Node, broken: Broken, path: &[Segment], v: &Value) -> Violation {
        match broken {
            Broken::Type => violation(path, ViolationKind::Type, describe(node, self.v), Some(v)),
            Broken::Range => violation(path, ViolationKind::Range, describe(node, self.v), Some(v)),
            Broken::NotAllowed => {
                let allowed = node.choices.as_deref().unwrap_or_default();
                let did_you_mean = v.as_str().and_then(|s| near_choice(s, allowed));
                violation(
                    path,
                    ViolationKind::NotAllowed { did_you_mean },
                    one_of_text(allowed),
                    Some(v),
                )
            }
            Broken::Length => {
                let what = length_text(node.min_length, node.max_length, "character");
                violation(
                    path,
                    ViolationKind::Length,
                    format!("a string of {what}"),
                    Some(v),
                )
            }
            Broken::Format => violation(
                path,
                ViolationKind::Format,
                "a date that exists in the calendar, written YYYY-MM-DD".into(),
                Some(v),
            ),
            // Members are checked by `check_object`, never as a scalar.
            Broken::Unknown | Broken::Duplicate => {
                violation(path, ViolationKind::Type, describe(node, self.v), Some(v))
            }
            Broken::Pattern => {
                let re = node
                    .pattern
                    .as_ref()
                    .map(|r| r.as_str())
                    .unwrap_or_default();
                let e = format!("a string matching the pattern `{re}`");
                violation(path, ViolationKind::Pattern, e, Some(v))
            }
        }
    }

    fn check_object(
        &self,
        node: &Node,
        map: &mut Map<String, Value>,
        path: &mut Vec<Segment>,
        out: &mut Vec<Violation>,
    ) {
        // Where the caller was shown a schema in which every optional property takes null
        // (OpenAI's strict mode), `null` for one whose own schema does not means it was left
        // out (its default applies).
        if self.nulls == Nulls::Absent && map.values().any(Value::is_null) {
            map.retain(|key, value| {
                !value.is_null()
                    || !node.properties.iter().any(|p| {
                        p.name == *key && !p.required && !self.v.holds(&p.node, &mut Value::Null)
                    })
            });
        }
        let mut members = Members::new(node);
        let mut unknown = Vec::new();
        for key in map.keys() {
            // A parsed map has no key twice (a duplicate in text is reported by `parse`).
            if members.key(key) == Err(Broken::Unknown) {
                let names = node.properties.iter().map(|p| p.name.as_str());
                let did_you_mean = closest(key, names);
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
                let kind = ViolationKind::Unknown { did_you_mean };
                unknown.push(violation(path, kind, expected, None));
                path.pop();
            }
        }
        for missing in members.missing() {
            let (name, expected) = match missing {
                Missing::Property(i) => {
                    let p = &node.properties[i];
                    (p.name.as_str(), describe(&p.node, self.v))
                }
                Missing::Unknown(name) => (name, "a value".to_owned()),
            };
            path.push(Segment::Key(name.to_owned()));
            out.push(violation(path, ViolationKind::Missing, expected, None));
            path.pop();
        }
        out.extend(unknown);
        for p in &node.properties {
            if let Some(x) = map.get_mut(&p.name) {
                path.push(Segment::Key(p.name.clone()));
                self.check(&p.node, x, path, out);
                path.pop();
            }
        }
        for (i, default) in members.defaults(0) {
            map.insert(node.properties[i].name.clone(), default.clone());
        }
    }

    fn check_union(
        &self,
        union: &Union,
        v: &mut Value,
        path: &mut Vec<Segment>,
        out: &mut Vec<Violation>,
    ) {
        let mut matched: Option<Value> = None;
        let mut matches = 0;
        let mut tagged: Option<Vec<Violation>> = None;
        for b in &union.branches {
            let mut candidate = v.clone();
            let mut errs = Vec::new();
            self.check(b, &mut candidate, path, &mut errs);
            if errs.is_empty() {
                matches += 1;
                if matched.is_none() {
                    matched = Some(candidate);
                }
                if !union.exactly_one {
                    break;
                }
            } else if tagged.is_none() && self.tag_matches(b, v) {
                tagged = Some(errs);
            }
        }
        match (matches, matched) {
            (1, Some(m)) => *v = m,
            (n, Some(m)) if !union.exactly_one || n == 0 => *v = m,
            (_, Some(_)) => out.push(violation(
                path,
                ViolationKind::NoAlternative,
                "a value that matches exactly one alternative".into(),
                Some(v),
            )),
            (_, None) => match tagged {
                Some(errs) => out.extend(errs),
                None => {
                    let alts: Vec<String> =
                        union.branches.iter().map(|b| describe(b, self.v)).collect();
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

    /// Whether `v` carries the discriminating constant of branch `b` (a serde tag, internal or
    /// adjacent), or is `b`'s single key (serde's default, external form: `{"Baz": {..}}`).
    fn tag_matches(&self, b: &Node, v: &Value) -> bool {
        let b = self.v.resolve(b);
        let Value::Object(map) = v else { return false };
        if let [only] = b.properties.as_slice()
            && b.closed
            && b.required_bits == 1
            && map.len() == 1
            && map.contains_key(&only.name)
        {
            return true;
        }
        b.properties.iter().any(|p| {
            let node = self.v.resolve(&p.node);
            matches!(&node.choices, Some(c) if c.len() == 1 && map.get(&p.name) == Some(&c[0]))
        })
    }
}

/// JSON Schema: "a number with a zero fractional part is an integer". Rewrite `250.0` as `250`
/// so that serde, which is stricter, reads what the schema accepts; an integer serde's 64 bits
/// cannot hold stays as it is, and the node's range or serde refuses it.
fn normalise_integral(v: &mut Value, n: Numeric) {
    if !v.as_number().is_some_and(serde_json::Number::is_f64) {
        return;
    }
    match n.as_64_bit() {
        Some(Ok(i)) => *v = Value::from(i),
        Some(Err(u)) => *v = Value::from(u),
        None => {}
    }
}
