//! A canonical schema compiled into [`Node`]s, once per tool. A keyword that asserts something
//! and has no rule here is an error, never silently ignored.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::format::Format;
use super::node::{
    ARR, BOOL, Choices, INT, NULL, NUM, Node, OBJ, Prop, STR, Union, json_equals, type_bit,
};
use super::number::Numeric;
use super::pattern::Pattern;
use super::{SchemaError, Validator};

struct Compiler<'a> {
    def_names: HashMap<&'a str, usize>,
    /// Where `$ref`s point from: `"#/$defs/"`, or draft-07's `"#/definitions/"`.
    def_prefix: &'static str,
    problems: Vec<SchemaProblem>,
    /// The `default` and `examples` of every property, checked against the property's own
    /// rules once the schema is compiled.
    values: Vec<Given<'a>>,
    /// Whether a pattern only a backtracking engine runs is a problem (a schema from elsewhere).
    linear_only: bool,
}

/// A value a schema gives for a property: its `default` or one of its `examples`.
struct Given<'a> {
    /// Where the property's schema is (a JSON Pointer).
    at: String,
    name: &'a str,
    schema: &'a Value,
    key: &'static str,
    value: &'a Value,
}

/// One thing a schema asks that the validator cannot enforce exactly: where (a JSON Pointer
/// into the schema, `""` for its root) and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaProblem {
    /// A JSON Pointer (RFC 6901) to the schema object that has the problem.
    pub at: String,
    /// What is wrong there.
    pub what: String,
}

impl std::fmt::Display for SchemaProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.at.is_empty() {
            write!(f, "at the root: {}", self.what)
        } else {
            write!(f, "at `{}`: {}", self.at, self.what)
        }
    }
}

impl Validator {
    /// Compiles a canonical schema (JSON Schema 2020-12, the subset `#[tool]` and
    /// `schemars` produce); the error lists every problem (see [`Validator::compile`]).
    pub fn new(schema: &Value) -> Result<Validator, SchemaError> {
        Validator::compile(schema).map_err(|problems| {
            SchemaError(
                problems
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; "),
            )
        })
    }

    /// Compiles a schema, or lists every keyword it cannot enforce exactly and where: an
    /// unsupported keyword, a malformed value, a `$ref` it cannot resolve (a remote one is
    /// never fetched), a cycle of `$ref`s, rules beside a `$ref`. Nothing is half-checked.
    pub fn compile(schema: &Value) -> Result<Validator, Vec<SchemaProblem>> {
        Validator::compile_with(schema, false)
    }

