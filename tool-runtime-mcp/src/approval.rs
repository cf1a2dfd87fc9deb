//! Asking the person at the client to approve a held call (MCP elicitation). Only an answer of
//! exactly `{"approve": true}` approves; anything else (another shape, another type, an extra
//! field, no answer in time) is a decline, and the held call is dropped.
//!
//! Two ways, by protocol era:
//! - 2025-11-25 sessions ([`ask`]): the server sends `elicitation/create` inside the open
//!   `tools/call` and waits for the answer.
//! - 2026-07-28 requests ([`hold`], [`finish`]): Multi Round-Trip Requests. The validated call is
//!   held in the tool set's approval store under a ticket, and the call answers
//!   `resultType: "input_required"` with the elicitation and a `requestState`: the ticket, signed
//!   (HMAC) with the replicas' shared key, bound to the principal, the tool and its arguments,
//!   and expiring. The client retries the same call with the answer and the state; any replica
//!   checks the state, takes the call from the store (once) and runs the held arguments.

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ContentBlock, ElicitRequest, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationSchema, InputRequest, InputRequests,
    InputRequiredResult, RequestStateCodec, SealOptions,
};
use rmcp::service::Peer;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use tool_runtime::{Answers, Context, PendingCall, Tool, ToolSet, Unanswered};

use crate::caller::Caller;
use crate::export::{error_result, success};
use crate::limits::Limits;

/// The key of the approval in `inputRequests` / `inputResponses`.
pub(crate) const APPROVAL: &str = "approval";

/// What the signed `requestState` carries: the ticket of a call held for approval (the call
/// itself is in the store), or the answers to the tool's own questions given so far.
#[derive(Serialize, Deserialize)]
struct State {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ticket: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    answers: Option<Value>,
}

/// What a retried 2026-07-28 call came back for.
pub(crate) enum Retried {
    /// An approval, decided: the answer.
    Decided(Box<CallToolResponse>),
    /// The tool's questions: run it again with these answers (the state's and the retry's).
    Answers(Answers),
}

/// What the state is bound to, authenticated with it but not stored in it: the principal (or
/// the caller's key when nobody authenticated), the method, the tool and its arguments as sent
/// (keys sorted, so a client that reorders them is not refused). A state replayed by another
/// user, for another tool or other arguments fails verification.
fn binding(caller: &Caller, request: &CallToolRequestParams) -> Vec<u8> {
    let who = caller.key();
    let arguments = request
        .arguments
        .as_ref()
        .map_or_else(|| "{}".to_owned(), sorted_object);
    format!("{who}\0tools/call\0{}\0{arguments}", request.name).into_bytes()
}

/// JSON text with every object's keys sorted.
fn sorted(v: &Value) -> String {
    match v {
        Value::Object(m) => sorted_object(m),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(sorted).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}

fn sorted_object(m: &serde_json::Map<String, Value>) -> String {
    let mut keys: Vec<&String> = m.keys().collect();
    keys.sort();
    let members: Vec<String> = keys
        .into_iter()
        .map(|k| format!("{}:{}", Value::from(k.as_str()), sorted(&m[k])))
        .collect();
    format!("{{{}}}", members.join(","))
}

/// The approval question as an MCP elicitation request.
pub(crate) fn question(pending_tool: &str, arguments: &Value) -> Result<InputRequests, String> {
    let schema = ElicitationSchema::from_type::<Approval>().map_err(|e| e.to_string())?;
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: approval_message(pending_tool, arguments),
        requested_schema: schema,
    };
    let mut requests = InputRequests::new();
    requests.insert(
        APPROVAL.into(),
        InputRequest::Elicitation(ElicitRequest::new(params)),
    );
    Ok(requests)
}

/// The approval question's words (a gateway hands its approval only to a question that names
/// the call's tool, see [`asks_only_approval`]).
fn approval_message(tool: &str, arguments: &Value) -> String {
    format!("Approve `{tool}` with {arguments}?")
}

/// The shared parts a 2026-07-28 approval needs.
pub(crate) struct Mrtr<'a> {
    pub codec: &'a RequestStateCodec,
    pub limits: &'a Limits,
}

