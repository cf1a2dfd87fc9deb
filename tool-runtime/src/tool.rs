//! A tool: its metadata, its schemas (built once), and how it is invoked.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context as TaskContext, Poll};

use schemars::{Schema, SchemaGenerator};
use serde_json::Value;

use crate::arguments::Arguments;
use crate::context::Context;
use crate::decode::Input;
use crate::error::ToolError;
use crate::future::BoxFuture;
use crate::handler::Run;
use crate::host::{Annotations, Grants};
use crate::output::CallOutput;
use crate::schema;
use crate::task::TaskSupport;
use crate::validate::{SchemaError, Validator};
use crate::wording::Wording;

/// The permissions of `required` the caller's [`Grants`] in `cx` lack (all of them without grants).
fn missing<S: AsRef<str>>(cx: &Context, required: &[S]) -> Vec<String> {
    match cx.get::<Grants>() {
        Some(g) => g.missing(required),
        None => required.iter().map(|p| p.as_ref().to_owned()).collect(),
    }
}

/// The result of starting a call: sync tools are done at once, async ones are awaited.
pub enum Invocation<'a> {
    /// A sync tool's result, or a failure before the tool ran (permission, validation,
    /// approval, a missing host value).
    Ready(Result<CallOutput, ToolError>),
    /// An async tool's future, still to be awaited.
    Pending(BoxFuture<'a, Result<CallOutput, ToolError>>),
}

/// Invokes a tool: decodes its arguments from `Input` and runs it.
pub(crate) type InvokeFn = for<'a> fn(&'a Context, Input<'_>) -> Invocation<'a>;
/// Builds a schema body.
pub(crate) type SchemaFn = fn(&mut SchemaGenerator) -> Schema;

/// What `#[tool]` declares about a tool; the generated code fills it in.
#[doc(hidden)]
pub struct Spec {
    pub name: &'static str,
    pub description: &'static str,
    pub not_for: Option<&'static str>,
    /// Show a panic's message to the model (`#[tool(panic_to_model = true)]`).
    pub panic_to_model: bool,
    /// An `async fn`: it may wait; a sync tool blocks the thread it runs on.
    pub is_async: bool,
    /// A call may block its thread: a sync tool, unless it says `blocking = false`.
    pub blocking: bool,
    /// How long one call may run (`#[tool(timeout = "30s")]`), in milliseconds.
    pub timeout_ms: Option<u64>,
    /// How many characters of a result the model receives (`#[tool(max_result_chars = ..)]`).
    pub max_result_chars: Option<u32>,
    /// Permissions the caller's [`Grants`] must hold (`#[tool(requires = "..")]`).
    pub requires: &'static [&'static str],
    /// A person approves each call before it runs.
    pub needs_approval: bool,
    /// Whether a call may run as a task (`#[tool(task = "optional")]`).
    pub task: TaskSupport,
    /// The tool asks the person questions while it runs (it takes `#[ctx] &Answers`).
    pub asks: bool,
    /// The tool passes a commit point before its change (it takes `#[ctx] &Commit`).
    pub commits: bool,
    /// Questions the person answers before the tool runs (`#[tool(ask_first = ..)]`).
    pub ask_first: Option<fn() -> Vec<crate::ask::Question>>,
    /// Parameters have rules of their own (`#[arg(validate = ..)]`): a call is checked against
    /// them before it is held for approval.
    pub checks: bool,
    pub annotations: Annotations,
    /// Lints this tool silences, as `(id, reason)` (`#[tool(allow_lint = "id: reason")]`).
    pub allow_lints: &'static [(&'static str, &'static str)],
    pub input: SchemaFn,
    pub output: SchemaFn,
    pub invoke: InvokeFn,
}

/// One tool: declared with `#[tool]` (it lives in a `static`; its schemas are built on first
/// use), or defined at run time with [`Tool::define`] (from a JSON Schema and a handler).
pub struct Tool {
    source: Source,
    built: OnceLock<Built>,
    /// `execute_tool {name}`, its calls' span name: written once, not on every call.
    span_name: OnceLock<String>,
}

