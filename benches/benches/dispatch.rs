//! A call by name with JSON text arguments, through validation, the function and output
//! serialization, side by side with the hand-written floor (`serde_json::from_str` into a struct,
//! manual range checks, the call, `serde_json::to_string`), for the three example tools of
//! `benches::cases`. Run with `cargo bench -p benches --bench dispatch`; the ratio to report is
//! toolkit / floor for each pair, from the same run. `scripts/perf-gate.py` counts the same calls'
//! instructions.

use benches::cases::{CASES, tool_set, toolkit};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use tool_runtime::Context;

fn bench(c: &mut Criterion) {
    let set = tool_set();
    let cx = Context::new();
    for (name, args, floor) in CASES {
        // Both paths must agree before they are timed.
        assert_eq!(
            toolkit(&set, &cx, name, args).unwrap(),
            floor(args).unwrap(),
            "{name}"
        );
        let mut g = c.benchmark_group(name);
        g.bench_function("floor", |b| b.iter(|| floor(black_box(args)).unwrap()));
        g.bench_function("toolkit", |b| {
            b.iter(|| toolkit(&set, &cx, black_box(name), black_box(args)).unwrap())
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
