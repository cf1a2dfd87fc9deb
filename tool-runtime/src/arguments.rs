//! A call's arguments as they arrive: JSON text as a model sends it, or a value a transport has
//! already parsed.

use std::borrow::Cow;

use serde_json::{Map, Value};

pub(crate) use crate::validate::Nulls;

/// A call's arguments: JSON text as a model sends it (decoded in one pass when valid), or a
/// value a transport has already parsed. Made with `.into()` from `&str`, `String`,
/// `serde_json::Value` or a `serde_json::Map`. Empty text means no arguments (`{}`), which some
/// providers send for tools without parameters.
///
/// They are checked against the tool's input schema by JSON Schema's rules: `null` is accepted
/// only where the schema takes it. A caller that was shown another schema says so:
/// [`Arguments::null_means_absent`] for one where every optional property also takes `null`
/// (OpenAI's strict mode), which the agent loop does for such an API.
#[derive(Clone, Debug, PartialEq)]
pub struct Arguments<'a> {
    pub(crate) repr: Repr<'a>,
    pub(crate) nulls: Nulls,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Repr<'a> {
    Text(Cow<'a, str>),
    /// Boxed: a `Value` is several times the size of text, and calls move their arguments.
    Value(Box<Value>),
    /// A provider's tool call that is not a function call, as sent: refused when decoded.
    NotAFunction(Box<Value>),
}

impl<'a> Arguments<'a> {
    pub(crate) fn of(repr: Repr<'a>) -> Self {
        Arguments {
            repr,
            nulls: Nulls::Refused,
        }
    }

    /// JSON text.
    pub fn text(text: impl Into<Cow<'a, str>>) -> Self {
        Arguments::of(Repr::Text(text.into()))
    }

    /// A parsed value.
    pub fn value(value: Value) -> Self {
        Arguments::of(Repr::Value(Box::new(value)))
    }

    /// Arguments written against a schema in which every optional property is also required
    /// and takes `null` (OpenAI's strict mode, whose export [`Provider::null_means_absent`]
    /// says so): `null` at an optional property whose own schema refuses it is read as the
    /// property left out, so its default applies. Without this, such a `null` is refused as
    /// JSON Schema refuses it.
    ///
    /// ```
    /// use tool_runtime::{tool, Arguments, Context, ToolSet};
    ///
    /// #[tool(description = "Count the portions to order for a number of guests.")]
    /// fn portions(
    ///     #[arg(description = "Number of guests", range = 1..=500)] guests: u32,
    ///     #[arg(description = "Spare portions", range = 0..=20, default = 5)] spare: u32,
    /// ) -> u32 {
    ///     guests + spare
    /// }
    ///
    /// let tools = ToolSet::new([portions::tool()]).unwrap();
    /// let cx = Context::new();
    /// let sent = r#"{"guests": 25, "spare": null}"#;
    /// assert!(tools.call(&cx, "portions", sent).blocking().is_err());
    /// let strict = Arguments::text(sent).null_means_absent();
    /// assert_eq!(tools.call(&cx, "portions", strict).blocking().unwrap().json(), "30");
    /// ```
    ///
    /// [`Provider::null_means_absent`]: crate::provider::Provider::null_means_absent
    pub fn null_means_absent(mut self) -> Self {
        self.nulls = Nulls::Absent;
        self
    }

    /// The text, when the arguments arrived as text.
    pub fn as_text(&self) -> Option<&str> {
        match &self.repr {
            Repr::Text(t) => Some(t),
            Repr::Value(_) | Repr::NotAFunction(_) => None,
        }
    }

    /// The value, when the arguments arrived parsed.
    pub fn as_value(&self) -> Option<&Value> {
        match &self.repr {
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
