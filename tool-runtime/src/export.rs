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
//!     "tools": tools.export(Api::OpenAiChat).unwrap(),
//! });
//! assert_eq!(body["tools"][0]["function"]["strict"], true);
//! ```

use schemars::JsonSchema;
use serde_json::Value;

use crate::dialect::Api;
pub use crate::dialect::{ExportError, Exported, Lowered};
use crate::schema;
use crate::set::ToolSet;
use crate::tool::Tool;

/// One tool for `api`, with its English boundary sentence. Never fails: what the API cannot
/// express is moved into the description and `strict` is turned off with the reasons listed.
pub fn tool(tool: &Tool, api: Api) -> Exported {
    api.dialect()
        .tool(tool.name(), tool.description(), tool.input_schema())
}

/// The structured-output request field for `T` on `api`, named `name`: OpenAI Chat
/// `response_format`, OpenAI Responses `text`, Anthropic `output_config`, Gemini
/// `generationConfig`, Bedrock `outputConfig`.
pub fn structured_output<T: JsonSchema>(api: Api, name: &str) -> Exported {
    api.dialect()
        .structured_output(name, &schema::input_schema_of::<T>())
}

impl ToolSet {
    /// One tool for `api`, with the boundary sentence in this set's wording.
    pub fn export_tool(&self, tool: &Tool, api: Api) -> Exported {
        api.dialect()
            .tool(tool.name(), &self.description(tool), tool.input_schema())
    }

    /// Every tool of the set in `api`'s format, ready for the request's tool list (for Gemini:
    /// one tool holding all `functionDeclarations`; for Bedrock: `toolConfig.tools`). Checks
    /// the provider's per-request limits.
    pub fn export(&self, api: Api) -> Result<Vec<Value>, ExportError> {
        let entries = self
            .iter()
            .map(|t| (&**t, self.export_tool(t, api)))
            .collect();
        api.dialect().tools(entries)
    }
}
