//! The HR assistant as an agent: Sari asks, the model calls tools, the toolkit runs them and
//! answers in the model API's own format, turn after turn, in each of the five APIs (OpenAI
//! Chat Completions, OpenAI Responses, Anthropic Messages, Gemini, Amazon Bedrock Converse). The model is a local stand-in
//! (`tool_runtime::testing`, served over real HTTP by `examples::model_server`), replaying one conversation: two tool calls
//! in one turn, an invalid argument the model repairs on its next turn, a tool Sari may not use,
//! and a leave request that waits for approval and is resumed by a new process.
//!
//! `cargo run -p examples --example hr_agent`
//!
//! With `--real URL [--stream]`, the same agent runs against a real model: llama.cpp's
//! OpenAI-compatible server at `URL` (a sixth API, `examples::llama_cpp`), started by
//! `scripts/real-model.sh` with a small model from PyPI. It prints what the model did: each
//! call, its arguments, whether the toolkit refused them (and the repair the model got), and
//! the answer.

use std::sync::Arc;

use examples::hr::domain::Db;
use examples::hr::{Peran, Persetujuan, Session, tool_set};
use examples::model_server;
use examples::show::{check, fail};
use serde_json::{Value, json};
use tool_runtime::ToolSet;
use tool_runtime::agent::{Agent, Conversation, Decision, Finished, Paused};
use tool_runtime::provider::{Api, HttpRequest, Message, Request, Turn};
use tool_runtime::testing::TestModel;

const SYSTEM: &str = "Kamu asisten HR. Jawab hanya dari data tool.";

/// The conversation the stand-in model replays, the same in every API.
fn script() -> Vec<Turn> {
    vec![
        Turn::call("cek-sisa-cuti", json!({})).and_call("cek-status-reimburse", json!({})),
        Turn::call("cek-riwayat-cuti", json!({"tahun": "tahun ini"})),
        Turn::call("cek-riwayat-cuti", json!({"tahun": 2026})),
        Turn::call("cek-cuti-tim", json!({})),
        Turn::call("ajukan-cuti", json!({"mulai": "2026-12-21", "hari": 2})),
        Turn::text(
            "Sisa cuti Anda 7 hari; reimburse R-88 masih diproses. Cuti 21-22 Desember sudah diajukan dan disetujui: sisa cuti sekarang 5 hari.",
        ),
    ]
}

/// The request of every turn, described once: the provider writes it in its API's format.
fn request(tools: &ToolSet) -> Request<'_> {
    Request::new("hr-model")
        .system(SYSTEM)
        .tools(tools)
        .max_tokens(1024)
}

