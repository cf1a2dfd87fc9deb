//! Why a provider's response, or one of its streamed events, could not be read.

use std::fmt;

use serde_json::Value;

/// Why a response (or a streamed event) is not what its API sends. The kind says what a host
/// can do about it: a [`Provider`](ReadError::Provider) error may be worth a retry (the
/// provider was overloaded, say); the others are a provider (or something posing as one) that
/// does not follow its API.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadError {
    /// A part the API always sends is missing or not of its kind.
    Missing {
        /// What is missing: `` `choices[0]` ``, `` a tool call's `id` string ``.
        what: String,
        /// Where it was looked for, as JSON (at most 200 characters).
        received: String,
    },
    /// The data is not JSON.
    NotJson {
        /// serde_json's error.
        error: String,
        /// The data (at most 200 characters).
        data: String,
    },
    /// The provider sent an error in place of a response, or in the middle of a stream.
    Provider {
        /// The error as the provider wrote it.
        error: String,
    },
    /// The response breaks its API's rules: events out of order, a call whose id changed,
    /// arguments cut off before they were complete.
    Malformed {
        /// What is wrong.
        message: String,
    },
    /// The provider does not do this (a [`Provider`](crate::provider::Provider) of a program's
    /// own that leaves out the test kit's methods).
    Unsupported {
        /// What it does not do.
        what: &'static str,
    },
}

impl ReadError {
    /// `what` is missing from `received`.
    pub fn missing(what: impl Into<String>, received: &Value) -> Self {
        ReadError::Missing {
            what: what.into(),
            received: clip(&received.to_string()),
        }
    }

    /// The response breaks its API's rules.
    pub fn malformed(message: impl Into<String>) -> Self {
        ReadError::Malformed {
            message: message.into(),
        }
    }

    /// The provider sent an error.
    pub fn provider(error: impl fmt::Display) -> Self {
        ReadError::Provider {
            error: error.to_string(),
        }
    }

    /// `data` is not JSON.
    pub(crate) fn not_json(error: &serde_json::Error, data: &str) -> Self {
        ReadError::NotJson {
            error: error.to_string(),
            data: clip(data),
        }
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Missing { what, received } => write!(f, "no {what} in {received}"),
            ReadError::NotJson { error, data } => {
                write!(f, "the data is not JSON ({error}): {data}")
            }
            ReadError::Provider { error } => write!(f, "the provider sent an error: {error}"),
            ReadError::Malformed { message } => f.write_str(message),
            ReadError::Unsupported { what } => write!(f, "the provider does not support {what}"),
        }
    }
}

impl std::error::Error for ReadError {}

/// At most 200 characters of `s`, for messages.
pub(crate) fn clip(s: &str) -> String {
    match s.char_indices().nth(200) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}
