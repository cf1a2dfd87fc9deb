//! The `format`s the validator asserts, each by its RFC: what a provider, an MCP client's
//! validator and `jsonschema` (with format assertion on) accept. Other formats only describe.

use std::str::FromStr;

/// A `format` the validator enforces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    /// RFC 3339 `full-date`: `YYYY-MM-DD`, a day that exists in the calendar.
    Date,
    /// RFC 3339 `date-time`: a `full-date`, `T`, a `full-time`.
    DateTime,
    /// RFC 3339 `full-time`: `HH:MM:SS`, an optional fraction, and an offset (`Z` or `±HH:MM`).
    Time,
    /// RFC 5321 `Mailbox`: a local part, `@`, a host name or an address literal.
    Email,
    /// RFC 3986 `URI`: a scheme and what follows it (not a relative reference).
    Uri,
    /// RFC 9562 (RFC 4122) UUID in its hyphenated form, `8-4-4-4-12` hexadecimal digits.
    Uuid,
}

impl Format {
    pub(crate) fn of(name: &str) -> Option<Format> {
        Some(match name {
            "date" => Format::Date,
            "date-time" => Format::DateTime,
            "time" => Format::Time,
            "email" => Format::Email,
            "uri" => Format::Uri,
            "uuid" => Format::Uuid,
            _ => return None,
        })
    }

    pub(crate) fn holds(self, s: &str) -> bool {
        match self {
            Format::Date => is_date(s),
            Format::DateTime => is_date_time(s),
            Format::Time => is_time(s),
            Format::Email => is_email(s),
            Format::Uri => fluent_uri::Uri::parse(s).is_ok(),
            Format::Uuid => is_uuid(s),
        }
    }

    /// What the format asks for, in words for the model.
    pub(crate) fn words(self) -> &'static str {
        match self {
            Format::Date => "a date written YYYY-MM-DD",
            Format::DateTime => {
                "a date and time written YYYY-MM-DDTHH:MM:SS with an offset (Z or +07:00)"
            }
            Format::Time => "a time written HH:MM:SS with an offset (Z or +07:00)",
            Format::Email => "an email address",
            Format::Uri => "an absolute URI with a scheme, such as https://example.com/a",
            Format::Uuid => "a UUID written as 8-4-4-4-12 hexadecimal digits",
        }
    }
}

/// Two ASCII digits as a number.
fn two_digits(b: &[u8]) -> Option<u32> {
    match b {
        [a, b] if a.is_ascii_digit() && b.is_ascii_digit() => {
            Some(u32::from(a - b'0') * 10 + u32::from(b - b'0'))
        }
        _ => None,
    }
}

/// `YYYY-MM-DD`, a day that exists (29 February only in leap years).
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let (Some(c), Some(y), Some(m), Some(d)) = (
        two_digits(&b[0..2]),
        two_digits(&b[2..4]),
        two_digits(&b[5..7]),
        two_digits(&b[8..10]),
    ) else {
        return false;
    };
    let year = c * 100 + y;
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// `full-date "T" full-time`; RFC 3339 allows a lower-case `t`.
fn is_date_time(s: &str) -> bool {
    match s.get(..10).zip(s.get(10..)) {
        Some((date, rest)) => {
            is_date(date) && (rest.starts_with('T') || rest.starts_with('t')) && is_time(&rest[1..])
        }
        None => false,
    }
}

/// `HH:MM:SS[.frac](Z|±HH:MM)`. A leap second (`:60`) only where it falls at 23:59 UTC.
fn is_time(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 9 || b[2] != b':' || b[5] != b':' {
        return false;
    }
    let (Some(h), Some(m), Some(sec)) = (
        two_digits(&b[0..2]),
        two_digits(&b[3..5]),
        two_digits(&b[6..8]),
    ) else {
        return false;
    };
    if h > 23 || m > 59 || sec > 60 {
        return false;
    }
    let mut i = 8;
    if b[i] == b'.' {
        let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            return false;
        }
        i += 1 + digits;
    }
    // The offset, in minutes east of UTC.
    let offset: i64 = match &b[i..] {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), rest @ ..] if rest.len() == 5 && rest[2] == b':' => {
            let (Some(oh), Some(om)) = (two_digits(&rest[0..2]), two_digits(&rest[3..5])) else {
                return false;
            };
            if oh > 23 || om > 59 {
                return false;
            }
            let minutes = i64::from(oh * 60 + om);
            if *sign == b'+' { minutes } else { -minutes }
        }
        _ => return false,
    };
    if sec == 60 {
        let utc = (i64::from(h * 60 + m) - offset).rem_euclid(24 * 60);
        return utc == 23 * 60 + 59;
    }
    true
}

/// A mailbox (RFC 5321 §4.1.2, read by the `email_address` crate), whose domain is a host name
/// (RFC 1123) or an address literal (`[192.0.2.1]`, `[IPv6:2001:db8::1]`).
fn is_email(s: &str) -> bool {
    let Ok(address) = email_address::EmailAddress::from_str(s) else {
        return false;
    };
    let domain = address.domain();
    match domain.strip_prefix('[').and_then(|d| d.strip_suffix(']')) {
        Some(literal) => match literal.strip_prefix("IPv6:") {
            Some(v6) => v6.parse::<std::net::Ipv6Addr>().is_ok(),
            None => literal.parse::<std::net::Ipv4Addr>().is_ok(),
        },
        None => is_host_name(domain),
    }
}

/// RFC 1123 host name: dot-separated labels of 1 to 63 letters, digits and inner hyphens, 253
/// characters at most.
fn is_host_name(s: &str) -> bool {
    s.len() <= 253
        && s.split('.').all(|label| {
            let b = label.as_bytes();
            (1..=63).contains(&b.len())
                && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
                && b[0] != b'-'
                && b[b.len() - 1] != b'-'
        })
}

/// `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, hexadecimal in either case.
fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}
