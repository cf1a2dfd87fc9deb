//! `pattern`, as JSON Schema defines it: an ECMA-262 regular expression with the `u` flag,
//! unanchored. `regress` (an ECMA-262 engine) decides what is a pattern and is the reference for
//! what it matches; a pattern without backreferences or lookaround is translated, exactly, into
//! the `regex` crate's syntax and matched in linear time, so a pattern with nested repetition
//! (`^([a-z]+ ?)+$`) cannot be made to backtrack for minutes by a crafted string. The rest runs
//! on `regress`, a backtracking engine.
//!
//! Where the two syntaxes mean different things, the translation spells ECMA's meaning out:
//! `\d` is `[0-9]` and `\w` `[A-Za-z0-9_]` (ASCII, not Unicode digits and letters), `\s` is
//! ECMA's list of white space and line terminators, `\b` is the ASCII word boundary, `.` stops at
//! the four line terminators, and `\u` escapes (surrogate pairs joined) are code points.

use std::fmt::Write;

/// A compiled `pattern`.
#[derive(Debug)]
pub(crate) struct Pattern {
    source: String,
    engine: Engine,
}

#[derive(Debug)]
enum Engine {
    /// Translated: linear time.
    Linear(regex::Regex),
    /// Backreferences or lookaround: ECMA's own backtracking semantics.
    Backtracking(regress::Regex),
}

impl Pattern {
    /// Compiles an ECMA-262 pattern, or says why it is not one.
    pub(crate) fn new(source: &str) -> Result<Pattern, String> {
        let ecma = regress::Regex::with_flags(source, "u")
            .map_err(|e| format!("not an ECMA-262 regular expression: {e}"))?;
        let engine = match translate(source).and_then(|rust| regex::Regex::new(&rust).ok()) {
            Some(linear) => Engine::Linear(linear),
            None => Engine::Backtracking(ecma),
        };
        Ok(Pattern {
            source: source.to_owned(),
            engine,
        })
    }

    /// The pattern as written.
    pub(crate) fn as_str(&self) -> &str {
        &self.source
    }

    /// Whether the pattern matches anywhere in `text` (JSON Schema patterns are not anchored).
    pub(crate) fn is_match(&self, text: &str) -> bool {
        match &self.engine {
            Engine::Linear(re) => re.is_match(text),
            Engine::Backtracking(re) => re.find(text).is_some(),
        }
    }

    /// Whether the pattern runs in linear time.
    pub(crate) fn is_linear(&self) -> bool {
        matches!(self.engine, Engine::Linear(_))
    }
}

/// ECMA-262's `\s`: white space and line terminators.
const SPACE: &str = r"\t\n\x0B\x0C\r\x20\xA0\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";
/// ECMA-262's `\w` without the `i` flag.
const WORD: &str = "A-Za-z0-9_";
const DIGIT: &str = "0-9";
/// What `.` does not match: the line terminators.
const LINE_TERMINATORS: &str = r"\n\r\x{2028}\x{2029}";

/// `source`, a valid ECMA-262 pattern (`regress` has parsed it), in the `regex` crate's syntax
/// with the same meaning; `None` for what `regex` cannot express (backreferences, lookaround) or
/// this translation does not know, which then runs on `regress`.
fn translate(source: &str) -> Option<String> {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len() * 2);
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' => {
                let (piece, next) = escape(&chars, i + 1, false)?;
                out.push_str(&piece);
                i = next;
                continue;
            }
            '.' => {
                let _ = write!(out, "[^{LINE_TERMINATORS}]");
            }
            '(' => {
                let rest: String = chars[i + 1..].iter().take(4).collect();
                if rest.starts_with("?=")
                    || rest.starts_with("?!")
                    || rest.starts_with("?<=")
                    || rest.starts_with("?<!")
                {
                    return None;
                }
                out.push('(');
            }
            '[' => {
                let (class, next) = class(&chars, i + 1)?;
                out.push_str(&class);
                i = next;
                continue;
            }
            // Syntax that means the same in both: groups, alternation, quantifiers, anchors
            // (without the `m` flag `^` and `$` are the ends of the text in both).
            c @ (')' | '|' | '*' | '+' | '?' | '{' | '}' | ',' | '^' | '$' | '<' | '>' | ':') => {
                out.push(c)
            }
            c if c.is_ascii_alphanumeric() || c == '_' => out.push(c),
            c => literal(&mut out, c),
        }
        i += 1;
    }
    Some(out)
}