enum Source {
    Declared(Spec),
    Defined(Box<Defined>),
}

/// A tool defined at run time: what [`ToolDef`] was given.
pub(crate) struct Defined {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) not_for: Option<String>,
    pub(crate) requires: Vec<String>,
    pub(crate) needs_approval: bool,
    pub(crate) task: TaskSupport,
    pub(crate) asks: bool,
    pub(crate) commits: bool,
    pub(crate) annotations: Annotations,
    pub(crate) timeout: Option<std::time::Duration>,
    pub(crate) max_result_chars: Option<u32>,
    pub(crate) allow_lints: Vec<(String, String)>,
    pub(crate) run: Run,
}

struct Built {
    description: String,
    input_schema: Value,
    output_schema: Value,
    validator: Result<Validator, SchemaError>,
}

impl Tool {
    #[doc(hidden)]
    pub const fn __new(spec: Spec) -> Tool {
        Tool {
            source: Source::Declared(spec),
            built: OnceLock::new(),
            span_name: OnceLock::new(),
        }
    }

    /// A tool defined at run time (see [`ToolDef`]).
    pub(crate) fn defined(
        defined: Defined,
        input_schema: Value,
        output_schema: Value,
        validator: Validator,
    ) -> Tool {
        let description =
            Wording::english().describe(&defined.description, defined.not_for.as_deref());
        Tool {
            source: Source::Defined(Box::new(defined)),
            built: OnceLock::from(Built {
                description,
                input_schema,
                output_schema,
                validator: Ok(validator),
            }),
            span_name: OnceLock::new(),
        }
    }

    /// The name the model calls it by.
    pub fn name(&self) -> &str {
        match &self.source {
            Source::Declared(s) => s.name,
            Source::Defined(d) => &d.name,
        }
    }

    /// The description the model reads, with the boundary sentence from `not_for`.
    pub fn description(&self) -> &str {
        &self.built().description
    }

    /// The description as written, without the boundary sentence.
    pub fn spec_description(&self) -> &str {
        match &self.source {
            Source::Declared(s) => s.description,
            Source::Defined(d) => &d.description,
        }
    }

    /// Whether the tool silences lint `id` (`#[tool(allow_lint = "id: reason")]`), and why.
    pub fn silences_lint(&self, id: &str) -> Option<&str> {
        match &self.source {
            Source::Declared(s) => s
                .allow_lints
                .iter()
                .find(|(i, _)| *i == id)
                .map(|(_, why)| *why),
            Source::Defined(d) => d
                .allow_lints
                .iter()
                .find(|(i, _)| i == id)
                .map(|(_, why)| why.as_str()),
        }
    }

    /// Permissions a caller needs to see and call this tool.
    pub fn requires(&self) -> Vec<&str> {
        match &self.source {
            Source::Declared(s) => s.requires.to_vec(),
            Source::Defined(d) => d.requires.iter().map(String::as_str).collect(),
        }
    }

    /// Whether the tool is an `async fn` (a tool defined at run time always is). A server runs
    /// a sync tool on a thread where blocking is allowed, never on the async workers, unless it
    /// says `blocking = false` (see [`Tool::blocks`]).
    pub fn is_async(&self) -> bool {
        match &self.source {
            Source::Declared(s) => s.is_async,
            Source::Defined(_) => true,
        }
    }

    /// Whether a call may block the thread it runs on: a sync tool, unless it says
    /// `#[tool(blocking = false)]`. A server runs such a call on a thread where blocking is
    /// allowed (Tokio's blocking pool), never on the async workers; the others run on the
    /// worker that received the request, without the hand-off.
    pub fn blocks(&self) -> bool {
        match &self.source {
            Source::Declared(s) => s.blocking,
            Source::Defined(_) => false,
        }
    }

    /// How long one call may run (`#[tool(timeout = "30s")]`); `None` for the server's default.
    pub fn timeout(&self) -> Option<std::time::Duration> {
        match &self.source {
            Source::Declared(s) => s.timeout_ms.map(std::time::Duration::from_millis),
            Source::Defined(d) => d.timeout,
        }
    }

