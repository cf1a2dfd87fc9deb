//! An HR agent turn streamed to a browser: the page opens an `EventSource` on `/chat`, the
//! server runs the agent over the model's streamed response ([`Agent::run_streamed`]) and
//! forwards every event as a server-sent event as it happens: the answer's text as it is
//! written, each tool call started and finished (with its progress), a call waiting for
//! approval, and the end of the turn.
//!
//! The model here is [`ScriptedModel`], a stand-in that streams Anthropic Messages events
//! (this machine has no model to call); a real one is a `send` closure that posts the
//! conversation and returns [`sse_events`](tool_runtime::agent::sse_events) over the response
//! body (`reqwest::Response::bytes_stream`).
//!
//! Each browser request runs in its own task; a person who closes the page drops the response,
//! which stops the turn, its running calls and its calls held for approval (this page offers no
//! approval: a turn that needs one ends "waiting for approval").

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Query, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse};
use axum::routing::get;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};
use tool_runtime::agent::{Agent, AgentEvent, Conversation, Finished, Outcome, StreamEvent};
use tool_runtime::{Api, ToolSet};

use crate::hr::domain::Db;
use crate::hr::{Session, tool_set};

type Boxed = Box<dyn std::error::Error + Send + Sync>;
type Events = futures_util::stream::BoxStream<'static, Result<StreamEvent, Boxed>>;

/// The model: the events of its streamed answer to a conversation (Anthropic Messages format).
pub trait Model: Send + Sync + 'static {
    /// The response's events.
    fn respond(&self, conversation: &Conversation) -> Events;
}

/// A stand-in for the model, in Anthropic's streaming format: to a question it answers "let me
/// check" and calls `cek-sisa-cuti`; given the tool's result, it writes the answer from it one
/// word at a time, `word_delay` apart. With [`held`](ScriptedModel::held), it stops after some
/// words until released (the browser test's screenshot mid-answer).
pub struct ScriptedModel {
    word_delay: Duration,
    hold: Option<(usize, watch::Receiver<bool>)>,
}

impl ScriptedModel {
    /// Words `word_delay` apart.
    pub fn new(word_delay: Duration) -> Self {
        ScriptedModel {
            word_delay,
            hold: None,
        }
    }

    /// Words `word_delay` apart, stopping after `words` words of the answer until the sender
    /// says `true`.
    pub fn held(word_delay: Duration, words: usize) -> (Self, watch::Sender<bool>) {
        let (release, rx) = watch::channel(false);
        let model = ScriptedModel {
            word_delay,
            hold: Some((words, rx)),
        };
        (model, release)
    }
}

impl Model for ScriptedModel {
    fn respond(&self, conversation: &Conversation) -> Events {
        let message = json!({"id": "msg_scripted", "type": "message", "role": "assistant",
            "model": "scripted", "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 0, "output_tokens": 0}});
        let mut events = vec![json!({"type": "message_start", "message": message})];
        let words: Vec<String>;
        let stop;
        match tool_result(conversation) {
            None => {
                words = vec!["Baik, ".into(), "saya cek dulu.".into()];
                stop = "tool_use";
            }
            Some(result) => {
                words = answer(&result)
                    .split_inclusive(' ')
                    .map(str::to_owned)
                    .collect();
                stop = "end_turn";
            }
        }
        let text_start = events.len();
        events.push(
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        );
        for word in &words {
            events.push(json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "text_delta", "text": word}}));
        }
        events.push(json!({"type": "content_block_stop", "index": 0}));
        if stop == "tool_use" {
            events.push(json!({"type": "content_block_start", "index": 1, "content_block":
                {"type": "tool_use", "id": "toolu_scripted", "name": "cek-sisa-cuti", "input": {}}}));
            events.push(json!({"type": "content_block_delta", "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": "{}"}}));
            events.push(json!({"type": "content_block_stop", "index": 1}));
        }
        events.push(json!({"type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": words.len()}}));
        events.push(json!({"type": "message_stop"}));

        let delay = self.word_delay;
        // The hold applies to the answer (the turn after the tool ran).
        let hold = self
            .hold
            .clone()
            .filter(|_| stop == "end_turn")
            .map(|(words, rx)| (text_start + 1 + words, rx));
        let stream = async_stream(
            events,
            delay,
            text_start + 1..text_start + 1 + words.len(),
            hold,
        );
        Box::pin(stream)
    }
}

