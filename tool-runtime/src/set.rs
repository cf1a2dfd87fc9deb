//! Tool sets: the registry of every `#[tool]` in the program, explicit sets for one agent, and
//! dispatch by name.

use std::fmt;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::approval::{ApprovalStore, StoreError};
use crate::arguments::Arguments;
use crate::call::{Call, Lookup, Middleware, Pipeline};
use crate::context::Context;
#[cfg(feature = "search")]
use crate::defer::Deferral;
use crate::defer::Loading;
use crate::error::ToolError;
use crate::tool::Tool;
use crate::validate::SchemaError;
use crate::wording::Wording;

/// Registers a tool in the program's registry with the module that declares it; `#[tool]`
/// submits one for every tool. Read only by [`ToolSet::from_module`].
#[doc(hidden)]
pub struct Registration {
    tool: &'static Tool,
    module: &'static str,
}

impl Registration {
    /// `tool`, declared in `module` (its `module_path!()`).
    pub const fn new(tool: &'static Tool, module: &'static str) -> Self {
        Registration { tool, module }
    }
}

inventory::collect!(Registration);

/// A tool as a set holds it: a `#[tool]`'s `static`, or a tool defined at run time
/// ([`Tool::define`]), shared by every set (and clone of a set) that holds it. Made with
/// `From` from `&'static Tool`, `Tool` or `Arc<Tool>`; it derefs to the [`Tool`].
#[derive(Clone)]
pub struct ToolRef(Held);

#[derive(Clone)]
enum Held {
    Static(&'static Tool),
    Shared(Arc<Tool>),
}

impl std::ops::Deref for ToolRef {
    type Target = Tool;

    #[inline]
    fn deref(&self) -> &Tool {
        match &self.0 {
            Held::Static(t) => t,
            Held::Shared(t) => t,
        }
    }
}

impl From<&'static Tool> for ToolRef {
    fn from(tool: &'static Tool) -> Self {
        ToolRef(Held::Static(tool))
    }
}

impl From<Tool> for ToolRef {
    fn from(tool: Tool) -> Self {
        ToolRef(Held::Shared(Arc::new(tool)))
    }
}

impl From<Arc<Tool>> for ToolRef {
    fn from(tool: Arc<Tool>) -> Self {
        ToolRef(Held::Shared(tool))
    }
}

impl From<&ToolRef> for ToolRef {
    fn from(tool: &ToolRef) -> Self {
        tool.clone()
    }
}

impl fmt::Debug for ToolRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// Why a set of tools could not be formed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolSetError {
    /// Two tools share a name (from two crates: within one crate this is a compile error).
    DuplicateName {
        /// The name the tools share.
        name: String,
    },
    /// A tool's schema did not compile into a validator.
    Schema {
        /// The tool whose schema failed.
        tool: String,
        /// What in the schema could not be compiled.
        error: SchemaError,
    },
}

impl fmt::Display for ToolSetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolSetError::DuplicateName { name } => write!(
                f,
                "two tools are named `{name}`: rename one with #[tool(name = \"...\")] so the model can tell them apart"
            ),
            ToolSetError::Schema { tool, error } => write!(f, "tool `{tool}`: {error}"),
        }
    }
}

impl std::error::Error for ToolSetError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ToolSetError::Schema { error, .. } => Some(error),
            ToolSetError::DuplicateName { .. } => None,
        }
    }
}

