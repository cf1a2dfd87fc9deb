//! A finished call's output, with a view for each audience: the application's value, what the
//! model receives, and what a person may see; and the hooks `#[tool]` generates around it.

use std::fmt;
use std::sync::OnceLock;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::ToolError;
use crate::host::{Disclosure, ModelOutput};

/// A type a tool may return: serde writes it and its schema says what the model receives.
/// Implemented for every `serde::Serialize + schemars::JsonSchema` type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's output: it needs a schema and serde's `Serialize`",
    label = "a tool returns this type",
    note = "derive both on the type: #[derive(serde::Serialize, schemars::JsonSchema)] (schemars with its `derive` feature)"
)]
pub trait ToolOutput: Serialize + JsonSchema {}

#[diagnostic::do_not_recommend]
impl<T: Serialize + JsonSchema + ?Sized> ToolOutput for T {}

/// What `#[tool]` uses of its output type, made once per tool by [`output_fns`]: the one
/// place the type must be a [`ToolOutput`], so a type that is not is one error.
pub struct OutputFns<T: 'static> {
    /// The type's schema, as serde writes it.
    pub schema: fn(&mut SchemaGenerator) -> Schema,
    /// The tool's value as the call's output.
    pub ok: fn(T, &Hooks<T>) -> Result<CallOutput, ToolError>,
}

/// The [`OutputFns`] of `T`.
pub const fn output_fns<T: ToolOutput + 'static>() -> OutputFns<T> {
    OutputFns {
        schema: schema_of::<T>,
        ok: ok::<T>,
    }
}

fn schema_of<T: JsonSchema>(g: &mut SchemaGenerator) -> Schema {
    g.subschema_for::<T>()
}

/// How a tool's `Err` becomes [`ToolError::Failed`], chosen by the error's type: the generated
/// code calls `(&e).tool_failure().failed(e)`, and method lookup takes the first of these that
/// applies (an impl for the type itself before one for a reference to it). An
/// [`Error`](std::error::Error) is kept as the source; a boxed error too; anything else that
/// only displays (`String`, `&str`) gives its text.
pub struct KeepsError;
/// See [`KeepsError`].
pub trait KeepsErrorKind {
    /// The way to a tool error.
    fn tool_failure(&self) -> KeepsError {
        KeepsError
    }
}
impl<E: std::error::Error + Send + Sync + 'static> KeepsErrorKind for E {}
impl KeepsError {
    /// The failure, the error kept as its source.
    pub fn failed<E: std::error::Error + Send + Sync + 'static>(
        self,
        e: E,
    ) -> Result<CallOutput, ToolError> {
        Err(ToolError::failed_with(e))
    }
}

/// See [`KeepsError`]: a boxed error, kept.
pub struct KeepsBoxed;
/// See [`KeepsError`].
pub trait KeepsBoxedKind {
    /// The way to a tool error.
    fn tool_failure(&self) -> KeepsBoxed {
        KeepsBoxed
    }
}
impl KeepsBoxedKind for Box<dyn std::error::Error + Send + Sync> {}
impl KeepsBoxed {
    /// The failure, the error kept as its source.
    pub fn failed(
        self,
        e: Box<dyn std::error::Error + Send + Sync>,
    ) -> Result<CallOutput, ToolError> {
        Err(ToolError::Failed {
            message: e.to_string(),
            error: Some(std::sync::Arc::from(e)),
        })
    }
}

/// See [`KeepsError`]: text only.
pub struct TextOnly;
/// See [`KeepsError`].
pub trait TextOnlyKind {
    /// The way to a tool error.
    fn tool_failure(&self) -> TextOnly {
        TextOnly
    }
}
impl<E: fmt::Display + ?Sized> TextOnlyKind for &E {}
impl TextOnly {
    /// The failure, with the error's `Display`.
    pub fn failed<E: fmt::Display>(self, e: E) -> Result<CallOutput, ToolError> {
        Err(ToolError::failed(e.to_string()))
    }
}

/// A finished call, for each of its audiences: the application's value, what the model
/// receives, and what a person may see.
///
/// The output is serialized once, to JSON text, straight from the tool's return value; the
/// [`Value`] is parsed from that text on first use.
#[derive(Clone)]
pub struct CallOutput {
    json: String,
    value: OnceLock<Box<Value>>,
    /// What the `to_model` and `redact` hooks made; `None` for tools without hooks, which keeps
    /// the common output small to move.
    hooked: Option<Box<Hooked>>,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Hooked {
    pub(crate) model: Option<ModelOutput>,
    pub(crate) disclosure: Disclosure,
}

static FULL: Disclosure = Disclosure::Full;

impl CallOutput {
    pub(crate) fn new(json: String, hooked: Option<Box<Hooked>>) -> Self {
        CallOutput {
            json,
            value: OnceLock::new(),
            hooked,
        }
    }

    /// The output of a tool that answered with a JSON value (a tool defined at run time).
    pub(crate) fn of_value(value: Value) -> Self {
        CallOutput {
            json: value.to_string(),
            value: OnceLock::from(Box::new(value)),
            hooked: None,
        }
    }

