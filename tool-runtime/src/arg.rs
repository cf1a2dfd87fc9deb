//! Which Rust types may cross the model/code boundary, and how their schemas are shaped.
//!
//! A plain number is deliberately *not* a [`ToolArg`]: a model that is shown an unbounded
//! integer will happily send `-1` or `1e12`. Numbers become arguments through [`RangeArg`],
//! which the `#[arg(range = ..)]` (or `#[arg(unbounded = "why")]`) attribute selects.

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Serialize;
use serde_json::{Value, json};

/// A type that may be a tool argument or a field of one, without further attributes.
///
/// Implemented for `String`, `bool`, `char`, `Option<T>`, `Vec<T>`, `Box<T>`, `chrono::NaiveDate`
/// (feature `chrono`) and every type with `#[derive(ToolArg)]`. Numbers are not `ToolArg`: they need `#[arg(range = ..)]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool argument as it stands",
    label = "no schema with bounds for `{Self}`",
    note = "a struct or enum: derive it, #[derive(ToolArg, serde::Deserialize)] (`schemars::JsonSchema` alone gives no descriptions or bounds to check)",
    note = "a number, or an alias of one: bound the argument, #[arg(range = 1..=100)], or #[arg(unbounded = \"why\")] when no bound makes sense"
)]
pub trait ToolArg: JsonSchema {
    /// The reason the type gives for silencing lint `id` (`#[arg(allow_lint = "id: reason")]`
    /// on the type), checked by [`lint::check_output`](crate::lint::check_output).
    fn silences_lint(id: &str) -> Option<&'static str> {
        let _ = id;
        None
    }

    /// The type's schema under an argument, before the argument's own keys apply. The macros
    /// call it through the trait, so a type that is not `ToolArg` is reported with this trait's
    /// message alone.
    #[doc(hidden)]
    fn __schema(g: &mut SchemaGenerator) -> Schema
    where
        Self: Sized,
    {
        g.subschema_for::<Self>()
    }
}

impl ToolArg for String {}
impl ToolArg for bool {}
impl ToolArg for char {}
impl<T: ToolArg> ToolArg for Option<T> {}
impl<T: ToolArg> ToolArg for Vec<T> {}
impl<T: ToolArg> ToolArg for Box<T> {}

/// A calendar date, `YYYY-MM-DD` (`format: "date"`): `2026-02-30` and `2026-99-99` are refused
/// before the tool runs, naming the field (behind the `chrono` feature).
#[cfg(feature = "chrono")]
impl ToolArg for chrono::NaiveDate {}

/// A bound as written in `range = a..=b`: kept exact, converted to JSON once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Num {
    /// A signed integer: a negative bound, or a limit of a signed type.
    Int(i64),
    /// An unsigned integer: a bound of zero or more, or a limit of an unsigned type.
    UInt(u64),
    /// A float: a bound written as a float literal (`0.5`), or a limit of `f32` or `f64`.
    Float(f64),
}

impl Num {
    pub(crate) fn to_json(self) -> Value {
        match self {
            Num::Int(v) => json!(v),
            Num::UInt(v) => json!(v),
            Num::Float(v) => json!(v),
        }
    }

    /// `a <= b`, exact for integers of any sign.
    pub const fn le(self, other: Num) -> bool {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => a <= b,
            (Num::UInt(a), Num::UInt(b)) => a <= b,
            (Num::Int(a), Num::UInt(b)) => a < 0 || (a as u64) <= b,
            (Num::UInt(a), Num::Int(b)) => b >= 0 && a <= (b as u64),
            (a, b) => a.as_f64() <= b.as_f64(),
        }
    }

    /// The bound as an `f64`, for comparing with a float (large integers are rounded).
    pub const fn as_f64(self) -> f64 {
        match self {
            Num::Int(v) => v as f64,
            Num::UInt(v) => v as f64,
            Num::Float(v) => v,
        }
    }
}