/// Round one: holds the call and asks for approval in the result. A client that did not declare
/// the elicitation capability gets `MissingRequiredClientCapability` (-32021, the protocol's
/// rule: a server never relies on a capability the client did not declare), and nothing is
/// held.
pub(crate) async fn hold(
    tools: &ToolSet,
    pending: PendingCall,
    caller: &Caller,
    request: &CallToolRequestParams,
    can_elicit: bool,
    mrtr: Mrtr<'_>,
) -> Result<CallToolResponse, rmcp::model::ErrorData> {
    let wording = tools.wording();
    if !can_elicit {
        let _ = tools.reject(&pending.ticket).await;
        let required =
            serde_json::from_value(serde_json::json!({"elicitation": {}})).unwrap_or_default();
        return Err(rmcp::model::ErrorData::missing_required_client_capability(
            required,
        ));
    }
    let failed = |reason: String| -> Result<CallToolResponse, rmcp::model::ErrorData> {
        Ok(error_result(wording.approval_failed_message(&reason)).into())
    };
    let requests = match question(&pending.tool, &pending.arguments) {
        Ok(r) => r,
        Err(e) => {
            let _ = tools.reject(&pending.ticket).await;
            return failed(e);
        }
    };
    // The call is held in the tool set's store; the state carries its ticket.
    let ticket = pending.ticket;
    let bound = binding(caller, request);
    let options = SealOptions::new()
        .associated_data(&bound)
        .ttl(mrtr.limits.approval_timeout);
    let state = State {
        ticket: Some(ticket),
        answers: None,
    };
    match mrtr.codec.seal_json_with(&state, &options) {
        Ok(state) => Ok(InputRequiredResult::new(Some(requests), Some(state)).into()),
        Err(e) => failed(e.to_string()),
    }
}

/// The tool asked the person questions (`asked`), with `answers` given so far: the result asks
/// them, and the state carries the answers, signed and bound like an approval's. A client that
/// did not declare elicitation is refused as for an approval.
pub(crate) fn ask_again(
    tools: &ToolSet,
    asked: &Unanswered,
    answers: Option<&Answers>,
    caller: &Caller,
    request: &CallToolRequestParams,
    can_elicit: bool,
    mrtr: Mrtr<'_>,
) -> Result<CallToolResponse, rmcp::model::ErrorData> {
    if !can_elicit {
        let required =
            serde_json::from_value(serde_json::json!({"elicitation": {}})).unwrap_or_default();
        return Err(rmcp::model::ErrorData::missing_required_client_capability(
            required,
        ));
    }
    let failed = |reason: String| -> Result<CallToolResponse, rmcp::model::ErrorData> {
        Ok(error_result(tools.wording().approval_failed_message(&reason)).into())
    };
    let requests = match crate::ask::requests(asked) {
        Ok(r) => r,
        Err(e) => return failed(e),
    };
    let state = State {
        ticket: None,
        answers: Some(answers.map_or_else(|| serde_json::json!({}), Answers::to_responses)),
    };
    let bound = binding(caller, request);
    let options = SealOptions::new()
        .associated_data(&bound)
        .ttl(mrtr.limits.approval_timeout);
    match mrtr.codec.seal_json_with(&state, &options) {
        Ok(state) => Ok(InputRequiredResult::new(Some(requests), Some(state)).into()),
        Err(e) => failed(e.to_string()),
    }
}

/// Round two: the retried call with the answer and the state. A state that fails verification
/// (tampered, expired, another user's, another call's) is refused as invalid params; a call
/// already taken (approved elsewhere, or declined) is not run; only exactly `{"approve": true}`
/// runs the held arguments, with this request's context.
pub(crate) async fn finish(
    tools: &ToolSet,
    tool: &Tool,
    cx: &Context,
    caller: &Caller,
    request: &CallToolRequestParams,
    mrtr: Mrtr<'_>,
) -> Result<Retried, rmcp::model::ErrorData> {
    let wording = tools.wording();
    let sealed = request.request_state.as_deref().unwrap_or_default();
    let bound = binding(caller, request);
    let state = match mrtr.codec.open_json_with::<State>(sealed, &bound) {
        Ok(state) => state,
        Err(e) => {
            // An approval that comes back expired names a call the store should forget now,
            // not at someone's next hold (its ticket cannot be read any more).
            if matches!(e, rmcp::model::RequestStateError::Expired) {
                let _ = tools.approvals().forget_expired().await;
            }
            return Err(rmcp::model::ErrorData::invalid_params(
                "invalid or expired requestState",
                None,
            ));
        }
    };
    let ticket = match state {
        State {
            ticket: Some(ticket),
            ..
        } => ticket,
        State { answers, .. } => return Ok(Retried::Answers(merged(answers, request))),
    };
    let answer = request
        .input_responses
        .as_ref()
        .and_then(|r| r.get(APPROVAL));
    let Some(answer) = answer else {
        // Asked again, same state: nothing is taken until there is an answer.
        let requests = question(
            &request.name,
            &Value::Object(request.arguments.clone().unwrap_or_default()),
        )
        .map_err(|e| rmcp::model::ErrorData::internal_error(e, None))?;
        let again = InputRequiredResult::new(Some(requests), request.request_state.clone());
        return Ok(Retried::Decided(Box::new(again.into())));
    };
    let approved = serde_json::from_value::<ElicitResult>(answer.clone())
        .is_ok_and(|r| r.action == ElicitationAction::Accept && approves(r.content.as_ref()));
    if !approved {
        return Ok(Retried::Decided(Box::new(
            error_result(match tools.reject(&ticket).await {
                Ok(true) => wording.approval_declined.to_string(),
                Ok(false) => wording.not_pending.to_string(),
                Err(e) => wording.approval_failed_message(e.message()),
            })
            .into(),
        )));
    }
    Ok(Retried::Decided(Box::new(
        match tools.resume(cx, &ticket).await {
            Ok(out) => success(tool, out, cx).await,
            Err(e) => error_result(tools.model_message(&e)),
        }
        .into(),
    )))
}