/// The events one by one: the answer's words `delay` apart, waiting at the hold point until
/// released.
fn async_stream(
    events: Vec<Value>,
    delay: Duration,
    words: std::ops::Range<usize>,
    hold: Option<(usize, watch::Receiver<bool>)>,
) -> impl futures_util::Stream<Item = Result<StreamEvent, Boxed>> + Send + 'static {
    futures_util::stream::unfold(
        (events.into_iter().enumerate(), hold),
        move |(mut events, mut hold)| {
            let words = words.clone();
            async move {
                let (i, event) = events.next()?;
                if let Some((at, rx)) = &mut hold
                    && i == *at
                {
                    let _ = rx.wait_for(|released| *released).await;
                }
                if words.contains(&i) {
                    tokio::time::sleep(delay).await;
                }
                let name = event["type"].as_str().unwrap_or_default().to_owned();
                Some((
                    Ok(StreamEvent::named(name, event.to_string())),
                    (events, hold),
                ))
            }
        },
    )
}

/// The result of the last `tool_result` in the conversation, if the last message holds one.
fn tool_result(conversation: &Conversation) -> Option<Value> {
    let last = conversation.messages.last()?;
    let block = last["content"]
        .as_array()?
        .iter()
        .find(|b| b["type"] == "tool_result")?;
    let text = match &block["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        _ => return Some(Value::Null),
    };
    Some(serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

/// The answer the scripted model writes from `cek-sisa-cuti`'s result.
fn answer(result: &Value) -> String {
    match (result["nama"].as_str(), result["sisa_cuti"].as_u64()) {
        (Some(nama), Some(sisa)) => format!(
            "Halo {nama}, sisa cuti tahunan Anda {sisa} hari; yang sudah terpakai {} hari.",
            result["cuti_terpakai"]
        ),
        _ => "Maaf, data cuti Anda tidak ditemukan.".into(),
    }
}

/// What the chat server needs: the HR tools, the database, the logged-in employee and the
/// model.
pub struct Chat {
    tools: Arc<ToolSet>,
    db: Arc<Db>,
    session: Session,
    model: Arc<dyn Model>,
}

impl Chat {
    /// A chat for `session` over `db`, with the HR tools.
    pub fn new(db: Arc<Db>, session: Session, model: impl Model) -> Self {
        Chat {
            tools: Arc::new(tool_set()),
            db,
            session,
            model: Arc::new(model),
        }
    }
}

/// The page at `/` and the event stream at `/chat?pesan=...`.
pub fn router(chat: Chat) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/chat", get(turn))
        .with_state(Arc::new(chat))
}

async fn page() -> Html<&'static str> {
    Html(PAGE)
}

#[derive(Deserialize)]
struct Ask {
    pesan: String,
}

/// Events waiting to be sent to one browser; the turn waits when it is full.
const QUEUE: usize = 64;

async fn turn(State(chat): State<Arc<Chat>>, Query(ask): Query<Ask>) -> impl IntoResponse {
    let (tx, rx) = mpsc::channel::<Event>(QUEUE);
    tokio::spawn(async move {
        let cx = chat.session.context(chat.db.clone());
        // The HR tools are sync (SQLite): they run on Tokio's blocking threads, never on
        // the workers that serve the other browsers.
        let agent = Agent::new(&chat.tools)
            .max_turns(4)
            .offload(|job| drop(tokio::task::spawn_blocking(job)));
        let mut conversation = Conversation::new(Api::Anthropic);
        conversation.push_user(&ask.pesan);
        let model = chat.model.clone();
        let send = move |c: &Conversation| {
            let events = model.respond(c);
            async move { Ok::<_, Infallible>(events) }
        };
        let mut run = agent.run_streamed(&cx, conversation, send);
        loop {
            tokio::select! {
                event = futures_util::StreamExt::next(&mut run) => match event {
                    Some(event) => {
                        if tx.send(sse(event)).await.is_err() {
                            break;
                        }
                    }
                    None => return,
                },
                // The browser left, even in the middle of a long call.
                () = tx.closed() => break,
            }
        }
        // Stop the turn: its running calls are dropped, and its calls held for approval too.
        run.cancel().await;
    });
    let events = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|e| (Ok::<_, Infallible>(e), rx))
    });
    Sse::new(events).keep_alive(KeepAlive::default())
}

