//! The APIs the toolkit writes requests for and reads responses from.

use std::fmt;

/// An API a tool set is exported to, a structured-output format is written for, or a model's
/// response is read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Api {
    /// OpenAI Chat Completions: `tools[]` of `{type: "function", function: {...}}`; structured
    /// output as `response_format`; replies in `choices[0].message`.
    OpenAiChat,
    /// OpenAI Responses: flat `tools[]`; structured output as `text.format`; replies as
    /// `output[]` items.
    OpenAiResponses,
    /// Anthropic Messages: `tools[]` with `input_schema` and `strict`; structured output as
    /// `output_config.format`; replies as `content[]` blocks.
    Anthropic,
    /// Google Gemini `generateContent`: one `{functionDeclarations: [...]}` tool with
    /// `parametersJsonSchema`; structured output as `generationConfig`; replies as
    /// `candidates[0].content.parts[]`.
    Gemini,
    /// MCP `tools/list` entries with `inputSchema`, `outputSchema` and annotations. MCP has no
    /// model replies of its own: reading one for `Mcp` is an error.
    Mcp,
}

impl Api {
    /// The four model APIs, in a fixed order (every `Api` but `Mcp`).
    pub const MODELS: [Api; 4] = [
        Api::OpenAiChat,
        Api::OpenAiResponses,
        Api::Anthropic,
        Api::Gemini,
    ];
}

impl fmt::Display for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Api::OpenAiChat => "OpenAI Chat Completions",
            Api::OpenAiResponses => "OpenAI Responses",
            Api::Anthropic => "Anthropic Messages",
            Api::Gemini => "Gemini generateContent",
            Api::Mcp => "MCP",
        })
    }
}
