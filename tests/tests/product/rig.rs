//! A rig agent with a `#[tool]` function, against a local stand-in for the OpenAI Chat
//! Completions API over HTTP: the model first sends the catering order's count as a string,
//! gets the toolkit's repair message, and calls again correctly.

use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use rig_agent::AgentBuilder;
use rig_core::providers::openai::{OpenAIConfig, Route};
use serde_json::{Value, json};
use tool_runtime::{Context, Grants, ToolSet, tool};

#[tool(
    name = "pesan-katering",
    description = "Hitung total porsi katering untuk sebuah acara: peserta ditambah cadangan 5 porsi."
)]
fn pesan_katering(
    #[arg(description = "Jumlah peserta sebagai ANGKA, bukan teks", range = 1..=500)]
    jumlah_peserta: u32,
) -> u32 {
    jumlah_peserta + 5
}

#[tool(
    name = "hapus-pesanan",
    description = "Hapus semua pesanan katering; hanya untuk admin.",
    requires = "katering.admin",
    destructive
)]
fn hapus_pesanan() -> bool {
    true
}

type Seen = Arc<Mutex<Vec<Value>>>;

/// The stand-in model: a wrong call, then a right one, then an answer with the result.
async fn chat(State(seen): State<Seen>, Json(body): Json<Value>) -> Json<Value> {
    let tool_messages: Vec<Value> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .cloned()
        .collect();
    seen.lock().unwrap().push(body.clone());
    let call = |id: &str, args: &str| {
        json!({"id": "c", "object": "chat.completion", "created": 0, "model": "m", "choices": [{"index": 0,
            "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null, "tool_calls": [
                {"id": id, "type": "function", "function": {"name": "pesan-katering", "arguments": args}}]}}]})
    };
    Json(match tool_messages.len() {
        0 => call("call_1", r#"{"jumlah_peserta": "25"}"#),
        1 => call("call_2", r#"{"jumlah_peserta": 25}"#),
        _ => {
            json!({"id": "c", "object": "chat.completion", "created": 0, "model": "m", "choices": [{"index": 0,
            "finish_reason": "stop", "message": {"role": "assistant",
                "content": format!("Total {} porsi.", tool_messages[1]["content"].as_str().unwrap())}}]})
        }
    })
}

#[tokio::test]
async fn a_rig_agent_gets_the_toolkits_repair_message_and_recovers() {
    let seen: Seen = Arc::default();
    let app = Router::new()
        .route("/v1/chat/completions", post(chat))
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });

    let set = Arc::new(ToolSet::new([pesan_katering::tool(), hapus_pesanan::tool()]).unwrap());
    let cx = Arc::new(Context::new().with(Grants::new(["katering.pesan"])));
    let tools = tool_runtime_rig::tools(&set, &cx);
    assert_eq!(tools.len(), 1, "the caller's tools only: not the admin's");
    let model = OpenAIConfig::new("sk-test")
        .with_base_url(format!("http://{addr}/v1"))
        .with_route(Route::Chat)
        .client()
        .chat("mock-model");
    let agent = AgentBuilder::new(model).dynamic_tools(tools).build();
    let answer = agent
        .prompt("Pesan katering untuk 25 orang")
        .max_turns(4)
        .await
        .unwrap();
    assert_eq!(answer.output(), "Total 30 porsi.");

    let seen = seen.lock().unwrap();
    // The tool as the model saw it: the toolkit's schema and description.
    let offered = &seen[0]["tools"][0]["function"];
    assert_eq!(offered["name"], "pesan-katering");
    assert_eq!(
        offered["parameters"]["properties"]["jumlah_peserta"]["maximum"],
        500
    );
    // The wrong call's answer: the toolkit's repair message, naming the field and the value.
    let repair = seen[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert_eq!(repair["tool_call_id"], "call_1");
    let text = repair["content"].as_str().unwrap();
    assert!(
        text.contains("`jumlah_peserta`") && text.contains("\"25\" (a string)"),
        "{text}"
    );
}

#[tokio::test]
async fn a_tool_defined_at_run_time_is_a_rig_tool_under_the_same_rules() {
    let runs = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = runs.clone();
    let porsi = tool_runtime::Tool::define(
        "hitung-porsi",
        "Hitung total porsi katering: peserta ditambah cadangan 5 porsi.",
        pesan_katering::tool().input_schema().clone(),
    )
    .requires(["katering.pesan"])
    .build_fn(move |args| {
        counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        async move { Ok(json!(args["jumlah_peserta"].as_u64().unwrap_or(0) + 5)) }
    })
    .unwrap();
    let set = Arc::new(
        ToolSet::new([hapus_pesanan::tool()])
            .unwrap()
            .with_tools([porsi])
            .unwrap(),
    );
    let cx = Arc::new(Context::new().with(Grants::new(["katering.pesan"])));
    let tools = tool_runtime_rig::tools(&set, &cx);
    assert_eq!(tools.len(), 1, "only what the caller may use: {tools:?}");
    let definition = tools[0].definition();
    assert_eq!(definition.name.to_string(), "hitung-porsi");
    assert_eq!(
        definition.parameters["properties"]["jumlah_peserta"]["maximum"],
        500
    );
    let good = tools[0]
        .execute(json!({"jumlah_peserta": 25}))
        .await
        .unwrap();
    assert_eq!(good.as_text(), Some("30"), "{good:?}");
    let bad = tools[0]
        .execute(json!({"jumlah_peserta": "25"}))
        .await
        .unwrap_err();
    assert!(bad.to_string().contains("jumlah_peserta"), "{bad}");
    assert_eq!(
        runs.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "the bad call never ran"
    );
}
