//! Compile-time checks: every failure mode in `ui/fail` with its reviewed message (the forms
//! that compile are `tests/pass`, built with the test build). Regenerate the messages with
//! `UPDATE_EXPECT=1 cargo test -p tool-runtime-macros --test compile_fail` and review the diff:
//! the message is the product. The cases build against `tool-runtime` and its own dependencies
//! only, so trybuild's separate build stays small.

#[rustversion::attr(not(stable(1.95)), ignore)] // STABLE: snapshots are pinned to this toolchain
#[test]
fn compile_checks() {
    // SAFETY: this binary's only test changes the environment before trybuild reads it, and
    // no other thread reads the environment.
    unsafe {
        if std::env::var_os("UPDATE_EXPECT").is_some() {
            std::env::set_var("TRYBUILD", "overwrite");
        }
        // CI compiles the workspace with clippy-driver (`.ci/run`); the messages here are
        // rustc's, which clippy-driver writes with longer paths (`std::string::String`).
        std::env::remove_var("RUSTC_WORKSPACE_WRAPPER");
        std::env::remove_var("CLIPPY_ARGS");
    }
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/fail/*.rs");
}
