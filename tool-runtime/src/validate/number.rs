//! Numbers as JSON Schema compares them: by value, whatever their spelling (`250`, `250.0` and
//! `2.5e2` are one integer), and exactly, never through a rounding that changes the answer.

use std::cmp::Ordering;
use std::fmt;

/// A JSON number.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Numeric {
    /// An integer, exactly (also when written `2.5e2`).
    Int(i128),
    /// Any other number as the nearest `f64`: a fraction, or an integer beyond `i128`.
    Float(f64),
    /// A number written with a fraction (`4503599627370496.5`) whose nearest `f64` has none: not
    /// an integer, whatever the `f64` says.
    Fraction(f64),
    /// An integer beyond `i128` (at least 2^127 from zero), as its nearest `f64` and which
    /// side of it the integer is on: a bound equal to that `f64` is compared exactly.
    Huge {
        /// The nearest `f64`.
        nearest: f64,
        /// The integer compared with `nearest`.
        side: Ordering,
    },
}

const TWO_127: f64 = 1.7014118346046923e38; // 2^127

impl Numeric {
    /// A number serde_json has parsed: exact for its integers; an integral `f64` within `i128` is
    /// the integer it is exactly.
    pub(crate) fn of(n: &serde_json::Number) -> Numeric {
        if let Some(i) = n.as_i64() {
            Numeric::Int(i as i128)
        } else if let Some(u) = n.as_u64() {
            Numeric::Int(u as i128)
        } else {
            Numeric::of_f64(n.as_f64().unwrap_or(f64::NAN))
        }
    }

    pub(crate) fn of_f64(f: f64) -> Numeric {
        if f.fract() == 0.0 && f.abs() < TWO_127 {
            Numeric::Int(f as i128)
        } else {
            Numeric::Float(f)
        }
    }

    /// A JSON number literal read from its own text: an integral value exactly (even written
    /// with a fraction or an exponent), anything else as the nearest `f64`. `None` when `text`
    /// is not a number literal.
    pub(crate) fn read(text: &str) -> Option<Numeric> {
        // The common spelling, digits alone, needs no more than this.
        let digits = text.strip_prefix('-').unwrap_or(text);
        if !digits.is_empty() && digits.len() < 39 && digits.bytes().all(|b| b.is_ascii_digit()) {
            return text.parse().ok().map(Numeric::Int);
        }
        let lit = Literal::parse(text)?;
        let nearest = || text.parse::<f64>().ok().filter(|f| f.is_finite());
        if lit.integral() {
            return Some(match lit.to_i128() {
                Some(i) => Numeric::Int(i),
                None => {
                    let nearest = nearest()?;
                    Numeric::Huge {
                        nearest,
                        side: lit.cmp_integral(nearest),
                    }
                }
            });
        }
        let f = nearest()?;
        Some(if f.fract() == 0.0 {
            Numeric::Fraction(f)
        } else {
            Numeric::Float(f)
        })
    }

    /// Whether JSON Schema calls it an integer.
    pub(crate) fn is_integer(self) -> bool {
        match self {
            Numeric::Int(_) | Numeric::Huge { .. } => true,
            Numeric::Float(f) => f.fract() == 0.0,
            Numeric::Fraction(_) => false,
        }
    }

    #[inline]
    pub(crate) fn as_f64(self) -> f64 {
        match self {
            Numeric::Int(i) => i as f64,
            Numeric::Float(f) | Numeric::Fraction(f) | Numeric::Huge { nearest: f, .. } => f,
        }
    }

    /// Whether the number is NaN (an integer never is: no `i128` to `f64` conversion).
    #[inline]
    pub(crate) fn is_nan(self) -> bool {
        match self {
            Numeric::Int(_) | Numeric::Huge { .. } => false,
            Numeric::Float(f) | Numeric::Fraction(f) => f.is_nan(),
        }
    }

