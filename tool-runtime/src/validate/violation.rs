//! What a broken rule is reported as: where, what was expected, what was received; and the
//! repair message the model gets for a list of them.

use std::fmt;

use serde_json::Value;

/// One segment of a path into the arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    /// A field of an object, by name.
    Key(String),
    /// An item of a list, counted from 0.
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
    NotAllowed {
        /// The allowed value a string received differs from only in case or in `-`, `_` and
        /// spaces, as JSON (`"nasi_kotak"`).
        did_you_mean: Option<String>,
    },
    /// Outside `minimum`/`maximum`.
    Range,
    /// String length or list size outside its bounds.
    Length,
    /// Does not match `pattern`.
    Pattern,
    /// Not of the `format` asserted (a `date` that is not in the calendar).
    Format,
    /// A required argument or field is absent.
    Missing,
    /// A field the schema does not have.
    Unknown {
        /// The known field closest to the name received, when one is close enough.
        did_you_mean: Option<String>,
    },
    /// Matches none of the alternatives of a union.
    NoAlternative,
    /// Passed the schema but the Rust type still refused it.
    Decode,
    /// Breaks a business rule of the type (`#[arg(validate = ..)]`).
    Rule,
    /// The same field given more than once: which one was meant cannot be known.
    Duplicate,
    /// Arguments that the single pass refused and that hold more values than the complete
    /// validator reads ([`MAX_CHECKED_VALUES`](crate::Validator::MAX_CHECKED_VALUES)): nothing
    /// else was checked.
    TooLarge,
}

/// One broken rule: where, what was expected, what was received.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    /// Where the value is (for a missing or unknown field, where it would be).
    pub path: Path,
    /// What kind of rule it broke.
    pub kind: ViolationKind,
    /// What the rule wants, in words for the model (`an integer from 1 to 500`).
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
            (ViolationKind::Duplicate, _) => {
                write!(f, "`{path}` is given more than once: {}", self.expected)
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

/// All violations of one call, in document order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Violations(pub Vec<Violation>);

impl Violations {
    /// Whether there are none: the arguments are valid.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many rules were broken.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The violations, in document order.
    pub fn iter(&self) -> std::slice::Iter<'_, Violation> {
        self.0.iter()
    }
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
pub(crate) fn render(v: &Value) -> String {
    let mut s = v.to_string();
    if s.chars().count() > 80 {
        s = s.chars().take(77).collect::<String>() + "...";
    }
    match v {
        Value::Null => s,
        _ => format!("{s} ({})", json_type_name(v)),
    }
}

/// A key given twice at `path`: the value parsed keeps one copy, the text the other, so
/// neither is taken.
pub(crate) fn given_twice(path: &[Segment]) -> Violation {
    violation(
        path,
        ViolationKind::Duplicate,
        "give each field once".into(),
        None,
    )
}

pub(crate) fn violation(
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