/// A set of tools with unique names, in a fixed order, callable by name.
///
/// One set is what one agent is given: [`export`](ToolSet::export) writes it into a provider's
/// request, and [`call`](ToolSet::call) dispatches the calls the model makes, checking
/// permissions, arguments and approval before a tool runs.
///
/// ```
/// use tool_runtime::{Api, Context, ToolSet, tool};
///
/// #[tool(description = "Add two whole numbers and return the sum.")]
/// fn add(
///     #[arg(description = "The first number", range = -1000..=1000)] a: i32,
///     #[arg(description = "The second number", range = -1000..=1000)] b: i32,
/// ) -> i32 {
///     a + b
/// }
///
/// #[tool(description = "Multiply two whole numbers and return the product.")]
/// fn multiply(
///     #[arg(description = "The first number", range = -1000..=1000)] a: i32,
///     #[arg(description = "The second number", range = -1000..=1000)] b: i32,
/// ) -> i32 {
///     a * b
/// }
///
/// let tools = ToolSet::new([add::tool(), multiply::tool()]).unwrap();
/// assert_eq!(tools.names().collect::<Vec<_>>(), ["add", "multiply"]);
/// assert_eq!(tools.export(Api::ANTHROPIC).unwrap().len(), 2);
///
/// let cx = Context::new();
/// let out = pollster::block_on(tools.call(&cx, "multiply", r#"{"a": 6, "b": 7}"#)).unwrap();
/// assert_eq!(out.value(), 42);
///
/// // Two tools of one name are refused when the set is formed.
/// assert!(ToolSet::new([add::tool(), add::tool()]).is_err());
/// ```
#[derive(Clone)]
pub struct ToolSet {
    tools: Vec<ToolRef>,
    /// What the model reads from the toolkit itself (English unless set).
    wording: Arc<Wording>,
    /// Name to index, hashed with FxHash: names are few and short, and SipHash's DoS resistance
    /// buys nothing for a set fixed at start-up.
    by_name: FxHashMap<Box<str>, usize>,
    /// Where calls that need approval wait, and what wraps every call (outermost first).
    pipeline: Pipeline,
    /// The tools sent only once the model finds them ([`ToolSet::defer`]).
    #[cfg(feature = "search")]
    pub(crate) deferred: Option<Arc<Deferral>>,
}

impl fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolSet")
            .field("tools", &self.tools)
            .field("middleware", &self.pipeline.layers.len())
            .finish_non_exhaustive()
    }
}

impl ToolSet {
    /// A set of exactly these tools, in this order: `#[tool]`s (`add::tool()`), tools defined
    /// at run time ([`Tool::define`]), or both ([`ToolRef`]).
    pub fn new<T: Into<ToolRef>>(
        tools: impl IntoIterator<Item = T>,
    ) -> Result<ToolSet, ToolSetError> {
        ToolSet {
            tools: Vec::new(),
            by_name: FxHashMap::default(),
            wording: Arc::default(),
            pipeline: Pipeline::new(),
            #[cfg(feature = "search")]
            deferred: None,
        }
        .with_tools(tools)
    }

    /// The set with these tools added after its own (a gateway adds a remote server's tools to
    /// its local ones). A name already in the set is refused.
    pub fn with_tools<T: Into<ToolRef>>(
        mut self,
        tools: impl IntoIterator<Item = T>,
    ) -> Result<ToolSet, ToolSetError> {
        for t in tools {
            let t: ToolRef = t.into();
            if self.by_name.contains_key(t.name()) {
                return Err(ToolSetError::DuplicateName {
                    name: t.name().to_owned(),
                });
            }
            t.check().map_err(|error| ToolSetError::Schema {
                tool: t.name().to_owned(),
                error,
            })?;
            self.by_name.insert(t.name().into(), self.tools.len());
            self.tools.push(t);
        }
        Ok(self)
    }

