//! The workloads of the speed gate (`scripts/perf-gate.py`). Each runs a fixed amount of work
//! and exits, so callgrind's instruction count of a run is repeatable; the gate runs each with
//! `N` calls and with none, and divides the difference by `N`:
//!
//! - `perf-probe dispatch CASE toolkit|floor N`: `N` calls of one of the three example tools
//!   (`benches::cases`), JSON text in and out, through the toolkit or the hand-written floor;
//! - `perf-probe stdio N`: an MCP session over the stdio transport (newline-delimited JSON-RPC
//!   on in-memory pipes): `initialize`, then `N` pipelined `tools/call` of the 50 generated
//!   tools, 64 in flight;
//! - `perf-probe http N`: `HttpServer` with its defaults on loopback, `N` stateless 2026-07-28
//!   `tools/call` requests, one after another on one kept-alive connection.
//!
//! Built with `--features otel-probe` (or `otel`), `PROBE_TRACING=otel` runs `dispatch` under a subscriber with
//! `tool-runtime-otel`'s layer: every trace kept, each finished span handed to a processor that
//! drops it, the histograms recorded into the SDK's aggregation (a reader that is never
//! collected): what recording the conventions' spans and histograms costs a call, apart from
//! exporting them (the speed gate's `dispatch-otel` row, `scripts/otel-overhead.sh`); `http`
//! then serves with the W3C propagator, and `PROBE_SAMPLER=off` keeps no trace (what a request
//! whose trace is not sampled costs; `parent`: the default sampler, a remote parent's decision);
//! `PROBE_SPANS=none` records the histograms alone, `PROBE_SPANS=one` each call on its
//! request's span (`with_one_span_per_call`).

use std::error::Error;
use std::hint::black_box;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tool_runtime::Context;
use tool_runtime_mcp::McpServer;

type Result<T = ()> = std::result::Result<T, Box<dyn Error + Send + Sync>>;

