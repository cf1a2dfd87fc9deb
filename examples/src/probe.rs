//! Tools that echo the numbers they receive, for the tests that hold every path a call can take
//! (the tool set, stdio, HTTP, a gateway's remote tools) to the schema the caller was shown:
//! one tool per integer type over its whole range, the integers JavaScript counts exactly, a
//! float, and a defaulted field. Each returns what it got exactly (an integer as its digits, a
//! float as its bits), so a rounded number cannot pass for the one that was sent. Served by the
//! `number-probe` program (stdio or HTTP) for the Python differential client
//! (`scripts/number-differential.py`).

use tool_runtime::{ToolSet, tool};

/// The largest integer a JavaScript number holds exactly, 2^53 - 1.
pub const MAX_SAFE: u64 = 9_007_199_254_740_991;

#[tool(description = "Return the u8 it is given, as its digits.", read_only)]
pub fn echo_u8(#[arg(description = "Any u8", range = 0..=255)] n: u8) -> String {
    n.to_string()
}

#[tool(description = "Return the i8 it is given, as its digits.", read_only)]
pub fn echo_i8(#[arg(description = "Any i8", range = -128..=127)] n: i8) -> String {
    n.to_string()
}

#[tool(description = "Return the u16 it is given, as its digits.", read_only)]
pub fn echo_u16(#[arg(description = "Any u16", range = 0..=65535)] n: u16) -> String {
    n.to_string()
}

#[tool(description = "Return the i16 it is given, as its digits.", read_only)]
pub fn echo_i16(#[arg(description = "Any i16", range = -32768..=32767)] n: i16) -> String {
    n.to_string()
}

#[tool(description = "Return the u32 it is given, as its digits.", read_only)]
pub fn echo_u32(#[arg(description = "Any u32", range = 0..=4294967295)] n: u32) -> String {
    n.to_string()
}

#[tool(description = "Return the i32 it is given, as its digits.", read_only)]
pub fn echo_i32(
    #[arg(description = "Any i32", range = -2147483648..=2147483647)] n: i32,
) -> String {
    n.to_string()
}

#[tool(description = "Return the u64 it is given, as its digits.", read_only)]
pub fn echo_u64(
    #[arg(description = "Any u64", range = 0..=18446744073709551615)] n: u64,
) -> String {
    n.to_string()
}

#[tool(description = "Return the i64 it is given, as its digits.", read_only)]
pub fn echo_i64(
    #[arg(description = "Any i64", range = -9223372036854775808..=9223372036854775807)] n: i64,
) -> String {
    n.to_string()
}

/// The shape of the report: an optional offset JavaScript counts exactly, and a limit
/// with a default.
#[tool(
    description = "Return the offset and limit it is given, as their digits.",
    read_only
)]
pub fn page(
    #[arg(description = "Where to start; null or left out for the start", range = 0..=9_007_199_254_740_991)]
    offset: Option<u64>,
    #[arg(description = "How many to return", range = 1..=50, default = 10)] limit: u8,
) -> String {
    match offset {
        Some(o) => format!("{o} {limit}"),
        None => format!("none {limit}"),
    }
}

/// A float over the whole finite range, returned as its bits.
#[tool(description = "Return the bits of the number it is given.", read_only)]
pub fn echo_f64(
    #[arg(description = "Any finite number", range = -1.7976931348623157e308..=1.7976931348623157e308)]
    x: f64,
) -> String {
    x.to_bits().to_string()
}

/// A float with bounds a fraction sits next to, returned as its bits.
#[tool(description = "Return the bits of the ratio it is given.", read_only)]
pub fn echo_ratio(#[arg(description = "A ratio from 0 to 1", range = 0.0..=1.0)] x: f64) -> String {
    x.to_bits().to_string()
}

/// Every probe tool.
pub fn tool_set() -> ToolSet {
    ToolSet::new([
        echo_u8::tool(),
        echo_i8::tool(),
        echo_u16::tool(),
        echo_i16::tool(),
        echo_u32::tool(),
        echo_i32::tool(),
        echo_u64::tool(),
        echo_i64::tool(),
        page::tool(),
        echo_f64::tool(),
        echo_ratio::tool(),
    ])
    .expect("the probe tools have distinct names")
}
