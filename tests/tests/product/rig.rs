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

/// The stand-in embedding model's concepts: a request and a tool mean the same when they name
/// one, in English or Indonesian.
const CONCEPTS: &[&[&str]] = &[
    &["gaji", "wage", "salary", "payslip"],
    &["faktur", "bill", "invoice"],
    &["cuti", "vacation", "holiday", "leave", "libur"],
];

/// A stand-in for OpenAI's embeddings API (`POST /v1/embeddings`): each input's vector counts
/// the concepts it names; every request's inputs are kept. Answers 503 while `down` is set.
async fn embeddings(
    State((seen, down)): State<(Seen, Arc<std::sync::atomic::AtomicBool>)>,
    Json(body): Json<Value>,
) -> Result<Json<Value>, axum::http::StatusCode> {
    seen.lock().unwrap().push(body["input"].clone());
    if down.load(std::sync::atomic::Ordering::SeqCst) {
        return Err(axum::http::StatusCode::SERVICE_UNAVAILABLE);
    }
    let data: Vec<Value> = body["input"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(index, text)| {
            let text = text.as_str().unwrap().to_lowercase();
            let mut vector: Vec<f64> = CONCEPTS
                .iter()
                .map(|words| words.iter().filter(|w| text.contains(*w)).count() as f64)
                .collect();
            vector.push(0.1);
            json!({"object": "embedding", "index": index, "embedding": vector})
        })
        .collect();
    Ok(Json(
        json!({"object": "list", "data": data, "model": "stand-in",
        "usage": {"prompt_tokens": 1, "total_tokens": 1}}),
    ))
}

#[tool(name = "daftar-gaji", description = "Tampilkan slip gaji karyawan.")]
fn daftar_gaji() -> u32 {
    1
}

#[tool(name = "daftar-faktur", description = "Tampilkan faktur penjualan.")]
fn daftar_faktur() -> u32 {
    2
}

#[tool(
    name = "cek-sisa-cuti",
    description = "Ambil sisa kuota cuti karyawan."
)]
fn cek_sisa_cuti() -> u32 {
    12
}

/// The stand-in's address, what it was asked, and its switch to answer 503.
async fn stand_in() -> (
    std::net::SocketAddr,
    Seen,
    Arc<std::sync::atomic::AtomicBool>,
) {
    let seen: Seen = Arc::default();
    let down = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let app = Router::new()
        .route("/v1/embeddings", post(embeddings))
        .with_state((seen.clone(), down.clone()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (addr, seen, down)
}

/// rig's OpenAI client of the stand-in at `addr`, as an embedding service.
fn rig_embeddings(addr: std::net::SocketAddr) -> tool_runtime_rig::Embeddings {
    let model = OpenAIConfig::new("sk-test")
        .with_base_url(format!("http://{addr}/v1"))
        .client()
        .embedding("stand-in", None);
    tool_runtime_rig::Embeddings::new(model)
}

/// `tools`, deferred behind a search tool ranking with `service`.
fn deferred(
    tools: Vec<&'static tool_runtime::Tool>,
    service: Arc<dyn tool_runtime::search::EmbeddingService>,
) -> ToolSet {
    ToolSet::new(tools)
        .unwrap()
        .defer_ranked(
            |_| true,
            tool_runtime::search::Ranking::lexical().service(service),
        )
        .unwrap()
}

#[tokio::test]
async fn a_rig_embedding_model_over_http_ranks_a_deferred_sets_search() {
    let (addr, seen, down) = stand_in().await;
    let deferred = |tools| deferred(tools, Arc::new(rig_embeddings(addr)));
    let set = deferred(vec![
        daftar_gaji::tool(),
        daftar_faktur::tool(),
        cek_sisa_cuti::tool(),
    ]);
    let cx = Context::new();
    let search = |query: &'static str| found(&set, &cx, query);
    // At start-up: the tools embedded before any search.
    set.prepare_search().await.unwrap();
    assert_eq!(seen.lock().unwrap().len(), 1);
    // Requests sharing no word with the tools, in English: found by what they mean.
    assert_eq!(
        search("How much vacation do I have left?").await,
        ["cek-sisa-cuti"]
    );
    assert_eq!(search("my wage statements").await, ["daftar-gaji"]);
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 3, "the tools once, then each query: {seen:?}");
        assert_eq!(
            seen[0].as_array().unwrap().len(),
            3,
            "the three tools in one request"
        );
        assert_eq!(seen[2], json!(["my wage statements"]));
    }
    // The service down: the search still answers, by the words alone.
    down.store(true, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(search("faktur penjualan").await, ["daftar-faktur"]);
    assert!(search("my wage statements").await.is_empty());

    // Down from a set's first search: the tools could not be embedded; the search answers by
    // the words, and the next one leaves the service alone for the pause.
    let fresh = deferred(vec![daftar_gaji::tool(), daftar_faktur::tool()]);
    let asked_before = seen.lock().unwrap().len();
    for _ in 0..2 {
        assert_eq!(found(&fresh, &cx, "slip gaji").await, ["daftar-gaji"]);
    }
    assert_eq!(
        seen.lock().unwrap().len(),
        asked_before + 1,
        "the tools asked for once, then left alone"
    );
}

#[tokio::test]
async fn sets_built_per_request_behind_one_cache_embed_the_tools_once() {
    let (addr, seen, _) = stand_in().await;
    let cache = Arc::new(tool_runtime::search::EmbeddingCache::new(
        rig_embeddings(addr),
        1_000,
    ));
    let cx = Context::new();
    let requests = [
        ("my wage statements", "daftar-gaji"),
        ("How much vacation do I have left?", "cek-sisa-cuti"),
        ("my wage statements", "daftar-gaji"),
    ];
    for (query, tool) in requests {
        let set = deferred(
            vec![
                daftar_gaji::tool(),
                daftar_faktur::tool(),
                cek_sisa_cuti::tool(),
            ],
            cache.clone(),
        );
        assert_eq!(found(&set, &cx, query).await, [tool]);
    }
    let seen = seen.lock().unwrap();
    assert_eq!(
        seen.len(),
        3,
        "the tools once for three sets, each query once: {seen:?}"
    );
    assert_eq!(seen[0].as_array().unwrap().len(), 3, "the three tools");
    assert_eq!(seen[1], json!(["my wage statements"]));
    assert_eq!(seen[2], json!(["How much vacation do I have left?"]));
}

/// The names of what a deferred set's search tool finds first for `query`.
async fn found(set: &ToolSet, cx: &Context, query: &str) -> Vec<String> {
    let arguments = json!({"query": query, "limit": 1});
    let answer = set
        .call(cx, tool_runtime::search::SEARCH_TOOL, arguments)
        .await
        .unwrap()
        .into_value();
    answer["found"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}
