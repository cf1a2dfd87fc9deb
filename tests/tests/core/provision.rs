//! The tests' prerequisites beyond Rust.
#![allow(dead_code)] // each test binary uses part of it

/// What `scripts/provision.sh` installs on first use (or finds) for the tests: `python` (the
/// pinned packages' directory), `chromium`, `postgres`. Fails the test, saying what is missing
/// and how to get it, when it cannot.
pub fn provision(what: &str) -> String {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/provision.sh");
    let out = std::process::Command::new("bash")
        .args([script, what])
        .output()
        .expect("bash runs scripts/provision.sh");
    assert!(
        out.status.success(),
        "scripts/provision.sh {what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// `python3` with the pinned test packages on its path.
pub fn python() -> std::process::Command {
    let mut python = std::process::Command::new("python3");
    python.env("PYTHONPATH", provision("python"));
    python
}
