//! A plain `tools/call` of an initialized stdio session, answered by the transport itself rather
//! than through rmcp's service: rmcp's loop hands each request to a task of its own with a
//! context, a cancellation token and a channel back to the loop, and its answer through a
//! second task to the writer; a fifth of a call's instructions on stdio. Here the call
//! runs in one task that writes its answer to the writer's queue.
//!
//! Only a call that needs nothing of rmcp's takes this lane: the session opened with
//! `initialize` (rmcp keeps the client's version and capabilities, which the call reads), and
//! the request has no `_meta` (no progress token, no task, no version of its own). Every other
//! request goes to rmcp as before. What rmcp's handler does around a call is done here the same
//! way (the version's shape of the result, a task handle only for a client that declared
//! tasks); `notifications/cancelled` cancels the call's token as rmcp does, and its answer is
//! not sent; the client's answers to the call's own questions (an approval) still reach the
//! session's peer through rmcp.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use rmcp::RoleServer;
use rmcp::model::{
    CallToolResponse, ClientCapabilities, ClientRequest, ErrorCode, ErrorData, JsonRpcMessage,
    ProtocolVersion, RequestMetaObject, ServerResult,
};
use rmcp::service::{Peer, RxJsonRpcMessage, TxJsonRpcMessage};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::{InFlight, Outgoing, key_of};
use crate::incoming::{Direct, Incoming};
use crate::server::McpServer;

/// How long calls still running may finish once the input has ended (rmcp's own drain).
const DRAIN: Duration = Duration::from_secs(5);
/// How long a call cancelled at the end has to wind up (to drop the call it held for approval)
/// before it is stopped.
const WIND_UP: Duration = Duration::from_secs(1);

/// The calls a stdio transport answers itself.
pub(crate) struct Lane {
    server: McpServer,
    /// Set once rmcp has opened the session with `initialize` (never for a session that began
    /// without one: its requests carry what they need in `_meta`, which rmcp checks).
    session: Arc<OnceLock<Peer<RoleServer>>>,
    calls: JoinSet<()>,
    /// The parent of every call's token: cancelled when the transport closes.
    closing: CancellationToken,
    /// When the input ended.
    ended: Option<Instant>,
}

impl Lane {
    /// The lane for `server`, and where to put the session's peer once rmcp has opened it.
    pub(crate) fn new(server: McpServer) -> (Self, Arc<OnceLock<Peer<RoleServer>>>) {
        let session = Arc::new(OnceLock::new());
        let lane = Lane {
            server,
            session: session.clone(),
            calls: JoinSet::new(),
            closing: CancellationToken::new(),
            ended: None,
        };
        (lane, session)
    }

