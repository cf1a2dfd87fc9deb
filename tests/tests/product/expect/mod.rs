//! The expected outputs committed next to the tests (export snapshots, tool catalogs,
//! compile-fail messages). `UPDATE_EXPECT=1 cargo test -p tests` rewrites every one of them;
//! review the diff before committing it.

/// Whether this run rewrites the expected outputs instead of comparing with them.
pub fn updating() -> bool {
    std::env::var_os("UPDATE_EXPECT").is_some()
}