    /// [`compile`](Self::compile), refusing a `pattern` only a backtracking engine runs when
    /// `linear_only` (see [`ToolDef::linear_patterns_only`](crate::ToolDef::linear_patterns_only)).
    pub(crate) fn compile_with(
        schema: &Value,
        linear_only: bool,
    ) -> Result<Validator, Vec<SchemaProblem>> {
        let empty = Map::new();
        let (defs_key, def_prefix) = match (schema.get("$defs"), schema.get("definitions")) {
            (None, Some(_)) => ("definitions", "#/definitions/"),
            _ => ("$defs", "#/$defs/"),
        };
        let defs_map = schema
            .get(defs_key)
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let mut cx = Compiler {
            def_names: defs_map
                .keys()
                .enumerate()
                .map(|(i, name)| (name.as_str(), i))
                .collect(),
            def_prefix,
            problems: Vec::new(),
            values: Vec::new(),
            linear_only,
        };
        if schema.get(defs_key).is_some_and(|d| !d.is_object()) {
            cx.problem("", format!("`{defs_key}` must be an object"));
        }
        let defs: Vec<Node> = defs_map
            .iter()
            .map(|(name, def)| cx.node(def, &format!("/{defs_key}/{}", escape(name))))
            .collect();
        let root = cx.node(schema, "");
        let given: Vec<(Given, Node)> = std::mem::take(&mut cx.values)
            .into_iter()
            .map(|g| {
                let node = cx.node(g.schema, &g.at);
                (g, node)
            })
            .collect();
        let mut problems = cx.problems;
        problems.extend(cycles(&defs, defs_map, defs_key));
        if !problems.is_empty() {
            return Err(problems);
        }
        let validator = Validator {
            root,
            defs,
            slot_order: std::sync::OnceLock::new(),
        };
        // A default the rules refuse would be handed to the tool as if the model had sent it; an
        // example they refuse teaches the model a value it will be refused for.
        for (g, node) in &given {
            if let Some(first) = validator.check_at(node, g.name, g.value).first() {
                problems.push(SchemaProblem {
                    at: g.at.clone(),
                    what: format!("its {} {} breaks its own rules: {first}", g.key, g.value),
                });
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(validator)
    }
}

/// A default of an integer property written `41.0` is the integer 41, as an argument so written
/// would be: serde, which is stricter than JSON Schema, reads the default too.
fn integral(schema: &Value, default: Value) -> Value {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53: every integer below is exact in an f64
    match (schema.get("type").and_then(Value::as_str), default.as_f64()) {
        (Some("integer"), Some(f)) if default.is_f64() && f.fract() == 0.0 && f.abs() < EXACT => {
            Value::from(f as i64)
        }
        _ => default,
    }
}

/// A JSON Pointer token (RFC 6901): `~` and `/` escaped.
fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Every `$defs` entry that reaches itself through `$ref`s without going into a value (through
/// `$ref`s and union branches only): checking it would never end. A recursive type, whose
/// definition refers to itself inside its properties or items, is fine: the value ends.
fn cycles(defs: &[Node], defs_map: &Map<String, Value>, key: &str) -> Vec<SchemaProblem> {
    // The definitions a value is checked against at the same place in the value.
    fn refs(n: &Node, out: &mut Vec<usize>) {
        out.extend(n.reference);
        if let Some(u) = &n.union {
            u.branches.iter().for_each(|b| refs(b, out));
        }
    }
    let edges: Vec<Vec<usize>> = defs
        .iter()
        .map(|d| {
            let mut out = Vec::new();
            refs(d, &mut out);
            out
        })
        .collect();
    let names: Vec<&String> = defs_map.keys().collect();
    on_cycle(&edges)
        .into_iter()
        .enumerate()
        .filter(|&(_, cyclic)| cyclic)
        .map(|(d, _)| SchemaProblem {
            at: format!("/{key}/{}", escape(names[d])),
            what: "it refers to itself through `$ref` without going into a property or an item, so no value can be checked against it"
                .into(),
        })
        .collect()
}

/// Which nodes of `edges` lie on a cycle (a self-reference included): Tarjan's strongly
/// connected components in one pass, kept on a stack of its own, so a schema's chain of
/// thousands of definitions (a remote's) costs neither quadratic time nor a deep recursion.
fn on_cycle(edges: &[Vec<usize>]) -> Vec<bool> {
    const UNSEEN: usize = usize::MAX;
    let n = edges.len();
    let (mut index, mut low) = (vec![UNSEEN; n], vec![0; n]);
    let mut on_stack = vec![false; n];
    let mut cyclic = vec![false; n];
    let (mut stack, mut next) = (Vec::new(), 0);
    for root in 0..n {
        if index[root] != UNSEEN {
            continue;
        }
        // Each node being explored, with the next of its edges to follow.
        let mut work = vec![(root, 0)];
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(top) = work.last_mut() {
            let v = top.0;
            if let Some(&w) = edges[v].get(top.1) {
                top.1 += 1;
                if w >= n {
                    continue;
                }
                if index[w] == UNSEEN {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 || edges[v].contains(&v) {
                    component.into_iter().for_each(|w| cyclic[w] = true);
                }
            }
        }
    }
    cyclic
}

impl<'a> Compiler<'a> {
    fn problem(&mut self, at: &str, what: impl Into<String>) {
        self.problems.push(SchemaProblem {
            at: at.to_owned(),
            what: what.into(),
        });
    }

    /// `r`'s value, or `None` with its problem recorded.
    fn ok<T>(&mut self, at: &str, r: Result<T, SchemaError>) -> Option<T> {
        r.map_err(|e| self.problem(at, e.0)).ok()
    }

    fn node(&mut self, schema: &'a Value, at: &str) -> Node {
        let obj = match schema {
            Value::Bool(true) => return Node::default(),
            Value::Object(o) => o,
            other => {
                self.problem(at, format!("unsupported schema `{other}`"));
                return Node::default();
            }
        };
        let mut n = Node::default();
        let mut enumerated: Option<Vec<Value>> = None;
        let mut constant: Option<Value> = None;
        let mut branch_schemas: Option<&Vec<Value>> = None;
        let mut branches: Option<(Vec<Node>, bool)> = None;
        let mut required: Vec<&str> = Vec::new();
        // Keywords that assert something, for the check that nothing sits beside a `$ref`.
        let mut asserting = Vec::new();
        for (key, val) in obj {
            let k = key.as_str();
            if !describes_only(k) && k != "$ref" {
                asserting.push(k);
            }
            match k {
                "type" => {
                    let mut mask = 0;
                    let names: Vec<&Value> = match val {
                        Value::Array(a) => a.iter().collect(),
                        one => vec![one],
                    };
                    for t in names {
                        match t.as_str().and_then(type_bit) {
                            Some(bit) => mask |= bit,
                            None => self.problem(at, bad(key, val).0),
                        }
                    }
                    n.types = Some(mask);
                }
                // Both may be given: a value must satisfy both, so they meet (below).
                "enum" => match val.as_array() {
                    Some(a) => enumerated = Some(a.clone()),
                    None => self.problem(at, bad(key, val).0),
                },
                "const" => constant = Some(val.clone()),
                "oneOf" | "anyOf" => {
                    if branches.is_some() {
                        self.problem(
                            at,
                            "a schema with both `oneOf` and `anyOf` is not supported",
                        );
                        continue;
                    }
                    branches = Some((self.list(key, val, at), key == "oneOf"));
                    branch_schemas = val.as_array();
                }
                "minimum" => n.minimum = self.ok(at, number(key, val)),
                "maximum" => n.maximum = self.ok(at, number(key, val)),
                "exclusiveMinimum" => n.exclusive_minimum = self.ok(at, number(key, val)),
                "exclusiveMaximum" => n.exclusive_maximum = self.ok(at, number(key, val)),
                "minLength" => n.min_length = self.ok(at, count(key, val)),
                "maxLength" => n.max_length = self.ok(at, count(key, val)),
                "minItems" => n.min_items = self.ok(at, count(key, val)),
                "maxItems" => n.max_items = self.ok(at, count(key, val)),
                "pattern" => match val.as_str() {
                    Some(p) => match Pattern::new(p) {
                        Ok(re) if self.linear_only && !re.is_linear() => self.problem(
                            at,
                            format!(
                                "`pattern` {p:?} needs a backtracking engine (a backreference or \
                                 lookaround), which a crafted string can keep busy for minutes: \
                                 refused in a schema from elsewhere"
                            ),
                        ),
                        Ok(re) => n.pattern = Some(re),
                        Err(e) => self.problem(at, format!("invalid `pattern` {p:?}: {e}")),
                    },
                    None => self.problem(at, bad(key, val).0),
                },
                "items" => n.items = Some(Box::new(self.node(val, &format!("{at}/items")))),
                "additionalProperties" => match val {
                    Value::Bool(b) => n.closed = !b,
                    _ => self.problem(at, "`additionalProperties` must be a boolean"),
                },
                "required" => match val.as_array() {
                    Some(names) => required = names.iter().filter_map(Value::as_str).collect(),
                    None => self.problem(at, bad(key, val).0),
                },
                "properties" => match val.as_object() {
                    Some(props) => {
                        for (name, s) in props {
                            let here = format!("{at}/properties/{}", escape(name));
                            let node = self.node(s, &here);
                            let examples = s.get("examples").and_then(Value::as_array);
                            let given = s
                                .get("default")
                                .map(|d| ("default", d))
                                .into_iter()
                                .chain(examples.into_iter().flatten().map(|e| ("example", e)));
                            for (key, value) in given {
                                self.values.push(Given {
                                    at: here.clone(),
                                    name,
                                    schema: s,
                                    key,
                                    value,
                                });
                            }
                            n.properties.push(Prop {
                                name: name.clone(),
                                node,
                                default: s.get("default").cloned().map(|d| integral(s, d)),
                                required: false,
                            });
                        }
                    }
                    None => self.problem(at, bad(key, val).0),
                },
                "$ref" => {
                    let Some(r) = val.as_str() else {
                        self.problem(at, bad(key, val).0);
                        continue;
                    };
                    match r
                        .strip_prefix(self.def_prefix)
                        .and_then(|name| self.def_names.get(name))
                    {
                        Some(i) => n.reference = Some(*i),
                        None if !r.starts_with('#') => self.problem(
                            at,
                            format!(
                                "the remote `$ref` {r:?} is not fetched: only `{}…` is resolved",
                                self.def_prefix
                            ),
                        ),
                        None => self.problem(at, format!("unresolved `$ref` {r:?}")),
                    }
                }
                "format" => n.format = val.as_str().and_then(Format::of),
                // A date's first and last day (the `formatMinimum`/`formatMaximum` of JSON Schema's
                // format-assertion vocabulary, as ajv names them); checked with `format: date`.
                "formatMinimum" | "formatMaximum" => match val.as_str() {
                    Some(day) if key == "formatMinimum" => n.first_day = Some(day.to_owned()),
                    Some(day) => n.last_day = Some(day.to_owned()),
                    None => self.problem(at, bad(key, val).0),
                },
                k if describes_only(k) => {}
                other => self.problem(
                    at,
                    format!("the keyword `{other}` is not supported by the argument validator"),
                ),
            }
        }
        if n.reference.is_some() && !asserting.is_empty() {
            self.problem(
                at,
                format!(
                    "rules beside `$ref` ({}) are not supported: move them into the definition",
                    asserting
                        .iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
        if (n.first_day.is_some() || n.last_day.is_some()) && n.format != Some(Format::Date) {
            self.problem(
                at,
                "`formatMinimum`/`formatMaximum` are supported on `format: date` only",
            );
        }
        for (i, p) in n.properties.iter_mut().enumerate() {
            p.required = required.contains(&p.name.as_str());
            if p.required && i < 64 {
                n.required_bits |= 1 << i;
            }
        }
        n.required_unknown = required
            .iter()
            .filter(|r| !n.properties.iter().any(|p| p.name == **r))
            .map(|r| (*r).to_owned())
            .collect();
        let allowed = match (enumerated, constant) {
            (Some(values), Some(c)) if values.iter().any(|v| json_equals(v, &c)) => Some(vec![c]),
            (Some(_), Some(_)) => {
                self.problem(at, "no value is both the `const` and one of the `enum`");
                None
            }
            (Some(values), None) if values.is_empty() => {
                self.problem(at, "an empty `enum` allows no value");
                None
            }
            (values, c) => values.or(c.map(|c| vec![c])),
        };
        // A union whose every branch is one constant and nothing else is a list of choices (a
        // documented enum). Under `oneOf`, a value two branches give matches two branches: it is
        // no choice at all.
        let union_consts: Option<Vec<Value>> = branches.as_ref().and_then(|(bs, exactly_one)| {
            let schemas = branch_schemas?;
            let consts: Vec<Value> = bs
                .iter()
                .zip(schemas)
                .map(|(b, schema)| match &b.choices {
                    Some(c)
                        if c.len() == 1
                            && b.reference.is_none()
                            && only_a_constant(schema)
                            && b.admits(json_type(&c[0])) =>
                    {
                        Some(c[0].clone())
                    }
                    _ => None,
                })
                .collect::<Option<_>>()?;
            let once = |c: &Value| consts.iter().filter(|d| json_equals(c, d)).count() == 1;
            Some(
                consts
                    .iter()
                    .filter(|c| !exactly_one || once(c))
                    .cloned()
                    .collect(),
            )
        });
        n.choices = match (allowed, union_consts) {
            (Some(a), _) => Some(a),
            (None, Some(c)) if !c.is_empty() => {
                branches = None;
                Some(c)
            }
            _ => None,
        }
        .map(Choices::new);
        n.union = branches.map(|(branches, exactly_one)| Union {
            branches,
            exactly_one,
        });
        n.integer_range = n.integer_range();
        n
    }

    fn list(&mut self, key: &str, val: &'a Value, at: &str) -> Vec<Node> {
        let Some(items) = val.as_array() else {
            self.problem(at, bad(key, val).0);
            return Vec::new();
        };
        items
            .iter()
            .enumerate()
            .map(|(i, s)| self.node(s, &format!("{at}/{key}/{i}")))
            .collect()
    }
}

/// Whether a schema says only "this one value" (`const`, or a one-value `enum`), with its
/// `type` and annotations: a branch that also asks a bound or a length is not a plain constant.
/// (Whether the `type` takes the value is asked of the compiled branch.)
fn only_a_constant(schema: &Value) -> bool {
    schema.as_object().is_some_and(|o| {
        o.keys()
            .all(|k| matches!(k.as_str(), "const" | "enum" | "type") || describes_only(k))
    })
}

/// Keywords that describe and assert nothing: annotations, and where definitions live (`$defs`
/// are compiled apart).
fn describes_only(k: &str) -> bool {
    matches!(
        k,
        "description"
            | "title"
            | "default"
            | "examples"
            | "$defs"
            | "definitions"
            | "$schema"
            | "$id"
            | "$comment"
            | "deprecated"
            | "readOnly"
            | "writeOnly"
    )
}

/// The JSON type of a value, as a type bit (an integral number is an integer).
fn json_type(v: &Value) -> u8 {
    match v {
        Value::Null => NULL,
        Value::Bool(_) => BOOL,
        Value::Number(n) if Numeric::of(n).is_integer() => INT,
        Value::Number(_) => NUM,
        Value::String(_) => STR,
        Value::Array(_) => ARR,
        Value::Object(_) => OBJ,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Exactly the definitions on a cycle are found: a ring, a self-reference, and not what
    /// only points into a ring or along a long chain (read in one pass, without recursion).
    #[test]
    fn the_definitions_on_a_cycle_and_only_those() {
        // 0 → 1 → 2 → 0 (a ring); 3 → 0 (into it); 4 → 4 (itself); 5 → 6 → ... (a chain).
        let mut edges = vec![vec![1], vec![2], vec![0], vec![0], vec![4]];
        let chain = 100_000;
        for d in 5..5 + chain {
            edges.push(if d + 1 < 5 + chain {
                vec![d + 1]
            } else {
                vec![]
            });
        }
        let cyclic = on_cycle(&edges);
        let found: Vec<usize> = (0..edges.len()).filter(|&d| cyclic[d]).collect();
        assert_eq!(found, [0, 1, 2, 4]);
        // The chain closed into a ring: every one of its definitions is on it.
        let last = edges.len() - 1;
        edges[last] = vec![5];
        let cyclic = on_cycle(&edges);
        assert_eq!(cyclic.iter().filter(|&&c| c).count(), 4 + chain);
    }
}