fn main() -> Result {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `dispatch CASE otel N` is `toolkit` with telemetry recording (the speed gate's row).
    let traced = std::env::var("PROBE_TRACING").ok();
    let traced = match args.get(2).map(String::as_str) {
        Some("otel") => Some("otel"),
        _ => traced.as_deref(),
    };
    #[cfg(feature = "otel-probe")]
    let _tracing = (traced == Some("otel")).then(otel);
    #[cfg(feature = "otel-probe")]
    let _floor = (traced == Some("floor")).then(floor);
    #[cfg(not(feature = "otel-probe"))]
    if traced.is_some() {
        return Err("telemetry needs perf-probe built with `--features otel-probe`".into());
    }
    let n = |i: usize| -> Result<usize> {
        Ok(args
            .get(i)
            .ok_or("the number of calls is missing")?
            .parse()?)
    };
    match args.first().map(String::as_str) {
        Some("dispatch") => dispatch(
            args.get(1).ok_or("a case is missing")?,
            args.get(2).map(String::as_str) == Some("floor"),
            n(3)?,
        ),
        Some("stdio") => runtime()?.block_on(stdio(n(1)?)),
        Some("http") => runtime()?.block_on(http(n(1)?)),
        _ => Err("usage: perf-probe dispatch CASE toolkit|floor|otel N | stdio N | http N".into()),
    }
}

/// The spans and histograms recorded, exported nowhere.
#[cfg(feature = "otel-probe")]
fn otel() -> (
    Option<tracing::subscriber::DefaultGuard>,
    tool_runtime_otel::Telemetry,
) {
    use tracing_subscriber::layer::SubscriberExt as _;

    /// Takes each finished span and drops it.
    #[derive(Debug)]
    struct Dropped;
    impl opentelemetry_sdk::trace::SpanProcessor for Dropped {
        fn on_start(&self, _: &mut opentelemetry_sdk::trace::Span, _: &opentelemetry::Context) {}
        fn on_end(&self, span: opentelemetry_sdk::trace::SpanData) {
            black_box(span);
        }
        fn force_flush(&self) -> opentelemetry_sdk::error::OTelSdkResult {
            Ok(())
        }
        fn shutdown_with_timeout(
            &self,
            _: std::time::Duration,
        ) -> opentelemetry_sdk::error::OTelSdkResult {
            Ok(())
        }
    }
    /// Takes each collection and drops it (the reader never collects during a run).
    #[derive(Debug)]
    struct Nowhere;
    impl opentelemetry_sdk::metrics::exporter::PushMetricExporter for Nowhere {
        async fn export(
            &self,
            _: &opentelemetry_sdk::metrics::data::ResourceMetrics,
        ) -> opentelemetry_sdk::error::OTelSdkResult {
            Ok(())
        }
        fn force_flush(&self) -> opentelemetry_sdk::error::OTelSdkResult {
            Ok(())
        }
        fn shutdown_with_timeout(
            &self,
            _: std::time::Duration,
        ) -> opentelemetry_sdk::error::OTelSdkResult {
            Ok(())
        }
        fn temporality(&self) -> opentelemetry_sdk::metrics::Temporality {
            opentelemetry_sdk::metrics::Temporality::Cumulative
        }
    }
    let reader = opentelemetry_sdk::metrics::PeriodicReader::builder(Nowhere)
        .with_interval(std::time::Duration::from_secs(24 * 3600))
        .build();
    let meter = opentelemetry_sdk::metrics::SdkMeterProvider::builder()
        .with_reader(reader)
        .build();
    // `PROBE_SAMPLER=off`: no trace kept (what a request of a trace not sampled costs);
    // `parent`: the default of `from_env` (a remote parent decides, else every trace), under
    // which each of the toolkit's spans asks whether its trace is kept.
    let sampler = match std::env::var("PROBE_SAMPLER").as_deref() {
        Ok("off") => tool_runtime_otel::Sampler::AlwaysOff,
        Ok("parent") => tool_runtime_otel::Sampler::default(),
        _ => tool_runtime_otel::Sampler::AlwaysOn,
    };
    // `PROBE_SPANS=none`: the histograms alone; `one`: a call recorded on its request's span.
    let spans = std::env::var("PROBE_SPANS").ok();
    let processor: Option<Box<dyn opentelemetry_sdk::trace::SpanProcessor>> = match spans.as_deref()
    {
        Some("none") => None,
        _ => Some(Box::new(Dropped)),
    };
    let telemetry = tool_runtime_otel::Telemetry::new(processor, Some(meter))
        .with_sampler(sampler)
        .with_one_span_per_call(spans.as_deref() == Some("one"));
    let subscriber = tracing_subscriber::registry().with(telemetry.layer());
    // `http` serves on the runtime's threads: the subscriber is every thread's there.
    let guard = if std::env::args().nth(1).as_deref() == Some("http") {
        tracing::subscriber::set_global_default(subscriber).expect("no subscriber yet");
        None
    } else {
        Some(tracing::subscriber::set_default(subscriber))
    };
    (guard, telemetry)
}

/// The floor under any `tracing` layer: the registry and one layer doing nothing behind the
/// same filter as `otel`'s (what the spans and the event cost before a layer records anything).
#[cfg(feature = "otel-probe")]
fn floor() -> tracing::subscriber::DefaultGuard {
    use tracing::level_filters::LevelFilter;
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::filter::Targets;
    use tracing_subscriber::layer::{Identity, SubscriberExt as _};
    let targets = Targets::new()
        .with_default(LevelFilter::INFO)
        .with_target("rmcp", LevelFilter::WARN)
        .with_target("tool_runtime::values", LevelFilter::OFF)
        .with_target("tool_runtime::metrics", LevelFilter::INFO)
        .with_target("tool_runtime_mcp::metrics", LevelFilter::INFO);
    tracing::subscriber::set_default(
        tracing_subscriber::registry().with(Identity::new().with_filter(targets)),
    )
}

/// The runtime a server's `#[tokio::main]` makes on a 2-core machine, whatever this machine has:
/// the scheduling work in the counts depends on the number of workers. The blocking pool is
/// bounded too: under valgrind threads run one at a time, and Tokio's default (up to 512 threads,
/// one more whenever no idle thread has been woken yet) let the count of threads started, and so
/// the count of instructions, depend on scheduling, up to valgrind's own limit of 500 threads,
/// where the run died.
fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(8)
        .enable_all()
        .build()?)
}

fn dispatch(case: &str, floor: bool, n: usize) -> Result {
    let (name, args, hand) = benches::cases::CASES
        .into_iter()
        .find(|(name, ..)| *name == case)
        .ok_or_else(|| format!("no case {case:?}"))?;
    let set = benches::cases::tool_set();
    let cx = Context::new();
    // Both paths agree before they are counted.
    assert_eq!(benches::cases::toolkit(&set, &cx, name, args)?, hand(args)?);
    for _ in 0..n {
        if floor {
            black_box(hand(black_box(args))?);
        } else {
            black_box(benches::cases::toolkit(
                &set,
                &cx,
                black_box(name),
                black_box(args),
            )?);
        }
    }
    Ok(())
}

