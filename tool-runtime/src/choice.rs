//! Tool-choice checks, the acceptance test of a tool set: messages at the border between sibling tools
//! must each make the model pick the right tool, or ask back when information is missing.
//!
//! [`run`] sends each message with the exported tools through a caller-supplied async closure
//! (any model client) and reads which tool the raw response picked.

use std::fmt;
use std::future::Future;

use serde_json::Value;

use crate::provider::{Api, CallArguments, ExportError, ToolCall};
use crate::set::ToolSet;

/// What a message should make the model do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Call this tool.
    Tool(&'static str),
    /// Call no tool and ask the user for what is missing.
    AskBack,
}

/// One border message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Case {
    /// What the user says.
    pub message: &'static str,
    /// What the model should do with it.
    pub expect: Expect,
}

/// What the model did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Picked {
    /// Called the tool of this name (the first call, when there are several).
    Tool(String),
    /// Answered in text without calling a tool (asking back, or answering directly).
    NoTool,
    /// The response could not be read, or the request failed.
    Error(String),
}

/// The first tool a raw API response calls, or `NoTool`; the calls are read exactly as the
/// agent loop reads them ([`agent::read_turn`](crate::agent::read_turn)).
pub fn picked(api: Api, raw: &Value) -> Picked {
    if !raw.is_object() {
        return Picked::Error("not a response object".into());
    }
    match api.provider().read_calls(raw) {
        Ok((calls, _)) => match calls.into_iter().next() {
            Some(ToolCall {
                arguments: CallArguments::NotAFunction(call),
                ..
            }) => Picked::Error(format!("a tool call that is not a function call: {call}")),
            Some(call) => Picked::Tool(call.name),
            None => Picked::NoTool,
        },
        Err(e) => Picked::Error(e.to_string()),
    }
}

/// One message and what happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The message sent, and what it should have made the model do.
    pub case: Case,
    /// What the model did.
    pub picked: Picked,
}

impl Outcome {
    /// Whether the model did what the case expects: called the expected tool, or called none
    /// when it should ask back.
    pub fn is_right(&self) -> bool {
        match (&self.case.expect, &self.picked) {
            (Expect::Tool(want), Picked::Tool(got)) => want == got,
            (Expect::AskBack, Picked::NoTool) => true,
            _ => false,
        }
    }
}

/// The outcome of every message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// One outcome per case, in the cases' order.
    pub outcomes: Vec<Outcome>,
}

impl Report {
    /// The messages that picked wrong.
    pub fn wrong(&self) -> Vec<&Outcome> {
        self.outcomes.iter().filter(|o| !o.is_right()).collect()
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let right = self.outcomes.len() - self.wrong().len();
        writeln!(
            f,
            "{right} of {} messages picked right",
            self.outcomes.len()
        )?;
        for o in self.wrong() {
            let want = match o.case.expect {
                Expect::Tool(t) => format!("`{t}`"),
                Expect::AskBack => "asking back".into(),
            };
            let got = match &o.picked {
                Picked::Tool(t) => format!("`{t}`"),
                Picked::NoTool => "no tool".into(),
                Picked::Error(e) => format!("an error ({e})"),
            };
            writeln!(f, "  {:?}: expected {want}, got {got}", o.case.message)?;
        }
        Ok(())
    }
}

/// Sends every case's message with `set` exported for `api` through `send(message, tools)`,
/// which returns the API's raw response, and reports what each picked.
pub async fn run<F, Fut, E>(
    set: &ToolSet,
    api: Api,
    cases: &[Case],
    mut send: F,
) -> Result<Report, ExportError>
where
    F: FnMut(&'static str, &[Value]) -> Fut,
    Fut: Future<Output = Result<Value, E>>,
    E: fmt::Display,
{
    let tools = set.export(api)?;
    let mut outcomes = Vec::with_capacity(cases.len());
    for case in cases {
        let picked = match send(case.message, &tools).await {
            Ok(raw) => picked(api, &raw),
            Err(e) => Picked::Error(e.to_string()),
        };
        outcomes.push(Outcome {
            case: *case,
            picked,
        });
    }
    Ok(Report { outcomes })
}