/// The answers a retried call carries: those of its state, and the retry's own.
fn merged(kept: Option<Value>, request: &CallToolRequestParams) -> Answers {
    let responses = request
        .input_responses
        .as_ref()
        .and_then(|r| serde_json::to_value(r).ok())
        .unwrap_or_default();
    Answers::from_responses(&kept.unwrap_or_default()).with_responses(&responses)
}

/// The answers a retried call carries to the questions its tool asks before it runs: the
/// state must be one this server signed for those questions, for this caller, tool and
/// arguments.
pub(crate) fn answers_in(
    caller: &Caller,
    request: &CallToolRequestParams,
    mrtr: Mrtr<'_>,
) -> Result<Answers, rmcp::model::ErrorData> {
    let sealed = request.request_state.as_deref().unwrap_or_default();
    let bound = binding(caller, request);
    match mrtr.codec.open_json_with::<State>(sealed, &bound) {
        Ok(State {
            ticket: None,
            answers,
        }) => Ok(merged(answers, request)),
        _ => Err(rmcp::model::ErrorData::invalid_params(
            "invalid or expired requestState",
            None,
        )),
    }
}

/// Asks the person at a session's client the tool's questions, one after another, each
/// within the approval timeout: their answers (elicitation results by key), or why they could
/// not be asked.
pub(crate) async fn ask_in_session(
    asked: &Unanswered,
    peer: &Peer<RoleServer>,
    limits: &Limits,
) -> Result<Value, String> {
    let can_ask = peer
        .peer_info()
        .is_some_and(|i| i.capabilities.elicitation.is_some());
    if !can_ask {
        return Err("this client cannot ask its user".into());
    }
    let mut responses = serde_json::Map::new();
    for (key, request) in crate::ask::requests(asked)? {
        let InputRequest::Elicitation(request) = request else {
            continue;
        };
        let answer = peer
            .create_elicitation_with_timeout(request.params, Some(limits.approval_timeout))
            .await
            .map_err(|e| e.to_string())?;
        responses.insert(
            key,
            serde_json::to_value(answer).map_err(|e| e.to_string())?,
        );
    }
    Ok(Value::Object(responses))
}

/// Whether a server's `inputRequests` ask nothing but the approval question this crate asks for
/// a call of `tool`: one request, under `approval`, a form with the approval form's schema,
/// whose message names that tool. A gateway whose person approved a call hands that approval to
/// the remote task that asks it, and answers nothing else.
#[cfg(feature = "client")]
pub(crate) fn asks_only_approval(requests: &InputRequests, tool: &str) -> bool {
    let Ok(form) = ElicitationSchema::from_type::<Approval>().map(|s| serde_json::to_value(s).ok())
    else {
        return false;
    };
    let mut requests = requests.iter();
    let (Some((key, InputRequest::Elicitation(asked))), None) = (requests.next(), requests.next())
    else {
        return false;
    };
    let ElicitRequestParams::FormElicitationParams {
        requested_schema,
        message,
        ..
    } = &asked.params
    else {
        return false;
    };
    key == APPROVAL
        && message.starts_with(&format!("Approve `{tool}` with "))
        && form.is_some()
        && serde_json::to_value(requested_schema).ok() == form
}

/// The answer that approves: the form accepted with `{"approve": true}`.
#[cfg(feature = "client")]
pub(crate) fn approving_answer() -> Value {
    serde_json::json!({"action": "accept", "content": {"approve": true}})
}

