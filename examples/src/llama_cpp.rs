//! A sixth model API, added outside the toolkit in this one file: the OpenAI-compatible server
//! of llama.cpp's Python bindings (`python -m llama_cpp.server`, llama-cpp-python 0.3, with
//! `--chat_format chatml-function-calling`). It speaks Chat Completions, with quirks measured
//! against it (0.3.36):
//!
//! - the output-token limit is `max_tokens`: `max_completion_tokens` is accepted and ignored,
//!   so the answer runs on;
//! - structured output is `response_format: {type: "json_object", schema}`: `json_schema` is
//!   refused;
//! - `tool_choice: "required"` fails with a server error: with one tool it is that tool by name
//!   (which the server enforces with a grammar), otherwise it cannot be said;
//! - an assistant message whose `content` is `null` (a turn of tool calls, as OpenAI writes
//!   it) is refused (500, "Input should be a valid string"): it is sent as `""`.
//!
//! Everything else (tools, responses, streams, results) is Chat Completions, handed to the
//! built-in provider.

use serde_json::{Value, json};
use tool_runtime::provider::{
    Api, Assemble, Exported, HttpRequest, Lowered, Provider, ReadError, Reply, Request,
    RequestError, SentRequest, StreamEvent, ToolAnswer, ToolCall, ToolChoice, Turn,
};

/// llama-cpp-python's server: Chat Completions with the quirks above.
pub struct LlamaCppServer;

/// The API, for conversations and requests.
pub const LLAMA_CPP: Api = Api::new(&LlamaCppServer);

fn chat() -> &'static dyn Provider {
    Api::OPENAI_CHAT.provider()
}

impl Provider for LlamaCppServer {
    fn id(&self) -> &'static str {
        "llama-cpp-server"
    }

    fn name(&self) -> &'static str {
        "llama.cpp server (OpenAI-compatible)"
    }

    fn lower(&self, canonical: &Value) -> Lowered {
        chat().lower(canonical)
    }

    fn tool(&self, name: &str, description: &str, input: &Value) -> Exported {
        chat().tool(name, description, input)
    }

    fn null_means_absent(&self) -> bool {
        chat().null_means_absent()
    }

    fn instruction_message(&self, text: &str) -> Value {
        chat().instruction_message(text)
    }

    fn prefix_members(&self) -> &'static [&'static str] {
        chat().prefix_members()
    }

    fn read_info(&self, raw: &Value) -> tool_runtime::provider::ResponseInfo {
        chat().read_info(raw)
    }

    fn structured_output(&self, name: &str, canonical: &Value) -> Exported {
        let mut format = chat().structured_output(name, canonical);
        let schema = format.json["json_schema"]["schema"].take();
        format.json = json!({"type": "json_object", "schema": schema});
        format
    }

    fn request(
        &self,
        request: &Request<'_>,
        messages: &[Value],
    ) -> Result<HttpRequest, RequestError> {
        let mut chat_request = request.clone();
        if chat_request.tool_choice == ToolChoice::Required {
            let only = request
                .tools
                .filter(|t| t.len() == 1)
                .map(|t| t.names().next());
            chat_request.tool_choice = match only.flatten() {
                Some(name) => ToolChoice::Tool(name.to_owned()),
                None => {
                    return Err(RequestError::Unsupported {
                        provider: self.name(),
                        what: "tool choice `required` with more than one tool".into(),
                    });
                }
            };
        }
        chat_request.output = None;
        let mut http = chat().request(&chat_request, messages)?;
        if let Some(n) = http
            .body
            .as_object_mut()
            .and_then(|b| b.remove("max_completion_tokens"))
        {
            http.body["max_tokens"] = n;
        }
        if let Some(format) = request.output_field(self) {
            http.body["response_format"] = format;
        }
        for m in http.body["messages"].as_array_mut().into_iter().flatten() {
            if m["role"] == "assistant" && m["content"].is_null() {
                m["content"] = "".into();
            }
        }
        Ok(http)
    }

    fn user_message(&self, text: &str) -> Value {
        chat().user_message(text)
    }

    fn render(&self, answers: &[ToolAnswer]) -> Vec<Value> {
        chat().render(answers)
    }

    fn read_reply(&self, raw: &Value) -> Result<Reply, ReadError> {
        chat().read_reply(raw)
    }

    fn read_calls(&self, raw: &Value) -> Result<(Vec<ToolCall>, Vec<Value>), ReadError> {
        chat().read_calls(raw)
    }

    fn assembler(&self) -> Box<dyn Assemble> {
        chat().assembler()
    }

    fn write_response(&self, turn: &Turn) -> Option<Value> {
        chat().write_response(turn)
    }

    fn write_stream(&self, turn: &Turn) -> Option<Vec<StreamEvent>> {
        chat().write_stream(turn)
    }

    fn read_request(&self, request: &HttpRequest) -> Result<SentRequest, ReadError> {
        chat().read_request(request)
    }
}
