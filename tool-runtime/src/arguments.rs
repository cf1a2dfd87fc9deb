//! A call's arguments as they arrive: JSON text as a model sends it, or a value a transport has
//! already parsed.

use std::borrow::Cow;

use serde_json::{Map, Value};

/// A call's arguments: JSON text as a model sends it (decoded in one pass when valid), or a
/// value a transport has already parsed. Made with `.into()` from `&str`, `String`,
/// `serde_json::Value` or a `serde_json::Map`. Empty text means no arguments (`{}`), which some
/// providers send for tools without parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Arguments<'a>(pub(crate) Repr<'a>);

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Repr<'a> {
    Text(Cow<'a, str>),
    /// Boxed: a `Value` is several times the size of text, and calls move their arguments.
    Value(Box<Value>),
    /// A provider's tool call that is not a function call, as sent: refused when decoded.
    NotAFunction(Box<Value>),
}

impl<'a> Arguments<'a> {
    /// JSON text.
    pub fn text(text: impl Into<Cow<'a, str>>) -> Self {
        Arguments(Repr::Text(text.into()))
    }

    /// A parsed value.
    pub fn value(value: Value) -> Self {
        Arguments(Repr::Value(Box::new(value)))
    }

    /// The text, when the arguments arrived as text.
    pub fn as_text(&self) -> Option<&str> {
        match &self.0 {
            Repr::Text(t) => Some(t),
            Repr::Value(_) | Repr::NotAFunction(_) => None,
        }
    }

    /// The value, when the arguments arrived parsed.
    pub fn as_value(&self) -> Option<&Value> {
        match &self.0 {
            Repr::Value(v) => Some(v),
            Repr::Text(_) | Repr::NotAFunction(_) => None,
        }
    }
}

/// Text: `&str`, `&String`, `&&str`, ...
impl<'a, T: AsRef<str> + ?Sized> From<&'a T> for Arguments<'a> {
    fn from(text: &'a T) -> Self {
        Arguments::text(text.as_ref())
    }
}

impl From<String> for Arguments<'_> {
    fn from(text: String) -> Self {
        Arguments::text(text)
    }
}

impl From<Value> for Arguments<'_> {
    fn from(value: Value) -> Self {
        Arguments::value(value)
    }
}

impl From<Map<String, Value>> for Arguments<'_> {
    fn from(map: Map<String, Value>) -> Self {
        Arguments::value(Value::Object(map))
    }
}
