//! A stand-in for the five model APIs over real HTTP, replaying a scripted conversation: each
//! request is answered with the next turn of the script, written in that API's format, after
//! checking that the request answers every tool call of the previous turn once, with its id,
//! and offers the tools. Used by the `hr_agent` example and the agent tests; no real model is
//! called.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{Value, json};
use tool_runtime::Api;

/// One turn of the model: tool calls (id, name, arguments), or a final text.
#[derive(Clone, Debug)]
pub enum Turn {
    Calls(Vec<(String, String, Value)>),
    Text(String),
}

/// A turn of tool calls, ids made from `prefix`.
pub fn calls(prefix: &str, calls: &[(&str, Value)]) -> Turn {
    Turn::Calls(
        calls
            .iter()
            .enumerate()
            .map(|(i, (name, args))| {
                (
                    format!("{prefix}{}", i + 1),
                    (*name).to_owned(),
                    args.clone(),
                )
            })
            .collect(),
    )
}

/// A response of `api` holding these tool calls, as the API writes it.
pub fn calls_response(api: Api, calls: &[(String, String, Value)]) -> Value {
    match api {
        Api::OpenAiChat => json!({"id": "chatcmpl-mock", "object": "chat.completion", "choices": [{
            "index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
            "tool_calls": calls.iter().map(|(id, name, args)| json!({"id": id, "type": "function",
                "function": {"name": name, "arguments": args.to_string()}})).collect::<Vec<_>>()}}]}),
        Api::OpenAiResponses => {
            json!({"id": "resp_mock", "object": "response", "status": "completed",
            "output": calls.iter().map(|(id, name, args)| json!({"type": "function_call",
                "id": format!("fc_{id}"), "call_id": id, "name": name, "arguments": args.to_string(),
                "status": "completed"})).collect::<Vec<_>>()})
        }
        Api::Anthropic => json!({"id": "msg_mock", "type": "message", "role": "assistant",
            "stop_reason": "tool_use", "content": calls.iter().map(|(id, name, args)|
                json!({"type": "tool_use", "id": id, "name": name, "input": args})).collect::<Vec<_>>()}),
        Api::Gemini => {
            json!({"candidates": [{"index": 0, "finishReason": "STOP", "content": {"role": "model",
            "parts": calls.iter().map(|(id, name, args)| json!({"functionCall": {"id": id, "name": name,
                "args": args}})).collect::<Vec<_>>()}}]})
        }
        Api::BedrockConverse => json!({"stopReason": "tool_use", "output": {"message": {
            "role": "assistant", "content": calls.iter().map(|(id, name, args)|
                json!({"toolUse": {"toolUseId": id, "name": name, "input": args}})).collect::<Vec<_>>()}},
            "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}}),
        _ => unimplemented!("no mock of {api}"),
    }
}

/// A response of `api` with a final text.
pub fn text_response(api: Api, text: &str) -> Value {
    match api {
        Api::OpenAiChat => json!({"id": "chatcmpl-mock", "object": "chat.completion", "choices": [{
            "index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}]}),
        Api::OpenAiResponses => {
            json!({"id": "resp_mock", "object": "response", "status": "completed",
            "output": [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}]}]})
        }
        Api::Anthropic => json!({"id": "msg_mock", "type": "message", "role": "assistant",
            "stop_reason": "end_turn", "content": [{"type": "text", "text": text}]}),
        Api::Gemini => json!({"candidates": [{"index": 0, "finishReason": "STOP",
            "content": {"role": "model", "parts": [{"text": text}]}}]}),
        Api::BedrockConverse => json!({"stopReason": "end_turn", "output": {"message": {
            "role": "assistant", "content": [{"text": text}]}},
            "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}}),
        _ => unimplemented!("no mock of {api}"),
    }
}

/// The path each API is served at under the mock's address.
pub fn path(api: Api) -> &'static str {
    match api {
        Api::OpenAiChat => "/v1/chat/completions",
        Api::OpenAiResponses => "/v1/responses",
        Api::Anthropic => "/v1/messages",
        Api::Gemini => "/v1beta/models/gemini-2.5-flash:generateContent",
        Api::BedrockConverse => "/model/anthropic.claude-sonnet-4-5/converse",
        _ => "/unknown",
    }
}

/// The tool results in a request body: (call id, is an error) in order, and the tool names
/// it offers.
pub fn results_in(api: Api, body: &Value) -> (Vec<(String, bool)>, Vec<String>) {
    let list = |key: &str| body[key].as_array().cloned().unwrap_or_default();
    let mut results = Vec::new();
    let tools: Vec<String> = match api {
        Api::OpenAiChat => {
            for m in list("messages").iter().filter(|m| m["role"] == "tool") {
                let text = m["content"].as_str().unwrap_or_default();
                results.push((
                    m["tool_call_id"].as_str().unwrap_or_default().to_owned(),
                    !text.starts_with('{'),
                ));
            }
            list("tools")
                .iter()
                .map(|t| {
                    t["function"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned()
                })
                .collect()
        }
        Api::OpenAiResponses => {
            for i in list("input")
                .iter()
                .filter(|i| i["type"] == "function_call_output")
            {
                let text = i["output"].as_str().unwrap_or_default();
                results.push((
                    i["call_id"].as_str().unwrap_or_default().to_owned(),
                    !text.starts_with('{'),
                ));
            }
            list("tools")
                .iter()
                .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
                .collect()
        }
        Api::Anthropic => {
            for m in list("messages").iter().filter(|m| m["role"] == "user") {
                for b in m["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|b| b["type"] == "tool_result")
                {
                    results.push((
                        b["tool_use_id"].as_str().unwrap_or_default().to_owned(),
                        b["is_error"] == true,
                    ));
                }
            }
            list("tools")
                .iter()
                .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
                .collect()
        }
        Api::Gemini => {
            for c in list("contents") {
                for p in c["parts"].as_array().into_iter().flatten() {
                    if let Some(r) = p.get("functionResponse") {
                        results.push((
                            r["id"].as_str().unwrap_or_default().to_owned(),
                            r["response"].get("error").is_some(),
                        ));
                    }
                }
            }
            body["tools"][0]["functionDeclarations"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
                .collect()
        }
        Api::BedrockConverse => {
            for m in list("messages").iter().filter(|m| m["role"] == "user") {
                for b in m["content"].as_array().into_iter().flatten() {
                    if let Some(r) = b.get("toolResult") {
                        results.push((
                            r["toolUseId"].as_str().unwrap_or_default().to_owned(),
                            r["status"] == "error",
                        ));
                    }
                }
            }
            body["toolConfig"]["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| {
                    t["toolSpec"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned()
                })
                .collect()
        }
        _ => Vec::new(),
    };
    (results, tools)
}

/// What the mock has seen: each request's API and tool results (id, is an error).
#[derive(Debug, Default)]
pub struct Seen {
    pub requests: Vec<(Api, Vec<(String, bool)>)>,
}

struct Mock {
    script: Vec<Turn>,
}

/// Serves `script` for every API at once; the turn answered is the number of tool results the
/// request carries, matched against the calls the script made before it.
pub async fn serve(script: Vec<Turn>) -> (SocketAddr, Arc<Mutex<Seen>>) {
    let mock = Arc::new(Mock { script });
    let seen = Arc::new(Mutex::new(Seen::default()));
    let app = Router::new()
        .fallback(post(answer))
        .with_state((mock, seen.clone()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    (addr, seen)
}

type MockState = (Arc<Mock>, Arc<Mutex<Seen>>);

async fn answer(
    State((mock, seen)): State<MockState>,
    uri: Uri,
    Json(body): Json<Value>,
) -> Result<Json<Value>, (StatusCode, String)> {
    let api = Api::MODELS
        .iter()
        .copied()
        .find(|a| uri.path() == path(*a))
        .ok_or((StatusCode::NOT_FOUND, format!("no API at {uri}")))?;
    let bad = |m: String| (StatusCode::BAD_REQUEST, m);
    let (results, tools) = results_in(api, &body);
    if tools.is_empty() {
        return Err(bad("the request offers no tools".into()));
    }
    // The ids the script issued before this turn, in order: the results must be exactly these.
    let mut issued = Vec::new();
    let mut turn = 0;
    while issued.len() < results.len() {
        match mock.script.get(turn) {
            Some(Turn::Calls(c)) => issued.extend(c.iter().map(|(id, ..)| id.clone())),
            _ => {
                return Err(bad(format!(
                    "{} results, more than the script's calls",
                    results.len()
                )));
            }
        }
        turn += 1;
    }
    let ids: Vec<String> = results.iter().map(|(id, _)| id.clone()).collect();
    if ids != issued {
        return Err(bad(format!("results {ids:?}, expected exactly {issued:?}")));
    }
    seen.lock()
        .unwrap_or_else(|e| e.into_inner())
        .requests
        .push((api, results));
    match mock.script.get(turn) {
        Some(Turn::Calls(c)) => Ok(Json(calls_response(api, c))),
        Some(Turn::Text(t)) => Ok(Json(text_response(api, t))),
        None => Err(bad("the script has ended".into())),
    }
}
