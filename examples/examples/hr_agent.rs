//! The HR assistant as an agent: Sari asks, the model calls tools, the toolkit runs them and
//! answers in the model API's own format, turn after turn, in each of the five APIs (OpenAI
//! Chat Completions, OpenAI Responses, Anthropic Messages, Gemini, Amazon Bedrock Converse). The model is a local stand-in
//! (`examples::mock_provider`) reached over real HTTP, replaying one conversation: two tool calls
//! in one turn, an invalid argument the model repairs on its next turn, a tool Sari may not use,
//! and a leave request that waits for approval and is resumed by a new process.
//!
//! `cargo run -p examples --example hr_agent`

use std::sync::Arc;

use examples::hr::domain::Db;
use examples::hr::{Peran, Persetujuan, Session, tool_set};
use examples::mock_provider::{self, Turn, calls};
use examples::show::{check, fail};
use serde_json::{Value, json};
use tool_runtime::agent::{Agent, Conversation, Decision, Finished, Paused};
use tool_runtime::{Api, ToolSet};

const SYSTEM: &str = "Kamu asisten HR. Jawab hanya dari data tool.";

/// The conversation the stand-in model replays, the same in every API.
fn script() -> Vec<Turn> {
    vec![
        calls("a", &[("cek-sisa-cuti", json!({})), ("cek-status-reimburse", json!({}))]),
        calls("b", &[("cek-riwayat-cuti", json!({"tahun": "tahun ini"}))]),
        calls("c", &[("cek-riwayat-cuti", json!({"tahun": 2026}))]),
        calls("d", &[("cek-cuti-tim", json!({}))]),
        calls("e", &[("ajukan-cuti", json!({"mulai": "2026-12-21", "hari": 2}))]),
        Turn::Text("Sisa cuti Anda 7 hari; reimburse R-88 masih diproses. Cuti 21-22 Desember sudah diajukan dan disetujui: sisa cuti sekarang 5 hari.".into()),
    ]
}

/// The request body of each API: the conversation, the system prompt and the tools.
fn request(api: Api, tools: &[Value], c: &Conversation) -> Value {
    match api {
        Api::OpenAiChat => {
            let mut messages = vec![json!({"role": "system", "content": SYSTEM})];
            messages.extend(c.messages.iter().cloned());
            json!({"model": "gpt-4.1", "messages": messages, "tools": tools})
        }
        Api::OpenAiResponses => {
            json!({"model": "gpt-4.1", "instructions": SYSTEM, "input": c.messages, "tools": tools})
        }
        Api::Anthropic => json!({"model": "claude-sonnet-4-5", "max_tokens": 1024,
            "system": SYSTEM, "messages": c.messages, "tools": tools}),
        Api::Gemini => json!({"systemInstruction": {"parts": [{"text": SYSTEM}]},
            "contents": c.messages, "tools": tools}),
        Api::BedrockConverse => json!({"system": [{"text": SYSTEM}], "messages": c.messages,
            "toolConfig": {"tools": tools}, "inferenceConfig": {"maxTokens": 1024}}),
        _ => unimplemented!("a request for {api}"),
    }
}

/// One request over HTTP; the raw JSON response.
async fn send(client: reqwest::Client, url: String, body: Value) -> Result<Value, String> {
    let response = client
        .post(&url)
        .json(&body)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!(
            "{status}: {}",
            response.text().await.unwrap_or_default()
        ));
    }
    response.json().await.map_err(|e| e.to_string())
}

fn url(base: &str, api: Api) -> String {
    format!("{base}{}", mock_provider::path(api))
}

fn sari(db: Arc<Db>) -> tool_runtime::Context {
    Session::new("K-001", Peran::Karyawan).context(db)
}