    /// Exact comparison; `None` only for NaN.
    #[inline]
    pub(crate) fn cmp(self, other: Numeric) -> Option<Ordering> {
        match (self, other) {
            (Numeric::Int(a), Numeric::Int(b)) => Some(a.cmp(&b)),
            // Beyond `i128`, so beyond every `Int`: its sign decides.
            (Numeric::Huge { nearest, .. }, Numeric::Int(_)) => Some(if nearest > 0.0 {
                Ordering::Greater
            } else {
                Ordering::Less
            }),
            (Numeric::Int(_), Numeric::Huge { .. }) => other.cmp(self).map(Ordering::reverse),
            (Numeric::Huge { nearest, side }, b) => match nearest.partial_cmp(&b.as_f64())? {
                Ordering::Equal => match b {
                    // Two integers of one nearest `f64`: told apart by their sides.
                    Numeric::Huge { side: other, .. } => Some(side.cmp(&other)),
                    _ => Some(side),
                },
                o => Some(o),
            },
            (a, Numeric::Huge { .. }) => other.cmp(a).map(Ordering::reverse),
            (Numeric::Int(a), b) => cmp_int_f64(a, b.as_f64()),
            (a, Numeric::Int(b)) => cmp_int_f64(b, a.as_f64()).map(Ordering::reverse),
            (a, b) => a.as_f64().partial_cmp(&b.as_f64()),
        }
    }

    /// The integer within `i64` or `u64`, as serde reads integers.
    pub(crate) fn as_64_bit(self) -> Option<Result<i64, u64>> {
        let Numeric::Int(i) = self else { return None };
        match i64::try_from(i) {
            Ok(v) => Some(Ok(v)),
            Err(_) => u64::try_from(i).ok().map(Err),
        }
    }
}

/// `a` against `f` exactly, without rounding `a` to an `f64`.
fn cmp_int_f64(a: i128, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    if f >= TWO_127 {
        return Some(Ordering::Less);
    }
    if f < -TWO_127 {
        return Some(Ordering::Greater);
    }
    let whole = f.floor();
    // `whole` is an integer within i128, so the conversion is exact.
    match a.cmp(&(whole as i128)) {
        Ordering::Equal if f > whole => Some(Ordering::Less),
        o => Some(o),
    }
}

impl fmt::Display for Numeric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Numeric::Int(i) => write!(f, "{i}"),
            Numeric::Float(x) | Numeric::Fraction(x) | Numeric::Huge { nearest: x, .. } => {
                write!(f, "{x}")
            }
        }
    }
}

/// Whether serde_json, without its `float_roundtrip` feature, may read some number of the JSON
/// `text` as another `f64` than the nearest one: a number it reads as a float (with a fraction or
/// an exponent, or an integer past 64 bits) outside the range where its reading is exact. That
/// reading turns the significant digits into an `f64` and scales it by one power of ten, which
/// is exact only while the digits fit 53 bits (at most 15 of them, here) and the power is at
/// most 10^22; beyond, it can be a unit in the last place off, and so turn
/// `4503599627370495.5` into the integer `4503599627370495`. Strings are skipped; text that is
/// not JSON may be answered either way.
pub(crate) fn serde_json_may_round(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < b.len() && matches!(b[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    i += 1;
                }
                if number_may_round(&b[start..i]) {
                    return true;
                }
            }
            _ => i += 1,
        }
    }
    false
}

/// [`serde_json_may_round`] for one number literal.
fn number_may_round(literal: &[u8]) -> bool {
    let (mut significant, mut fraction, mut exponent) = (0usize, 0i64, 0i64);
    let (mut in_fraction, mut float) = (false, false);
    let mut i = usize::from(literal.first() == Some(&b'-'));
    while i < literal.len() {
        match literal[i] {
            b'0' if significant == 0 => {
                if in_fraction {
                    fraction += 1;
                }
            }
            b'0'..=b'9' => {
                significant += 1;
                if in_fraction {
                    fraction += 1;
                }
            }
            b'.' => {
                in_fraction = true;
                float = true;
            }
            b'e' | b'E' => {
                float = true;
                let digits = literal[i + 1..].strip_prefix(b"-").map(|d| (d, -1));
                let (digits, sign) = digits.unwrap_or_else(|| {
                    (
                        literal[i + 1..]
                            .strip_prefix(b"+")
                            .unwrap_or(&literal[i + 1..]),
                        1,
                    )
                });
                for d in digits {
                    exponent = (exponent * 10 + i64::from(d.wrapping_sub(b'0'))).min(1 << 20);
                }
                exponent *= sign;
                break;
            }
            _ => return true,
        }
        i += 1;
    }
    if !float {
        // An integer is read exactly while it fits 64 bits: `u64` when positive, `i64` when
        // negative (past `i64::MIN` serde_json reads it as a float).
        let negative = literal.first() == Some(&b'-');
        let digits = std::str::from_utf8(&literal[usize::from(negative)..]).unwrap_or("x");
        let limit = if negative {
            1u128 << 63
        } else {
            u64::MAX as u128
        };
        return significant > 20 || digits.parse::<u128>().map_or(true, |v| v > limit);
    }
    significant > 15 || (exponent - fraction).abs() > 22
}

