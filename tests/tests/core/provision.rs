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

/// Runs the oracle `script` (under `tests/oracle`) with the pinned packages and `args`,
/// `input` as JSON on its stdin, and reads its stdout as JSON; fails the test, with the
/// script's stderr, when it fails.
pub fn python_json<T: serde::de::DeserializeOwned>(
    script: &str,
    args: &[&std::ffi::OsStr],
    input: &impl serde::Serialize,
) -> T {
    use std::io::Write as _;
    use std::process::Stdio;
    let path = format!("{}/oracle/{script}", env!("CARGO_MANIFEST_DIR"));
    let mut child = python()
        .arg(&path)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let input = serde_json::to_vec(input).unwrap();
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}