async fn stdio(n: usize) -> Result {
    const IN_FLIGHT: usize = 64;
    let (client, server) = tokio::io::duplex(1 << 16);
    let (server_in, server_out) = tokio::io::split(server);
    // Every call of these tools is fast; under valgrind, fifty times slower, some would not be
    // within the default budget, and the count would depend on which.
    let mut limits = tool_runtime_mcp::Limits::default();
    limits.inline_budget = Some(std::time::Duration::from_secs(10));
    let served = tokio::spawn(
        McpServer::new(benches::toolkit::tool_set())
            .with_limits(limits)
            .serve_lines(server_in, server_out),
    );
    let (client_in, mut client_out) = tokio::io::split(client);
    let mut answers = BufReader::new(client_in).lines();
    let calls = benches::calls(n);
    client_out
        .write_all(
            concat!(
                r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"perf-probe","version":"0"}}}"#,
                "\n",
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                "\n"
            )
            .as_bytes(),
        )
        .await?;
    answers
        .next_line()
        .await?
        .ok_or("no answer to initialize")?;
    let request = |i: usize| {
        let c = &calls[i];
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"tools/call\",\"params\":{{\"name\":\"{}\",\"arguments\":{}}}}}\n",
            i + 1,
            c.name,
            c.args
        )
    };
    let (mut sent, mut answered) = (0, 0);
    while answered < n {
        while sent < n && sent - answered < IN_FLIGHT {
            client_out.write_all(request(sent).as_bytes()).await?;
            sent += 1;
        }
        let answer = answers.next_line().await?.ok_or("the server hung up")?;
        if !answer.contains("\"result\"") || answer.contains("\"isError\":true") {
            return Err(format!("unexpected answer: {answer}").into());
        }
        answered += 1;
    }
    drop(client_out);
    drop(answers);
    served.await??;
    Ok(())
}

async fn http(n: usize) -> Result {
    let tool_set = tool_runtime::ToolSet::new([benches::cases::tool_set()
        .get("pesan-katering")
        .expect("the catering tool")])?;
    // As for stdio: under valgrind the tool's calls would not all be within the default
    // budget, and the count would depend on which went to the blocking pool.
    let mut limits = tool_runtime_mcp::Limits::default();
    limits.inline_budget = Some(std::time::Duration::from_secs(10));
    let server = McpServer::new(tool_set).with_limits(limits);
    // With telemetry, set up as a server exporting it is (the W3C propagator).
    #[cfg(feature = "otel-probe")]
    let server = if std::env::var("PROBE_TRACING").as_deref() == Ok("otel") {
        server.with_propagator(tool_runtime_otel::W3c)
    } else {
        server
    };
    let bound = tool_runtime_mcp::http::HttpServer::new(server)
        .bind("127.0.0.1:0".parse()?)
        .await?;
    let addr = bound.local_addr()?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(bound.serve_until(async {
        let _ = stopped.await;
    }));
    let stream = tokio::net::TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let mut stream = BufReader::new(stream);
    for id in 1..=n {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}},"name":"pesan-katering","arguments":{{"jumlah_peserta":25}}}}}}"#
        );
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: pesan-katering\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.get_mut().write_all(request.as_bytes()).await?;
        let answer = read_response(&mut stream).await?;
        if !answer.contains("total_porsi") {
            return Err(format!("unexpected answer: {answer}").into());
        }
    }
    drop(stream);
    let _ = stop.send(());
    served.await??;
    Ok(())
}

/// One HTTP/1.1 response with a `Content-Length` or chunked body, as text.
async fn read_response(stream: &mut BufReader<tokio::net::TcpStream>) -> Result<String> {
    let mut head = String::new();
    let (mut length, mut chunked) = (None, false);
    loop {
        head.clear();
        if stream.read_line(&mut head).await? == 0 {
            return Err("the server closed the connection".into());
        }
        let line = head.trim_end().to_ascii_lowercase();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("content-length:") {
            length = Some(v.trim().parse::<usize>()?);
        }
        chunked |= line == "transfer-encoding: chunked";
    }
    let mut body = Vec::new();
    if let Some(length) = length {
        body.resize(length, 0);
        stream.read_exact(&mut body).await?;
    } else if chunked {
        loop {
            head.clear();
            stream.read_line(&mut head).await?;
            let size = usize::from_str_radix(head.trim(), 16)?;
            let start = body.len();
            body.resize(start + size + 2, 0);
            stream.read_exact(&mut body[start..]).await?;
            body.truncate(start + size);
            if size == 0 {
                break;
            }
        }
    }
    Ok(String::from_utf8(body)?)
}
