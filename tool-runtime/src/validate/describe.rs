//! What a node accepts, in words, for the repair message: "an integer from 1 to 500",
//! "one of \"daily\", \"weekly\"", "a string of 1 to 64 characters".

use serde_json::Value;

use super::Validator;
use super::format::Format;
use super::node::{ARR, BOOL, INT, NULL, NUM, Node, OBJ, STR};

pub(crate) fn one_of_text(allowed: &[Value]) -> String {
    match allowed {
        [one] => format!("exactly {one}"),
        _ => {
            let vals: Vec<String> = allowed.iter().map(Value::to_string).collect();
            format!("one of {}", vals.join(", "))
        }
    }
}

pub(crate) fn length_text(min: Option<u64>, max: Option<u64>, unit: &str) -> String {
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

/// What a node accepts, in words.
pub(crate) fn describe(node: &Node, v: &Validator) -> String {
    let node = v.resolve(node);
    if let Some(choices) = &node.choices {
        return one_of_text(choices);
    }
    let types = match (node.types, &node.union) {
        (Some(t), _) => t,
        (None, Some(u)) => {
            let alts: Vec<String> = u.branches.iter().map(|b| describe(b, v)).collect();
            return alts.join(", or ");
        }
        (None, None) => return "a value".into(),
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
        parts.push(match (node.min_length, node.max_length, node.format) {
            (_, _, Some(Format::Date)) => match (&node.first_day, &node.last_day) {
                (Some(a), Some(b)) => format!("a date from {a} to {b}, written YYYY-MM-DD"),
                (Some(a), None) => format!("a date on or after {a}, written YYYY-MM-DD"),
                (None, Some(b)) => format!("a date on or before {b}, written YYYY-MM-DD"),
                (None, None) => "a date written YYYY-MM-DD".to_owned(),
            },
            (_, _, Some(f)) => f.words().to_owned(),
            (None, None, None) => "a string".to_owned(),
            (a, b, None) => format!("a string of {}", length_text(a, b, "character")),
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
pub(crate) fn closest<'a>(unknown: &str, known: impl Iterator<Item = &'a str>) -> Option<String> {
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

/// A did-you-mean for a string that is not one of the allowed strings: the same letters in
/// another case or with other separators.
pub(crate) fn near_choice(s: &str, allowed: &[Value]) -> Option<String> {
    let squash = |x: &str| x.replace(['-', '_', ' '], "");
    allowed
        .iter()
        .filter_map(Value::as_str)
        .find(|a| a.eq_ignore_ascii_case(s) || squash(a).eq_ignore_ascii_case(&squash(s)))
        .map(|a| format!("{a:?}"))
}
