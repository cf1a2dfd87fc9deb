//! Keys fetched from the authorization server: its metadata (RFC 8414, or OpenID Connect
//! discovery) names `jwks_uri`; the JWK set is kept as long as its HTTP caching headers allow,
//! fetched again when it is stale, and at once when a token names a key it does not have, at
//! most once per `min_interval` however many such tokens arrive.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::keys::{KeyError, Keys};

/// How long a JWK set is kept when its answer says nothing about caching.
const DEFAULT_TTL: Duration = Duration::from_secs(300);
/// The longest a JWK set is kept, whatever its answer says.
const MAX_TTL: Duration = Duration::from_secs(24 * 3600);
/// The largest metadata document or JWK set read.
const MAX_BYTES: usize = 1 << 20;
/// How long one fetch may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// Where the keys come from, and when they were last fetched.
pub(super) struct Fetcher {
    client: reqwest::Client,
    pub(super) jwks_uri: String,
    /// Fetches at most this often when tokens name unknown keys or the keys are stale.
    pub(super) min_interval: Duration,
    state: Mutex<State>,
    /// One fetch at a time; a request that waited finds the keys its fetch brought.
    fetching: tokio::sync::Mutex<()>,
}

struct State {
    /// Until when the keys are fresh, from the caching headers.
    fresh_until: Instant,
    /// When the last fetch started (successful or not).
    last_fetch: Instant,
    /// How many fetches of the JWK set were made (for tests and logs).
    fetches: u64,
}

impl Fetcher {
    /// The keys of the authorization server `issuer`: its metadata at
    /// `/.well-known/oauth-authorization-server` (RFC 8414, with the issuer's path after it),
    /// else `/.well-known/openid-configuration`; the metadata's `issuer` must be `issuer`.
    pub(super) async fn discover(issuer: &str) -> Result<(Fetcher, Keys), KeyError> {
        let client = client()?;
        let candidates = [
            crate::uri::well_known(issuer, "oauth-authorization-server"),
            format!(
                "{}/.well-known/openid-configuration",
                issuer.trim_end_matches('/')
            ),
        ];
        let mut errors = Vec::new();
        for url in candidates {
            match get_json(&client, &url).await {
                Ok((metadata, _)) => {
                    if metadata.get("issuer").and_then(Value::as_str) != Some(issuer) {
                        return Err(KeyError::Metadata {
                            url,
                            problem: format!(
                                "it names another issuer than {issuer} (RFC 8414 §3.3)"
                            ),
                        });
                    }
                    let jwks_uri = metadata
                        .get("jwks_uri")
                        .and_then(Value::as_str)
                        .ok_or_else(|| KeyError::Metadata {
                            url: url.clone(),
                            problem: "it has no jwks_uri".into(),
                        })?;
                    return Fetcher::start(client, jwks_uri.to_owned()).await;
                }
                Err(e) => errors.push(format!("{url}: {e}")),
            }
        }
        Err(KeyError::Metadata {
            url: issuer.to_owned(),
            problem: format!("none was found: {}", errors.join("; ")),
        })
    }

    /// The keys at `jwks_uri`.
    pub(super) async fn at(jwks_uri: &str) -> Result<(Fetcher, Keys), KeyError> {
        Fetcher::start(client()?, jwks_uri.to_owned()).await
    }

    async fn start(client: reqwest::Client, jwks_uri: String) -> Result<(Fetcher, Keys), KeyError> {
        let now = Instant::now();
        let fetcher = Fetcher {
            client,
            jwks_uri,
            min_interval: Duration::from_secs(30),
            state: Mutex::new(State {
                fresh_until: now,
                last_fetch: now,
                fetches: 0,
            }),
            fetching: tokio::sync::Mutex::new(()),
        };
        let keys = fetcher.fetch().await?;
        Ok((fetcher, keys))
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the keys have outlived their caching headers.
    pub(super) fn stale(&self) -> bool {
        Instant::now() >= self.state().fresh_until
    }

    /// How many times the JWK set was fetched.
    pub(super) fn fetches(&self) -> u64 {
        self.state().fetches
    }

    /// When the last fetch started.
    pub(super) fn last_fetch(&self) -> Instant {
        self.state().last_fetch
    }

    /// One fetch at a time: hold this while fetching and installing the keys.
    pub(super) async fn one_at_a_time(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.fetching.lock().await
    }

    /// Fetches the JWK set (counted, and timed for `min_interval`).
    pub(super) async fn fetch(&self) -> Result<Keys, KeyError> {
        {
            let mut state = self.state();
            state.last_fetch = Instant::now();
            state.fetches += 1;
        }
        let (set, ttl) = get_json(&self.client, &self.jwks_uri)
            .await
            .map_err(|problem| KeyError::Fetch {
                url: self.jwks_uri.clone(),
                problem,
            })?;
        let keys = Keys::jwks(&set.to_string())?;
        self.state().fresh_until = Instant::now() + ttl;
        Ok(keys)
    }
}

fn client() -> Result<reqwest::Client, KeyError> {
    reqwest::Client::builder()
        .timeout(FETCH_TIMEOUT)
        .redirect(reqwest::redirect::Policy::limited(3))
        .build()
        .map_err(|e| KeyError::unreadable("the HTTP client", e))
}

/// A JSON document at `url` (at most `MAX_BYTES`), and how long its caching headers let it be
/// kept.
async fn get_json(client: &reqwest::Client, url: &str) -> Result<(Value, Duration), String> {
    let mut response = client
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| e.to_string())?;
    if !response.status().is_success() {
        return Err(format!("HTTP {}", response.status()));
    }
    let ttl = ttl(response.headers().get(reqwest::header::CACHE_CONTROL));
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| e.to_string())? {
        if body.len() + chunk.len() > MAX_BYTES {
            return Err(format!("the document is larger than {MAX_BYTES} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    let value = serde_json::from_slice(&body).map_err(|e| format!("not JSON: {e}"))?;
    Ok((value, ttl))
}

/// How long `Cache-Control` lets a response be kept: `max-age` (at most a day), nothing for
/// `no-store`/`no-cache`, five minutes when it says nothing.
fn ttl(cache_control: Option<&reqwest::header::HeaderValue>) -> Duration {
    let Some(value) = cache_control.and_then(|v| v.to_str().ok()) else {
        return DEFAULT_TTL;
    };
    let mut ttl = DEFAULT_TTL;
    for directive in value.split(',').map(str::trim) {
        let lower = directive.to_ascii_lowercase();
        if lower == "no-store" || lower == "no-cache" {
            return Duration::ZERO;
        }
        if let Some(secs) = lower.strip_prefix("max-age=")
            && let Ok(secs) = secs.trim_matches('"').parse::<u64>()
        {
            ttl = Duration::from_secs(secs).min(MAX_TTL);
        }
    }
    ttl
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caching_headers_decide_how_long_keys_are_kept() {
        let h = |v: &'static str| reqwest::header::HeaderValue::from_static(v);
        assert_eq!(ttl(None), DEFAULT_TTL);
        assert_eq!(
            ttl(Some(&h("public, max-age=600"))),
            Duration::from_secs(600)
        );
        assert_eq!(ttl(Some(&h("max-age=999999999"))), MAX_TTL);
        assert_eq!(ttl(Some(&h("no-store"))), Duration::ZERO);
        assert_eq!(ttl(Some(&h("private"))), DEFAULT_TTL);
    }
}