/// One request over HTTP, with any client: the provider wrote its path, headers and body.
async fn send(client: reqwest::Client, base: String, http: HttpRequest) -> Result<Value, String> {
    let mut post = client.post(http.url(&base)).json(&http.body);
    for (name, value) in &http.headers {
        post = post.header(name, value);
    }
    let response = post.send().await.map_err(|e| e.to_string())?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!(
            "{status}: {}",
            response.text().await.unwrap_or_default()
        ));
    }
    // Every number of a tool call's arguments as the model wrote it.
    let text = response.text().await.map_err(|e| e.to_string())?;
    tool_runtime::json::from_str(&text).map_err(|e| e.to_string())
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
    let visible = tools.visible_to(&cx);
    let request = request(&visible);
    for d in paused.waiting() {
        println!(
            "    [process {}] approved by Sari's manager: {} {}",
            std::process::id(),
            d.tool,
            d.arguments
        );
    }
    let client = reqwest::Client::new();
    let agent = Agent::new(&tools);
    let finished = agent
        .resume(
            &cx,
            paused,
            |_| Decision::Approve,
            |c: &Conversation| {
                let http = c.request(&request).map_err(|e| e.to_string());
                let (client, base) = (client.clone(), base.to_owned());
                async move { send(client, base, http?).await }
            },
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

/// The HR agent against a real model at `url` (llama.cpp's server). A small model decides
/// poorly when to call a tool, so the first two turns name the tool it must call (the server
/// enforces the call's shape with a grammar; the values are the model's) and the third leaves
/// the choice to it.
async fn real(url: &str, streamed: bool) {
    use examples::llama_cpp::LLAMA_CPP;
    use futures_util::StreamExt;
    use tool_runtime::agent::{AgentEvent, Outcome};
    use tool_runtime::provider::ToolChoice;

    let db = Arc::new(Db::in_memory().expect("the database"));
    let cx = sari(db);
    let tools = tool_set();
    let visible = tools.visible_to(&cx);
    let base = Request::new("smollm2-135m")
        .system(SYSTEM)
        .tools(&visible)
        .max_tokens(160);
    let plan = [
        ToolChoice::Tool("cek-sisa-cuti".into()),
        ToolChoice::Tool("cek-riwayat-cuti".into()),
        ToolChoice::Auto,
    ];
    // The tool choice of each turn: as many model turns as the conversation holds so far.
    let request_for = |c: &Conversation| {
        let turns = c
            .messages
            .iter()
            .filter(|m| m["role"] == "assistant")
            .count();
        let mut request = base.clone().tool_choice(plan[turns.min(2)].clone());
        request.stream = streamed;
        c.request(&request)
    };
    let client = reqwest::Client::new();
    let agent = Agent::new(&tools).max_turns(3);
    let mut conversation = Conversation::new(LLAMA_CPP);
    conversation.push_user("Berapa sisa cuti saya, dan cuti apa saja yang saya ambil tahun 2026?");
    println!(
        "== {LLAMA_CPP} at {url}, {}",
        if streamed { "streamed" } else { "unstreamed" }
    );
    let finished = if streamed {
        let send = |c: &Conversation| {
            let http = request_for(c);
            let (client, url) = (client.clone(), url.to_owned());
            async move {
                let http = http?;
                let response = client
                    .post(http.url(&url))
                    .json(&http.body)
                    .send()
                    .await?
                    .error_for_status()?;
                let events = LLAMA_CPP
                    .provider()
                    .framing()
                    .events(response.bytes_stream());
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(events)
            }
        };
        let mut run = agent.run_streamed(&cx, conversation, send);
        let mut finished = None;
        while let Some(event) = run.next().await {
            match event {
                AgentEvent::CallStarted(call) => {
                    println!("    call {} {:?}", call.name, call.arguments)
                }
                AgentEvent::CallFinished(Outcome::Answered(a)) => {
                    println!(
                        "    result{}: {}",
                        if a.is_error { " (refused)" } else { "" },
                        a.text()
                    );
                }
                AgentEvent::Done(done) => finished = Some(done),
                _ => {}
            }
        }
        finished.expect("the run ends with Done")
    } else {
        agent
            .run(&cx, conversation, |c: &Conversation| {
                let http = request_for(c).map_err(|e| e.to_string());
                let (client, url) = (client.clone(), url.to_owned());
                async move { send(client, url, http?).await }
            })
            .await
    };
    let conversation = match finished {
        Ok(Finished::Answered {
            reply,
            conversation,
            usage,
        }) => {
            println!("    answer: {}", reply.text.unwrap_or_default().trim());
            println!(
                "    used: {} requests, {} prompt tokens ({} from the cache), {} output tokens",
                usage.requests, usage.input_tokens, usage.cache_read_tokens, usage.output_tokens
            );
            conversation
        }
        Ok(Finished::TurnLimit { conversation, .. }) => {
            println!("    still calling tools after {} turns", 3);
            conversation
        }
        other => fail(format!(
            "{LLAMA_CPP}: the run ends with an answer, not {other:?}"
        )),
    };
    // What went back to the model, read back by the provider: every call answered once.
    let http = conversation.request(&base).expect("a request");
    let sent = LLAMA_CPP.provider().read_request(&http).expect("readable");
    let (mut calls, mut answered) = (0, 0);
    for m in &sent.messages {
        match m {
            Message::Model { calls: c, .. } => {
                calls += c.len();
                if !streamed {
                    for call in c {
                        println!("    call {} {:?}", call.name, call.arguments);
                    }
                }
            }
            Message::Results(r) => {
                answered += r.len();
                if !streamed {
                    for result in r {
                        println!("    result: {}", result.text);
                    }
                }
            }
            _ => {}
        }
    }
    println!("    {calls} calls, {answered} results sent back");
    check(calls >= 2 && calls == answered, "every call answered once");
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let [_, flag, url, rest @ ..] = args.as_slice()
        && flag == "--real"
    {
        return real(url, rest.iter().any(|a| a == "--stream")).await;
    }
    if let [_, flag, state, base] = args.as_slice()
        && flag == "--resume"
    {
        return resume(state, base).await;
    }
    let models: Vec<Arc<TestModel>> = Api::BUILT_IN
        .iter()
        .map(|&api| Arc::new(TestModel::scripted(api, script())))
        .collect();
    let addr = model_server::serve(models.clone()).await;
    let client = reqwest::Client::new();
    for (&api, model) in Api::BUILT_IN.iter().zip(&models) {
        let base = model_server::base(addr, api);
        println!("== {api}");
        let dir =
            std::env::temp_dir().join(format!("hr_agent-{}-{}", std::process::id(), api.id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temp dir");
        let db_path = dir.join("hr.sqlite");
        let db = Arc::new(Db::open(&db_path).expect("the database"));
        let cx = sari(db.clone());
        // Calls wait for approval in the HR database, where the second process finds them.
        let tools: ToolSet = tool_set().with_approvals(Arc::new(Persetujuan(db.clone())));
        // The model is offered only Sari's tools; whatever it calls is checked again.
        let visible = tools.visible_to(&cx);
        let request = request(&visible);
        let agent = Agent::new(&tools);
        let mut conversation = Conversation::new(api);
        conversation.push_user(
            "Sisa cuti saya berapa, reimburse saya sudah cair? Lalu ajukan cuti 21-22 Desember.",
        );
        let finished = agent
            .run(&cx, conversation, |c: &Conversation| {
                let http = c.request(&request).map_err(|e| e.to_string());
                let (client, base) = (client.clone(), base.clone());
                async move { send(client, base, http?).await }
            })
            .await;
        let paused = match finished {
            Ok(Finished::Paused(p)) => p,
            other => fail(format!(
                "{api}: the booking waits for approval, not {other:?}"
            )),
        };
        if api == Api::BUILT_IN[0] {
            // What the model was told when it got a call wrong (the repair messages), as the
            // stand-in model read them back.
            for (id, error, text) in results(model).pop().unwrap_or_default() {
                if error {
                    println!("    tool result {id}: {text}");
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
        let requests = results(model);
        let last: Vec<(String, bool)> = requests
            .last()
            .map(|r| r.iter().map(|(id, e, _)| (id.clone(), *e)).collect())
            .unwrap_or_default();
        let flags: Vec<String> = last
            .iter()
            .map(|(id, error)| format!("{id}{}", if *error { " (error)" } else { "" }))
            .collect();
        println!(
            "    {} requests; results sent back: {}",
            requests.len(),
            flags.join(", ")
        );
        // Calls are numbered by the model: two in the first turn, one in each after.
        let expected: Vec<(String, bool)> = [
            ("call_1", false),
            ("call_2", false),
            ("call_3", true),
            ("call_4", false),
            ("call_5", true),
            ("call_6", false),
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

/// Each request's tool results, as the model read them back: (call id, is an error, text).
/// Where the API has no error flag (OpenAI's), an error is a result that is not the tool's
/// JSON output.
fn results(model: &TestModel) -> Vec<Vec<(String, bool, String)>> {
    model
        .requests()
        .iter()
        .map(|r| {
            r.messages
                .iter()
                .flat_map(|m| match m {
                    Message::Results(results) => results.clone(),
                    _ => Vec::new(),
                })
                .map(|r| {
                    let error = r.is_error.unwrap_or(!r.text.starts_with('{'));
                    (r.call_id.unwrap_or_default(), error, r.text)
                })
                .collect()
        })
        .collect()
}
