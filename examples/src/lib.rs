//! The example cases as tool sets, shared by the runnable examples, the tests and the benchmarks.

#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

#[cfg(doctest)]
#[doc = include_str!("../../docs/deploying.md")]
pub struct DeployingDoctests;

pub mod chat;
pub mod cuaca;
pub mod ekstraksi;
pub mod gateway;
pub mod hr;
pub mod katering;
pub mod laporan_penjualan;
pub mod llama_cpp;
pub mod model_server;
pub mod perpustakaan;
pub mod probe;
pub mod show;

use std::sync::Arc;

use tool_runtime::{Context, ToolSet};

/// Every example tool in one set (nine), and a context that can run each of them: the HR session
/// of a manager on a fresh in-memory database, and a library member. For tests and benches that
/// go over all tools.
pub fn every_tool() -> (ToolSet, Context) {
    let (library, hr) = (perpustakaan::tool_set(), hr::tool_set());
    let set = ToolSet::new([
        katering::pesan_katering::tool(),
        laporan_penjualan::buat_laporan::tool(),
        cuaca::cuaca_terkini::tool(),
    ])
    .and_then(|set| set.with_tools(library.iter().cloned()))
    .and_then(|set| set.with_tools(hr.iter().cloned()))
    .expect("the example tools have distinct names");
    let db = Arc::new(hr::domain::Db::in_memory().expect("an in-memory database opens"));
    let cx = hr::Session::new("M-001", hr::Peran::Manajer)
        .context(db)
        .with(perpustakaan::Anggota { id: "A-001".into() });
    (set, cx)
}

/// The authorization server a server on `addr` trusts, from the environment under `PREFIX`:
/// `PREFIX_OAUTH_ISSUER`, its keys (`PREFIX_OAUTH_JWKS`: a JWK set file;
/// `PREFIX_OAUTH_PUBLIC_KEY`: an RSA or EC public key PEM file; `PREFIX_OAUTH_HS256_SECRET`: a
/// shared secret; none of them: fetched from the issuer's metadata and its `jwks_uri`, and
/// fetched again as it rotates), and the server's canonical URI `PREFIX_OAUTH_RESOURCE`
/// (default `http://ADDR/mcp`).
pub async fn oauth_from_env(
    prefix: &str,
    addr: std::net::SocketAddr,
) -> Result<tool_runtime_mcp::oauth::ResourceServer, Box<dyn std::error::Error + Send + Sync>> {
    use tool_runtime_mcp::oauth::{Keys, ResourceServer};
    let env = |k: &str| {
        std::env::var(format!("{prefix}_OAUTH_{k}"))
            .ok()
            .filter(|v| !v.is_empty())
    };
    let issuer = env("ISSUER").ok_or_else(|| {
        format!(
            "HTTP mode checks access tokens: set {prefix}_OAUTH_ISSUER (and, unless its keys are fetched from its metadata, one of {prefix}_OAUTH_JWKS, {prefix}_OAUTH_PUBLIC_KEY or {prefix}_OAUTH_HS256_SECRET), or pass --local-session to serve a fixed session on a loopback address without tokens"
        )
    })?;
    let resource = env("RESOURCE").unwrap_or_else(|| format!("http://{addr}/mcp"));
    let keys = if let Some(path) = env("JWKS") {
        Keys::jwks(&std::fs::read_to_string(path)?)?
    } else if let Some(path) = env("PUBLIC_KEY") {
        let pem = std::fs::read(path)?;
        Keys::rsa_pem(&pem).or_else(|_| Keys::ec_pem(&pem))?
    } else if let Some(secret) = env("HS256_SECRET") {
        Keys::hmac_secret(secret.as_bytes())?
    } else {
        return Ok(ResourceServer::discover(resource, issuer).await?);
    };
    Ok(ResourceServer::new(resource, issuer, keys))
}
