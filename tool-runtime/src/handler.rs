//! What runs a tool defined at run time ([`Tool::define`](crate::Tool::define)): a [`Handler`]
//! gets the validated arguments as a JSON value and answers with one; its answer is checked
//! against the tool's output schema, when it has one, before anyone sees it.

use std::future::Future;

use serde_json::Value;

use crate::context::Context;
use crate::decode::Input;
use crate::error::ToolError;
use crate::future::BoxFuture;
use crate::output::CallOutput;
use crate::validate::Validator;

/// Runs a tool defined at run time. It receives arguments the tool's input schema has already
/// accepted (defaults filled in), with the caller's [`Context`]; what it returns is checked
/// against the output schema, when the tool has one.
///
/// A closure that needs no context is a handler through
/// [`ToolDef::build_fn`](crate::ToolDef::build_fn).
pub trait Handler: Send + Sync + 'static {
    /// Runs one call.
    fn call<'a>(
        &'a self,
        cx: &'a Context,
        arguments: Value,
    ) -> BoxFuture<'a, Result<Value, ToolError>>;
}

/// A closure as a [`Handler`].
pub(crate) struct FnHandler<F>(pub(crate) F);

impl<F, Fut> Handler for FnHandler<F>
where
    F: Fn(Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
{
    fn call<'a>(
        &'a self,
        _: &'a Context,
        arguments: Value,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin((self.0)(arguments))
    }
}

/// How a defined tool runs: its handler and the output schema its answers must fit.
pub(crate) struct Run {
    pub(crate) handler: Box<dyn Handler>,
    /// The output schema's validator, when the definition has one.
    pub(crate) output: Option<Validator>,
}

impl Run {
    /// Checks the arguments against the input schema (refused at once), then starts the
    /// handler.
    pub(crate) fn invoke<'a>(
        &'a self,
        cx: &'a Context,
        input: Input<'_>,
    ) -> Result<BoxFuture<'a, Result<CallOutput, ToolError>>, ToolError> {
        let arguments = Value::Object(input.into_checked_map()?);
        Ok(Box::pin(async move {
            let mut value = self.handler.call(cx, arguments).await?;
            if let Some(output) = &self.output {
                let violations = output.validate(&mut value);
                if !violations.is_empty() {
                    let each: Vec<String> = violations.iter().map(ToString::to_string).collect();
                    return Err(ToolError::failed(format!(
                        "its result does not match its output schema: {}",
                        each.join("; ")
                    )));
                }
            }
            Ok(CallOutput::of_value(value))
        }))
    }
}