/// A character written as a code point, which means itself anywhere.
fn literal(out: &mut String, c: char) {
    let _ = write!(out, "\\x{{{:X}}}", u32::from(c));
}

/// The escape after a backslash at `chars[at..]`: its translation and where it ends. `in_class`
/// for an escape inside `[...]`, where a class escape is a list of ranges and `\b` a backspace.
fn escape(chars: &[char], at: usize, in_class: bool) -> Option<(String, usize)> {
    let c = *chars.get(at)?;
    let set = |ranges: &str, negated: bool| match (in_class, negated) {
        (true, false) => ranges.to_owned(),
        (_, true) => format!("[^{ranges}]"),
        (false, false) => format!("[{ranges}]"),
    };
    let code = |c: u32| {
        let mut s = String::new();
        literal(&mut s, char::from_u32(c)?);
        Some(s)
    };
    let piece = match c {
        'd' => set(DIGIT, false),
        'D' => set(DIGIT, true),
        'w' => set(WORD, false),
        'W' => set(WORD, true),
        's' => set(SPACE, false),
        'S' => set(SPACE, true),
        'b' if in_class => code(0x08)?,
        'b' => r"(?-u:\b)".to_owned(),
        'B' if !in_class => r"(?-u:\B)".to_owned(),
        't' => code(0x09)?,
        'n' => code(0x0A)?,
        'v' => code(0x0B)?,
        'f' => code(0x0C)?,
        'r' => code(0x0D)?,
        '0' => code(0)?,
        'c' => {
            let letter = *chars.get(at + 1)?;
            return Some((code(u32::from(letter) % 32)?, at + 2));
        }
        'x' => {
            let hex: String = chars.get(at + 1..at + 3)?.iter().collect();
            return Some((code(u32::from_str_radix(&hex, 16).ok()?)?, at + 3));
        }
        'u' => {
            let (first, next) = unicode_escape(chars, at + 1)?;
            // A surrogate pair written as two escapes is one code point.
            if (0xD800..0xDC00).contains(&first)
                && chars.get(next) == Some(&'\\')
                && chars.get(next + 1) == Some(&'u')
                && let Some((low, end)) = unicode_escape(chars, next + 2)
                && (0xDC00..0xE000).contains(&low)
            {
                let joined = 0x10000 + ((first - 0xD800) << 10) + (low - 0xDC00);
                return Some((code(joined)?, end));
            }
            // A lone surrogate is no character of a Rust string: `regress` decides.
            return Some((code(first)?, next));
        }
        'p' | 'P' => {
            // `\p{...}`: Unicode properties, spelt as `regex` spells them (it takes ECMA's names).
            let end = at + chars[at..].iter().position(|&c| c == '}')?;
            let body: String = chars[at + 1..=end].iter().collect();
            return Some((format!("\\{c}{body}"), end + 1));
        }
        // Backreferences (`\1`, `\k<name>`): `regress`.
        '1'..='9' | 'k' => return None,
        // An identity escape of a syntax character (or `/`, or `-` in a class).
        c if c.is_ascii_punctuation() => code(u32::from(c))?,
        _ => return None,
    };
    Some((piece, at + 1))
}

/// `XXXX` or `{X...}` after `\u`: the code unit or point, and where it ends.
fn unicode_escape(chars: &[char], at: usize) -> Option<(u32, usize)> {
    if chars.get(at) == Some(&'{') {
        let end = at + chars[at..].iter().position(|&c| c == '}')?;
        let hex: String = chars[at + 1..end].iter().collect();
        return Some((u32::from_str_radix(&hex, 16).ok()?, end + 1));
    }
    let hex: String = chars.get(at..at + 4)?.iter().collect();
    Some((u32::from_str_radix(&hex, 16).ok()?, at + 4))
}

