//! What every example prints: each tool as the model sees it, then a few calls as a model might
//! make them, with the repair message the model gets back when a call is refused.

use tool_runtime::{Context, ToolSet};

pub fn tools(set: &ToolSet) {
    for tool in set.iter() {
        println!("# {}\n{}\n", tool.name(), tool.description());
        println!("input schema:\n{}\n", pretty(tool.input_schema()));
        println!("output schema:\n{}\n", pretty(tool.output_schema()));
    }
}

pub fn calls(set: &ToolSet, cx: &Context, name: &str, calls: &[&str]) {
    for args in calls {
        println!("call {name} {args}");
        match set.call(cx, name, args).blocking() {
            Ok(out) => println!("  ok: {out}\n"),
            Err(e) => println!(
                "  to the model:\n    {}\n",
                e.model_message().replace('\n', "\n    ")
            ),
        }
    }
}

fn pretty(v: &serde_json::Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|e| format!("(not printable: {e})"))
}
