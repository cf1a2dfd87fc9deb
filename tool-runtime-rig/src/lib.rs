//! Any `#[tool]` function given to a [rig](https://docs.rs/rig-core) agent, with this toolkit's
//! checks: each call rig makes goes through [`ToolSet::call`] (middleware, permissions, validation against
//! the canonical schema, hooks), and a call the model got wrong comes back to the model as the
//! toolkit's repair message, naming the field, what was expected and what was received.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use rig_core::providers::openai::OpenAIConfig;
//! use tool_runtime::{Context, ToolSet};
//!
//! let tools = Arc::new(ToolSet::from_module(module_path!())?);
//! let cx = Arc::new(Context::new()); // the session and grants of whoever is asking
//! let model = OpenAIConfig::new(std::env::var("OPENAI_API_KEY")?).client().chat("gpt-4.1");
//! let agent = rig_agent::AgentBuilder::new(model)
//!     .dynamic_tools(tool_runtime_rig::tools(&tools, &cx))
//!     .build();
//! let answer = agent.prompt("Order catering for 25 people").max_turns(4).await?;
//! println!("{}", answer.output());
//! # Ok(()) }
//! ```
//!
//! A tool that needs a person's approval is not run: rig has no way to ask, so the model is
//! told it was not carried out (use [`tool_runtime::agent`] for approvals).
//!
//! With feature `search`, `Embeddings` is any rig embedding model as the embedding service of
//! a tool search: a deferred set's search tool then ranks tools by what the model says a
//! request means (`tool_runtime::search::EmbeddingService`).
//!
//! rig-core is pinned to 0.44: 0.45 and later need Rust 1.97.

#![warn(missing_docs, unreachable_pub)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// rig, whose [`DynamicTool`] these functions return: the version this crate is built with.
pub use rig_core;

use std::sync::Arc;

use rig_core::message::ToolName;
use rig_core::tool::{DynamicTool, ToolExecutionError, ToolOutput};
use rig_core::wasm_compat::WasmBoxedFuture;
use serde_json::Value;
use tool_runtime::{Context, Tool, ToolError, ToolSet};

/// Every tool of `tools` the caller of `cx` may use, as rig tools that call it with `cx`.
pub fn tools(tools: &Arc<ToolSet>, cx: &Arc<Context>) -> Vec<DynamicTool> {
    tools
        .iter()
        .filter(|t| t.permits(cx))
        .filter_map(|t| tool(tools, t, cx))
        .collect()
}

/// One tool of `tools` as a rig tool: its description (with its boundary sentence) and its
/// canonical input schema; calls run with `cx`. `None` if rig refuses the name.
pub fn tool(tools: &Arc<ToolSet>, tool: &Tool, cx: &Arc<Context>) -> Option<DynamicTool> {
    let name = ToolName::new(tool.name()).ok()?;
    let (set, cx, called) = (tools.clone(), cx.clone(), Arc::<str>::from(tool.name()));
    let call =
        move |args: Value| -> WasmBoxedFuture<'static, Result<ToolOutput, ToolExecutionError>> {
            let (set, cx, called) = (set.clone(), cx.clone(), called.clone());
            Box::pin(async move {
                match set.call(&cx, &called, args).await {
                    Ok(out) => {
                        // Cut to the tool's bound, as every other way to the model cuts it.
                        let text = out.model().as_text();
                        let bound = set.get(&called).and_then(|t| t.max_result_chars());
                        let cut = bound.and_then(|max| set.wording().cut_result(&text, max));
                        Ok(ToolOutput::text(cut.unwrap_or(text)))
                    }
                    Err(e) => Err(refusal(&set, e).await),
                }
            })
        };
    Some(DynamicTool::new(
        name,
        tools.description(tool),
        tool.input_schema().clone(),
        call,
    ))
}