/// A primitive number type and its limits.
#[diagnostic::on_unimplemented(
    message = "`range` needs a number, but `{Self}` is not one",
    label = "not a number type",
    note = "`range`, `min` and `max` apply to integer and float types (also inside `Option` or `Vec`); use `length = a..=b` for strings and lists"
)]
pub trait Number {
    /// Whether the type is an integer (`"type": "integer"` in the schema) rather than a float
    /// (`"type": "number"`).
    const INTEGER: bool;
    /// The smallest value the type holds (for floats, the most negative finite one).
    const MIN: Num;
    /// The largest value the type holds (for floats, the largest finite one).
    const MAX: Num;
}

macro_rules! number {
    ($($t:ty => $int:expr, $min:expr, $max:expr;)*) => {$(
        impl Number for $t {
            const INTEGER: bool = $int;
            const MIN: Num = $min;
            const MAX: Num = $max;
        }
    )*};
}

number! {
    i8 => true, Num::Int(i8::MIN as i64), Num::Int(i8::MAX as i64);
    i16 => true, Num::Int(i16::MIN as i64), Num::Int(i16::MAX as i64);
    i32 => true, Num::Int(i32::MIN as i64), Num::Int(i32::MAX as i64);
    i64 => true, Num::Int(i64::MIN), Num::Int(i64::MAX);
    isize => true, Num::Int(isize::MIN as i64), Num::Int(isize::MAX as i64);
    u8 => true, Num::UInt(0), Num::UInt(u8::MAX as u64);
    u16 => true, Num::UInt(0), Num::UInt(u16::MAX as u64);
    u32 => true, Num::UInt(0), Num::UInt(u32::MAX as u64);
    u64 => true, Num::UInt(0), Num::UInt(u64::MAX);
    usize => true, Num::UInt(0), Num::UInt(usize::MAX as u64);
    f32 => false, Num::Float(f32::MIN as f64), Num::Float(f32::MAX as f64);
    f64 => false, Num::Float(f64::MIN), Num::Float(f64::MAX);
}

/// A type that `range = ..` applies to: a number, or a number inside `Option` or `Vec`
/// (for a list, the range bounds each item).
#[diagnostic::on_unimplemented(
    message = "`range` needs a number, but `{Self}` is not one",
    label = "not a number type",
    note = "`range`, `min` and `max` apply to integer and float types (also inside `Option` or `Vec`); use `length = a..=b` for strings and lists"
)]
pub trait RangeArg {
    /// The number type the range bounds: the type itself, or the one inside `Option` or `Vec`.
    type Number: Number;
    /// The schema with `minimum`/`maximum` placed on the number itself.
    fn ranged_schema(min: Option<Num>, max: Option<Num>, exclusive_max: bool) -> Schema;
}

impl<N: Number> RangeArg for N {
    type Number = N;
    fn ranged_schema(min: Option<Num>, max: Option<Num>, exclusive_max: bool) -> Schema {
        // A side `range` leaves open (or `unbounded`) is still bounded by the type: a number
        // the Rust type cannot hold is refused as out of range, never clamped or made infinite.
        // (`f64` holds every number JSON text can spell.)
        let typed = N::INTEGER || !matches!(N::MAX, Num::Float(m) if m == f64::MAX);
        let min = min.or(typed.then_some(N::MIN));
        let (max, exclusive_max) = match max {
            Some(m) => (Some(m), exclusive_max),
            None => (typed.then_some(N::MAX), false),
        };
        let mut s = serde_json::Map::new();
        let ty = if N::INTEGER { "integer" } else { "number" };
        s.insert("type".into(), ty.into());
        if let Some(min) = min {
            s.insert("minimum".into(), min.to_json());
        }
        if let Some(max) = max {
            let key = if exclusive_max {
                "exclusiveMaximum"
            } else {
                "maximum"
            };
            s.insert(key.into(), max.to_json());
        }
        Schema::from(s)
    }
}

