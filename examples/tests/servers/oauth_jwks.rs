//! The OAuth resource server fetching its keys from the authorization server: an authorization
//! server in the test publishes its metadata (RFC 8414) and a JWK set, rotates its key, and
//! counts how often the set is fetched.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tool_runtime::ToolSet;
use tool_runtime_mcp::McpServer;
use tool_runtime_mcp::http::HttpServer;
use tool_runtime_mcp::oauth::ResourceServer;

use crate::common::{Issuer, Session, free_addr, wait_for};

/// The authorization server: its metadata, and the JWK set it publishes now.
struct AuthServer {
    issuer: String,
    jwks: Arc<Mutex<String>>,
    fetches: Arc<AtomicUsize>,
}

async fn auth_server() -> AuthServer {
    let addr = free_addr();
    let issuer = format!("http://{addr}");
    let jwks = Arc::new(Mutex::new(String::new()));
    let fetches = Arc::new(AtomicUsize::new(0));
    let metadata = json!({"issuer": issuer, "jwks_uri": format!("{issuer}/jwks")});
    let (set, count) = (jwks.clone(), fetches.clone());
    let app = axum::Router::new()
        .route(
            "/.well-known/oauth-authorization-server",
            axum::routing::get(move || {
                let metadata = metadata.clone();
                async move { axum::Json(metadata) }
            }),
        )
        .route(
            "/jwks",
            axum::routing::get(move || {
                count.fetch_add(1, Ordering::SeqCst);
                let body = set.lock().unwrap().clone();
                async move {
                    (
                        [
                            ("content-type", "application/json"),
                            ("cache-control", "public, max-age=300"),
                        ],
                        body,
                    )
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    AuthServer {
        issuer,
        jwks,
        fetches,
    }
}

#[tokio::test]
async fn keys_come_from_the_authorization_server_and_a_rotation_needs_one_fetch() {
    let auth = auth_server().await;
    let old = Issuer::new(&auth.issuer);
    *auth.jwks.lock().unwrap() = old.jwks();

    let addr = free_addr();
    let resource = format!("http://{addr}/mcp");
    let interval = Duration::from_millis(300);
    let rs = ResourceServer::discover(&resource, &auth.issuer)
        .await
        .unwrap()
        .with_min_refresh_interval(interval);
    assert_eq!(
        auth.fetches.load(Ordering::SeqCst),
        1,
        "fetched once at start"
    );
    let tools = ToolSet::new(Vec::<&'static tool_runtime::Tool>::new()).unwrap();
    let bound = HttpServer::new(McpServer::new(tools))
        .with_auth(rs)
        .bind(addr)
        .await
        .unwrap();
    tokio::spawn(bound.serve());
    wait_for(addr).await;
    let token = |i: &Issuer| i.token(&resource, "user-1", "", json!({}));

    assert!(Session::open(addr, Some(&token(&old))).await.is_ok());
    assert_eq!(
        auth.fetches.load(Ordering::SeqCst),
        1,
        "the set is fresh: no fetch"
    );

    // The authorization server rotates its key. The first token signed with the new one makes
    // the server fetch the set again, and is accepted.
    tokio::time::sleep(interval).await;
    let new = Issuer::new(&auth.issuer);
    *auth.jwks.lock().unwrap() = new.jwks();
    assert!(Session::open(addr, Some(&token(&new))).await.is_ok());
    assert_eq!(
        auth.fetches.load(Ordering::SeqCst),
        2,
        "one fetch for the rotation"
    );
    assert!(Session::open(addr, Some(&token(&new))).await.is_ok());
    assert_eq!(auth.fetches.load(Ordering::SeqCst), 2);
    // The old key is gone from the set: its tokens are refused.
    let refused = Session::open(addr, Some(&token(&old))).await.err().unwrap();
    assert_eq!(refused.status, 401);

    // A flood of tokens naming keys nobody published: all refused, and the set is fetched at
    // most once for the whole flood.
    tokio::time::sleep(interval).await;
    let before = auth.fetches.load(Ordering::SeqCst);
    let forgers: Vec<Issuer> = (0..40).map(|_| Issuer::new(&auth.issuer)).collect();
    let attempts = forgers.iter().map(|f| {
        let t = token(f);
        async move { Session::open(addr, Some(&t)).await.err().map(|r| r.status) }
    });
    let statuses = futures_join(attempts).await;
    assert!(statuses.iter().all(|s| *s == Some(401)), "{statuses:?}");
    let after = auth.fetches.load(Ordering::SeqCst);
    assert!(
        after - before <= 1,
        "{} fetches for one flood",
        after - before
    );
}

/// Runs futures at once and collects their outputs in order.
async fn futures_join<F>(futures: impl Iterator<Item = F>) -> Vec<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let handles: Vec<_> = futures.map(tokio::spawn).collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

/// `application/x-www-form-urlencoded` decoded (enough for the token request).
fn form(body: &str) -> std::collections::HashMap<String, String> {
    let decode = |s: &str| {
        let bytes = s.replace('+', " ").into_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'%' && i + 2 < bytes.len() {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
                out.push(u8::from_str_radix(hex, 16).unwrap());
                i += 3;
            } else {
                out.push(bytes[i]);
                i += 1;
            }
        }
        String::from_utf8(out).unwrap()
    };
    body.split('&')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (decode(k), decode(v)))
        .collect()
}

#[tokio::test]
async fn a_remote_server_that_asks_for_a_token_gets_one_by_client_credentials() {
    use std::process::Stdio;
    use tool_runtime::Context;
    use tool_runtime_mcp::remote::{ClientCredentials, Remote, RemoteOptions};

    // The authorization server: metadata, its JWK set, and a token endpoint for one client.
    let as_addr = free_addr();
    let issuer_url = format!("http://{as_addr}");
    let issuer = Arc::new(Issuer::new(&issuer_url));
    let tokens = Arc::new(AtomicUsize::new(0));
    let metadata = json!({"issuer": issuer_url, "jwks_uri": format!("{issuer_url}/jwks"),
        "token_endpoint": format!("{issuer_url}/token")});
    let (jwks, minted, signer) = (issuer.jwks(), tokens.clone(), issuer.clone());
    let app = axum::Router::new()
        .route(
            "/.well-known/oauth-authorization-server",
            axum::routing::get(move || {
                let metadata = metadata.clone();
                async move { axum::Json(metadata) }
            }),
        )
        .route(
            "/jwks",
            axum::routing::get(move || {
                let jwks = jwks.clone();
                async move { ([("content-type", "application/json")], jwks) }
            }),
        )
        .route(
            "/token",
            axum::routing::post(move |headers: http::HeaderMap, body: String| {
                let (minted, signer) = (minted.clone(), signer.clone());
                async move {
                    // HTTP Basic for the client "K-001" with the secret "rahasia".
                    let expected = "Basic Sy0wMDE6cmFoYXNpYQ==";
                    let f = form(&body);
                    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(expected)
                        || f.get("grant_type").map(String::as_str) != Some("client_credentials")
                    {
                        return (
                            http::StatusCode::UNAUTHORIZED,
                            axum::Json(json!({"error": "invalid_client"})),
                        );
                    }
                    minted.fetch_add(1, Ordering::SeqCst);
                    let token = signer.token(
                        &f["resource"],
                        "K-001",
                        f.get("scope").map_or("", String::as_str),
                        json!({}),
                    );
                    (
                        http::StatusCode::OK,
                        axum::Json(json!({"access_token": token, "token_type": "Bearer", "expires_in": 3600})),
                    )
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind(as_addr).await.unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });

    // The HR server trusts it, with keys fetched from it (no key configured).
    let dir = std::env::temp_dir().join(format!("hr-cc-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let addr = free_addr();
    let mut hr = std::process::Command::new(env!("CARGO_BIN_EXE_hr-mcp"))
        .args(["--http", &addr.to_string()])
        .env("HR_DB", dir.join("hr.sqlite"))
        .env("HR_OAUTH_ISSUER", &issuer_url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(addr).await;
    let url = format!("http://{addr}/mcp");

    let wrong = ClientCredentials {
        client_id: "K-001".into(),
        client_secret: "salah".into(),
        issuer: issuer_url.clone(),
        scope: None,
    };
    let err = Remote::http_client_credentials("hr", &url, wrong, RemoteOptions::default())
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("refused the client credentials"),
        "{err}"
    );

    let credentials = ClientCredentials {
        client_id: "K-001".into(),
        client_secret: "rahasia".into(),
        issuer: issuer_url.clone(),
        scope: Some("hr hr.cuti.baca".into()),
    };
    let remote =
        Remote::http_client_credentials("hr", &url, credentials.clone(), RemoteOptions::default())
            .await
            .unwrap();
    assert_eq!(
        tokens.load(Ordering::SeqCst),
        1,
        "one token for the connection"
    );
    let set = ToolSet::new(remote.tools().await.unwrap().tools).unwrap();
    let out = set
        .call(&Context::new(), "cek-sisa-cuti", json!({}))
        .await
        .unwrap();
    assert_eq!(out.value()["status"], "ok", "{}", out.value());

    // A hostile remote steers the client: its metadata names the HR server as the resource (a
    // token for the HR server, sent to the hostile one), or another authorization server (the
    // client's secret, sent there), or sits on another origin. Each is refused before anything
    // is sent: no token is minted.
    let hostile = free_addr();
    let hr_resource = url.clone();
    let other_origin = format!("{issuer_url}/.well-known/oauth-protected-resource");
    let trusted = issuer_url.clone();
    let app = axum::Router::new()
        .route(
            "/{case}/mcp",
            axum::routing::post(
                move |axum::extract::Path(case): axum::extract::Path<String>| {
                    let other_origin = other_origin.clone();
                    async move {
                        let metadata = match case.as_str() {
                            "c" => other_origin,
                            _ => format!("http://{hostile}/meta/{case}"),
                        };
                        (
                            http::StatusCode::UNAUTHORIZED,
                            [(
                                "www-authenticate",
                                format!("Bearer resource_metadata=\"{metadata}\""),
                            )],
                        )
                    }
                },
            ),
        )
        .route(
            "/meta/{case}",
            axum::routing::get(
                move |axum::extract::Path(case): axum::extract::Path<String>| {
                    let (hr_resource, trusted) = (hr_resource.clone(), trusted.clone());
                    async move {
                        axum::Json(match case.as_str() {
                            "a" => {
                                json!({"resource": hr_resource, "authorization_servers": [trusted]})
                            }
                            _ => json!({"resource": format!("http://{hostile}/{case}/mcp"),
                            "authorization_servers": ["http://127.0.0.1:9/elsewhere"]}),
                        })
                    }
                },
            ),
        );
    let listener = tokio::net::TcpListener::bind(hostile).await.unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let minted = tokens.load(Ordering::SeqCst);
    for (case, says) in [
        ("a", "no token is asked for another resource"),
        ("b", "the client's secret is sent to no other"),
        ("c", "on another origin: not fetched"),
    ] {
        let url = format!("http://{hostile}/{case}/mcp");
        let err = Remote::http_client_credentials(
            "evil",
            &url,
            credentials.clone(),
            RemoteOptions::default(),
        )
        .await
        .unwrap_err();
        assert!(err.to_string().contains(says), "{case}: {err}");
    }
    assert_eq!(
        tokens.load(Ordering::SeqCst),
        minted,
        "no token minted for a hostile remote"
    );
    let _ = hr.kill();
    let _ = hr.wait();
}
