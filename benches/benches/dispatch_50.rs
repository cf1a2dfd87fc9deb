//! In-process dispatch of the same 50 generated tools (`BENCH_TOOLS`), one call at a time,
//! cycling over 1024 prepared calls, side by side in one run:
//!
//! - `floor`: hand-written serde (name `match`, `from_str`, range check, call, `to_string`);
//!   JSON text in, result JSON text out. The baseline of every ratio.
//! - `toolkit`: `ToolSet::call(..).blocking()`, the same text in and out, with the full boundary
//!   (strict validation of every argument, defaults, panic guard).
//! - `floor_envelope`: `floor` plus wrapping the result as an MCP `CallToolResult`
//!   (text block + `structuredContent`), what an MCP server sends.
//! - `rmcp_str2str`: rmcp 3.11's cheapest text-to-text path, comparable to `floor_envelope`:
//!   arguments text → `JsonObject` → the stored `ToolRouter` → `CallToolResult` JSON text.
//!
//! Run: `cargo bench -p benches`. Report ratios to `floor` from the same run.

use std::borrow::Cow;
use std::hint::black_box;

use benches::{Call, TOOLS, calls, floor, toolkit};
use criterion::{Criterion, criterion_group, criterion_main};
use rmcp::RoleServer;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{CallToolRequestParams, JsonObject, NumberOrString, ServerResult};
use rmcp::service::{RequestContext, serve_directly};

#[allow(clippy::identity_op)]
mod rmcp_tools {
    include!(concat!(env!("OUT_DIR"), "/rmcp.rs"));
}

fn envelope(result: &str) -> String {
    let mut s = String::with_capacity(result.len() * 2 + 80);
    s.push_str(r#"{"content":[{"type":"text","text":"#);
    s.push_str(&serde_json::to_string(result).expect("a string serializes"));
    s.push_str(r#"}],"structuredContent":"#);
    s.push_str(result);
    s.push_str(r#","isError":false}"#);
    s
}

/// Runs `f` over the call set, one call per iteration.
fn cycle<O>(c: &mut Criterion, id: &str, set: &[Call], mut f: impl FnMut(&Call) -> O) {
    let mut i = 0;
    c.bench_function(&format!("dispatch_{TOOLS}/{id}"), |b| {
        b.iter(|| {
            let call = &set[i % set.len()];
            i += 1;
            black_box(f(black_box(call)))
        })
    });
}

fn dispatch(c: &mut Criterion) {
    let set = calls(1024);
    let tools = toolkit::tool_set();
    let cx = tool_runtime::Context::new();

    // rmcp: a `RequestContext` needs a `Peer`, which only serving makes; the idle in-memory
    // transport is never used by the timed calls.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let server = rmcp_tools::Server::default();
    let (io, _idle) = tokio::io::duplex(4096);
    let running =
        rt.block_on(async { serve_directly::<RoleServer, _, _, _, _>(server.clone(), io, None) });
    let peer = running.peer().clone();
    let rmcp_call = |call: &Call, id: i64| {
        let args: JsonObject = serde_json::from_str(&call.args).expect("an object");
        let params = CallToolRequestParams::new(Cow::Owned(call.name.clone())).with_arguments(args);
        let cx = RequestContext::new(NumberOrString::Number(id), peer.clone());
        let result = rt
            .block_on(
                server
                    .tool_router
                    .call(ToolCallContext::new(&server, params, cx)),
            )
            .expect("a result");
        serde_json::to_string(&ServerResult::from(result)).expect("serializes")
    };

    // Every contender gives every call the expected result before anything is timed.
    for (j, call) in set.iter().enumerate() {
        let floor: serde_json::Value =
            serde_json::from_str(&floor::dispatch(&call.name, &call.args).unwrap()).unwrap();
        let ours: serde_json::Value = serde_json::from_str(
            &tools
                .call(&cx, &call.name, &call.args)
                .blocking()
                .map(tool_runtime::CallOutput::into_json)
                .unwrap(),
        )
        .unwrap();
        let theirs: serde_json::Value = serde_json::from_str(&rmcp_call(call, j as i64)).unwrap();
        assert_eq!(floor, call.expected);
        assert_eq!(ours, call.expected);
        assert_eq!(theirs["structuredContent"], call.expected);
    }

    cycle(c, "floor", &set, |call| {
        floor::dispatch(&call.name, &call.args)
    });
    cycle(c, "toolkit", &set, |call| {
        tools
            .call(&cx, &call.name, &call.args)
            .blocking()
            .map(tool_runtime::CallOutput::into_json)
    });
    cycle(c, "floor_envelope", &set, |call| {
        floor::dispatch(&call.name, &call.args).map(|r| envelope(&r))
    });
    let mut id = 0;
    cycle(c, "rmcp_str2str", &set, |call| {
        id += 1;
        rmcp_call(call, id)
    });
    drop(running);
}

criterion_group!(benches, dispatch);
criterion_main!(benches);
