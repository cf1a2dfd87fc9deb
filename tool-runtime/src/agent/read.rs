//! Tool calls, read from a model's raw response in each API's format.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Api;
use crate::structured::{Failure, Reply, read_reply};

/// One tool call the model asked for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id of the call, which its result must carry back: Chat
    /// `tool_calls[].id`, Responses `call_id`, Anthropic `tool_use.id`, Gemini
    /// `functionCall.id`. `None` only where the provider gave none (Gemini models that do not
    /// number calls match results by order).
    pub id: Option<String>,
    /// The tool's name as the model wrote it.
    pub name: String,
    /// The arguments as the model sent them.
    pub arguments: CallArguments,
}

/// Arguments as they arrive: JSON text (OpenAI), read exactly as written, or a JSON value
/// (Anthropic, Gemini).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallArguments {
    /// JSON text, as OpenAI's APIs send it.
    Text(String),
    /// A JSON value, as Anthropic and Gemini send it.
    Value(Value),
}

impl<'a> From<&'a CallArguments> for crate::Arguments<'a> {
    fn from(a: &'a CallArguments) -> Self {
        match a {
            CallArguments::Text(t) => crate::Arguments::text(t.as_str()),
            CallArguments::Value(v) => crate::Arguments::value(v.clone()),
        }
    }
}

/// What one response holds: the tool calls (in the order the model wrote them), the text and
/// stop reason, and what to append to the conversation for this turn.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelTurn {
    /// The tool calls, in the order the model wrote them; empty when it answered in text.
    pub calls: Vec<ToolCall>,
    /// The response's text and why the model stopped.
    pub reply: Reply,
    /// The assistant's message (Chat, Anthropic, Gemini) or output items (Responses), as the
    /// next request must repeat them.
    pub append: Vec<Value>,
}

fn unreadable(message: String) -> Failure {
    Failure::Unreadable { message }
}

/// Reads a raw response of `api`: its tool calls, its text and stop reason, and the turn to
/// append to the conversation. A call without a name (or, where the API numbers calls, without
/// an id) makes the whole response unreadable: answering it would break the conversation.
pub fn read_turn(api: Api, raw: &Value) -> Result<ModelTurn, Failure> {
    let reply = read_reply(api, raw)?;
    let str_at = |v: &Value, key: &str, what: &str| -> Result<String, Failure> {
        v[key]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| unreadable(format!("{what} without a `{key}` string: {v}")))
    };
    let (calls, append) = match api {
        Api::Mcp => return Err(unreadable("MCP has no model replies to read".into())),
        Api::OpenAiChat => {
            let message = &raw["choices"][0]["message"];
            let mut calls = Vec::new();
            for c in message["tool_calls"].as_array().into_iter().flatten() {
                if c["type"] != "function" {
                    continue;
                }
                let function = &c["function"];
                calls.push(ToolCall {
                    id: Some(str_at(c, "id", "a tool call")?),
                    name: str_at(function, "name", "a tool call")?,
                    arguments: CallArguments::Text(str_at(function, "arguments", "a tool call")?),
                });
            }
            (calls, vec![message.clone()])
        }
        Api::OpenAiResponses => {
            let items = raw["output"].as_array().cloned().unwrap_or_default();
            let mut calls = Vec::new();
            for item in items.iter().filter(|i| i["type"] == "function_call") {
                calls.push(ToolCall {
                    id: Some(str_at(item, "call_id", "a function_call item")?),
                    name: str_at(item, "name", "a function_call item")?,
                    arguments: CallArguments::Text(str_at(
                        item,
                        "arguments",
                        "a function_call item",
                    )?),
                });
            }
            (calls, items)
        }
        Api::Anthropic => {
            let content = raw["content"].clone();
            let mut calls = Vec::new();
            for block in content.as_array().into_iter().flatten() {
                if block["type"] != "tool_use" {
                    continue;
                }
                calls.push(ToolCall {
                    id: Some(str_at(block, "id", "a tool_use block")?),
                    name: str_at(block, "name", "a tool_use block")?,
                    arguments: CallArguments::Value(block["input"].clone()),
                });
            }
            let message = serde_json::json!({"role": "assistant", "content": content});
            (calls, vec![message])
        }
        Api::Gemini => {
            let content = raw["candidates"][0]["content"].clone();
            let mut calls = Vec::new();
            for part in content["parts"].as_array().into_iter().flatten() {
                let Some(call) = part.get("functionCall") else {
                    continue;
                };
                calls.push(ToolCall {
                    id: call["id"].as_str().map(str::to_owned),
                    name: str_at(call, "name", "a functionCall part")?,
                    arguments: CallArguments::Value(match &call["args"] {
                        Value::Null => Value::Object(Default::default()),
                        args => args.clone(),
                    }),
                });
            }
            (calls, vec![content])
        }
    };
    Ok(ModelTurn {
        calls,
        reply,
        append,
    })
}