    /// How many characters of a result the model receives (`#[tool(max_result_chars = ..)]`,
    /// [`ToolDef::max_result_chars`](crate::ToolDef::max_result_chars)); beyond them it gets the
    /// start of the result and a notice ([`Wording::cut_result`](crate::Wording::cut_result)).
    /// `None`: the whole result.
    pub fn max_result_chars(&self) -> Option<usize> {
        match &self.source {
            Source::Declared(s) => s.max_result_chars.map(|n| n as usize),
            Source::Defined(d) => d.max_result_chars.map(|n| n as usize),
        }
    }

    /// Whether each call waits for a person's approval.
    pub fn needs_approval(&self) -> bool {
        match &self.source {
            Source::Declared(s) => s.needs_approval,
            Source::Defined(d) => d.needs_approval,
        }
    }

    /// Whether a call may run as a task, one the caller follows after its request
    /// ([`crate::task`]): a server that keeps tasks runs a call of an `Optional` tool as one
    /// when the caller can follow it, and refuses a caller who cannot for a `Required` one.
    pub fn task_support(&self) -> TaskSupport {
        match &self.source {
            Source::Declared(s) => s.task,
            Source::Defined(d) => d.task,
        }
    }

    /// Whether the tool may ask the person questions while it runs ([`Answers`](crate::Answers)):
    /// a server keeps such a call's arguments to run it again with the answers.
    pub fn asks(&self) -> bool {
        match &self.source {
            Source::Declared(s) => s.asks || s.ask_first.is_some(),
            Source::Defined(d) => d.asks,
        }
    }

    /// Whether a cancel stops the tool until it reaches its commit point
    /// ([`Commit`](crate::Commit): it takes `#[ctx] &Commit`, or [`ToolDef::commits`](crate::ToolDef::commits)).
    /// A host that cancels calls (an MCP task's `tasks/cancel`) stops such a tool only before
    /// that point; a tool that neither commits nor is [read-only](Annotations::read_only) is
    /// committed from its start, and a read-only one is never committed.
    pub fn commits(&self) -> bool {
        match &self.source {
            Source::Declared(s) => s.commits,
            Source::Defined(d) => d.commits,
        }
    }

    /// The questions the person answers before the tool runs (`#[tool(ask_first = ..)]`): a
    /// server asks them before anything runs (before a task is made), then runs the tool with
    /// the answers in its [`Answers`](crate::Answers).
    pub fn ask_first(&self) -> Option<Vec<crate::ask::Question>> {
        match &self.source {
            Source::Declared(s) => s.ask_first.map(|questions| questions()),
            Source::Defined(_) => None,
        }
    }

    /// MCP hints about the tool (never trusted for security).
    pub fn annotations(&self) -> &Annotations {
        match &self.source {
            Source::Declared(s) => &s.annotations,
            Source::Defined(d) => &d.annotations,
        }
    }

    /// Whether the caller's [`Grants`] in `cx` hold every permission the tool `requires`.
    pub fn permits(&self, cx: &Context) -> bool {
        self.forbidden(cx).is_none()
    }

    /// Why `cx` may not call the tool, if it may not. Inlined: most tools require nothing.
    #[inline]
    pub(crate) fn forbidden(&self, cx: &Context) -> Option<ToolError> {
        let requires_nothing = match &self.source {
            Source::Declared(s) => s.requires.is_empty(),
            Source::Defined(d) => d.requires.is_empty(),
        };
        if requires_nothing {
            None
        } else {
            self.lacking(cx)
        }
    }

    fn lacking(&self, cx: &Context) -> Option<ToolError> {
        let missing: Vec<String> = match &self.source {
            Source::Declared(s) => missing(cx, s.requires),
            Source::Defined(d) => missing(cx, &d.requires),
        };
        (!missing.is_empty()).then(|| ToolError::Forbidden {
            tool: self.name().to_owned(),
            missing,
        })
    }

    /// What the tool is not for, as written in `not_for`.
    pub fn not_for(&self) -> Option<&str> {
        match &self.source {
            Source::Declared(s) => s.not_for,
            Source::Defined(d) => d.not_for.as_deref(),
        }
    }

