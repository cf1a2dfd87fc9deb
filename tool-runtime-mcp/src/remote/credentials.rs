//! An OAuth client's credentials, for a remote server that asks for an access token: the token
//! comes from the authorization server its metadata names (client-credentials grant).

use std::fmt;
use std::time::Duration;

use serde_json::Value;

/// An OAuth client registered with the authorization server a remote server trusts (see
/// [`Remote::http_client_credentials`](super::Remote::http_client_credentials)).
#[cfg(feature = "client-http")]
#[derive(Clone)]
pub struct ClientCredentials {
    /// The client's id.
    pub client_id: String,
    /// The client's secret.
    pub client_secret: String,
    /// The scopes to ask for, space-separated (the server's `scopes_supported` otherwise).
    pub scope: Option<String>,
}

#[cfg(feature = "client-http")]
impl fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("client_id", &self.client_id)
            .field("client_secret", &"…")
            .field("scope", &self.scope)
            .finish()
    }
}

#[cfg(feature = "client-http")]
impl ClientCredentials {
    /// An access token for the server at `url`, which challenged with `challenge`: its
    /// protected-resource metadata (RFC 9728) names the resource and its authorization server,
    /// whose metadata (RFC 8414) names the token endpoint.
    pub(super) async fn token(&self, url: &str, challenge: &str) -> Result<String, String> {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| e.to_string())?;
        let metadata_url = challenge
            .split("resource_metadata=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .map(str::to_owned)
            .unwrap_or_else(|| crate::uri::well_known(url, "oauth-protected-resource"));
        let resource = get_json(&client, &metadata_url).await?;
        let issuer = resource["authorization_servers"][0]
            .as_str()
            .ok_or_else(|| format!("{metadata_url} names no authorization server"))?;
        let server_metadata = get_json(
            &client,
            &crate::uri::well_known(issuer, "oauth-authorization-server"),
        )
        .await?;
        let token_endpoint = server_metadata["token_endpoint"]
            .as_str()
            .ok_or_else(|| format!("the authorization server {issuer} names no token_endpoint"))?;
        let mut form = vec![("grant_type", "client_credentials".to_owned())];
        if let Some(r) = resource["resource"].as_str() {
            form.push(("resource", r.to_owned()));
        }
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