    /// Every `#[tool]` declared in `module` or a module inside it, ordered by name:
    /// `ToolSet::from_module(module_path!())` at the root of a crate is every tool of that
    /// crate, and in a module, that module's. A dependency's tools are never in it, however
    /// they are linked: name them with [`new`](ToolSet::new) or [`with_tools`](ToolSet::with_tools).
    ///
    /// ```
    /// mod leave {
    ///     #[tool_runtime::tool(description = "Return the leave days left of the signed-in employee.")]
    ///     pub fn leave_left() -> u8 { 7 }
    /// }
    /// mod weather {
    ///     #[tool_runtime::tool(description = "Return today's weather in the office's city.")]
    ///     pub fn weather() -> String { "sunny".into() }
    /// }
    /// # fn main() {
    /// let here = module_path!();
    /// let all = tool_runtime::ToolSet::from_module(here).unwrap();
    /// assert_eq!(all.names().collect::<Vec<_>>(), ["leave_left", "weather"]);
    /// let leave = tool_runtime::ToolSet::from_module(&format!("{here}::leave")).unwrap();
    /// assert_eq!(leave.names().collect::<Vec<_>>(), ["leave_left"]);
    /// # }
    /// ```
    pub fn from_module(module: &str) -> Result<ToolSet, ToolSetError> {
        let within = |m: &str| {
            m.strip_prefix(module)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
        };
        let mut tools: Vec<&'static Tool> = inventory::iter::<Registration>
            .into_iter()
            .filter(|r| within(r.module))
            .map(|r| r.tool)
            .collect();
        tools.sort_by_key(|t| t.name());
        ToolSet::new(tools)
    }

    /// The tool named `name`, if the set has one.
    #[inline]
    pub fn get(&self, name: &str) -> Option<&ToolRef> {
        // A short scan beats hashing the name for the sets one agent should have (about ten
        // tools at most: more, and models pick the wrong one).
        if self.tools.len() <= 16 {
            return self
                .tools
                .iter()
                .find(|t| crate::validate::same_name(t.name(), name));
        }
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    /// The blocking tool `name` ([`Tool::blocks`]) with what its calls run through, owned: to
    /// run one call on another thread. `None` for a tool that does not block, or no tool.
    pub(crate) fn detached(&self, name: &str) -> Option<(ToolRef, Pipeline)> {
        let tool = self.get(name)?;
        tool.blocks().then(|| (tool.clone(), self.pipeline.clone()))
    }

    /// The tools, in the set's order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &ToolRef> + '_ {
        self.tools.iter()
    }