/// The class whose contents start at `chars[at..]` (after `[`): its translation and where it
/// ends (after `]`). Every member is written as a code point, so nothing in it is special to
/// `regex` but the ranges' `-`.
fn class(chars: &[char], mut at: usize) -> Option<(String, usize)> {
    let negated = chars.get(at) == Some(&'^');
    if negated {
        at += 1;
    }
    let mut out = String::from(if negated { "[^" } else { "[" });
    let mut empty = true;
    loop {
        let c = *chars.get(at)?;
        match c {
            ']' => {
                at += 1;
                break;
            }
            '\\' => {
                let (piece, next) = escape(chars, at + 1, true)?;
                out.push_str(&piece);
                at = next;
            }
            // A range's `-` between two members (ECMA takes a `-` first or last as itself).
            '-' if !empty && chars.get(at + 1).is_some_and(|&n| n != ']') => {
                out.push('-');
                at += 1;
                continue;
            }
            c => {
                literal(&mut out, c);
                at += 1;
            }
        }
        empty = false;
    }
    if empty {
        // `[]` matches nothing and `[^]` any character.
        let all = r"\x{0}-\x{10FFFF}";
        let class = if negated {
            format!("[{all}]")
        } else {
            format!("[^{all}]")
        };
        return Some((class, at));
    }
    out.push(']');
    Some((out, at))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, text: &str) -> bool {
        let p = Pattern::new(pattern).unwrap();
        let reference = regress::Regex::with_flags(pattern, "u").unwrap();
        let got = p.is_match(text);
        assert_eq!(
            got,
            reference.find(text).is_some(),
            "{pattern:?} on {text:?}: the translation differs from ECMA-262"
        );
        got
    }

    #[test]
    fn classes_mean_what_ecma_262_says() {
        assert!(matches(r"^\d{4}$", "2026"));
        // Arabic-Indic and fullwidth digits are not `\d` in ECMA-262.
        assert!(!matches(r"^\d{4}$", "١٢٣٤"));
        assert!(!matches(r"^\d{4}$", "１２３４"));
        assert!(!matches(r"^\w+$", "héllo"));
        assert!(matches(r"^\s$", "\u{a0}"));
        assert!(matches(r"^\s$", "\u{feff}"));
        assert!(!matches(r"^\s$", "\u{85}"));
        assert!(matches(r"\bfoo\b", "éfooé"));
        assert!(!matches(r"^.$", "\u{2028}"));
        assert!(matches(r"^.$", "\u{85}"));
        assert!(matches(r"^[^]$", "\n"));
        assert!(!matches(r"[]", "a"));
        assert!(matches(r"^[\d-]+$", "12-3"));
        assert!(matches(r"^[\w.]+@[a-z]+\.id$", "sari.w@kantor.id"));
        assert!(matches(r"^\u{1F600}$", "😀"));
        assert!(matches(r"^\uD83D\uDE00$", "😀"));
        assert!(matches(r"^\p{L}+$", "Ñandú"));
        assert!(matches(r"^\cJ$", "\n"));
        assert!(!matches(r"^a$", "a\n"), "`$` is the end of the text");
        assert!(!matches(r"^abc$", "ABC"), "no case folding without a flag");
    }

    #[test]
    fn backreferences_and_lookaround_run_on_regress() {
        for p in [r"(\w)\1", r"(?<=a)b", r"a(?!b)", r"(?<x>a)\k<x>"] {
            assert!(!Pattern::new(p).unwrap().is_linear(), "{p}");
        }
        assert!(matches(r"(\w)\1", "hello"));
        assert!(!matches(r"(?<=a)b", "cb"));
        assert!(Pattern::new(r"^([a-z]+ ?)+$").unwrap().is_linear());
    }

    #[test]
    fn rust_only_syntax_is_refused() {
        for p in [
            r"(?i)abc",
            r"[[:alpha:]]",
            r"a{,5}",
            r"\A",
            r"(?P<n>a)",
            r"\z",
        ] {
            let e = Pattern::new(p).unwrap_err();
            assert!(e.contains("ECMA-262"), "{p}: {e}");
        }
    }
}
