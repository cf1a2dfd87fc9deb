//! Structured output: a paper's abstract and an internship posting turned into
//! typed values, replayed against recorded responses from all four provider APIs. Each run shows
//! the flow: stop reason first, then JSON, schema, business rules, and at most two repairs.
//!
//! Run with `cargo run -p examples --example ekstraksi`. To use a real model, replace `replay`
//! with a closure that sends the conversation (plus `attempt.repair` as a user message) with
//! your HTTP client or SDK and returns the raw JSON response.

use std::cell::Cell;

use examples::ekstraksi::{Lowongan, Paper, recorded};
use tool_runtime::Api;
use tool_runtime::structured::{self, Attempt};

fn replay<'a>(
    dir: &'a str,
    script: &'a [&'a str],
) -> impl FnMut(Attempt) -> std::future::Ready<Result<serde_json::Value, String>> + 'a {
    let next = Cell::new(0);
    move |attempt: Attempt| {
        if let Some(repair) = &attempt.repair {
            println!(
                "    repair sent:\n      {}",
                repair.replace('\n', "\n      ")
            );
        }
        let i = next.get();
        next.set(i + 1);
        std::future::ready(
            script
                .get(i)
                .map(|name| recorded(dir, name))
                .ok_or_else(|| "no more recorded responses".to_owned()),
        )
    }
}

fn main() {
    let providers = [
        (Api::OpenAiChat, "openai-chat"),
        (Api::OpenAiResponses, "openai-responses"),
        (Api::Anthropic, "anthropic"),
        (Api::Gemini, "gemini"),
    ];
    for (provider, dir) in providers {
        println!("== {dir}");
        for script in [
            &["paper-rule_violation", "paper-good"][..],
            &["paper-broken_json", "paper-wrong_shape", "paper-truncated"][..],
            &["paper-refused", "paper-good"][..],
        ] {
            println!("  paper, responses {script:?}");
            match pollster::block_on(structured::extract::<Paper, _, _, _>(
                provider,
                2,
                replay(dir, script),
            )) {
                Ok(got) => println!(
                    "    ok after {} attempts: {:?}",
                    got.attempts.len(),
                    got.value
                ),
                Err(failed) => println!("    failed: {failed}"),
            }
        }
        println!("  lowongan, responses [\"lowongan-rule_violation\", \"lowongan-good\"]");
        let script = ["lowongan-rule_violation", "lowongan-good"];
        match pollster::block_on(structured::extract::<Lowongan, _, _, _>(
            provider,
            2,
            replay(dir, &script),
        )) {
            Ok(got) => println!(
                "    ok after {} attempts: {:?}",
                got.attempts.len(),
                got.value
            ),
            Err(failed) => println!("    failed: {failed}"),
        }
    }
}