/// A rig embedding model (OpenAI's, Gemini's, Cohere's, Ollama's, any provider rig speaks
/// to) as the embedding service of a tool search (feature `search`): a deferred set's search
/// tool, or [`ToolIndex::search_async`](tool_runtime::search::ToolIndex::search_async), ranks
/// tools by what the model says a request means, as well as by the words they share (the
/// rules of [`EmbeddingService`](tool_runtime::search::EmbeddingService): asked
/// asynchronously, with a timeout, the words alone when it fails). A call of more texts than
/// the model takes a request is split. Sets or indexes built per request share one behind an
/// [`EmbeddingCache`](tool_runtime::search::EmbeddingCache), so the tools are embedded once.
/// rig's clients need its `reqwest` feature:
/// `rig-core = { version = "=0.44.0", features = ["reqwest"] }` beside this crate.
///
/// ```no_run
/// # fn run(tools: tool_runtime::ToolSet) -> Result<(), Box<dyn std::error::Error>> {
/// use std::sync::Arc;
/// use rig_core::providers::openai::{OpenAI, TEXT_EMBEDDING_3_SMALL};
/// use tool_runtime::search::Ranking;
/// use tool_runtime_rig::Embeddings;
///
/// let model = OpenAI::from_env()?.embedding(TEXT_EMBEDDING_3_SMALL, None);
/// let ranking = Ranking::lexical().service(Arc::new(Embeddings::new(model)));
/// let tools = tools.defer_ranked(|_| true, ranking)?;
/// # let _ = tools;
/// # Ok(()) }
/// ```
#[cfg(feature = "search")]
#[cfg_attr(docsrs, doc(cfg(feature = "search")))]
#[derive(Clone, Debug)]
pub struct Embeddings {
    model: rig_core::DynModel<rig_core::operation::Embedding>,
}

#[cfg(feature = "search")]
impl Embeddings {
    /// The service of `model` (a rig embedding model, or one already erased).
    pub fn new(model: impl Into<rig_core::DynModel<rig_core::operation::Embedding>>) -> Self {
        Embeddings {
            model: model.into(),
        }
    }
}

#[cfg(feature = "search")]
impl tool_runtime::search::EmbeddingService for Embeddings {
    fn embed<'a>(
        &'a self,
        texts: &'a [String],
    ) -> tool_runtime::BoxFuture<'a, Result<Vec<Vec<f32>>, tool_runtime::search::EmbedError>> {
        // At most as many texts a request as the model takes (0: it does not say).
        let most = match self.model.capabilities().max_documents {
            0 => texts.len().max(1),
            most => most,
        };
        let requests: Vec<_> = texts
            .chunks(most)
            .map(|chunk| self.model.call(chunk.to_vec()))
            .collect();
        Box::pin(async move {
            let mut vectors = Vec::with_capacity(texts.len());
            for request in requests {
                // The index compares vectors of 32-bit floats; rig hands 64-bit ones.
                vectors.extend(
                    request
                        .await?
                        .embeddings
                        .into_iter()
                        .map(|e| e.vec.into_iter().map(|x| x as f32).collect::<Vec<f32>>()),
                );
            }
            Ok(vectors)
        })
    }
}

/// The toolkit's error as rig's, with the toolkit's message as what the model sees.
async fn refusal(set: &ToolSet, e: ToolError) -> ToolExecutionError {
    let message = set.model_message(&e);
    match e {
        ToolError::InvalidArguments(_) => ToolExecutionError::invalid_args(message),
        ToolError::UnknownTool { .. } => ToolExecutionError::not_found(message),
        ToolError::Forbidden { .. } => ToolExecutionError::permission_denied(message),
        ToolError::TimedOut { .. } => ToolExecutionError::timeout(message),
        ToolError::ApprovalRequired(pending) => {
            // Nobody can be asked: the held call is dropped.
            let _ = set.reject(&pending.ticket).await;
            ToolExecutionError::refused(set.wording().approval_unavailable.to_string())
        }
        _ => ToolExecutionError::other(message),
    }
}
