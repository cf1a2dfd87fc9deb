//! The rules of the tasks extension (`io.modelcontextprotocol/tasks`) that are read before any
//! task exists: the error for a client that did not declare it.

use rmcp::model::{ClientCapabilities, ErrorData};
use serde_json::Value;

/// The answer to a tool that runs only as a task, for a caller that did not declare the
/// extension: the capability it lacks, in the shape the protocol gives.
pub(crate) fn tasks_required() -> ErrorData {
    ErrorData::missing_required_client_capability(
        ClientCapabilities::builder().enable_tasks().build(),
    )
}

/// The extension's key in a client's capabilities.
const EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// A `subscriptions/listen` request asking for task notifications (`taskIds`) from a client
/// that did not declare the extension: the error the extension requires ("the server **MUST**
/// return a JSON-RPC error specifying the missing capabilities"), which rmcp cannot give (its
/// filter has no `taskIds`, and it acknowledges what it reads). `None` for any other message;
/// read only when the message names the method.
pub(crate) fn listen_without_extension(message: &[u8]) -> Option<ErrorData> {
    #[derive(serde::Deserialize)]
    struct Listen {
        method: String,
        #[serde(default)]
        params: Option<ListenParams>,
    }
    #[derive(serde::Deserialize)]
    struct ListenParams {
        #[serde(default)]
        notifications: Option<Filter>,
        #[serde(default, rename = "_meta")]
        meta: Option<Value>,
    }
    #[derive(serde::Deserialize)]
    struct Filter {
        #[serde(default, rename = "taskIds")]
        task_ids: Option<serde::de::IgnoredAny>,
    }
    const METHOD: &[u8] = b"subscriptions/listen";
    if !message.windows(METHOD.len()).any(|w| w == METHOD) {
        return None;
    }
    let listen: Listen = serde_json::from_slice(message).ok()?;
    let params = listen.params?;
    let asks = params.notifications.is_some_and(|f| f.task_ids.is_some());
    // (A 2025-11-25 session has no such method: rmcp answers it as unknown.)
    let meta = params.meta.unwrap_or_default();
    let modern = meta
        .get("io.modelcontextprotocol/protocolVersion")
        .is_some();
    let declared = meta["io.modelcontextprotocol/clientCapabilities"]["extensions"]
        .get(EXTENSION)
        .is_some();
    (listen.method == "subscriptions/listen" && modern && asks && !declared).then(tasks_required)
}
