//! An HR agent turn streamed to a browser: the page opens an `EventSource` on `/chat`, the
//! server runs the agent over the model's streamed response ([`Agent::run_streamed`]) and
//! forwards every event as a server-sent event as it happens: the answer's text as it is
//! written, each tool call started and finished (with its progress), a call waiting for
//! approval, and the end of the turn.
//!
//! The model here is [`ScriptedModel`], a stand-in ([`TestModel`]) that streams Anthropic
//! Messages events (this machine has no model to call); a real one is a `send` closure that
//! posts [`Conversation::request`] and returns the API's
//! [`Framing`](tool_runtime::provider::Framing) over the response body
//! (`api.provider().framing().events(response.bytes_stream())`).
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
use tool_runtime::ToolSet;
use tool_runtime::agent::{Agent, AgentEvent, Conversation, Finished, Outcome};
use tool_runtime::provider::{Api, Delta, Message, Request, ResponseStream, StreamEvent, Turn};
use tool_runtime::testing::TestModel;

use crate::hr::domain::Db;
use crate::hr::{Session, tool_set};

type Boxed = Box<dyn std::error::Error + Send + Sync>;
type Events = futures_util::stream::BoxStream<'static, Result<StreamEvent, Boxed>>;

/// The model: the events of its streamed answer to a conversation.
pub trait Model: Send + Sync + 'static {
    /// The API it answers in.
    fn api(&self) -> Api;
    /// The response's events.
    fn respond(&self, conversation: &Conversation, request: &Request<'_>) -> Events;
}

/// A stand-in for the model ([`TestModel`], streaming Anthropic Messages events): to a
/// question it answers "let me check" and calls `cek-sisa-cuti`; given the tool's result, it
/// writes the answer from it, word by word, `word_delay` apart. With
/// [`held`](ScriptedModel::held), it stops after some words until released (the browser
/// test's screenshot mid-answer).
pub struct ScriptedModel {
    model: TestModel,
    word_delay: Duration,
    hold: Option<(usize, watch::Receiver<bool>)>,
}

impl ScriptedModel {
    /// Words `word_delay` apart.
    pub fn new(word_delay: Duration) -> Self {
        ScriptedModel {
            model: TestModel::function(Api::ANTHROPIC, scripted_turn),
            word_delay,
            hold: None,
        }
    }

    /// Words `word_delay` apart, stopping after `words` words of the answer until the sender
    /// says `true`.
    pub fn held(word_delay: Duration, words: usize) -> (Self, watch::Sender<bool>) {
        let (release, rx) = watch::channel(false);
        let mut model = ScriptedModel::new(word_delay);
        model.hold = Some((words, rx));
        (model, release)
    }
}

/// The scripted turn: a call before the tool ran, the answer from its result after.
fn scripted_turn(sent: &tool_runtime::provider::SentRequest) -> Turn {
    match sent.messages.last() {
        Some(Message::Results(results)) => {
            let result = results.first().map(|r| r.text.as_str()).unwrap_or_default();
            let result = serde_json::from_str(result).unwrap_or(Value::Null);
            Turn::text(answer(&result))
        }
        _ => Turn::call("cek-sisa-cuti", json!({})).with_text("Baik, saya cek dulu."),
    }
}

impl Model for ScriptedModel {
    fn api(&self) -> Api {
        self.model.api()
    }

    fn respond(&self, conversation: &Conversation, request: &Request<'_>) -> Events {
        let events = conversation
            .request(&request.clone().streamed())
            .map_err(Boxed::from)
            .and_then(|http| self.model.respond_streamed(&http).map_err(Boxed::from));
        let events = match events {
            Ok(events) => events,
            Err(e) => return Box::pin(futures_util::stream::once(async { Err(e) })),
        };
        // The words of the answer (the turn after the tool ran) are paced; the hold applies
        // to them. Which events carry text, the API's own assembler says.
        let mut reading = ResponseStream::new(self.model.api());
        let is_text: Vec<bool> = events
            .iter()
            .map(|e| {
                reading
                    .push(e)
                    .is_ok_and(|d| d.iter().any(|d| matches!(d, Delta::Text(_))))
            })
            .collect();
        let answering = conversation.messages.len() > 1;
        let hold = self.hold.clone().filter(|_| answering);
        Box::pin(paced(events, is_text, self.word_delay, hold))
    }
}

/// The events one by one, each text event `delay` after the one before, waiting before the
/// hold's text event until released.
fn paced(
    events: Vec<StreamEvent>,
    is_text: Vec<bool>,
    delay: Duration,
    hold: Option<(usize, watch::Receiver<bool>)>,
) -> impl futures_util::Stream<Item = Result<StreamEvent, Boxed>> + Send + 'static {
    let events = events.into_iter().zip(is_text);
    futures_util::stream::unfold(
        (events, 0, hold),
        move |(mut events, mut words, mut hold)| async move {
            let (event, text) = events.next()?;
            if text {
                if let Some((at, rx)) = &mut hold
                    && words == *at
                {
                    let _ = rx.wait_for(|released| *released).await;
                }
                words += 1;
                tokio::time::sleep(delay).await;
            }
            Some((Ok(event), (events, words, hold)))
        },
    )
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
        let mut conversation = Conversation::new(chat.model.api());
        conversation.push_user(&ask.pesan);
        let model = chat.model.clone();
        let request = Request::new("hr-model").tools(&chat.tools);
        let send = move |c: &Conversation| {
            let events = model.respond(c, &request);
            async move { Ok::<_, Boxed>(events) }
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
