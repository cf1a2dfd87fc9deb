//! An OAuth client's credentials, for a remote server that asks for an access token: the token
//! comes from the authorization server its metadata names (client-credentials grant).

use std::fmt;
use std::time::Duration;

use serde_json::Value;

/// An OAuth client registered with the authorization server a remote server trusts (see
/// [`Remote::http_client_credentials`](super::Remote::http_client_credentials)).
///
/// The remote server names its authorization server, and a remote is not trusted: the secret
/// goes only to `issuer`, the server the client is registered with, over HTTPS (or to a
/// loopback address), and a token is asked only for the remote's own URL. A remote whose
/// metadata names another authorization server or another resource is refused, and nothing is
/// sent.
#[cfg(feature = "client-http")]
#[derive(Clone)]
pub struct ClientCredentials {
    /// The client's id.
    pub client_id: String,
    /// The client's secret.
    pub client_secret: String,
    /// The authorization server the client is registered with, as its metadata's `issuer`
    /// says (`https://login.example.com`).
    pub issuer: String,
    /// The scopes to ask for, space-separated (the server's `scopes_supported` otherwise).
    pub scope: Option<String>,
}

#[cfg(feature = "client-http")]
impl fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("client_id", &self.client_id)
            .field("client_secret", &"…")
            .field("issuer", &self.issuer)
            .field("scope", &self.scope)
            .finish()
    }
}

#[cfg(feature = "client-http")]
impl ClientCredentials {
    /// An access token for the server at `url`, which challenged with `challenge`: its
    /// protected-resource metadata (RFC 9728) names the resource and its authorization servers,
    /// whose metadata (RFC 8414) names the token endpoint. What the remote says is checked
    /// before anything is sent: its metadata is on its own origin and names `url` as the
    /// resource (RFC 9728 §3.3) and [`issuer`](Self::issuer) among its authorization servers;
    /// that server's metadata names itself (RFC 8414 §3.3) and a token endpoint over HTTPS.
    pub(super) async fn token(&self, url: &str, challenge: &str) -> Result<String, String> {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| e.to_string())?;
        let metadata_url = challenge
            .split("resource_metadata=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .map(str::to_owned)
            .unwrap_or_else(|| crate::uri::well_known(url, "oauth-protected-resource"));
        if origin(&metadata_url) != origin(url) {
            return Err(format!(
                "the server at {url} named its metadata at {metadata_url}, on another origin: not fetched"
            ));
        }
        let resource = get_json(&client, &metadata_url).await?;
        let named = resource["resource"].as_str().unwrap_or("");
        if !same_uri(named, url) {
            return Err(format!(
                "{metadata_url} names the resource {named:?}, not {url}: no token is asked for another resource"
            ));
        }
        let trusted = resource["authorization_servers"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .any(|s| same_uri(s, &self.issuer));
        if !trusted {
            return Err(format!(
                "{metadata_url} does not name {} among its authorization servers ({}): the client's secret is sent to no other",
                self.issuer, resource["authorization_servers"]
            ));
        }
        let issuer = &self.issuer;
        let server_metadata = get_json(
            &client,
            &crate::uri::well_known(issuer, "oauth-authorization-server"),
        )
        .await?;
        if !server_metadata["issuer"]
            .as_str()
            .is_some_and(|named| same_uri(named, issuer))
        {
            return Err(format!(
                "the authorization server's metadata names the issuer {}, not {issuer}",
                server_metadata["issuer"]
            ));
        }
        let token_endpoint = server_metadata["token_endpoint"]
            .as_str()
            .ok_or_else(|| format!("the authorization server {issuer} names no token_endpoint"))?;
        if !https_or_loopback(token_endpoint) {
            return Err(format!(
                "the token endpoint {token_endpoint} is neither HTTPS nor a loopback address: the client's secret is not sent"
            ));
        }
        let mut form = vec![("grant_type", "client_credentials".to_owned())];
        form.push(("resource", named.to_owned()));
        let scope = self.scope.clone().or_else(|| {
            resource["scopes_supported"].as_array().map(|s| {
                s.iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
        });
        if let Some(scope) = scope.filter(|s| !s.is_empty()) {
            form.push(("scope", scope));
        }
        let answer = client
            .post(token_endpoint)
            .basic_auth(&self.client_id, Some(&self.client_secret))
            .form(&form)
            .send()
            .await
            .map_err(|e| format!("token endpoint {token_endpoint}: {e}"))?;
        let status = answer.status();
        let body: Value = answer
            .json()
            .await
            .map_err(|e| format!("token endpoint {token_endpoint}: {e}"))?;
        if !status.is_success() {
            return Err(format!(
                "the authorization server refused the client credentials ({status}): {}",
                body["error_description"]
                    .as_str()
                    .or(body["error"].as_str())
                    .unwrap_or("")
            ));
        }
        body["access_token"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| format!("token endpoint {token_endpoint} gave no access_token"))
    }
}

/// A URI's scheme, host and port (`https://h:8443`), lowercased; `None` when it has none.
#[cfg(feature = "client-http")]
fn origin(uri: &str) -> Option<String> {
    let parsed = reqwest::Url::parse(uri).ok()?;
    Some(parsed.origin().ascii_serialization())
}

/// Whether two URIs name the same resource: equal but for a trailing `/` and the case of their
/// scheme and host.
#[cfg(feature = "client-http")]
fn same_uri(a: &str, b: &str) -> bool {
    match (reqwest::Url::parse(a), reqwest::Url::parse(b)) {
        (Ok(a), Ok(b)) => {
            a.origin() == b.origin()
                && a.path().trim_end_matches('/') == b.path().trim_end_matches('/')
                && a.query() == b.query()
        }
        _ => false,
    }
}

/// Whether a secret may go to `uri`: over HTTPS, or to a loopback address (a test's, a
/// sidecar's).
#[cfg(feature = "client-http")]
fn https_or_loopback(uri: &str) -> bool {
    let Ok(parsed) = reqwest::Url::parse(uri) else {
        return false;
    };
    if parsed.scheme() == "https" {
        return true;
    }
    parsed.host_str().is_some_and(|host| {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        host.eq_ignore_ascii_case("localhost")
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    })
}

/// A JSON document (at most 1 MiB).
#[cfg(feature = "client-http")]
pub(super) async fn get_json(client: &reqwest::Client, url: &str) -> Result<Value, String> {
    let response = client
        .get(url)
        .send()
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    if !response.status().is_success() {
        return Err(format!("{url}: HTTP {}", response.status()));
    }
    if response.content_length().is_some_and(|n| n > 1 << 20) {
        return Err(format!("{url}: larger than 1 MiB"));
    }
    let bytes = response.bytes().await.map_err(|e| format!("{url}: {e}"))?;
    if bytes.len() > 1 << 20 {
        return Err(format!("{url}: larger than 1 MiB"));
    }
    serde_json::from_slice(&bytes).map_err(|e| format!("{url}: not JSON: {e}"))
}
