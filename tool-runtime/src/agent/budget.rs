//! What a run used (tokens, the cache's share of them, requests, tool calls, cost) and the
//! limits a host sets on it: a run that reaches one stops at a point it can go on from.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::Conversation;
use crate::provider::ResponseInfo;

/// What a run (and the runs it resumed) used, from what the responses reported.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Usage {
    /// Requests to the model (turns).
    pub requests: u64,
    /// Prompt tokens, all of them: those read from the provider's cache and written to it
    /// included (as OpenTelemetry's `gen_ai.usage.input_tokens` counts them).
    pub input_tokens: u64,
    /// Tokens the model wrote (thinking included where the API bills it as output).
    pub output_tokens: u64,
    /// Prompt tokens read from the provider's cache (billed at about a tenth).
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's cache (Anthropic and Bedrock bill them at 1.25
    /// times the input price for five minutes, twice for an hour).
    pub cache_write_tokens: u64,
    /// Tool calls run (or held for approval).
    pub tool_calls: u64,
}

impl Usage {
    /// The usage with one more response's figures.
    pub(crate) fn add_response(&mut self, info: &ResponseInfo) {
        // A provider's figures are untrusted, and a stopped run's usage may come back from
        // storage: a count past `u64::MAX` stays at it (over any budget), never wraps.
        self.requests = self.requests.saturating_add(1);
        let add = |sum: &mut u64, n: Option<u64>| *sum = sum.saturating_add(n.unwrap_or(0));
        add(&mut self.input_tokens, info.input_tokens);
        add(&mut self.output_tokens, info.output_tokens);
        add(&mut self.cache_read_tokens, info.cache_read_tokens);
        add(&mut self.cache_write_tokens, info.cache_write_tokens);
    }

    /// The prompt tokens neither read from nor written to the cache.
    pub fn uncached_input_tokens(&self) -> u64 {
        self.input_tokens.saturating_sub(
            self.cache_read_tokens
                .saturating_add(self.cache_write_tokens),
        )
    }

    /// What the tokens cost at `prices`.
    pub fn cost(&self, prices: &Prices) -> f64 {
        let per = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
        per(self.uncached_input_tokens(), prices.input)
            + per(self.cache_read_tokens, prices.cache_read)
            + per(self.cache_write_tokens, prices.cache_write)
            + per(self.output_tokens, prices.output)
    }

    /// The share of the prompt tokens read from the cache, from 0 to 1 (0 with no prompt).
    pub fn cache_hit_rate(&self) -> f64 {
        if self.input_tokens == 0 {
            0.0
        } else {
            self.cache_read_tokens as f64 / self.input_tokens as f64
        }
    }
}

/// A model's prices per million tokens, in whatever currency the host counts in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Prices {
    /// A prompt token neither read from nor written to the cache.
    pub input: f64,
    /// A prompt token read from the cache.
    pub cache_read: f64,
    /// A prompt token written to the cache.
    pub cache_write: f64,
    /// A token the model wrote.
    pub output: f64,
}

/// Limits on a run: the run stops when it reaches one, before its next request, with
/// [`AgentError::OverBudget`](super::AgentError::OverBudget); the stopped run goes on with
/// [`Agent::resume_stopped`](super::Agent::resume_stopped) (under the agent's budget then:
/// raise it first). Tokens and cost are known only once a response reports them, so those
/// limits stop the run before the first request after they are reached; calls past the
/// tool-call limit do not run (the model is told so). A run resumed from a pause or a stop
/// carries its usage on.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Budget {
    /// The most prompt tokens (cached ones included).
    pub input_tokens: Option<u64>,
    /// The most tokens the model writes.
    pub output_tokens: Option<u64>,
    /// The most prompt tokens read from the cache.
    pub cache_read_tokens: Option<u64>,
    /// The most prompt tokens written to the cache.
    pub cache_write_tokens: Option<u64>,
    /// The most requests (model turns).
    pub requests: Option<u64>,
    /// The most tool calls.
    pub tool_calls: Option<u64>,
    /// The most the tokens may cost, at these prices.
    pub cost: Option<(f64, Prices)>,
}

impl Budget {
    /// No limits.
    pub fn new() -> Self {
        Budget::default()
    }
    /// At most `n` prompt tokens.
    pub fn input_tokens(mut self, n: u64) -> Self {
        self.input_tokens = Some(n);
        self
    }
    /// At most `n` tokens written by the model.
    pub fn output_tokens(mut self, n: u64) -> Self {
        self.output_tokens = Some(n);
        self
    }
    /// At most `n` prompt tokens read from the cache.
    pub fn cache_read_tokens(mut self, n: u64) -> Self {
        self.cache_read_tokens = Some(n);
        self
    }
    /// At most `n` prompt tokens written to the cache.
    pub fn cache_write_tokens(mut self, n: u64) -> Self {
        self.cache_write_tokens = Some(n);
        self
    }
    /// At most `n` requests to the model.
    pub fn requests(mut self, n: u64) -> Self {
        self.requests = Some(n);
        self
    }
    /// At most `n` tool calls.
    pub fn tool_calls(mut self, n: u64) -> Self {
        self.tool_calls = Some(n);
        self
    }
    /// At most `most` spent, at `prices`.
    pub fn cost(mut self, most: f64, prices: Prices) -> Self {
        self.cost = Some((most, prices));
        self
    }

