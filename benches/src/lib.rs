//! The same generated tools defined three ways, for side-by-side measurements: with this toolkit
//! ([`toolkit`]), by hand with serde ([`floor`], the baseline of every ratio), and with rmcp (in
//! the benchmark and test targets, which include `rmcp.rs` from the same generator; rmcp is only
//! a dev-dependency). `build.rs` writes them; `BENCH_TOOLS` sets how many tools (default 50).
//!
//! The contract is the shared harness's (`../shared/bench`), so figures compare with it.

// Generated code multiplies by `k + 1`, which is 1 for the first tool.
#![allow(missing_docs, clippy::identity_op)]

extern crate self as benches;

pub mod cases;

/// The tools written with `#[tool]`, in a tool set.
pub mod toolkit {
    include!(concat!(env!("OUT_DIR"), "/toolkit.rs"));
}

/// The tools written by hand: `match` on the name, `serde_json::from_str` into a struct, the
/// range check, the call, `serde_json::to_string`.
pub mod floor {
    include!(concat!(env!("OUT_DIR"), "/floor.rs"));
}

/// How many tools each contender defines.
pub const TOOLS: usize = include!(concat!(env!("OUT_DIR"), "/n.rs"));

/// The values of every tool's `mode`, in declaration order.
pub const MODES: [&str; 4] = ["alpha", "beta", "gamma", "delta"];

/// One prepared call and the result it must produce.
#[derive(Debug, Clone)]
pub struct Call {
    pub name: String,
    /// The `arguments` object as JSON text.
    pub args: String,
    pub expected: serde_json::Value,
}

/// `len` calls cycling over all tools with varied arguments (the harness's call set).
pub fn calls(len: usize) -> Vec<Call> {
    (0..len)
        .map(|i| {
            let tool = i % TOOLS;
            let count = ((i * 37) % 1001) as i64;
            let mode = (i / TOOLS + i) % 4;
            let label = format!("item-{i}");
            let verbose = [Some(true), Some(false), None][i % 3];
            let mut args = serde_json::json!({"count": count, "mode": MODES[mode], "label": label});
            if let Some(v) = verbose {
                args["verbose"] = v.into();
            }
            let name = format!("tool_{tool:03}");
            Call {
                expected: serde_json::json!({
                    "tool": name,
                    "score": count * (tool as i64 + 1) + mode as i64,
                    "label": format!("{label}:{}", MODES[mode]),
                    "verbose": verbose.unwrap_or(false),
                }),
                name,
                args: args.to_string(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_toolkit_and_the_floor_give_every_call_the_expected_result() {
        let set = toolkit::tool_set();
        assert_eq!(set.len(), TOOLS);
        let cx = tool_runtime::Context::new();
        for c in calls(4 * TOOLS) {
            let floor: serde_json::Value =
                serde_json::from_str(&floor::dispatch(&c.name, &c.args).unwrap()).unwrap();
            let ours: serde_json::Value = serde_json::from_str(
                &set.call(&cx, &c.name, &c.args)
                    .blocking()
                    .map(tool_runtime::CallOutput::into_json)
                    .unwrap(),
            )
            .unwrap();
            assert_eq!(floor, c.expected, "{} {}", c.name, c.args);
            assert_eq!(ours, c.expected, "{} {}", c.name, c.args);
        }
    }

    #[test]
    fn both_refuse_a_count_out_of_range_and_a_count_as_text() {
        let set = toolkit::tool_set();
        let cx = tool_runtime::Context::new();
        for args in [
            r#"{"count": 1001, "mode": "alpha", "label": "x"}"#,
            r#"{"count": "25", "mode": "alpha", "label": "x"}"#,
        ] {
            assert!(floor::dispatch("tool_007", args).is_err(), "{args}");
            assert!(matches!(
                set.call(&cx, "tool_007", args)
                    .blocking()
                    .map(tool_runtime::CallOutput::into_json),
                Err(tool_runtime::ToolError::InvalidArguments(_))
            ));
        }
    }

    #[test]
    fn the_toolkit_refuses_what_serde_alone_lets_through() {
        let set = toolkit::tool_set();
        let cx = tool_runtime::Context::new();
        for args in [
            // serde reads a unit variant written as a one-key map; the schema says string.
            r#"{"count": 1, "mode": {"alpha": null}, "label": "x"}"#,
            r#"{"count": 1, "mode": "alpha", "label": "x", "verbose": 1}"#,
        ] {
            assert!(
                matches!(
                    set.call(&cx, "tool_007", args)
                        .blocking()
                        .map(tool_runtime::CallOutput::into_json),
                    Err(tool_runtime::ToolError::InvalidArguments(_))
                ),
                "{args}"
            );
        }
        // A repeated key is refused: which value was meant cannot be known.
        let err = set
            .call(
                &cx,
                "tool_007",
                r#"{"count": 1, "mode": "alpha", "label": "x", "count": 2}"#,
            )
            .blocking()
            .unwrap_err();
        assert!(
            err.model_message()
                .contains("`count` is given more than once"),
            "{err}"
        );
        // ...and accepts what JSON Schema calls an integer.
        assert!(
            set.call(
                &cx,
                "tool_007",
                r#"{"count": 25.0, "mode": "beta", "label": "x"}"#
            )
            .blocking()
            .map(tool_runtime::CallOutput::into_json)
            .is_ok()
        );
    }
}