    /// Starts `message` when it is a call this lane answers (its request already admitted to
    /// `in_flight`); any other message is handed back, for rmcp.
    pub(super) fn take(
        &mut self,
        message: RxJsonRpcMessage<RoleServer>,
        in_flight: &Arc<Mutex<InFlight>>,
        out: &mpsc::Sender<Outgoing>,
    ) -> Option<RxJsonRpcMessage<RoleServer>> {
        // Finished calls leave the set as new ones come.
        while self.calls.try_join_next().is_some() {}
        let JsonRpcMessage::Request(request) = message else {
            return Some(message);
        };
        let session = match (&request.request, self.session.get()) {
            (ClientRequest::CallToolRequest(call), Some(peer))
                if call.extensions.get::<RequestMetaObject>().is_none()
                    && call.params.meta.is_none() =>
            {
                match peer.peer_info() {
                    Some(info) => (peer.clone(), info.protocol_version.clone()),
                    None => return Some(JsonRpcMessage::Request(request)),
                }
            }
            _ => return Some(JsonRpcMessage::Request(request)),
        };
        let (peer, version) = session;
        let ClientRequest::CallToolRequest(mut call) = request.request else {
            return None;
        };
        // The arguments' text the reader cut out of the line.
        let extensions = std::mem::take(&mut call.extensions);
        let id = request.id;
        let key = key_of(&id);
        let ct = self.closing.child_token();
        {
            let mut in_flight = in_flight.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(r) = in_flight.by_key.get_mut(&key) {
                r.cancel = Some(ct.clone());
            }
        }
        let server = self.server.clone();
        let (in_flight, out) = (in_flight.clone(), out.clone());
        self.calls.spawn(async move {
            let incoming = Incoming::Direct(Direct {
                ct: ct.clone(),
                id: id.clone(),
                meta: RequestMetaObject::new(),
                extensions,
                session: Some(peer),
            });
            let capabilities = incoming.client_capabilities();
            let answer = server.call_tool(call.params, incoming).await;
            // rmcp does not answer a request the client cancelled.
            if ct.is_cancelled() {
                return;
            }
            let answer = as_rmcp_answers(answer, &version, capabilities.as_ref());
            let message: TxJsonRpcMessage<RoleServer> = match answer {
                Ok(result) => JsonRpcMessage::response(result, id),
                Err(error) => JsonRpcMessage::error(error, Some(id)),
            };
            let Ok(line) = serde_json::to_vec(&message) else {
                return;
            };
            let Ok(place) = out.reserve().await else {
                return;
            };
            // Under the lock a cancellation takes its request out with: one that came while the
            // answer waited for its place is not answered either (and its id may be another
            // request's by now).
            let mut in_flight = in_flight.lock().unwrap_or_else(|e| e.into_inner());
            if ct.is_cancelled() {
                return;
            }
            if let Some(r) = in_flight.by_key.get_mut(&key) {
                r.queued = true;
            }
            place.send(Outgoing {
                line,
                answers: Some(key),
            });
        });
        None
    }

    /// The input ended (the transport closes once rmcp has drained its own calls).
    pub(super) fn input_ended(&mut self) {
        self.ended.get_or_insert_with(Instant::now);
    }

    /// The transport is closing: as rmcp does for its own calls, the calls still running have
    /// until [`DRAIN`] after the input ended to finish and send their answers; then they are
    /// cancelled (a call waiting for approval drops the call it held) and, after [`WIND_UP`],
    /// stopped. Their requests are answered as unfinished.
    pub(super) async fn stop(&mut self) {
        let drain_until = self.ended.unwrap_or_else(Instant::now) + DRAIN;
        let calls = &mut self.calls;
        let all_done = async { while calls.join_next().await.is_some() {} };
        if tokio::time::timeout_at(drain_until.into(), all_done)
            .await
            .is_ok()
        {
            return;
        }
        self.closing.cancel();
        let calls = &mut self.calls;
        let all_done = async { while calls.join_next().await.is_some() {} };
        if tokio::time::timeout(WIND_UP, all_done).await.is_err() {
            self.calls.abort_all();
            while self.calls.join_next().await.is_some() {}
        }
    }
}

/// A call's answer as rmcp's handler shapes it for the session's `version`: a task handle only
/// for a client that declared tasks, 2026-07-28's cache hints, or the older shape.
fn as_rmcp_answers(
    answer: Result<CallToolResponse, ErrorData>,
    version: &ProtocolVersion,
    capabilities: Option<&ClientCapabilities>,
) -> Result<ServerResult, ErrorData> {
    let modern = version.as_str() >= ProtocolVersion::V_2026_07_28.as_str();
    let answer = answer.map_err(|mut error| {
        if modern && error.code == ErrorCode::RESOURCE_NOT_FOUND {
            error.code = ErrorCode::INVALID_PARAMS;
        }
        error
    })?;
    if matches!(answer, CallToolResponse::Task(_))
        && !capabilities.is_some_and(|c| c.supports_tasks())
    {
        return Err(ErrorData::missing_required_client_capability(
            ClientCapabilities::builder().enable_tasks().build(),
        ));
    }
    let mut result = ServerResult::from(answer);
    if matches!(result, ServerResult::InputRequiredResult(_)) && !modern {
        return Err(ErrorData::invalid_request(
            "InputRequiredResult requires negotiated protocol version 2026-07-28 or newer",
            None,
        ));
    }
    if modern {
        result.fill_missing_cache_hints();
    } else {
        result.strip_result_type_for_legacy_peer();
        result.strip_non_object_output_for_legacy_peer();
    }
    Ok(result)
}