    /// The first limit `used` has reached, checked before a request.
    pub(crate) fn before_request(&self, used: &Usage) -> Option<Limit> {
        let reached = |limit: Option<u64>, used: u64| limit.filter(|l| used >= *l);
        if let Some(allowed) = reached(self.requests, used.requests) {
            return Some(Limit::Requests {
                allowed,
                used: used.requests,
            });
        }
        if let Some(allowed) = reached(self.input_tokens, used.input_tokens) {
            return Some(Limit::InputTokens {
                allowed,
                used: used.input_tokens,
            });
        }
        if let Some(allowed) = reached(self.output_tokens, used.output_tokens) {
            return Some(Limit::OutputTokens {
                allowed,
                used: used.output_tokens,
            });
        }
        if let Some(allowed) = reached(self.cache_read_tokens, used.cache_read_tokens) {
            return Some(Limit::CacheReadTokens {
                allowed,
                used: used.cache_read_tokens,
            });
        }
        if let Some(allowed) = reached(self.cache_write_tokens, used.cache_write_tokens) {
            return Some(Limit::CacheWriteTokens {
                allowed,
                used: used.cache_write_tokens,
            });
        }
        if let Some((allowed, prices)) = self.cost {
            let spent = used.cost(&prices);
            if spent >= allowed {
                return Some(Limit::Cost {
                    allowed,
                    used: spent,
                });
            }
        }
        None
    }
}

/// The limit a run reached, with what it allowed and what was used.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "limit")]
#[non_exhaustive]
pub enum Limit {
    /// [`Budget::input_tokens`].
    InputTokens {
        /// The limit.
        allowed: u64,
        /// Used so far.
        used: u64,
    },
    /// [`Budget::output_tokens`].
    OutputTokens {
        /// The limit.
        allowed: u64,
        /// Used so far.
        used: u64,
    },
    /// [`Budget::cache_read_tokens`].
    CacheReadTokens {
        /// The limit.
        allowed: u64,
        /// Used so far.
        used: u64,
    },
    /// [`Budget::cache_write_tokens`].
    CacheWriteTokens {
        /// The limit.
        allowed: u64,
        /// Used so far.
        used: u64,
    },
    /// [`Budget::requests`].
    Requests {
        /// The limit.
        allowed: u64,
        /// Used so far.
        used: u64,
    },
    /// [`Budget::tool_calls`]: the model's last turn asked for more calls than it allowed; those
    /// past it did not run (their answers say so).
    ToolCalls {
        /// The limit.
        allowed: u64,
        /// Run so far.
        used: u64,
        /// The calls the model's last turn asked for.
        asked: u64,
    },
    /// [`Budget::cost`].
    Cost {
        /// The limit.
        allowed: f64,
        /// Spent so far.
        used: f64,
    },
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Limit::InputTokens { allowed, used } => {
                write!(f, "{used} prompt tokens used of {allowed} allowed")
            }
            Limit::OutputTokens { allowed, used } => {
                write!(f, "{used} output tokens used of {allowed} allowed")
            }
            Limit::CacheReadTokens { allowed, used } => {
                write!(f, "{used} tokens read from the cache of {allowed} allowed")
            }
            Limit::CacheWriteTokens { allowed, used } => {
                write!(f, "{used} tokens written to the cache of {allowed} allowed")
            }
            Limit::Requests { allowed, used } => {
                write!(f, "{used} requests made of {allowed} allowed")
            }
            Limit::ToolCalls {
                allowed,
                used,
                asked,
            } => write!(
                f,
                "{asked} more tool calls asked after {used} of {allowed} allowed"
            ),
            Limit::Cost { allowed, used } => write!(f, "{used:.4} spent of {allowed:.4} allowed"),
        }
    }
}

/// A run stopped by its budget before a request, as plain serde data: every call so far is
/// answered, so the conversation is whole. Store it, raise the budget, and go on with
/// [`Agent::resume_stopped`](super::Agent::resume_stopped).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stopped {
    /// The limit reached.
    pub limit: Limit,
    /// The conversation so far, ready for its next request.
    pub conversation: Conversation,
    /// What the run used up to the stop.
    pub usage: Usage,
    /// Model turns taken so far.
    pub(crate) turns: usize,
}