/// The second process: loads the paused conversation, a person approves, the turn goes on.
async fn resume(state: &str, base: &str) {
    let paused: Paused =
        serde_json::from_str(&std::fs::read_to_string(state).expect("the state file"))
            .expect("a paused conversation");
    let db =
        Arc::new(Db::open(std::env::var("HR_DB").expect("HR_DB").as_ref()).expect("the database"));
    // The approval store is the HR database: a new process, a new tool set, the same store.
    let tools = tool_set().with_approvals(Arc::new(Persetujuan(db.clone())));
    let cx = sari(db);
    let exported = tools
        .visible_to(&cx)
        .export(paused.conversation.api)
        .expect("exportable");
    for d in paused.waiting() {
        println!(
            "    [process {}] approved by Sari's manager: {} {}",
            std::process::id(),
            d.tool,
            d.arguments
        );
    }
    let api = paused.conversation.api;
    let client = reqwest::Client::new();
    let agent = Agent::new(&tools);
    let finished = agent
        .resume(
            &cx,
            paused,
            |_| Decision::Approve,
            |c: &Conversation| send(client.clone(), url(base, api), request(api, &exported, c)),
        )
        .await;
    match finished {
        Ok(Finished::Answered { reply, .. }) => {
            println!(
                "    [process {}] model: {}",
                std::process::id(),
                reply.text.unwrap_or_default()
            );
        }
        other => fail(format!(
            "the resumed turn ends with an answer, not {other:?}"
        )),
    }
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let [_, flag, state, base] = args.as_slice()
        && flag == "--resume"
    {
        return resume(state, base).await;
    }
    let (addr, seen) = mock_provider::serve(script()).await;
    let base = format!("http://{addr}");
    let client = reqwest::Client::new();
    for &api in Api::MODELS {
        println!("== {api}");
        let dir = std::env::temp_dir().join(format!("hr_agent-{}-{api:?}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temp dir");
        let db_path = dir.join("hr.sqlite");
        let db = Arc::new(Db::open(&db_path).expect("the database"));
        let cx = sari(db.clone());
        // Calls wait for approval in the HR database, where the second process finds them.
        let tools: ToolSet = tool_set().with_approvals(Arc::new(Persetujuan(db.clone())));
        // The model is offered only Sari's tools; whatever it calls is checked again.
        let exported = tools.visible_to(&cx).export(api).expect("exportable");
        let agent = Agent::new(&tools);
        let mut conversation = Conversation::new(api);
        conversation.push_user(
            "Sisa cuti saya berapa, reimburse saya sudah cair? Lalu ajukan cuti 21-22 Desember.",
        );
        let finished = agent
            .run(&cx, conversation, |c: &Conversation| {
                send(client.clone(), url(&base, api), request(api, &exported, c))
            })
            .await;
        let paused = match finished {
            Ok(Finished::Paused(p)) => p,
            other => fail(format!(
                "{api}: the booking waits for approval, not {other:?}"
            )),
        };
        if api == Api::OpenAiChat {
            // What the model was told when it got a call wrong (the repair messages).
            for m in paused
                .conversation
                .messages
                .iter()
                .filter(|m| m["role"] == "tool")
            {
                let text = m["content"].as_str().unwrap_or_default();
                if !text.starts_with('{') {
                    println!("    tool result {}: {text}", m["tool_call_id"]);
                }
            }
        }
        for d in paused.waiting() {
            println!(
                "    waiting for approval: {} {} (ticket {}...)",
                d.tool,
                d.arguments,
                &d.ticket[..8]
            );
        }
        check(
            db.karyawan("K-001").unwrap().unwrap().sisa_cuti == 7,
            format!("{api}: nothing booked before approval"),
        );
        // Stored, then resumed by another process.
        let state = dir.join("paused.json");
        std::fs::write(
            &state,
            serde_json::to_string(&paused).expect("serializable"),
        )
        .expect("written");
        let status = std::process::Command::new(std::env::current_exe().expect("this program"))
            .args(["--resume", &state.to_string_lossy(), &base])
            .env("HR_DB", &db_path)
            .status()
            .expect("the second process runs");
        check(
            status.success(),
            format!("{api}: the second process finished the turn"),
        );
        check(
            db.karyawan("K-001").unwrap().unwrap().sisa_cuti == 5,
            format!("{api}: booked once, after approval"),
        );
        // What the model was sent back, request by request: (call id, is an error).
        let requests: Vec<Vec<(String, bool)>> = seen
            .lock()
            .unwrap()
            .requests
            .iter()
            .filter(|(a, _)| *a == api)
            .map(|(_, r)| r.clone())
            .collect();
        let last = requests.last().cloned().unwrap_or_default();
        let flags: Vec<String> = last
            .iter()
            .map(|(id, error)| format!("{id}{}", if *error { " (error)" } else { "" }))
            .collect();
        println!(
            "    {} requests; results sent back: {}",
            requests.len(),
            flags.join(", ")
        );
        let expected: Vec<(String, bool)> = [
            ("a1", false),
            ("a2", false),
            ("b1", true),
            ("c1", false),
            ("d1", true),
            ("e1", false),
        ]
        .iter()
        .map(|(id, e)| ((*id).to_owned(), *e))
        .collect();
        check(
            requests.len() == 6 && last == expected,
            format!("{api}: every call answered once, in order, errors flagged"),
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
