//! Structured output: a paper's abstract, an internship posting and a relevance decision turned
//! into typed values, replayed against recorded responses from all five provider APIs. Each run shows
//! the flow: stop reason first, then JSON, schema, business rules, and at most two repairs.
//!
//! Run with `cargo run -p examples --example ekstraksi`. To use a real model, replace `replay`
//! with a closure that sends the conversation (plus `attempt.repair` as a user message) with
//! your HTTP client or SDK and returns the raw JSON response.

use std::cell::Cell;

use examples::ekstraksi::{self as recorded, Lowongan, Paper, Relevansi, aturan_paper};
use examples::show::{check, fail};
use tool_runtime::structured::{self, Attempt, Extracted, Extractor, Failed};
use tool_runtime::{Api, lint};

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
                .map(|name| recorded::recorded(dir, name))
                .ok_or_else(|| "no more recorded responses".to_owned()),
        )
    }
}

/// The year the recorded replies were made: the paper rule compares with it. An application
/// passes today's year.
const TAHUN_REKAMAN: u16 = 2026;

/// How a run of recorded replies must end: accepted after this many attempts, or failed with
/// this failure after this many.
enum Ends {
    Accepted(usize),
    Failed(&'static str, usize),
}

fn main() {
    // The reason comes before the decision, so the lint that checks the order is quiet.
    let lints = lint::check_output::<Relevansi>();
    check(
        lints.is_empty(),
        format!("Relevansi has no lints: {lints:?}"),
    );
    // Each API's recordings are in the directory named by its id.
    for &api in Api::BUILT_IN {
        let dir = api.id();
        println!("== {dir}");
        for (script, ends) in [
            (
                &["paper-rule_violation", "paper-good"][..],
                Ends::Accepted(2),
            ),
            (
                &["paper-broken_json", "paper-wrong_shape", "paper-truncated"][..],
                Ends::Failed("cut off", 3),
            ),
            (
                &["paper-refused", "paper-good"][..],
                Ends::Failed("refused", 1),
            ),
        ] {
            println!("  paper, responses {script:?}");
            let run = Extractor::<Paper>::new(api)
                .max_retries(2)
                .rules(|p| aturan_paper(p, TAHUN_REKAMAN))
                .run(replay(dir, script));
            outcome(pollster::block_on(run), ends);
        }
        // A reasoning model's reply: its thoughts are not the answer. Chat Completions returns no
        // thoughts: its recording is a content-filter stop, a refusal, not retried.
        let reasoning = ["paper-reasoning", "paper-thinking", "paper-thoughts"]
            .into_iter()
            .find(|name| recorded::exists(dir, name))
            .unwrap_or("paper-content_filter");
        let ends = if reasoning == "paper-content_filter" {
            Ends::Failed("refused", 1)
        } else {
            Ends::Accepted(1)
        };
        println!("  paper, responses [{reasoning:?}, \"paper-good\"]");
        let script = [reasoning, "paper-good"];
        let run = Extractor::<Paper>::new(api)
            .rules(|p| aturan_paper(p, TAHUN_REKAMAN))
            .run(replay(dir, &script));
        outcome(pollster::block_on(run), ends);
        println!("  relevansi, responses [\"relevansi-good\"]");
        let run =
            structured::extract::<Relevansi, _, _, _>(api, 2, replay(dir, &["relevansi-good"]));
        outcome(pollster::block_on(run), Ends::Accepted(1));
        println!("  lowongan, responses [\"lowongan-rule_violation\", \"lowongan-good\"]");
        let script = ["lowongan-rule_violation", "lowongan-good"];
        let run = structured::extract::<Lowongan, _, _, _>(api, 2, replay(dir, &script));
        outcome(pollster::block_on(run), Ends::Accepted(2));
    }
}

fn outcome<T: std::fmt::Debug>(got: Result<Extracted<T>, Failed>, ends: Ends) {
    match (got, ends) {
        (Ok(got), Ends::Accepted(n)) => {
            println!(
                "    ok after {} attempts: {:?}",
                got.attempts.len(),
                got.value
            );
            check(
                got.attempts.len() == n,
                format!("accepted after {n} attempts"),
            );
        }
        (Err(failed), Ends::Failed(why, n)) => {
            println!("    failed: {failed}");
            check(failed.to_string().contains(why), format!("failed as {why}"));
            check(failed.attempts.len() == n, format!("after {n} attempts"));
        }
        (Ok(got), _) => fail(format!("accepted: {:?}", got.value)),
        (Err(failed), _) => fail(format!("failed: {failed}")),
    }
}
