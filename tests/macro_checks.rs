//! Compile-time checks: every failure mode in `ui/fail` with its reviewed message, and every
//! supported form in `ui/pass`. Regenerate snapshots with `TRYBUILD=overwrite cargo test -p tests --test macro_checks`
//! and review the diff: the message is the product.

#[rustversion::attr(not(stable(1.95)), ignore)] // STABLE: snapshots are pinned to this toolchain
#[test]
fn compile_checks() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/fail/*.rs");
    t.pass("ui/pass/*.rs");
}
