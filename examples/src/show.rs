//! What every example prints: each tool's description and schemas (each provider is sent its
//! own dialect of them: `ToolSet::export`), then a few calls as a model might make them, with the repair message the model gets back when a call is refused. Each example
//! also checks its own documented outcomes and exits with status 1 when one differs, so running
//! it (as CI does) is a test.

use tool_runtime::{Context, ToolSet};

pub fn tools(set: &ToolSet) {
    for tool in set.iter() {
        println!("# {}\n{}\n", tool.name(), set.description(tool));
        println!("input schema:\n{}\n", pretty(tool.input_schema()));
        println!("output schema:\n{}\n", pretty(tool.output_schema()));
    }
}

/// What a call should come to.
pub enum Expect {
    /// Accepted, with output JSON containing this text.
    Ok(&'static str),
    /// Refused, with a message to the model containing this text.
    Refused(&'static str),
}

/// Makes each call, prints what the application and the model get, and checks it.
pub fn calls(set: &ToolSet, cx: &Context, name: &str, calls: &[(&str, Expect)]) {
    for (args, expect) in calls {
        println!("call {name} {args}");
        match (set.call(cx, name, *args).blocking(), expect) {
            (Ok(out), Expect::Ok(part)) => {
                println!("  ok: {out}\n");
                check(
                    out.json().contains(part),
                    format!("{name} {args}: output has {part}"),
                );
            }
            (Err(e), Expect::Refused(part)) => {
                // The set's wording (an example's may be Indonesian); `e.model_message()` is
                // the same message in English.
                let message = set.model_message(&e);
                println!("  to the model:\n    {}\n", message.replace('\n', "\n    "));
                check(
                    message.contains(part),
                    format!("{name} {args}: message has {part:?}"),
                );
            }
            (Ok(out), Expect::Refused(_)) => fail(format!("{name} {args}: accepted: {out}")),
            (Err(e), Expect::Ok(_)) => fail(format!("{name} {args}: refused: {e}")),
        }
    }
}

/// Exits with status 1 unless `ok`: the example did not do what it documents.
pub fn check(ok: bool, what: impl std::fmt::Display) {
    if !ok {
        fail(what);
    }
}

pub fn fail(what: impl std::fmt::Display) -> ! {
    eprintln!("example failed: {what}");
    std::process::exit(1)
}

fn pretty(v: &serde_json::Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|e| format!("(not printable: {e})"))
}