    /// The canonical input schema (JSON Schema 2020-12).
    pub fn input_schema(&self) -> &Value {
        &self.built().input_schema
    }

    /// The canonical output schema (JSON Schema 2020-12) of the value the tool returns.
    pub fn output_schema(&self) -> &Value {
        &self.built().output_schema
    }

    /// Whether the schema compiled into a validator; a tool set refuses a tool that did not.
    pub fn check(&self) -> Result<(), SchemaError> {
        self.built()
            .validator
            .as_ref()
            .map(|_| ())
            .map_err(Clone::clone)
    }

    fn panic_to_model(&self) -> bool {
        match &self.source {
            Source::Declared(s) => s.panic_to_model,
            Source::Defined(_) => false,
        }
    }

    /// The name of its calls' spans, as the conventions name them: `execute_tool {name}`.
    pub(crate) fn span_name(&self) -> &str {
        self.span_name
            .get_or_init(|| format!("execute_tool {}", self.name()))
    }

    fn built(&self) -> &Built {
        self.built.get_or_init(|| {
            // A defined tool's schemas are built with it: only a declared one gets here.
            let Source::Declared(spec) = &self.source else {
                unreachable!("a tool defined at run time is built when it is defined")
            };
            let mut g = schema::input_generator();
            let input = (spec.input)(&mut g);
            let input_schema = schema::finish_root(input, &mut g).to_value();
            let mut g = schema::output_generator();
            let output = (spec.output)(&mut g);
            let mut output_schema = schema::finish_root(output, &mut g).to_value();
            schema::strip_number_formats(&mut output_schema);
            let validator = Validator::new(&input_schema);
            let description = Wording::english().describe(spec.description, spec.not_for);
            Built {
                description,
                input_schema,
                output_schema,
                validator,
            }
        })
    }

    /// Checks a call without running it or holding it: the caller's permission, the arguments
    /// against the schema, and the tool's own rules (`#[arg(validate = ..)]`). What a host asks
    /// before it accepts a call it will run later (a task), so a bad call is refused in its own
    /// request. The call itself checks them again when it runs.
    pub fn check_call(&self, cx: &Context, arguments: Arguments<'_>) -> Result<(), ToolError> {
        if let Some(e) = self.forbidden(cx) {
            return Err(e);
        }
        let validator = match &self.built().validator {
            Ok(v) => v,
            Err(e) => return Err(ToolError::Schema(e.clone())),
        };
        self.own_rules(cx, &arguments, validator)?;
        let input = Input {
            arguments,
            validator,
            check_only: false,
        };
        input.into_checked_map().map(|_| ())
    }

    /// The tool's own rules (`#[arg(validate = ..)]`) on `arguments`, without running it.
    fn own_rules(
        &self,
        cx: &Context,
        arguments: &Arguments<'_>,
        validator: &Validator,
    ) -> Result<(), ToolError> {
        let Source::Declared(spec) = &self.source else {
            return Ok(());
        };
        if !spec.checks {
            return Ok(());
        }
        let check = Input {
            arguments: arguments.clone(),
            validator,
            check_only: true,
        };
        let invoke = spec.invoke;
        match catch_unwind(AssertUnwindSafe(|| invoke(cx, check))) {
            Ok(Invocation::Ready(Err(e))) => Err(e),
            Err(panic) => Err(panicked(panic, self.panic_to_model())),
            Ok(_) => Ok(()),
        }
    }