    /// How many tools the set holds.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether the set holds no tools.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The tools' names, in the set's order.
    pub fn names(&self) -> impl Iterator<Item = &str> + '_ {
        self.tools.iter().map(|t| t.name())
    }

    /// Calls the tool named `name`: `.await` the [`Call`], or run it with [`Call::blocking`].
    /// Arguments are JSON text as a model sends it, or a value a transport has parsed
    /// ([`Arguments`]). An unknown name is [`ToolError::UnknownTool`], with the closest name.
    pub fn call<'a>(
        &'a self,
        cx: &'a Context,
        name: &str,
        arguments: impl Into<Arguments<'a>>,
    ) -> Call<'a> {
        Call::new(
            self.find(name).map_err(Box::new),
            cx,
            arguments.into(),
            &self.pipeline,
        )
    }

    /// Runs the call a person approved, held under `ticket` in this set's approval store (the
    /// [`PendingCall`](crate::PendingCall) of [`ToolError::ApprovalRequired`]). The store hands
    /// it out once, so it runs at most once, in any process that shares the store: a second
    /// `resume` of the same ticket is [`ToolError::NotPending`] and nothing runs. The arguments
    /// the store kept are the ones that run; permissions are checked again with this context.
    pub fn resume<'a>(&'a self, cx: &'a Context, ticket: &str) -> Call<'a> {
        Call::resume(cx, ticket, self, &self.pipeline)
    }

    /// Drops the call held under `ticket` (a person rejected it): it can no longer be resumed.
    /// `true` when a call was waiting under that ticket.
    pub async fn reject(&self, ticket: &str) -> Result<bool, StoreError> {
        Ok(self.pipeline.approvals.take(ticket).await?.is_some())
    }

    /// The set with its calls held for approval in `store` instead of its own: a store shared by
    /// several sets (and their clones, which share it already) lets any of them resume a call;
    /// a SQLite or PostgreSQL store lets another process (or replica) resume them.
    pub fn with_approvals(mut self, store: Arc<dyn ApprovalStore>) -> Self {
        self.pipeline.approvals = store;
        self
    }

    /// Where this set holds calls waiting for approval.
    pub fn approvals(&self) -> &Arc<dyn ApprovalStore> {
        &self.pipeline.approvals
    }

    /// The set with `middleware` wrapped around every call, inside any middleware added before
    /// (see [`Middleware`]).
    pub fn with_middleware(mut self, middleware: impl Middleware + 'static) -> Self {
        let mut layers: Vec<Arc<dyn Middleware>> = self.pipeline.layers.to_vec();
        layers.push(Arc::new(middleware));
        self.pipeline.layers = layers.into();
        self
    }

    /// The tools this caller may see and call: those whose `requires` its grants satisfy. Calls
    /// are checked again at run time, so a guessed name of another tool is still refused.
    pub fn visible_to(&self, cx: &Context) -> ToolSet {
        let tools: Vec<ToolRef> = self
            .tools
            .iter()
            .filter(|t| t.permits(cx))
            .cloned()
            .collect();
        let by_name = tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name().into(), i))
            .collect();
        ToolSet {
            tools,
            by_name,
            wording: self.wording.clone(),
            pipeline: self.pipeline.clone(),
            #[cfg(feature = "search")]
            deferred: self.deferred.clone(),
        }
    }

    /// How a request offers the tool named `name`.
    pub(crate) fn loading(&self, name: &str) -> Loading {
        #[cfg(feature = "search")]
        if let Some(deferred) = &self.deferred {
            return deferred.loading(name);
        }
        let _ = name;
        Loading::Always
    }

    /// The set without the tool named `name` (the others in their order).
    #[cfg(feature = "search")]
    pub(crate) fn without(mut self, name: &str) -> ToolSet {
        self.tools.retain(|t| t.name() != name);
        self.by_name = self
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name().into(), i))
            .collect();
        self
    }

    /// The name of the set's search tool, when it defers tools.
    pub(crate) fn search_tool(&self) -> Option<&'static str> {
        #[cfg(feature = "search")]
        if self.deferred.is_some() {
            return Some(crate::defer::SEARCH_TOOL);
        }
        None
    }

    /// Whether the set has [deferred](ToolSet::defer) tools (and so its search tool).
    pub fn defers(&self) -> bool {
        self.search_tool().is_some()
    }

    /// Whether the tool named `name` is sent only once the model finds it
    /// ([`defer`](ToolSet::defer), feature `search`).
    pub fn is_deferred(&self, name: &str) -> bool {
        self.loading(name) == Loading::Deferred
    }

    /// The set with its own wording of the model-facing messages (see [`Wording`]).
    pub fn with_wording(mut self, wording: Wording) -> Self {
        self.wording = Arc::new(wording);
        self
    }

    /// The wording of the model-facing messages.
    pub fn wording(&self) -> &Wording {
        &self.wording
    }

    /// The description the model reads for `tool`, with the boundary sentence in this set's
    /// wording.
    pub fn description(&self, tool: &Tool) -> String {
        self.wording
            .describe(tool.spec_description(), tool.not_for())
    }

    /// What the model is told about a failed call, in this set's wording.
    pub fn model_message(&self, error: &ToolError) -> String {
        self.wording.error_message(error)
    }

    /// The set's closest name to `name`, when one is close enough to be a likely misspelling.
    pub fn closest(&self, name: &str) -> Option<&str> {
        self.names()
            .map(|n| (strsim::jaro_winkler(n, name), n))
            .filter(|(s, _)| *s >= 0.8)
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, n)| n)
    }

    #[cold]
    fn unknown(&self, name: &str) -> ToolError {
        ToolError::UnknownTool {
            name: name.to_owned(),
            did_you_mean: self.closest(name).map(str::to_owned),
        }
    }
}

impl Lookup for ToolSet {
    #[inline]
    fn find(&self, name: &str) -> Result<&Tool, ToolError> {
        match self.get(name) {
            Some(tool) => Ok(tool),
            None => Err(self.unknown(name)),
        }
    }
}
