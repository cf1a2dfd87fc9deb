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
