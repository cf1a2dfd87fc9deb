//! OpenAI Responses (`POST /v1/responses`, <https://platform.openai.com/docs/api-reference/responses>):
//! flat tools `{type: "function", name, description, parameters, strict}`, structured output as
//! `text: {format: {type: "json_schema", ...}}`, replies as `output[]` items (`message` with
//! `output_text` or `refusal` parts, `function_call` with `call_id`, `name`, `arguments` as JSON
//! text, `reasoning`), results as one `function_call_output` item per call. Every output item
//! is kept in the next request's `input`, reasoning included. The schema lowering is OpenAI's
//! strict mode, as for Chat Completions.

use serde_json::{Value, json};

use super::openai_chat::strict;
use super::stream::{self, Assemble, Delta};
use super::{
    CallArguments, Dialect, ExportError, Exported, Finish, Lowered, Reply, ToolAnswer, ToolCall,
    str_at,
};
use crate::host::Content;
use crate::tool::Tool;

/// OpenAI Responses.
pub(super) struct OpenAiResponses;

impl Dialect for OpenAiResponses {
    fn name(&self) -> &'static str {
        "OpenAI Responses"
    }

    fn lower(&self, canonical: &Value) -> Lowered {
        strict(canonical)
    }

    fn tool(&self, name: &str, description: &str, input: &Value) -> Exported {
        let Lowered {
            schema,
            strict,
            reasons,
        } = strict(input);
        let json = json!({ "type": "function", "name": name, "description": description, "parameters": schema, "strict": strict });
        Exported {
            json,
            strict,
            reasons,
        }
    }

    fn tools(&self, entries: Vec<(&Tool, Exported)>) -> Result<Vec<Value>, ExportError> {
        Ok(entries.into_iter().map(|(_, e)| e.json).collect())
    }

    fn structured_output(&self, name: &str, canonical: &Value) -> Exported {
        let Lowered {
            schema,
            strict,
            reasons,
        } = strict(canonical);
        let json = json!({ "format": { "type": "json_schema", "name": name, "schema": schema, "strict": strict } });
        Exported {
            json,
            strict,
            reasons,
        }
    }

    fn read_reply(&self, raw: &Value) -> Result<Reply, String> {
        let output = raw["output"].as_array().ok_or("no `output` array")?;
        let mut text = String::new();
        for item in output.iter().filter(|i| i["type"] == "message") {
            for part in item["content"].as_array().into_iter().flatten() {
                match part["type"].as_str() {
                    Some("refusal") => {
                        let message = part["refusal"].as_str().unwrap_or_default().into();
                        return Ok(Reply {
                            text: None,
                            finish: Finish::Refused { message },
                        });
                    }
                    Some("output_text") => text.push_str(part["text"].as_str().unwrap_or_default()),
                    _ => {}
                }
            }
        }
        let finish = match raw["status"].as_str() {
            Some("completed") => Finish::Completed,
            Some("incomplete") => {
                let reason = raw["incomplete_details"]["reason"]
                    .as_str()
                    .unwrap_or("incomplete");
                if reason == "content_filter" {
                    Finish::Refused {
                        message: "content_filter".into(),
                    }
                } else {
                    Finish::Truncated {
                        reason: reason.into(),
                    }
                }
            }
            Some(other) => Finish::Other {
                reason: other.into(),
            },
            None => return Err("no `status`".into()),
        };
        Ok(Reply::new(text, finish))
    }

    fn read_calls(&self, raw: &Value) -> Result<(Vec<ToolCall>, Vec<Value>), String> {
        let items = raw["output"].as_array().cloned().unwrap_or_default();
        let calls = items
            .iter()
            .filter(|i| i["type"] == "function_call")
            .map(call_of)
            .collect::<Result<_, _>>()?;
        Ok((calls, items))
    }

    /// The output is text, or `input_text`/`input_image` parts when there are images.
    fn render(&self, answers: &[ToolAnswer]) -> Vec<Value> {
        answers
            .iter()
            .map(|a| {
                let output = if a.has_images() {
                    Value::Array(
                        a.content
                            .iter()
                            .map(|c| match c {
                                Content::ImageUrl { url } => {
                                    json!({"type": "input_image", "image_url": url})
                                }
                                Content::Text { text } => {
                                    json!({"type": "input_text", "text": text})
                                }
                            })
                            .collect(),
                    )
                } else {
                    Value::String(a.text())
                };
                json!({"type": "function_call_output", "call_id": a.id(), "output": output})
            })
            .collect()
    }

    fn user_message(&self, text: &str) -> Value {
        json!({"role": "user", "content": text})
    }

    fn stream(&self) -> Box<dyn Assemble> {
        Box::<ResponsesStream>::default()
    }
}

/// A `function_call` item as a call.
fn call_of(item: &Value) -> Result<ToolCall, String> {
    Ok(ToolCall {
        id: Some(str_at(item, "call_id", "a function_call item")?),
        name: str_at(item, "name", "a function_call item")?,
        arguments: CallArguments::Text(str_at(item, "arguments", "a function_call item")?),
    })
}

