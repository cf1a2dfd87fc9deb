//! The HR server over Streamable HTTP as a separate process, with tokens from an [`Issuer`]
//! made in the test.

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};

use super::{Issuer, free_addr};

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

/// An HR server with `env` set besides its usual settings. The port is one nothing listened on
/// a moment before; when something took it in between (another test's connection or server, the
/// tests run four at a time), the server cannot bind and exits, and another port is tried.
pub async fn start_with(issuer: &Issuer, tag: &str, env: &[(&str, &str)]) -> Server {
    for _ in 0..5 {
        let (mut cmd, dir) = hr_command(tag);
        cmd.envs(env.iter().copied());
        let jwks = dir.join("jwks.json");
        std::fs::write(&jwks, issuer.jwks()).unwrap();
        let addr = free_addr();
        let mut child = cmd
            .args(["--http", &addr.to_string()])
            .env("HR_OAUTH_ISSUER", &issuer.issuer)
            .env("HR_OAUTH_JWKS", &jwks)
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        if serves(&mut child, addr).await {
            return Server {
                child,
                addr,
                resource: format!("http://{addr}/mcp"),
            };
        }
        let _ = child.kill();
        let _ = child.wait();
    }
    panic!("the HR server did not start on any of five free ports");
}

/// Whether `child` (still running) answers at `addr`: the listener there is its own. (A
/// connection alone could reach someone else's listener on that port while `child` was still
/// starting, and `child` then exit, unable to bind: a test's first request was refused.)
async fn serves(child: &mut Child, addr: SocketAddr) -> bool {
    for _ in 0..200 {
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        if listens(child.id(), addr.port()) && tokio::net::TcpStream::connect(addr).await.is_ok() {
            return child.try_wait().unwrap().is_none();
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    false
}

/// Whether process `pid` holds a TCP socket listening on `port`: its descriptors' socket
/// inodes against the listening rows of `/proc/net/tcp` (Linux, where the tests run).
fn listens(pid: u32, port: u16) -> bool {
    let Ok(table) = std::fs::read_to_string("/proc/net/tcp") else {
        return false;
    };
    // Columns: sl, local address (hex `ADDR:PORT`), remote address, state (0A: LISTEN), ...,
    // inode (the tenth).
    let inodes: Vec<String> = table
        .lines()
        .skip(1)
        .filter_map(|row| {
            let columns: Vec<&str> = row.split_whitespace().collect();
            let local_port = u16::from_str_radix(columns.get(1)?.rsplit(':').next()?, 16).ok()?;
            let inode = columns.get(9)?;
            (local_port == port && *columns.get(3)? == "0A").then(|| format!("socket:[{inode}]"))
        })
        .collect();
    let Ok(descriptors) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    descriptors.flatten().any(|fd| {
        std::fs::read_link(fd.path())
            .is_ok_and(|target| inodes.iter().any(|i| target.as_os_str() == i.as_str()))
    })
}
