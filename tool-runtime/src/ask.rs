//! Questions a running tool asks the person (MCP elicitation): which of two employees named
//! Budi, whether to overwrite a file. A tool takes `#[ctx] answers: &Answers` and asks with
//! [`Answers::ask`]; when an answer is missing, the tool returns the [`Unanswered`] error (with
//! `?`), the server asks the person (in the open request of a session, in the result of a
//! 2026-07-28 request, or as the task's `input_required`), and **runs the tool again from the
//! start** with every answer given so far. So a tool asks before it changes anything, and asks
//! the same questions, under the same keys, each time it runs.
//!
//! ```
//! use tool_runtime::{Answers, Question, Unanswered, tool};
//!
//! #[tool(description = "Greet the person by the name they give.")]
//! fn sapa_saya(#[ctx] answers: &Answers) -> Result<String, Unanswered> {
//!     let [nama] = answers.ask([Question::text("nama", "Siapa nama Anda?")])?;
//!     Ok(match nama.accepted() {
//!         Some(form) => format!("Halo, {}!", form["value"].as_str().unwrap_or("?")),
//!         None => "Halo!".into(),
//!     })
//! }
//! // A server keeps the call's arguments to run it again with the answers.
//! assert!(sapa_saya::tool().asks());
//! ```

use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Value, json};

/// One question: its key (what the answer comes back under), what the person reads, and the
/// form they fill in (a JSON Schema object of flat, primitive properties: MCP's elicitation
/// form).
#[derive(Clone, Debug, PartialEq)]
pub struct Question {
    /// The key of the question and its answer.
    pub key: String,
    /// What the person reads.
    pub message: String,
    /// The form: `{"type": "object", "properties": {..}, "required": [..]}`.
    pub form: Value,
}

impl Question {
    /// A question whose answer is the form `form`.
    pub fn new(key: impl Into<String>, message: impl Into<String>, form: Value) -> Question {
        Question {
            key: key.into(),
            message: message.into(),
            form,
        }
    }

    /// A question answered with one line of text, under `value` in the answer's form.
    pub fn text(key: impl Into<String>, message: impl Into<String>) -> Question {
        Question::new(
            key,
            message,
            json!({
                "type": "object",
                "properties": {"value": {"type": "string"}},
                "required": ["value"],
            }),
        )
    }
}

/// A person's answer to one question.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// They filled in the form: its content.
    Accepted(Value),
    /// They said no.
    Declined,
    /// They dismissed the question (or the answer could not be read).
    Cancelled,
}

impl Answer {
    /// The form's content, when they filled it in.
    pub fn accepted(&self) -> Option<&Value> {
        match self {
            Answer::Accepted(content) => Some(content),
            _ => None,
        }
    }

    /// The answer an elicitation result (`{"action": "accept", "content": {..}}`) gives.
    pub fn from_response(response: &Value) -> Answer {
        match response.get("action").and_then(Value::as_str) {
            Some("accept") => {
                Answer::Accepted(response.get("content").cloned().unwrap_or(json!({})))
            }
            Some("decline") => Answer::Declined,
            _ => Answer::Cancelled,
        }
    }
}

/// The answers a call was given so far, by question key: in the call's context for a tool that
/// takes `#[ctx] answers: &Answers` (empty on the first run, and wherever nobody can be asked).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Answers {
    given: BTreeMap<String, Value>,
}

/// The answers of a call nobody has answered yet (what a tool reads when the host gave none).
pub(crate) static NONE: Answers = Answers {
    given: BTreeMap::new(),
};

impl Answers {
    /// No answers.
    pub fn new() -> Answers {
        Answers::default()
    }

    /// Answers given as elicitation results, by key (MCP's `inputResponses`); not an object:
    /// none.
    pub fn from_responses(responses: &Value) -> Answers {
        let given = match responses {
            Value::Object(m) => m.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            _ => BTreeMap::new(),
        };
        Answers { given }
    }

    /// These answers and `responses` (elicitation results by key; a later answer to a key
    /// replaces an earlier one).
    pub fn with_responses(mut self, responses: &Value) -> Answers {
        if let Value::Object(m) = responses {
            for (k, v) in m {
                self.given.insert(k.clone(), v.clone());
            }
        }
        self
    }

    /// Every answer as elicitation results by key: what a server keeps between runs.
    pub fn to_responses(&self) -> Value {
        Value::Object(
            self.given
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        )
    }

    /// Whether nothing was answered.
    pub fn is_empty(&self) -> bool {
        self.given.is_empty()
    }

    /// The answer to the question `key`, if given.
    pub fn get(&self, key: &str) -> Option<Answer> {
        self.given.get(key).map(Answer::from_response)
    }

    /// The answers to `questions`, in their order, when every one was given; otherwise the
    /// questions still unanswered, which the tool returns (`?`) for the server to ask.
    pub fn ask<const N: usize>(&self, questions: [Question; N]) -> Result<[Answer; N], Unanswered> {
        let missing: Vec<Question> = questions
            .iter()
            .filter(|q| !self.given.contains_key(&q.key))
            .cloned()
            .collect();
        if !missing.is_empty() {
            return Err(Unanswered { questions: missing });
        }
        Ok(questions.map(|q| self.get(&q.key).unwrap_or(Answer::Cancelled)))
    }
}

/// Questions a tool asked that nobody answered yet: returned by the tool (as its error, or as
/// the source of its own error), and asked by the server, which then runs the tool again.
/// Where nobody can be asked (an agent loop, a client without elicitation), the model reads
/// that the tool needed the person's answers.
#[derive(Clone, Debug, PartialEq)]
pub struct Unanswered {
    /// What is still to be asked.
    pub questions: Vec<Question>,
}

impl fmt::Display for Unanswered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the tool needs the person's answer to: ")?;
        for (i, q) in self.questions.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            f.write_str(&q.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for Unanswered {}

impl crate::error::ToolError {
    /// The questions the tool asked, when it failed because nobody had answered them yet (its
    /// error is an [`Unanswered`], or has one among its sources).
    pub fn unanswered(&self) -> Option<&Unanswered> {
        let mut error: Option<&(dyn std::error::Error + 'static)> = Some(self);
        while let Some(e) = error {
            if let Some(u) = e.downcast_ref::<Unanswered>() {
                return Some(u);
            }
            error = e.source();
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asking_answers_only_when_every_question_was_answered() {
        let q = || [Question::text("a", "A?"), Question::text("b", "B?")];
        let none = Answers::new();
        assert_eq!(
            none.ask(q()).unwrap_err().questions.len(),
            2,
            "nothing answered: both asked"
        );
        let some =
            none.with_responses(&json!({"a": {"action": "accept", "content": {"value": "x"}}}));
        let missing = some.ask(q()).unwrap_err();
        assert_eq!(
            missing.questions,
            [Question::text("b", "B?")],
            "only the rest"
        );
        let all = some.with_responses(&json!({"b": {"action": "decline"}}));
        assert_eq!(
            all.ask(q()).unwrap(),
            [Answer::Accepted(json!({"value": "x"})), Answer::Declined]
        );
        assert_eq!(Answers::from_responses(&all.to_responses()), all);
    }

    #[test]
    fn a_tool_error_finds_its_unanswered_questions_through_its_sources() {
        let asked = Unanswered {
            questions: vec![Question::text("a", "A?")],
        };
        let e = crate::error::ToolError::failed_with(asked.clone());
        assert_eq!(e.unanswered(), Some(&asked));
        assert!(crate::error::ToolError::failed("no").unanswered().is_none());
    }
}
