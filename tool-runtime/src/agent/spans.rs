//! The agent loop's spans by OpenTelemetry's GenAI conventions: a run is `invoke_agent`, each
//! model turn inside it a client span `chat {model}` with the requested model, the response's
//! id, model and token usage
//! (`gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens`, and of them
//! `gen_ai.usage.cache_read.input_tokens` and `gen_ai.usage.cache_write.input_tokens`) when the
//! response has them; the run's span carries the sums. The tools' `execute_tool` spans are the run's children.

use tracing::Span;

use super::AgentError;
use crate::provider::{Api, ResponseInfo};

/// The span of one run (or resumption) of the loop.
pub(crate) fn run(api: Api) -> Span {
    tracing::info_span!(
        target: "tool_runtime::agent",
        "gen_ai.invoke_agent",
        otel.name = "invoke_agent",
        otel.kind = "internal",
        otel.status_code = tracing::field::Empty,
        gen_ai.operation.name = "invoke_agent",
        gen_ai.provider.name = api.provider().conventions_name(),
        gen_ai.usage.input_tokens = tracing::field::Empty,
        gen_ai.usage.output_tokens = tracing::field::Empty,
        gen_ai.usage.cache_read.input_tokens = tracing::field::Empty,
        gen_ai.usage.cache_write.input_tokens = tracing::field::Empty,
        error.r#type = tracing::field::Empty,
    )
}

/// The span of one model turn: the request sent and its response read.
pub(crate) fn chat(api: Api) -> Span {
    tracing::info_span!(
        target: "tool_runtime::agent",
        "gen_ai.chat",
        otel.name = "chat",
        otel.kind = "client",
        otel.status_code = tracing::field::Empty,
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = api.provider().conventions_name(),
        gen_ai.request.model = tracing::field::Empty,
        gen_ai.response.id = tracing::field::Empty,
        gen_ai.response.model = tracing::field::Empty,
        gen_ai.usage.input_tokens = tracing::field::Empty,
        gen_ai.usage.output_tokens = tracing::field::Empty,
        gen_ai.usage.cache_read.input_tokens = tracing::field::Empty,
        gen_ai.usage.cache_write.input_tokens = tracing::field::Empty,
        error.r#type = tracing::field::Empty,
    )
}

/// The model a turn's request names, on its `chat` span (the request is written inside it, by
/// [`Conversation::request`](super::Conversation::request)): `gen_ai.request.model`, and the
/// span's name `chat {model}` as the conventions name it. Nothing outside a `chat` span.
pub(crate) fn requested(model: &str) {
    let span = Span::current();
    if span.metadata().is_some_and(|m| m.name() == "gen_ai.chat") {
        span.record("gen_ai.request.model", model);
        span.record("otel.name", format!("chat {model}"));
    }
}

/// The tokens a run's turns reported, summed.
#[derive(Default)]
pub(crate) struct Totals {
    input: Option<u64>,
    output: Option<u64>,
    cache_read: Option<u64>,
    cache_write: Option<u64>,
}

/// `n` added to a running sum that is `None` until something is added.
fn add(sum: &mut Option<u64>, n: u64) {
    *sum = Some(sum.unwrap_or(0).saturating_add(n));
}

impl Totals {
    /// Records what a turn's response says about itself on its span, and adds its tokens to
    /// the run's.
    pub(crate) fn response(&mut self, span: &Span, info: &ResponseInfo) {
        if let Some(id) = &info.id {
            span.record("gen_ai.response.id", id.as_str());
        }
        if let Some(model) = &info.model {
            span.record("gen_ai.response.model", model.as_str());
        }
        let counts = [
            (
                "gen_ai.usage.input_tokens",
                info.input_tokens,
                &mut self.input,
            ),
            (
                "gen_ai.usage.output_tokens",
                info.output_tokens,
                &mut self.output,
            ),
            (
                "gen_ai.usage.cache_read.input_tokens",
                info.cache_read_tokens,
                &mut self.cache_read,
            ),
            (
                "gen_ai.usage.cache_write.input_tokens",
                info.cache_write_tokens,
                &mut self.cache_write,
            ),
        ];
        for (field, n, sum) in counts {
            if let Some(n) = n {
                span.record(field, int(n));
                add(sum, n);
            }
        }
    }

    /// Records the sums on the run's span.
    pub(crate) fn finish(&self, run: &Span) {
        let sums = [
            ("gen_ai.usage.input_tokens", self.input),
            ("gen_ai.usage.output_tokens", self.output),
            ("gen_ai.usage.cache_read.input_tokens", self.cache_read),
            ("gen_ai.usage.cache_write.input_tokens", self.cache_write),
        ];
        for (field, n) in sums {
            if let Some(n) = n {
                run.record(field, int(n));
            }
        }
    }
}

/// A count as OpenTelemetry's `int` (`tracing-opentelemetry` exports a `u64` as text).
fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Marks `span` failed with the error's kind.
fn mark(span: &Span, error: &AgentError) {
    span.record("error.type", error.kind());
    span.record("otel.status_code", "ERROR");
}

/// Marks a turn's span failed; returns the error.
pub(crate) fn failed(span: &Span, error: AgentError) -> AgentError {
    mark(span, &error);
    error
}

/// Records how a run ended on its span: the tokens of its turns, and its error if it failed.
pub(crate) fn ended<T>(run: &Span, totals: &Totals, result: &Result<T, AgentError>) {
    totals.finish(run);
    if let Err(e) = result {
        mark(run, e);
    }
}
