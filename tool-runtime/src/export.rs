//! A tool set, or an output type, in each model API's request format. One canonical schema per
//! tool; each API lowers it and wraps it in its own shape (see [`Api`]).
//!
//! ```
//! # use tool_runtime::{tool, Api, ToolSet};
//! #[tool(description = "Return a greeting for one name.")]
//! fn greet(#[arg(description = "The person's name")] name: String) -> String { format!("Hello, {name}") }
//!
//! let tools = ToolSet::new([greet::tool()]).unwrap();
//! let body = serde_json::json!({
//!     "model": "gpt-5-mini",
//!     "messages": [{"role": "user", "content": "greet Sari"}],
//!     "tools": tools.export(Api::OPENAI_CHAT).unwrap(),
//! });
//! assert_eq!(body["tools"][0]["function"]["strict"], true);
//! ```

use schemars::JsonSchema;

use crate::provider::Api;
use crate::provider::Exported;
use crate::schema;
use crate::tool::Tool;

/// One tool for `api`, with its English boundary sentence. Never fails: what the API cannot
/// express is moved into the description and `strict` is turned off with the reasons listed.
pub fn tool(tool: &Tool, api: Api) -> Exported {
    api.provider()
        .tool(tool.name(), tool.description(), tool.input_schema())
}

/// The structured-output request field for `T` on `api`, named `name`: OpenAI Chat
/// `response_format`, OpenAI Responses `text`, Anthropic `output_config`, Gemini
/// `generationConfig`, Bedrock `outputConfig`.
pub fn structured_output<T: JsonSchema>(api: Api, name: &str) -> Exported {
    api.provider()
        .structured_output(name, &schema::input_schema_of::<T>())
}
