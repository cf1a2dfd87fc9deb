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
                None => Numeric::Float(nearest()?),
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
            Numeric::Int(_) => true,
            Numeric::Float(f) => f.fract() == 0.0,
            Numeric::Fraction(_) => false,
        }
    }

    #[inline]
    pub(crate) fn as_f64(self) -> f64 {
        match self {
            Numeric::Int(i) => i as f64,
            Numeric::Float(f) | Numeric::Fraction(f) => f,
        }
    }

    /// Whether the number is NaN (an integer never is: no `i128` to `f64` conversion).
    #[inline]
    pub(crate) fn is_nan(self) -> bool {
        match self {
            Numeric::Int(_) => false,
            Numeric::Float(f) | Numeric::Fraction(f) => f.is_nan(),
        }
    }

    /// Exact comparison; `None` only for NaN.
    #[inline]
    pub(crate) fn cmp(self, other: Numeric) -> Option<Ordering> {
        match (self, other) {
            (Numeric::Int(a), Numeric::Int(b)) => Some(a.cmp(&b)),
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
            Numeric::Float(x) | Numeric::Fraction(x) => write!(f, "{x}"),
        }
    }
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
        assert!(matches!(
            read("170141183460469231731687303715884105728"),
            Numeric::Float(_)
        ));
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
