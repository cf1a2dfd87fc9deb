//! Validation at the model/code boundary. The canonical schema is compiled once ([`compile`])
//! into nodes whose rules live in one place ([`node`]); the complete validator ([`check`]) and
//! the single-pass decoder (`crate::decode`) both ask those rules, so they accept the same
//! values. Numbers are compared by value and exactly ([`number`]), text is read exactly
//! ([`parse`]), and every broken rule is reported in words ([`describe`], [`violation`]).

mod check;
mod compile;
mod describe;
mod format;
pub(crate) mod node;
pub(crate) mod number;
pub(crate) mod parse;
mod pattern;
pub(crate) mod violation;

use std::fmt;

pub use compile::SchemaProblem;
pub(crate) use node::{Node, same_name};
pub(crate) use violation::violation;
pub use violation::{Path, Segment, Violation, ViolationKind, Violations};

/// A schema compiled for validation. Built once per tool.
///
/// It accepts what JSON Schema accepts. A call's arguments may ask for one reading more
/// ([`Arguments::null_means_absent`](crate::Arguments::null_means_absent)): `null` at an
/// optional property whose schema does not take null is that property left out (its default
/// applies), for a caller that was shown a schema where such a property takes `null`.
#[derive(Debug)]
pub struct Validator {
    root: Node,
    defs: Vec<Node>,
    /// For a tool's validator: the parameter slot of each root property, when the schema lists
    /// them in another order than the parameters (serde_json without `preserve_order` sorts
    /// them); `None` when the orders agree. Worked out on the first call, from the names.
    slot_order: std::sync::OnceLock<Option<Box<[usize]>>>,
}

/// What `null` at an optional property whose schema does not take `null` means.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Nulls {
    /// A value the schema refuses (JSON Schema's reading).
    #[default]
    Refused,
    /// The property left out: its default applies. What a schema that made every optional
    /// property required and nullable (OpenAI's strict mode) asks a model to send.
    Absent,
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

impl Validator {
    /// The most JSON values arguments may hold for the complete validator to read them. Valid
    /// arguments of any size take the single pass, which builds no tree; arguments it refuses
    /// are read whole to report every violation, at about 100 bytes a value, and past this many
    /// values one [`TooLarge`](ViolationKind::TooLarge) violation says so instead. What a
    /// refused call costs is so bounded by this, not by its size.
    pub const MAX_CHECKED_VALUES: usize = 10_000;

    pub(crate) fn root(&self) -> &Node {
        &self.root
    }

    /// The slot of each root property for a tool whose parameters are `names` (see
    /// `slot_order`); `None` when property `i` is parameter `i`. A property without a parameter
    /// of its name maps past the end, which the decoder refuses.
    #[inline]
    pub(crate) fn slot_order(&self, names: &[&str]) -> Option<&[usize]> {
        self.slot_order
            .get_or_init(|| {
                let props = &self.root.properties;
                if props.len() == names.len() && props.iter().zip(names).all(|(p, n)| p.name == *n)
                {
                    return None;
                }
                let order = props
                    .iter()
                    .map(|p| {
                        names
                            .iter()
                            .position(|n| p.name == *n)
                            .unwrap_or(usize::MAX)
                    })
                    .collect();
                Some(order)
            })
            .as_deref()
    }