/// A JSON number literal taken apart: `-? digits (. digits)? (e [+-]? digits)?`.
struct Literal<'t> {
    negative: bool,
    fraction_len: usize,
    int_digits: &'t [u8],
    fraction_digits: &'t [u8],
    exponent: i64,
}

impl<'t> Literal<'t> {
    fn parse(text: &'t str) -> Option<Literal<'t>> {
        let b = text.as_bytes();
        let mut i = 0;
        let negative = b.first() == Some(&b'-');
        if negative {
            i += 1;
        }
        let int_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let int_digits = &b[int_start..i];
        if int_digits.is_empty() {
            return None;
        }
        let mut fraction_digits: &[u8] = &[];
        if b.get(i) == Some(&b'.') {
            let start = i + 1;
            i = start;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            fraction_digits = &b[start..i];
            if fraction_digits.is_empty() {
                return None;
            }
        }
        let mut exponent: i64 = 0;
        if matches!(b.get(i), Some(b'e' | b'E')) {
            i += 1;
            let sign = match b.get(i) {
                Some(b'-') => {
                    i += 1;
                    -1
                }
                Some(b'+') => {
                    i += 1;
                    1
                }
                _ => 1,
            };
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                // Saturates far beyond any exponent an f64 or i128 can use.
                exponent = (exponent * 10 + i64::from(b[i] - b'0')).min(1 << 40);
                i += 1;
            }
            if i == start {
                return None;
            }
            exponent *= sign;
        }
        if i != b.len() {
            return None;
        }
        Some(Literal {
            negative,
            fraction_len: fraction_digits.len(),
            int_digits,
            fraction_digits,
            exponent,
        })
    }

    /// The significant digits in order (no leading zeros), and the power of ten they are
    /// scaled by.
    fn significand(&self) -> (impl Iterator<Item = u8> + Clone + '_, i64) {
        let digits = self
            .int_digits
            .iter()
            .chain(self.fraction_digits)
            .copied()
            .skip_while(|d| *d == b'0');
        (digits, self.exponent - self.fraction_len as i64)
    }

    /// Whether the value is a whole number: every digit below the units place is zero.
    fn integral(&self) -> bool {
        let (digits, scale) = self.significand();
        if scale >= 0 {
            return true;
        }
        let len = digits.clone().count();
        let below = ((-scale) as u64).min(len as u64) as usize;
        digits.skip(len - below).all(|d| d == b'0')
    }

    /// The integral value compared with the integral `f64` `x`, exactly (both are written out
    /// in decimal digits; `x` is finite).
    fn cmp_integral(&self, x: f64) -> Ordering {
        let (digits, scale) = self.significand();
        let len = digits.clone().count();
        let keep = if scale >= 0 {
            len
        } else {
            len.saturating_sub(((-scale) as u64).min(len as u64) as usize)
        };
        let mut ours: String = digits.take(keep).map(char::from).collect();
        if !ours.is_empty() {
            ours.extend(std::iter::repeat_n('0', scale.max(0) as usize));
        }
        // Rust writes a double's exact value when given a precision.
        let theirs = format!("{:.0}", x.abs());
        let magnitude = ours
            .len()
            .cmp(&theirs.len())
            .then_with(|| ours.as_str().cmp(theirs.as_str()));
        match (self.negative && !ours.is_empty(), x < 0.0) {
            (false, false) => magnitude,
            (true, true) => magnitude.reverse(),
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
        }
    }