/// One agent event as a server-sent event: its kind as the event name, JSON as the data.
fn sse(event: AgentEvent) -> Event {
    let (name, data) = match event {
        AgentEvent::Text(text) => ("text", json!(text)),
        AgentEvent::Thinking(text) => ("thinking", json!(text)),
        AgentEvent::CallStarted(call) => {
            ("call_started", json!({"id": call.id, "name": call.name}))
        }
        AgentEvent::Progress {
            call_id,
            name,
            report,
        } => (
            "progress",
            json!({"id": call_id, "name": name, "progress": report.progress,
                   "total": report.total, "message": report.message}),
        ),
        AgentEvent::CallFinished(Outcome::Answered(answer)) => (
            "call_finished",
            json!({"id": answer.call_id, "name": answer.name, "is_error": answer.is_error,
                   "text": answer.text()}),
        ),
        AgentEvent::CallFinished(Outcome::Waiting { call, pending }) => (
            "waiting",
            json!({"id": call.id, "name": call.name, "arguments": pending.arguments}),
        ),
        AgentEvent::Done(Ok(Finished::Answered { reply, .. })) => {
            ("done", json!({"text": reply.text}))
        }
        AgentEvent::Done(Ok(Finished::Paused(_))) => ("paused", json!({})),
        AgentEvent::Done(Ok(_)) => ("turn_limit", json!({})),
        AgentEvent::Done(Err(e)) => ("failed", json!({"message": e.to_string()})),
        _ => ("other", json!({})),
    };
    Event::default().event(name).data(data.to_string())
}

const PAGE: &str = r#"<!doctype html>
<html lang="id">
<head>
<meta charset="utf-8">
<title>Asisten HR</title>
<style>
  body { font-family: system-ui, sans-serif; max-width: 44rem; margin: 2rem auto; color: #1d2430; }
  form { display: flex; gap: .5rem; }
  input { flex: 1; padding: .5rem; font-size: 1rem; }
  #jawaban { white-space: pre-wrap; font-size: 1.25rem; line-height: 1.6; min-height: 4rem;
             padding: 1rem; border-radius: .5rem; background: #f2f5f9; margin-top: 1rem; }
  #panggilan li { color: #555; }
  #panggilan li.selesai::after { content: " ✓"; color: #178a3a; }
  #panggilan li.gagal::after { content: " ✗"; color: #b3261e; }
  #status { margin-top: .5rem; color: #555; }
  body.selesai #status { color: #178a3a; }
</style>
</head>
<body>
<h1>Asisten HR</h1>
<form id="tanya"><input id="pesan" name="pesan" placeholder="Tanya soal cuti atau reimbursement">
<button>Kirim</button></form>
<ul id="panggilan"></ul>
<div id="jawaban"></div>
<div id="status"></div>
<script>
const $ = (id) => document.getElementById(id);
function ask(pesan) {
  document.body.classList.remove("selesai");
  $("jawaban").textContent = ""; $("panggilan").innerHTML = ""; $("status").textContent = "menulis…";
  const source = new EventSource("/chat?pesan=" + encodeURIComponent(pesan));
  const on = (name, f) => source.addEventListener(name, (e) => f(JSON.parse(e.data)));
  on("text", (t) => { $("jawaban").textContent += t; });
  on("call_started", (c) => {
    if ($("jawaban").textContent) $("jawaban").textContent += "\n";
    const li = document.createElement("li"); li.id = "call-" + c.id;
    li.textContent = "memanggil " + c.name; $("panggilan").appendChild(li);
  });
  on("progress", (p) => { const li = $("call-" + p.id); if (li) li.title = p.message || ""; });
  on("call_finished", (c) => { const li = $("call-" + c.id); if (li) li.className = c.is_error ? "gagal" : "selesai"; });
  on("waiting", (c) => { $("status").textContent = c.name + " menunggu persetujuan"; });
  const end = (text) => { source.close(); $("status").textContent = text; document.body.classList.add("selesai"); };
  // An EventSource reconnects by itself, which would ask (and run the tools) again: not here.
  source.onerror = () => { if (!document.body.classList.contains("selesai")) end("koneksi terputus"); };
  on("done", () => end("selesai"));
  on("paused", () => end("menunggu persetujuan"));
  on("turn_limit", () => end("terlalu banyak langkah"));
  on("failed", (e) => end("gagal: " + e.message));
}
$("tanya").addEventListener("submit", (e) => { e.preventDefault(); ask($("pesan").value); });
const start = new URLSearchParams(location.search).get("pesan");
if (start) { $("pesan").value = start; ask(start); }
</script>
</body>
</html>
"#;
