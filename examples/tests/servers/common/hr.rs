//! The HR server over Streamable HTTP as a separate process, with tokens from an [`Issuer`]
//! made in the test.

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};

use super::{Issuer, free_addr, wait_for};

pub const ISSUER: &str = "https://login.example.test";

/// An HR server process, killed when dropped.
pub struct Server {
    child: Child,
    pub addr: SocketAddr,
    pub resource: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn hr_command(tag: &str) -> (Command, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("hr-http-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hr-mcp"));
    cmd.env("HR_DB", dir.join("hr.sqlite"))
        .env_remove("HR_OAUTH_ISSUER")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    (cmd, dir)
}

pub async fn start(issuer: &Issuer, tag: &str) -> Server {
    start_with(issuer, tag, &[]).await
}

/// An HR server with `env` set besides its usual settings.
pub async fn start_with(issuer: &Issuer, tag: &str, env: &[(&str, &str)]) -> Server {
    let (mut cmd, dir) = hr_command(tag);
    cmd.envs(env.iter().copied());
    let jwks = dir.join("jwks.json");
    std::fs::write(&jwks, issuer.jwks()).unwrap();
    let addr = free_addr();
    let child = cmd
        .args(["--http", &addr.to_string()])
        .env("HR_OAUTH_ISSUER", &issuer.issuer)
        .env("HR_OAUTH_JWKS", &jwks)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(addr).await;
    Server {
        child,
        addr,
        resource: format!("http://{addr}/mcp"),
    }
}