    /// The integral value, if it fits `i128`.
    fn to_i128(&self) -> Option<i128> {
        let (digits, scale) = self.significand();
        let len = digits.clone().count();
        let keep = if scale >= 0 {
            len
        } else {
            len.saturating_sub(((-scale) as u64).min(len as u64) as usize)
        };
        let mut v: i128 = 0;
        for d in digits.take(keep) {
            v = v.checked_mul(10)?.checked_sub(i128::from(d - b'0'))?;
        }
        for _ in 0..scale.max(0) {
            if v == 0 {
                break;
            }
            v = v.checked_mul(10)?;
        }
        // Accumulated as a negative number so that i128::MIN fits.
        if self.negative {
            Some(v)
        } else {
            v.checked_neg()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(s: &str) -> Numeric {
        Numeric::read(s).unwrap_or_else(|| panic!("{s} is a number"))
    }

    #[test]
    fn integral_values_are_exact_in_any_spelling() {
        assert_eq!(read("250"), Numeric::Int(250));
        assert_eq!(read("250.0"), Numeric::Int(250));
        assert_eq!(read("2.5e2"), Numeric::Int(250));
        assert_eq!(read("25000e-2"), Numeric::Int(250));
        assert_eq!(read("-0.0"), Numeric::Int(0));
        assert_eq!(read("9007199254740993.0"), Numeric::Int(9007199254740993));
        assert_eq!(read("18446744073709551616"), Numeric::Int(1 << 64));
        assert_eq!(read("-9223372036854775809"), Numeric::Int(-(1 << 63) - 1));
        assert_eq!(
            read("-170141183460469231731687303715884105728"),
            Numeric::Int(i128::MIN)
        );
        assert_eq!(
            read("170141183460469231731687303715884105728"),
            Numeric::Huge {
                nearest: 1.7014118346046923e38,
                side: Ordering::Equal
            }
        );
    }

    #[test]
    fn a_fraction_is_never_an_integer() {
        assert_eq!(read("2.5"), Numeric::Float(2.5));
        assert_eq!(
            read("4503599627370496.5"),
            Numeric::Fraction(4503599627370496.0)
        );
        assert!(!read("1.0000000000000000001").is_integer());
        assert!(
            read("4503599627370495.5").cmp(Numeric::Int(4503599627370495))
                == Some(Ordering::Greater)
        );
        assert_eq!(Numeric::read("\"1\""), None);
        assert_eq!(Numeric::read("1."), None);
    }

    #[test]
    fn numbers_serde_json_may_round_are_found() {
        for exact in [
            r#"{"a": 1.5, "b": [250, -2.5e2, 0.000001], "c": "4503599627370495.5"}"#,
            "1234567890123.45",
            "18446744073709551615",
            "-9223372036854775808",
            "1e22",
            "1.5e-21",
            "0.0000000000000000000001",
        ] {
            assert!(!serde_json_may_round(exact), "{exact}");
        }
        for rounds in [
            r#"{"a": 1, "b": 4503599627370495.5}"#,
            "[0.30000000000000004]",
            "123456789012345678901",
            "18446744073709551616",
            "-9223372036854775809",
            "1e23",
            "1.5e-22",
            "1.7976931348623157e308",
        ] {
            assert!(serde_json_may_round(rounds), "{rounds}");
        }
    }

    #[test]
    fn an_integer_beyond_i128_is_compared_exactly() {
        let max = Numeric::Float(f64::MAX);
        // f64::MAX + 1, whose nearest double is f64::MAX.
        let above = read(&format!("{:.0}", f64::MAX).replace("858368", "858369"));
        assert_eq!(above.as_f64(), f64::MAX);
        assert_eq!(above.cmp(max), Some(Ordering::Greater));
        assert_eq!(max.cmp(above), Some(Ordering::Less));
        let below = read(&format!("{:.0}", f64::MAX).replace("858368", "858367"));
        assert_eq!(below.cmp(max), Some(Ordering::Less));
        assert_eq!(
            read(&format!("{:.0}", f64::MAX)).cmp(max),
            Some(Ordering::Equal)
        );
        // The shortest spelling that reads back as f64::MAX is a little less than it.
        assert_eq!(
            read("1.7976931348623157e308").cmp(max),
            Some(Ordering::Less)
        );
        let negative = read(&format!("-{:.0}", f64::MAX).replace("858368", "858369"));
        assert_eq!(negative.cmp(Numeric::Float(f64::MIN)), Some(Ordering::Less));
        assert_eq!(negative.cmp(Numeric::Int(i128::MIN)), Some(Ordering::Less));
        assert!(above.is_integer());
    }

    #[test]
    fn comparisons_do_not_round() {
        let max = Numeric::Int(u64::MAX as i128);
        assert_eq!(
            Numeric::Float(18446744073709551616.0).cmp(max),
            Some(Ordering::Greater)
        );
        assert_eq!(
            Numeric::Int(9007199254740993).cmp(Numeric::Float(9007199254740992.0)),
            Some(Ordering::Greater)
        );
        assert_eq!(
            Numeric::Int(1).cmp(Numeric::Float(1.5)),
            Some(Ordering::Less)
        );
        assert_eq!(
            Numeric::Int(-2).cmp(Numeric::Float(-1.5)),
            Some(Ordering::Less)
        );
        assert_eq!(Numeric::Int(0).cmp(Numeric::Float(f64::NAN)), None);
    }
}
