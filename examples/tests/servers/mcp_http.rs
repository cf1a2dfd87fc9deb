//! The HR MCP server over Streamable HTTP as a separate process, as an OAuth 2.1 resource
//! server: tokens minted here with a key made here decide who is calling.

use crate::common;

use common::hr::{ISSUER, hr_command, start};
use common::{Conn, Issuer, Session, free_addr, now};
use serde_json::{Value, json};

fn text(answer: &Value) -> String {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn each_token_sees_only_its_owners_data() {
    let issuer = Issuer::new(ISSUER);
    let server = start(&issuer, "owners").await;
    let token = |sub: &str| {
        issuer.token(
            &server.resource,
            sub,
            "hr hr.cuti.baca hr.reimburse.baca hr.cuti.ajukan hr.tim.cuti.baca",
            json!({}),
        )
    };

    let mut sari = Session::open(server.addr, Some(&token("K-001")))
        .await
        .unwrap();
    let mut budi = Session::open(server.addr, Some(&token("K-002")))
        .await
        .unwrap();
    let mut dewi = Session::open(server.addr, Some(&token("M-001")))
        .await
        .unwrap();

    let mine = sari.call("cek-status-reimburse", json!({})).await;
    assert_eq!(
        mine["result"]["structuredContent"]["daftar"][0]["id"], "R-88",
        "{mine}"
    );
    let theirs = budi.call("cek-status-reimburse", json!({})).await;
    assert_eq!(
        theirs["result"]["structuredContent"],
        json!({"status": "ok", "daftar": []}),
        "Budi does not see Sari's reimbursement"
    );
    let balance = budi.call("cek-sisa-cuti", json!({})).await;
    assert_eq!(balance["result"]["structuredContent"]["nama"], "Budi");

    // The manager sees the team; an employee does not even see the tool.
    assert!(dewi.tool_names().await.contains(&"cek-cuti-tim".to_owned()));
    let team = dewi.call("cek-cuti-tim", json!({})).await;
    let members: Vec<&str> = team["result"]["structuredContent"]["anggota"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["nama"].as_str().unwrap())
        .collect();
    assert_eq!(members, ["Sari", "Budi"]);
    assert!(!sari.tool_names().await.contains(&"cek-cuti-tim".to_owned()));
    let denied = sari.call("cek-cuti-tim", json!({})).await;
    assert!(
        denied["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Tidak ada tool bernama `cek-cuti-tim`."),
        "{denied}"
    );

    // Nothing of the identity comes from the arguments.
    let forged = sari.call("cek-sisa-cuti", json!({"nik": "K-002"})).await;
    assert_eq!(forged["result"]["isError"], true, "{forged}");
    assert!(text(&forged).contains("`nik`"), "{forged}");
}

#[tokio::test]
async fn scopes_narrow_what_a_role_may_do_and_unknown_subjects_are_refused() {
    let issuer = Issuer::new(ISSUER);
    let server = start(&issuer, "scopes").await;
    let read_only = issuer.token(&server.resource, "M-001", "hr hr.cuti.baca", json!({}));
    let mut dewi = Session::open(server.addr, Some(&read_only)).await.unwrap();
    assert_eq!(
        dewi.tool_names().await,
        ["cek-sisa-cuti", "cek-riwayat-cuti"],
        "a token with fewer scopes gives fewer tools than the role"
    );

    // A valid token of someone the application does not know opens nothing.
    let stranger = issuer.token(&server.resource, "X-999", "hr", json!({}));
    let refused = Session::open(server.addr, Some(&stranger))
        .await
        .err()
        .expect("refused at initialize");
    assert_eq!(refused.status, 403, "{refused:?}");
    let body = refused.json();
    assert_eq!(body["error"]["code"], tool_runtime_mcp::REFUSED, "{body}");
    assert!(
        body["error"]["message"].as_str().unwrap().contains("X-999"),
        "{body}"
    );
}

#[tokio::test]
async fn bad_tokens_get_a_challenge_naming_the_metadata() {
    let issuer = Issuer::new(ISSUER);
    let server = start(&issuer, "bad").await;
    let aud = server.resource.clone();
    let stranger = Issuer::new(ISSUER);
    let cases: Vec<(&str, Option<String>, u16, &str)> = vec![
        ("no token", None, 401, "needs an access token"),
        ("garbage", Some("garbage".into()), 401, "not a JWT"),
        (
            "another audience",
            Some(issuer.token("https://other.example.test/mcp", "K-001", "hr", json!({}))),
            401,
            "another resource",
        ),
        (
            "expired",
            Some(issuer.token(&aud, "K-001", "hr", json!({"exp": now() - 3600}))),
            401,
            "expired",
        ),
        (
            "not yet valid",
            Some(issuer.token(&aud, "K-001", "hr", json!({"nbf": now() + 3600}))),
            401,
            "not valid yet",
        ),
        (
            "another issuer",
            Some(issuer.token(
                &aud,
                "K-001",
                "hr",
                json!({"iss": "https://evil.example.test"}),
            )),
            401,
            "issuer",
        ),
        (
            "another key",
            Some(stranger.token(&aud, "K-001", "hr", json!({}))),
            401,
            "key this server does not know",
        ),
        (
            "no subject",
            Some(issuer.token(&aud, "K-001", "hr", json!({"sub": null}))),
            401,
            "",
        ),
        (
            "too few scopes",
            Some(issuer.token(&aud, "K-001", "hr.cuti.baca", json!({}))),
            403,
            "lacks the scope hr",
        ),
    ];
    for (case, token, status, says) in cases {
        let mut conn = Conn::open(server.addr).await;
        let auth = token.map(|t| format!("Bearer {t}"));
        let headers: Vec<(&str, &str)> = auth
            .as_deref()
            .map(|a| vec![("authorization", a)])
            .unwrap_or_default();
        let reply = conn.post(&headers, &common::initialize()).await;
        assert_eq!(reply.status, status, "{case}: {reply:?}");
        let challenge = reply.header("www-authenticate").unwrap_or_default();
        assert!(
            challenge.starts_with("Bearer ")
                && challenge.contains(&format!(
                    "resource_metadata=\"http://{}/.well-known/oauth-protected-resource/mcp\"",
                    server.addr
                ))
                && challenge.contains("scope=\"hr\""),
            "{case}: {challenge}"
        );
        let error = if status == 403 {
            "insufficient_scope"
        } else {
            "invalid_"
        };
        assert!(
            challenge.contains(&format!("error=\"{error}")),
            "{case}: {challenge}"
        );
        assert!(reply.body.contains(says), "{case}: {}", reply.body);
    }
    // A token in the query string is not read.
    let token = issuer.token(&aud, "K-001", "hr", json!({}));
    let mut conn = Conn::open(server.addr).await;
    let reply = conn
        .send(
            "POST",
            &format!("/mcp?access_token={token}"),
            &[
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
            ],
            &common::initialize().to_string(),
        )
        .await;
    assert_eq!(reply.status, 401);
}

#[tokio::test]
async fn protected_resource_metadata_is_public() {
    let issuer = Issuer::new(ISSUER);
    let server = start(&issuer, "metadata").await;
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let reply = Conn::open(server.addr)
            .await
            .send("GET", path, &[], "")
            .await;
        assert_eq!(reply.status, 200, "{path}: {reply:?}");
        let doc: Value = serde_json::from_str(&reply.body).unwrap();
        assert_eq!(doc["resource"], server.resource.as_str());
        assert_eq!(doc["authorization_servers"], json!([ISSUER]));
        assert_eq!(doc["bearer_methods_supported"], json!(["header"]));
        assert!(
            doc["scopes_supported"]
                .as_array()
                .unwrap()
                .contains(&json!("hr"))
        );
    }
}