    /// The node a `$ref` points to (through a chain of them: a definition may itself be a
    /// `$ref`), or `node` itself. The chain ends: the compiler refuses a cycle.
    #[inline]
    pub(crate) fn resolve<'a>(&'a self, mut node: &'a Node) -> &'a Node {
        while let Some(i) = node.reference {
            node = &self.defs[i];
        }
        node
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

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
    fn a_reference_to_a_reference_is_followed_to_its_rules() {
        let s = json!({
            "$defs": {
                "Outer": {"$ref": "#/$defs/Inner"},
                "Inner": {"$ref": "#/$defs/Nik"},
                "Nik": {"type": "string", "pattern": "^[0-9]{6}$"}
            },
            "type": "object",
            "properties": {"nik": {"$ref": "#/$defs/Outer"}},
            "required": ["nik"]
        });
        assert!(check(s.clone(), json!({"nik": "123456"})).1.is_empty());
        assert_eq!(
            check(s.clone(), json!({"nik": "12345x"})).1,
            [ViolationKind::Pattern]
        );
        assert_eq!(check(s, json!({"nik": 123456})).1, [ViolationKind::Type]);
    }

    #[test]
    fn const_and_enum_together_both_hold() {
        let s = json!({"const": 0, "enum": [true, 0]});
        assert!(check(s.clone(), json!(0)).1.is_empty());
        assert!(!check(s.clone(), json!(true)).1.is_empty());
        // The const's spelling is kept: what serde reads is what the schema wrote.
        let (v, errs) = check(
            json!({"type": "integer", "const": 1, "enum": [1.0]}),
            json!(1),
        );
        assert!(errs.is_empty());
        assert!(v.is_u64());
        // A schema no value satisfies is a mistake, refused when it is compiled.
        for unsatisfiable in [json!({"const": 1, "enum": ["a"]}), json!({"enum": []})] {
            assert!(Validator::new(&unsatisfiable).is_err(), "{unsatisfiable}");
        }
    }

    #[test]
    fn a_union_of_constants_is_a_list_of_choices_only_when_it_says_just_that() {
        // Under `oneOf`, a constant two branches give matches both: never valid.
        let s = json!({"oneOf": [{"const": 1}, {"const": 1.0}, {"const": 2}]});
        assert!(!check(s.clone(), json!(1)).1.is_empty());
        assert!(check(s, json!(2)).1.is_empty());
        let s = json!({"anyOf": [{"const": 1}, {"const": 1}]});
        assert!(check(s, json!(1)).1.is_empty());
        // A branch whose type refuses its constant, or with a bound, is not a plain constant.
        let s =
            json!({"oneOf": [{"const": 1, "type": "string"}, {"const": "a", "description": "A"}]});
        assert!(!check(s.clone(), json!(1)).1.is_empty());
        assert!(check(s, json!("a")).1.is_empty());
        let s = json!({"oneOf": [{"const": 1, "minimum": 2}, {"const": 3}]});
        assert!(!check(s.clone(), json!(1)).1.is_empty());
        assert!(check(s, json!(3)).1.is_empty());
        // A documented constant with the type that takes it (as schemars writes a unit
        // variant) is still a choice: a wrong one is `NotAllowed`, with the nearest named.
        let s = json!({"oneOf": [
            {"type": "string", "const": "harian", "description": "Per hari"},
            {"type": "string", "const": "mingguan"}
        ]});
        assert!(check(s.clone(), json!("harian")).1.is_empty());
        assert_eq!(
            check(s, json!("Harian")).1,
            [ViolationKind::NotAllowed {
                did_you_mean: Some("\"harian\"".into())
            }]
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
    fn numeric_enums_compare_by_value() {
        let s = json!({"type": "integer", "enum": [1, 2]});
        assert!(check(s.clone(), json!(1.0)).1.is_empty());
        assert_eq!(
            check(s, json!(3)).1,
            [ViolationKind::NotAllowed { did_you_mean: None }]
        );
    }

    #[test]
    fn mixed_choices_compare_each_value_by_its_own_type() {
        let s = json!({"enum": ["1", 1, null, true]});
        for ok in [json!("1"), json!(1), json!(1.0), json!(null), json!(true)] {
            assert!(check(s.clone(), ok.clone()).1.is_empty(), "{ok}");
        }
        for bad in [
            json!("true"),
            json!("null"),
            json!(2),
            json!(false),
            json!(""),
        ] {
            let errs = check(s.clone(), bad.clone()).1;
            assert!(
                matches!(errs[..], [ViolationKind::NotAllowed { .. }]),
                "{bad}: {errs:?}"
            );
        }
    }

    #[test]
    fn an_integer_too_large_for_64_bits_is_refused_not_clamped() {
        let s = json!({"type": "integer", "minimum": 0, "maximum": u64::MAX});
        let (v, errs) = check(s, json!(18446744073709551616.0));
        assert_eq!(errs, [ViolationKind::Range]);
        assert!(v.is_f64(), "left as it was: {v}");
    }

    #[test]
    fn text_is_read_exactly() {
        let v =
            Validator::new(&json!({"type": "object", "properties": {"n": {"type": "integer"}}}))
                .unwrap();
        let ok = v
            .validate_text(r#"{"n": 9007199254740993.0}"#, Nulls::Refused)
            .unwrap();
        assert_eq!(ok["n"], json!(9007199254740993u64));
        let errs = v
            .validate_text(r#"{"n": 4503599627370496.5}"#, Nulls::Refused)
            .unwrap_err();
        assert_eq!(errs.0[0].kind, ViolationKind::Type);
        let errs = v
            .validate_text(r#"{"n": 1, "n": 2}"#, Nulls::Refused)
            .unwrap_err();
        assert_eq!(errs.0[0].kind, ViolationKind::Duplicate);
        assert_eq!(
            errs.0[0].to_string(),
            "`n` is given more than once: give each field once"
        );
    }

    #[test]
    fn a_date_is_a_day_of_the_calendar() {
        let s = json!({"type": "string", "format": "date"});
        for ok in ["2026-02-28", "2024-02-29", "2000-02-29", "2026-12-31"] {
            assert!(check(s.clone(), json!(ok)).1.is_empty(), "{ok}");
        }
        for bad in [
            "2026-02-30",
            "2026-99-99",
            "2100-02-29",
            "2026-1-1",
            "26-01-01",
            "2026-01-01T00:00",
        ] {
            assert_eq!(
                check(s.clone(), json!(bad)).1,
                [ViolationKind::Format],
                "{bad}"
            );
        }
        // Formats without a rule here describe and do not assert.
        assert!(
            check(
                json!({"type": "string", "format": "hostname"}),
                json!("-x-")
            )
            .1
            .is_empty()
        );
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
