//! What the host supplies to a call and the model never does: the caller's session and
//! [`Grants`](crate::Grants), the state of an `impl` group (`&self`), `#[ctx]` values.

use std::any::{Any, TypeId, type_name};
use std::fmt;
use std::sync::Arc;

use crate::error::ToolError;

/// A small type map of host values, looked up by type when a tool needs one.
///
/// A `#[ctx]` parameter (and an `impl` group's `&self`) is filled from the call's context, never
/// from the model's arguments; a call whose context lacks the value fails with
/// [`ToolError::MissingContext`] and the tool does not run.
///
/// ```
/// use tool_runtime::{Context, ToolError, ToolSet, tool};
///
/// /// The warehouse the application is connected to.
/// struct Warehouse {
///     stock: u32,
/// }
///
/// #[tool(description = "Return the number of items in stock in the warehouse right now.")]
/// fn check_stock(#[ctx] warehouse: &Warehouse) -> u32 {
///     warehouse.stock
/// }
///
/// let tools = ToolSet::new([check_stock::tool()]).unwrap();
/// let cx = Context::new().with(Warehouse { stock: 12 });
/// assert_eq!(cx.get::<Warehouse>().map(|w| w.stock), Some(12));
/// let out = tools.call(&cx, "check_stock", "{}").blocking().unwrap();
/// assert_eq!(out.value(), &serde_json::json!(12));
///
/// let err = tools.call(&Context::new(), "check_stock", "{}").blocking().unwrap_err();
/// assert!(matches!(err, ToolError::MissingContext { .. }));
/// ```
///
/// Cloning a context shares its values: a host adds what one call needs (its
/// [`Progress`](crate::Progress)) to a clone without copying the rest.
#[derive(Default, Clone)]
pub struct Context {
    entries: Vec<(TypeId, &'static str, Arc<dyn Any + Send + Sync>)>,
}

impl Context {
    /// An empty context: enough for tools that need no host values.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the value of type `T`.
    pub fn with<T: Any + Send + Sync>(mut self, value: T) -> Self {
        self.insert(value);
        self
    }

    /// Adds (or replaces) the value of type `T`.
    pub fn insert<T: Any + Send + Sync>(&mut self, value: T) {
        let id = TypeId::of::<T>();
        self.entries.retain(|(t, _, _)| *t != id);
        self.entries.push((id, type_name::<T>(), Arc::new(value)));
    }

    /// The value of type `T`, if the host supplied one.
    pub fn get<T: Any>(&self) -> Option<&T> {
        let id = TypeId::of::<T>();
        self.entries
            .iter()
            .find(|(t, _, _)| *t == id)
            .and_then(|(_, _, v)| (**v).downcast_ref())
    }
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set()
            .entries(self.entries.iter().map(|(_, n, _)| n))
            .finish()
    }
}

/// The host value an `impl` group's `&self` refers to.
///
/// A tool's [`Progress`](crate::Progress) is never missing: without one in the context, its
/// reports go nowhere; nor are its [`Answers`](crate::Answers): without them, none was given.
pub fn state<T: 'static>(cx: &Context) -> Result<&T, ToolError> {
    cx.get::<T>()
        .or_else(|| (&crate::progress::NONE as &dyn Any).downcast_ref())
        .or_else(|| (&crate::ask::NONE as &dyn Any).downcast_ref())
        .or_else(|| (&crate::commit::NONE as &dyn Any).downcast_ref())
        .ok_or(ToolError::MissingContext {
            type_name: std::any::type_name::<T>(),
        })
}