/// The form the person fills in.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Approval {
    /// Run this action now?
    #[allow(dead_code)] // read through `approves`, which is stricter than serde
    approve: bool,
}

rmcp::elicit_safe!(Approval);

/// Whether an elicitation answer approves: an object with one member, `approve`, that is `true`.
/// (A key given twice never reaches here: the stdio transport refuses such a line.)
pub(crate) fn approves(content: Option<&Value>) -> bool {
    matches!(content, Some(Value::Object(m)) if m.len() == 1 && m.get("approve") == Some(&Value::Bool(true)))
}

/// Asks, and runs the call once when approved; otherwise drops it. Always answers.
pub(crate) async fn ask(
    tools: &ToolSet,
    tool: &Tool,
    pending: PendingCall,
    cx: &Context,
    peer: &Peer<RoleServer>,
    limits: &Limits,
) -> rmcp::model::CallToolResult {
    let wording = tools.wording();
    let can_ask = peer
        .peer_info()
        .is_some_and(|i| i.capabilities.elicitation.is_some());
    if !can_ask {
        // Nobody can be asked: the held call is dropped, and the model is told so.
        let _ = tools.reject(&pending.ticket).await;
        return error_result(wording.approval_unavailable.to_string());
    }
    let schema = match ElicitationSchema::from_type::<Approval>() {
        Ok(s) => s,
        Err(e) => {
            let _ = tools.reject(&pending.ticket).await;
            return error_result(wording.approval_failed_message(&e.to_string()));
        }
    };
    let question = approval_message(&pending.tool, &pending.arguments);
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: question,
        requested_schema: schema,
    };
    let answer = peer
        .create_elicitation_with_timeout(params, Some(limits.approval_timeout))
        .await;
    match answer {
        Ok(r) if r.action == ElicitationAction::Accept && approves(r.content.as_ref()) => {
            match tools.resume(cx, &pending.ticket).await {
                Ok(out) => success(tool, out, cx).await,
                Err(e) => error_result(tools.model_message(&e)),
            }
        }
        Ok(_) => {
            let _ = tools.reject(&pending.ticket).await;
            error_result(wording.approval_declined.to_string())
        }
        Err(e) => {
            let _ = tools.reject(&pending.ticket).await;
            rmcp::model::CallToolResult::error(vec![ContentBlock::text(
                wording.approval_failed_message(&e.to_string()),
            )])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::approves;
    use serde_json::json;

    #[test]
    fn only_exactly_approve_true_approves() {
        assert!(approves(Some(&json!({"approve": true}))));
        for no in [
            json!({"approve": false}),
            json!({"approve": "true"}),
            json!({"approve": 1}),
            json!([true]),
            json!({"approve": true, "also": 1}),
            json!({}),
            json!(true),
        ] {
            assert!(!approves(Some(&no)), "{no}");
        }
        assert!(!approves(None));
    }

    /// A gateway hands its approval only to this crate's question about the same tool.
    #[cfg(feature = "client")]
    #[test]
    fn only_the_approval_question_about_the_tool_is_taken_for_one() {
        use super::{APPROVAL, asks_only_approval, question};
        use rmcp::model::{ElicitRequest, ElicitRequestParams, ElicitationSchema, InputRequest};
        let asked = question("ajukan-cuti", &json!({"hari": 2})).unwrap();
        assert!(asks_only_approval(&asked, "ajukan-cuti"));
        assert!(!asks_only_approval(&asked, "hapus-data"), "another tool's");
        let mut more = asked.clone();
        more.insert("alasan".into(), asked[APPROVAL].clone());
        assert!(
            !asks_only_approval(&more, "ajukan-cuti"),
            "a second question"
        );
        let mut renamed = asked.clone();
        let first = renamed.remove(APPROVAL).unwrap();
        renamed.insert("konfirmasi".into(), first);
        assert!(!asks_only_approval(&renamed, "ajukan-cuti"), "another key");
        let other_form = ElicitationSchema::builder()
            .required_bool("confirm")
            .build()
            .unwrap();
        let mut other = asked.clone();
        other.insert(
            APPROVAL.into(),
            InputRequest::Elicitation(ElicitRequest::new(
                ElicitRequestParams::FormElicitationParams {
                    meta: None,
                    message: "Approve `ajukan-cuti` with {}?".into(),
                    requested_schema: other_form,
                },
            )),
        );
        assert!(!asks_only_approval(&other, "ajukan-cuti"), "another form");
    }
}