#[tokio::test]
async fn a_foreign_origin_or_host_is_refused_even_with_a_token() {
    let issuer = Issuer::new(ISSUER);
    let server = start(&issuer, "origin").await;
    let auth = format!(
        "Bearer {}",
        issuer.token(&server.resource, "K-001", "hr", json!({}))
    );
    let mut conn = Conn::open(server.addr).await;
    let foreign = conn
        .post(
            &[
                ("authorization", &auth),
                ("origin", "http://evil.example.test"),
            ],
            &common::initialize(),
        )
        .await;
    assert_eq!(foreign.status, 403, "{foreign:?}");
    let rebound = conn
        .post(
            &[("authorization", &auth), ("host", "evil.example.test")],
            &common::initialize(),
        )
        .await;
    assert_eq!(rebound.status, 403, "{rebound:?}");
    let local = conn
        .post(
            &[
                ("authorization", &auth),
                ("origin", &format!("http://{}", server.addr)),
            ],
            &common::initialize(),
        )
        .await;
    assert_eq!(
        local.status, 200,
        "a page of this server may call it: {local:?}"
    );
}

#[test]
fn http_mode_needs_an_authorization_server_or_a_loopback_address() {
    let (mut cmd, _) = hr_command("refusals");
    let out = cmd
        .args(["--http", &free_addr().to_string()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("HR_OAUTH_ISSUER"), "{err}");

    let (mut cmd, _) = hr_command("remote");
    let out = cmd
        .args(["--http", "0.0.0.0:0", "--local-session"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("refusing to serve 0.0.0.0:0 without authorization"),
        "{err}"
    );
}

#[tokio::test]
async fn the_python_sdk_client_agrees_over_http() {
    let issuer = Issuer::new(ISSUER);
    let server = start(&issuer, "python").await;
    let token = |sub: &str| issuer.token(&server.resource, sub, "hr hr.reimburse.baca", json!({}));
    let (first, second) = (token("K-001"), token("K-002"));
    common::run_python_script_async(
        "python_http_client.py",
        &[&server.resource, &first, &second],
    )
    .await;
}