/// Responses streamed (`stream: true`,
/// <https://platform.openai.com/docs/api-reference/responses-streaming>): typed events;
/// `response.output_item.added` opens an item, `response.function_call_arguments.delta` adds to
/// a call's arguments, `.done` and `response.output_item.done` close it (the call is complete
/// there), text arrives as `response.output_text.delta`, and `response.completed` (or
/// `response.incomplete`) carries the whole response, which must agree with the calls handed
/// out. Other events (content parts, hosted tools' progress, keep-alives, types added later)
/// add nothing the closing response does not repeat whole, and are passed over.
#[derive(Default)]
pub(super) struct ResponsesStream {
    /// Function-call items by `output_index`: the item and whether it was handed out.
    calls: Vec<(u64, Value, bool)>,
    response: Option<Value>,
}

impl ResponsesStream {
    fn call(&mut self, event: &Value) -> Result<&mut (u64, Value, bool), String> {
        let at = event["output_index"]
            .as_u64()
            .ok_or("no `output_index` number")?;
        self.calls
            .iter_mut()
            .find(|c| c.0 == at)
            .ok_or_else(|| format!("output item {at} is not a function call that was added"))
    }
}

impl Assemble for ResponsesStream {
    fn event(
        &mut self,
        name: Option<&str>,
        data: &str,
        out: &mut Vec<Delta>,
    ) -> Result<(), String> {
        if self.response.is_some() {
            return Err("an event after the response completed".into());
        }
        let event = stream::json(data)?;
        let kind = stream::typed(name, &event)?;
        match kind {
            "response.created" | "response.in_progress" | "response.queued" => {}
            "response.output_item.added" => {
                let item = &event["item"];
                if item["type"] == "function_call" {
                    let at = stream::index(&event, "output_index")? as u64;
                    let mut item = item.clone();
                    item["arguments"] = json!(item["arguments"].as_str().unwrap_or(""));
                    // (`item["type"]` is a string only in an object, so these writes cannot fail.)
                    self.calls.push((at, item, false));
                }
            }
            "response.function_call_arguments.delta" => {
                let (at, item, handed) = self.call(&event)?;
                if *handed {
                    return Err(format!(
                        "arguments for output item {at} after it was complete"
                    ));
                }
                let more = event["delta"].as_str().ok_or("no `delta` string")?;
                stream::append(item, "arguments", more)?;
            }
            "response.function_call_arguments.done" => {
                let (at, item, _) = self.call(&event)?;
                let done = event["arguments"].as_str().ok_or("no `arguments` string")?;
                if item["arguments"] != done {
                    return Err(format!(
                        "output item {at}'s arguments are {} but the deltas made {}",
                        stream::clip(done),
                        stream::clip(item["arguments"].as_str().unwrap_or_default())
                    ));
                }
            }
            "response.output_item.done" => {
                let item = &event["item"];
                if item["type"] == "function_call" {
                    let (at, streamed, handed) = self.call(&event)?;
                    if *handed {
                        return Err(format!("output item {at} was done twice"));
                    }
                    if item["status"] == "incomplete" {
                        return Err(format!(
                            "output item {at} (call {}) was cut off before its arguments were complete",
                            item["call_id"]
                        ));
                    }
                    if streamed["arguments"] != item["arguments"] {
                        return Err(format!(
                            "output item {at}'s arguments are {} but the deltas made {}",
                            item["arguments"], streamed["arguments"]
                        ));
                    }
                    *streamed = item.clone();
                    *handed = true;
                    out.push(Delta::Call(call_of(item)?));
                }
            }
            "response.output_text.delta" => {
                out.push(Delta::Text(
                    event["delta"].as_str().ok_or("no `delta` string")?.into(),
                ));
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                out.push(Delta::Thinking(
                    event["delta"].as_str().ok_or("no `delta` string")?.into(),
                ));
            }
            "response.completed" | "response.incomplete" => {
                let response = event["response"].clone();
                let output = response["output"]
                    .as_array()
                    .ok_or("no `response.output` array")?;
                let finals: Vec<&Value> = output
                    .iter()
                    .filter(|i| i["type"] == "function_call")
                    .collect();
                for (at, item, handed) in &mut self.calls {
                    let Some(last) = finals.iter().find(|f| f["call_id"] == item["call_id"]) else {
                        return Err(format!("output item {at} is missing from the response"));
                    };
                    if !*handed {
                        if kind == "response.incomplete" || last["status"] == "incomplete" {
                            return Err(format!(
                                "the response was cut off ({}) before call {} was complete",
                                response["incomplete_details"]["reason"], item["call_id"]
                            ));
                        }
                        *item = (*last).clone();
                        *handed = true;
                        out.push(Delta::Call(call_of(item)?));
                    } else if item["arguments"] != last["arguments"] || item["name"] != last["name"]
                    {
                        return Err(format!(
                            "the response's call {} differs from the one streamed",
                            item["call_id"]
                        ));
                    }
                }
                if finals.len() != self.calls.len() {
                    return Err("the response has function calls that were never streamed".into());
                }
                self.response = Some(response);
            }
            "response.failed" => {
                return Err(format!(
                    "the response failed: {}",
                    event["response"]["error"]
                ));
            }
            "error" => {
                return Err(format!(
                    "the provider sent an error: {} {}",
                    event["code"], event["message"]
                ));
            }
            _ => {}
        }
        Ok(())
    }

    fn finish(&mut self, _out: &mut Vec<Delta>) -> Result<Value, String> {
        self.response
            .take()
            .ok_or_else(|| "the stream ended before `response.completed`".into())
    }
}