impl<N: Number> RangeArg for Option<N> {
    type Number = N;
    fn ranged_schema(min: Option<Num>, max: Option<Num>, exclusive_max: bool) -> Schema {
        let mut s = N::ranged_schema(min, max, exclusive_max);
        let ty = s.get("type").cloned().unwrap_or(Value::Null);
        s.insert("type".into(), json!([ty, "null"]));
        s
    }
}

impl<N: Number> RangeArg for Vec<N> {
    type Number = N;
    fn ranged_schema(min: Option<Num>, max: Option<Num>, exclusive_max: bool) -> Schema {
        let items = N::ranged_schema(min, max, exclusive_max);
        Schema::from(
            json!({ "type": "array", "items": items })
                .as_object()
                .cloned()
                .unwrap_or_default(),
        )
    }
}

/// A type that `length = ..` applies to: strings (in characters) and lists (in items).
#[diagnostic::on_unimplemented(
    message = "`length` applies to strings and lists, not to `{Self}`",
    label = "has no length",
    note = "for numbers, bound the value with `range = a..=b` instead"
)]
pub trait LengthArg {
    /// Named by the generated code: compiles only for a `LengthArg`.
    #[doc(hidden)]
    const __IS: bool = true;
}
impl LengthArg for String {}
impl<T> LengthArg for Vec<T> {}
impl<T: LengthArg> LengthArg for Option<T> {}
impl<T: LengthArg> LengthArg for Box<T> {}

/// A type that `pattern = ".."` applies to: strings.
#[diagnostic::on_unimplemented(
    message = "`pattern` applies to strings, not to `{Self}`",
    label = "not a string"
)]
pub trait PatternArg {
    /// Named by the generated code: compiles only for a `PatternArg`.
    #[doc(hidden)]
    const __IS: bool = true;
}
impl PatternArg for String {}
impl<T: PatternArg> PatternArg for Option<T> {}
impl<T: PatternArg> PatternArg for Box<T> {}

/// A type that a range of dates (`range = "2024-01-01"..="2030-12-31"`) applies to: a calendar
/// date, alone or in an `Option` (feature `chrono`).
#[diagnostic::on_unimplemented(
    message = "a range of dates applies to a date, not to `{Self}`",
    label = "not a date",
    note = "give the argument the type `chrono::NaiveDate` (tool-runtime's `chrono` feature), or bound a number with `range = 1..=100`"
)]
pub trait DateArg {
    /// Named by the generated code: compiles only for a `DateArg`.
    #[doc(hidden)]
    const __IS: bool = true;
}
#[cfg(feature = "chrono")]
impl DateArg for chrono::NaiveDate {}
impl<T: DateArg> DateArg for Option<T> {}
impl<T: DateArg> DateArg for Box<T> {}

/// `range` bounds that do not fit the type, for types the macro cannot see into (aliases).
pub const fn check_range<N: Number>(min: Option<Num>, max: Option<Num>, message: &'static str) {
    if let Some(m) = min
        && !(N::MIN.le(m) && m.le(N::MAX))
    {
        panic!("{}", message);
    }
    if let Some(m) = max
        && !(N::MIN.le(m) && m.le(N::MAX))
    {
        panic!("{}", message);
    }
}

/// A string literal written as a `default` or `example`, in the argument's type.
#[diagnostic::on_unimplemented(
    message = "this `default` or `example` is a string, but the argument is `{Self}`",
    label = "expected a value of type `{Self}`, not a string literal",
    note = "write the value in the argument's own type, such as `5` for a number or `Wilayah::Semua` for an enum"
)]
pub trait StrLiteral {
    /// The value the literal stands for in this type.
    fn from_literal(s: &'static str) -> Self;
}

impl StrLiteral for String {
    fn from_literal(s: &'static str) -> Self {
        s.to_owned()
    }
}

impl StrLiteral for Option<String> {
    fn from_literal(s: &'static str) -> Self {
        Some(s.to_owned())
    }
}

/// The JSON form of a `default` or `example` value, shown to the model and filled in by the
/// validator.
pub fn to_json<T: Serialize>(value: T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}