    /// Permission, then validation, then (unless `approved`) approval, then the tool itself.
    #[inline]
    pub(crate) fn start<'a>(
        &'a self,
        cx: &'a Context,
        arguments: Arguments<'_>,
        approved: bool,
    ) -> Step<'a> {
        if let Some(e) = self.forbidden(cx) {
            return Step::Done(Err(e));
        }
        let validator = match &self.built().validator {
            Ok(v) => v,
            Err(e) => return Step::Done(Err(ToolError::Schema(e.clone()))),
        };
        if self.needs_approval() && !approved {
            // A call its own rules refuse is refused now, never put to a person first.
            if let Err(e) = self.own_rules(cx, &arguments, validator) {
                return Step::Done(Err(e));
            }
            let input = Input {
                arguments,
                validator,
                check_only: false,
            };
            return match input.into_checked_map() {
                Ok(args) => Step::Hold(Value::Object(args)),
                Err(e) => Step::Done(Err(e)),
            };
        }
        let input = Input {
            arguments,
            validator,
            check_only: false,
        };
        let invocation = match &self.source {
            Source::Declared(spec) => {
                let invoke = spec.invoke;
                catch_unwind(AssertUnwindSafe(|| invoke(cx, input)))
            }
            Source::Defined(d) => {
                catch_unwind(AssertUnwindSafe(|| match d.run.invoke(cx, input) {
                    Ok(running) => Invocation::Pending(running),
                    Err(e) => Invocation::Ready(Err(e)),
                }))
            }
        };
        match invocation {
            Ok(Invocation::Ready(r)) => Step::Done(r),
            Ok(Invocation::Pending(f)) => Step::Running(CatchUnwind::new(f, self)),
            Err(panic) => Step::Done(Err(panicked(panic, self.panic_to_model()))),
        }
    }
}

/// Where a started call stands.
pub(crate) enum Step<'a> {
    /// Finished: a sync tool's result, or a failure before the tool ran.
    Done(Result<CallOutput, ToolError>),
    /// An async tool, still to be awaited.
    Running(CatchUnwind<'a>),
    /// Validated and waiting for approval: the arguments to hold, defaults filled in.
    Hold(Value),
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name())
            .finish_non_exhaustive()
    }
}

pub(crate) fn panicked(panic: Box<dyn Any + Send>, to_model: bool) -> ToolError {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with a non-string payload".into());
    ToolError::Panicked { message, to_model }
}

/// Turns a panic while polling an async tool into [`ToolError::Panicked`].
pub(crate) struct CatchUnwind<'a> {
    future: BoxFuture<'a, Result<CallOutput, ToolError>>,
    panic_to_model: bool,
}

impl<'a> CatchUnwind<'a> {
    pub(crate) fn new(future: BoxFuture<'a, Result<CallOutput, ToolError>>, tool: &Tool) -> Self {
        CatchUnwind {
            future,
            panic_to_model: tool.panic_to_model(),
        }
    }
}

impl Future for CatchUnwind<'_> {
    type Output = Result<CallOutput, ToolError>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let to_model = self.panic_to_model;
        let fut = self.future.as_mut();
        match catch_unwind(AssertUnwindSafe(|| fut.poll(cx))) {
            Ok(p) => p,
            Err(panic) => Poll::Ready(Err(panicked(panic, to_model))),
        }
    }
}

/// An async tool's future, as the generated code starts it.
pub fn boxed<'a, F>(f: F) -> Invocation<'a>
where
    F: std::future::Future<Output = Result<CallOutput, ToolError>> + Send + 'a,
{
    Invocation::Pending(Box::pin(f))
}

/// A call checked before it is held ([`Input::check_only`](crate::decode::Input::check_only)): its rules hold, and nothing ran.
pub fn checked() -> Invocation<'static> {
    Invocation::Ready(Ok(CallOutput::of_value(Value::Null)))
}

/// The violations of parameter `name`'s own rules (`#[arg(validate = ..)]`), placed under it.
pub fn rules_of(
    name: &str,
    broken: Vec<crate::validate::Violation>,
) -> impl Iterator<Item = crate::validate::Violation> + '_ {
    broken.into_iter().map(move |mut v| {
        v.path
            .0
            .insert(0, crate::validate::Segment::Key(name.to_owned()));
        v
    })
}

/// Parameters whose own rules are broken: every violation, the tool not run.
#[cold]
pub fn rules_broken(broken: Vec<crate::validate::Violation>) -> Invocation<'static> {
    Invocation::Ready(Err(ToolError::InvalidArguments(
        crate::validate::Violations(broken),
    )))
}