    /// The output as JSON text, as serde wrote it from the tool's value.
    pub fn json(&self) -> &str {
        &self.json
    }

    /// The output as JSON text, without a copy.
    #[inline]
    pub fn into_json(self) -> String {
        self.json
    }

    /// The output as a JSON value, for the application.
    pub fn value(&self) -> &Value {
        self.value.get_or_init(|| Box::new(parse(&self.json)))
    }

    /// [`CallOutput::value`] by value.
    pub fn into_value(self) -> Value {
        match self.value.into_inner() {
            Some(v) => *v,
            None => parse(&self.json),
        }
    }

    /// The output read back into a Rust type (the tool's output type, or any type that reads
    /// the same JSON).
    pub fn deserialize<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(&self.json)
    }

    /// What the model receives: the tool's `to_model` summary, or else the output as JSON text.
    pub fn model(&self) -> ModelOutput {
        match self.summary() {
            Some(m) => m.clone(),
            None => ModelOutput::text(self.json.clone()),
        }
    }

    /// The tool's `to_model` summary, if it has one.
    pub fn summary(&self) -> Option<&ModelOutput> {
        self.hooked.as_ref().and_then(|h| h.model.as_ref())
    }

    /// What of the output may be shown to a person: all of it, the tool's `redact` copy, or
    /// nothing when redaction failed.
    pub fn disclosure(&self) -> &Disclosure {
        match &self.hooked {
            Some(h) => &h.disclosure,
            None => &FULL,
        }
    }

    /// The value a UI or transcript may show, if any.
    pub fn for_display(&self) -> Option<&Value> {
        match self.disclosure() {
            Disclosure::Full => Some(self.value()),
            Disclosure::Redacted(v) => Some(v),
            Disclosure::Withheld { .. } => None,
        }
    }
}

/// serde_json's own text is always JSON; `Null` would only stand for a broken invariant.
fn parse(json: &str) -> Value {
    serde_json::from_str(json).unwrap_or(Value::Null)
}

/// The output as JSON text.
impl fmt::Display for CallOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.json)
    }
}

impl fmt::Debug for CallOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("CallOutput");
        d.field("json", &self.json);
        if let Some(h) = &self.hooked {
            d.field("summary", &h.model)
                .field("disclosure", &h.disclosure);
        }
        d.finish()
    }
}

impl PartialEq for CallOutput {
    fn eq(&self, other: &Self) -> bool {
        self.json == other.json && self.hooked == other.hooked
    }
}

/// A `redact` function as the macro wraps it: the redacted JSON, or why redaction failed.
pub type RedactFn<T> = fn(&T) -> Result<Value, String>;

/// The optional output hooks of a tool: `to_model` and `redact`.
pub struct Hooks<T: 'static> {
    /// What the model receives instead of the output's JSON (`#[tool(to_model = path)]`).
    pub to_model: Option<fn(&T) -> ModelOutput>,
    /// What a person may see (`#[tool(redact = path)]`).
    pub redact: Option<RedactFn<T>>,
}

impl<T> Hooks<T> {
    /// No hooks: the model and a person see the output's JSON.
    pub const NONE: Hooks<T> = Hooks {
        to_model: None,
        redact: None,
    };
}

/// The JSON of what a `redact` function returns, or why it failed.
pub fn redacted<U: Serialize, E: std::fmt::Display>(r: Result<U, E>) -> Result<Value, String> {
    r.map_err(|e| e.to_string())
        .and_then(|u| serde_json::to_value(u).map_err(|e| e.to_string()))
}

/// A tool's value as its `CallOutput`. Only the serialization and the hook calls are generic;
/// the rest is shared by every tool.
pub(crate) fn ok<T: ToolOutput>(value: T, hooks: &Hooks<T>) -> Result<CallOutput, ToolError> {
    let json = serde_json::to_string(&value);
    let hooked = match (hooks.to_model, hooks.redact) {
        (None, None) => None,
        (to_model, redact) => Some(Box::new(Hooked {
            model: to_model.map(|f| f(&value)),
            disclosure: match redact {
                None => Disclosure::Full,
                Some(f) => guarded_redaction(&|| f(&value)),
            },
        })),
    };
    output(json, hooked)
}

/// Fail closed: a redaction that errors or panics shows nothing.
fn guarded_redaction(redact: &dyn Fn() -> Result<Value, String>) -> Disclosure {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(redact)) {
        Ok(Ok(v)) => Disclosure::Redacted(v),
        Ok(Err(reason)) => Disclosure::Withheld { reason },
        Err(_) => Disclosure::Withheld {
            reason: "the redaction function panicked".into(),
        },
    }
}

#[inline]
fn output(
    json: Result<String, serde_json::Error>,
    hooked: Option<Box<Hooked>>,
) -> Result<CallOutput, ToolError> {
    match json {
        Ok(json) => Ok(CallOutput::new(json, hooked)),
        Err(e) => Err(unserializable(e)),
    }
}

#[cold]
fn unserializable(e: serde_json::Error) -> ToolError {
    ToolError::failed(format!("the output could not be serialized: {e}"))
}
