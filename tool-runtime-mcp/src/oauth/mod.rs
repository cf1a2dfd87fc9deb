//! The HTTP server as an OAuth 2.1 resource server, as MCP's authorization specification asks
//! (behind the `oauth` feature).
//!
//! - Every request to the endpoint needs `Authorization: Bearer <JWT>`. A missing, malformed,
//!   badly signed or expired token, or one issued by another issuer or **for another
//!   audience** (RFC 8707: its `aud` must be this server's canonical URI), is answered 401 with
//!   `WWW-Authenticate: Bearer resource_metadata="…", scope="…"`; a valid token lacking a
//!   required scope gets 403 `insufficient_scope`.
//! - Tokens are checked by `jsonwebtoken` (signature against configured keys or a JWK set,
//!   `exp`, `nbf`, `iss`, `aud`, `sub` required). The token itself goes no further: the
//!   `Authorization` header is removed, and the request carries the [`Principal`] instead, which
//!   the host's context function maps to the session and [`Grants`](tool_runtime::Grants).
//! - Protected Resource Metadata (RFC 9728) is served without a token at
//!   `/.well-known/oauth-protected-resource` and at that path followed by the endpoint's path,
//!   naming the authorization server(s) a client gets tokens from.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use tool_runtime_mcp::{McpServer, http::HttpServer, oauth::{Keys, ResourceServer}};
//! use tool_runtime::{Context, Grants, ToolSet};
//! let auth = ResourceServer::new(
//!     "https://hr.example.com/mcp",           // this server's canonical URI (the audience)
//!     "https://login.example.com",            // the authorization server (the issuer)
//!     Keys::rsa_pem(&std::fs::read("login-public.pem")?)?, // its key, or Keys::jwks(..)
//! )
//! .with_required_scopes(["mcp"]);
//! let mcp = McpServer::new(ToolSet::from_module(module_path!())?).with_context(|caller| async move {
//!     let who = caller.principal.expect("the server checks tokens");
//!     Ok(Context::new().with(Grants::new(who.scopes)))
//! });
//! HttpServer::new(mcp)
//!     .with_auth(auth)
//!     .bind("0.0.0.0:8080".parse()?)
//!     .await?
//!     .serve()
//!     .await?;
//! # Ok(()) }
//! ```

use std::sync::RwLock;
use std::time::Duration;

mod jwks;
mod keys;

pub use keys::{KeyError, Keys};

use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use jsonwebtoken::{Validation, errors::ErrorKind};
use serde_json::{Map, Value, json};

use crate::caller::Principal;
use crate::http::Authenticate;

/// Where Protected Resource Metadata is served (RFC 9728 §3).
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// This server as an OAuth 2.1 protected resource: who may call it, and how a client finds
/// out where to get a token.
pub struct ResourceServer {
    resource: String,
    authorization_servers: Vec<String>,
    required_scopes: Vec<String>,
    scopes_supported: Vec<String>,
    leeway: Duration,
    keys: RwLock<Keys>,
    /// Where the keys are fetched from, when they are not given.
    fetcher: Option<jwks::Fetcher>,
    metadata_url: String,
}

/// Why a token was refused. Its `Display` goes to the client in `error_description`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenError {
    /// The request has no `Authorization: Bearer <token>` header.
    Missing,
    /// The token is not a JWT.
    NotAJwt,
    /// The token names a signing key this server does not know (even after fetching the keys
    /// again, where they are fetched).
    UnknownKey,
    /// The token has expired.
    Expired,
    /// The token is not valid yet (`nbf`).
    NotYetValid,
    /// The token's `aud` is another resource.
    WrongAudience,
    /// The token's `iss` is an issuer this server does not trust.
    UntrustedIssuer,
    /// The signature does not verify.
    BadSignature,
    /// The token is signed with an algorithm this server does not accept.
    WrongAlgorithm,
    /// The token lacks a required claim (`exp`, `aud`, `iss`, `sub`), or its `sub` is not a
    /// string.
    MissingClaim,
    /// The token is not valid for another reason.
    Invalid,
    /// A valid token without the scopes this server requires.
    MissingScopes {
        /// The scopes it lacks.
        missing: Vec<String>,
    },
}

impl TokenError {
    /// The OAuth error code (RFC 6750 §3.1) and the HTTP status that answers it.
    fn code(&self) -> (http::StatusCode, &'static str) {
        match self {
            TokenError::Missing => (http::StatusCode::UNAUTHORIZED, "invalid_request"),
            TokenError::MissingScopes { .. } => (http::StatusCode::FORBIDDEN, "insufficient_scope"),
            _ => (http::StatusCode::UNAUTHORIZED, "invalid_token"),
        }
    }
}

impl std::fmt::Display for TokenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TokenError::Missing => "expected Authorization: Bearer <token>",
            TokenError::NotAJwt => "the token is not a JWT",
            TokenError::UnknownKey => "the token is signed with a key this server does not know",
            TokenError::Expired => "the token has expired",
            TokenError::NotYetValid => "the token is not valid yet",
            TokenError::WrongAudience => "the token is for another resource",
            TokenError::UntrustedIssuer => "the token is from an issuer this server does not trust",
            TokenError::BadSignature => "the token's signature does not verify",
            TokenError::WrongAlgorithm => {
                "the token is signed with an algorithm this server does not accept"
            }
            TokenError::MissingClaim => {
                "the token lacks a required claim (exp, aud, iss, sub as a string)"
            }
            TokenError::Invalid => "the token is not valid",
            TokenError::MissingScopes { missing } => {
                return write!(f, "the token lacks the scope {}", missing.join(" "));
            }
        })
    }
}

impl std::error::Error for TokenError {}

impl ResourceServer {
    /// A resource server at `resource` (its canonical URI: the `aud` tokens must carry, e.g.
    /// `https://hr.example.com/mcp`), trusting tokens that `issuer` signed with `keys`.
    pub fn new(resource: impl Into<String>, issuer: impl Into<String>, keys: Keys) -> Self {
        let resource = resource.into();
        let metadata_url = metadata_url(&resource);
        ResourceServer {
            resource,
            authorization_servers: vec![issuer.into()],
            required_scopes: Vec::new(),
            scopes_supported: Vec::new(),
            leeway: Duration::from_secs(30),
            keys: RwLock::new(keys),
            fetcher: None,
            metadata_url,
        }
    }

    /// A resource server at `resource` trusting `issuer`, with the keys the authorization
    /// server publishes: its metadata (RFC 8414 `/.well-known/oauth-authorization-server`, else
    /// OpenID Connect discovery) names `jwks_uri`, whose JWK set is fetched now, kept as long as
    /// its `Cache-Control` allows (five minutes if it says nothing, a day at most), and fetched
    /// again when a token names a key it lacks (a rotation), at most once per
    /// [`with_min_refresh_interval`](Self::with_min_refresh_interval). A fetch that fails keeps
    /// the keys there are.
    pub async fn discover(
        resource: impl Into<String>,
        issuer: impl Into<String>,
    ) -> Result<Self, KeyError> {
        let issuer = issuer.into();
        let (fetcher, keys) = jwks::Fetcher::discover(&issuer).await?;
        let mut server = ResourceServer::new(resource, issuer, keys);
        server.fetcher = Some(fetcher);
        Ok(server)
    }

    /// [`ResourceServer::discover`] with the JWK set's URI given rather than read from the
    /// authorization server's metadata.
    pub async fn with_jwks_uri(
        resource: impl Into<String>,
        issuer: impl Into<String>,
        jwks_uri: &str,
    ) -> Result<Self, KeyError> {
        let (fetcher, keys) = jwks::Fetcher::at(jwks_uri).await?;
        let mut server = ResourceServer::new(resource, issuer, keys);
        server.fetcher = Some(fetcher);
        Ok(server)
    }

    /// The shortest time between two fetches of the JWK set (default 30 s): a flood of tokens
    /// naming unknown keys fetches it once per interval at most.
    pub fn with_min_refresh_interval(mut self, interval: Duration) -> Self {
        if let Some(f) = &mut self.fetcher {
            f.min_interval = interval;
        }
        self
    }

    /// How many times the JWK set was fetched (zero for keys given by the host).
    pub fn key_fetches(&self) -> u64 {
        self.fetcher.as_ref().map_or(0, jwks::Fetcher::fetches)
    }

    /// Fetches the keys again, unless they were fetched within the minimum interval; `true`
    /// when the keys may have changed since `seen` (this or a concurrent fetch brought new ones).
    async fn refresh_keys(&self, fetcher: &jwks::Fetcher, seen: std::time::Instant) -> bool {
        let _one = fetcher.one_at_a_time().await;
        if fetcher.last_fetch() != seen {
            return true;
        }
        if seen.elapsed() < fetcher.min_interval {
            return false;
        }
        match fetcher.fetch().await {
            Ok(keys) => {
                self.replace_keys(keys);
                true
            }
            Err(e) => {
                tracing::warn!(jwks_uri = %fetcher.jwks_uri, "the JWK set could not be fetched; the keys stay as they were: {e}");
                false
            }
        }
    }

    /// Scopes every request's token must carry (403 `insufficient_scope` otherwise); also
    /// announced in `WWW-Authenticate` so a client asks for them.
    pub fn with_required_scopes<S: Into<String>>(
        mut self,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.required_scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Scopes listed in the metadata as `scopes_supported` (the required ones are always listed).
    pub fn with_scopes_supported<S: Into<String>>(
        mut self,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.scopes_supported = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Clock skew allowed on `exp` and `nbf` (default 30 s).
    pub fn with_leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// Swaps the keys while serving (an authorization server rotating its keys).
    pub fn replace_keys(&self, keys: Keys) {
        *self.keys.write().unwrap_or_else(|e| e.into_inner()) = keys;
    }

    /// The canonical URI of this resource.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The `host[:port]` of the canonical URI.
    pub(crate) fn authority(&self) -> &str {
        let (origin, _) = crate::uri::split(&self.resource);
        origin.split_once("://").map_or(origin, |(_, a)| a)
    }

    /// The Protected Resource Metadata document (RFC 9728 §2).
    pub fn metadata(&self) -> Value {
        let mut scopes = self.required_scopes.clone();
        for s in &self.scopes_supported {
            if !scopes.contains(s) {
                scopes.push(s.clone());
            }
        }
        json!({
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "scopes_supported": scopes,
            "bearer_methods_supported": ["header"],
        })
    }

    /// The metadata's path with the resource's path after it (RFC 9728 §3.1), e.g.
    /// `/.well-known/oauth-protected-resource/mcp`.
    pub(crate) fn metadata_path(&self) -> String {
        format!("{METADATA_PATH}{}", resource_path(&self.resource))
    }

    /// Checks a token and names its principal (with the keys there are: no fetch).
    pub fn authenticate(&self, token: &str) -> Result<Principal, TokenError> {
        self.check(token)
    }

    fn check(&self, token: &str) -> Result<Principal, TokenError> {
        let header = jsonwebtoken::decode_header(token).map_err(|_| TokenError::NotAJwt)?;
        let keys = self.keys.read().unwrap_or_else(|e| e.into_inner()).clone();
        let (key, algorithms) = keys.for_token(&header).ok_or(TokenError::UnknownKey)?;
        let mut validation = Validation::new(algorithms[0]);
        validation.algorithms = algorithms;
        validation.leeway = self.leeway.as_secs();
        validation.validate_nbf = true;
        validation.set_audience(&[&self.resource]);
        validation.set_issuer(&self.authorization_servers);
        validation.set_required_spec_claims(&["exp", "aud", "iss", "sub"]);
        let data = jsonwebtoken::decode::<Map<String, Value>>(token, key, &validation).map_err(
            |e| match e.kind() {
                ErrorKind::ExpiredSignature => TokenError::Expired,
                ErrorKind::ImmatureSignature => TokenError::NotYetValid,
                ErrorKind::InvalidAudience => TokenError::WrongAudience,
                ErrorKind::InvalidIssuer => TokenError::UntrustedIssuer,
                ErrorKind::InvalidSignature => TokenError::BadSignature,
                ErrorKind::InvalidAlgorithm => TokenError::WrongAlgorithm,
                ErrorKind::MissingRequiredClaim(_) => TokenError::MissingClaim,
                _ => TokenError::Invalid,
            },
        )?;
        let principal = principal(data.claims).ok_or(TokenError::MissingClaim)?;
        let missing: Vec<String> = self
            .required_scopes
            .iter()
            .filter(|s| !principal.scopes.contains(s))
            .cloned()
            .collect();
        if !missing.is_empty() {
            return Err(TokenError::MissingScopes { missing });
        }
        Ok(principal)
    }

    /// Admits a request with a valid token for this server: its `Authorization` header removed
    /// and its [`Principal`] in the extensions. Otherwise the 401/403 answer.
    async fn admit_bearer(&self, mut request: Request) -> Result<Request, Box<Response>> {
        let Some(header) = request.headers().get(http::header::AUTHORIZATION) else {
            return Err(Box::new(self.challenge(None)));
        };
        let token = header
            .to_str()
            .ok()
            .and_then(|h| h.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim());
        let outcome = match token {
            Some(t) if !t.is_empty() => self.check_fetching(t).await,
            _ => Err(TokenError::Missing),
        };
        match outcome {
            Ok(principal) => {
                request.headers_mut().remove(http::header::AUTHORIZATION);
                request.extensions_mut().insert(principal);
                Ok(request)
            }
            Err(refused) => Err(Box::new(self.challenge(Some(refused)))),
        }
    }

    /// [`check`](Self::check), with the keys fetched again first when they are stale, and
    /// once more when the token names a key they lack.
    async fn check_fetching(&self, token: &str) -> Result<Principal, TokenError> {
        let Some(fetcher) = &self.fetcher else {
            return self.check(token);
        };
        if fetcher.stale() {
            self.refresh_keys(fetcher, fetcher.last_fetch()).await;
        }
        let seen = fetcher.last_fetch();
        match self.check(token) {
            Err(TokenError::UnknownKey) => {
                if self.refresh_keys(fetcher, seen).await {
                    self.check(token)
                } else {
                    Err(TokenError::UnknownKey)
                }
            }
            outcome => outcome,
        }
    }

    /// 401 (no or bad token) or 403 (too few scopes), with the `WWW-Authenticate` challenge
    /// that tells a client where the metadata is and what to ask for.
    fn challenge(&self, refused: Option<TokenError>) -> Response {
        let scope = self.required_scopes.join(" ");
        let mut challenge = format!("Bearer resource_metadata=\"{}\"", self.metadata_url);
        if !scope.is_empty() {
            challenge.push_str(&format!(", scope=\"{scope}\""));
        }
        let (status, error, description) = match refused {
            None => (
                http::StatusCode::UNAUTHORIZED,
                "invalid_token",
                "this server needs an access token (Authorization: Bearer)".to_owned(),
            ),
            Some(refused) => {
                let (status, error) = refused.code();
                (status, error, refused.to_string())
            }
        };
        // Every refusal names its error (RFC 6750 §3).
        challenge.push_str(&format!(
            ", error=\"{error}\", error_description=\"{}\"",
            description.replace('"', "'")
        ));
        let body = json!({"error": error, "error_description": description});
        let mut response = (status, axum::Json(body)).into_response();
        if let Ok(value) = http::HeaderValue::from_str(&challenge) {
            response
                .headers_mut()
                .insert(http::header::WWW_AUTHENTICATE, value);
        }
        response
    }
}

/// The principal of a token's claims: `sub`, and scopes from `scope` (space-separated) or
/// `scp` (a list or a string).
fn principal(claims: Map<String, Value>) -> Option<Principal> {
    let subject = claims.get("sub")?.as_str()?.to_owned();
    let scopes = match claims.get("scope").or_else(|| claims.get("scp")) {
        Some(Value::String(s)) => s.split_whitespace().map(str::to_owned).collect(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    };
    let issuer = claims.get("iss").and_then(Value::as_str).map(str::to_owned);
    Some(Principal {
        subject,
        scopes,
        issuer,
        claims,
    })
}

fn resource_path(resource: &str) -> &str {
    crate::uri::split(resource).1
}

/// The metadata's URL for a resource: its origin, the well-known path, its path.
fn metadata_url(resource: &str) -> String {
    crate::uri::well_known(resource, "oauth-protected-resource")
}

impl Authenticate for ResourceServer {
    fn admit<'a>(
        &'a self,
        request: Request,
    ) -> tool_runtime::BoxFuture<'a, Result<Request, Box<Response>>> {
        Box::pin(self.admit_bearer(request))
    }

    /// The Protected Resource Metadata, at the well-known path and at that path followed by the
    /// endpoint's path.
    fn routes(&self) -> axum::Router {
        let metadata = self.metadata();
        let document = move || {
            let metadata = metadata.clone();
            async move { axum::Json(metadata) }
        };
        let mut router =
            axum::Router::new().route(METADATA_PATH, axum::routing::get(document.clone()));
        let at_path = self.metadata_path();
        if at_path != METADATA_PATH {
            router = router.route(&at_path, axum::routing::get(document));
        }
        router
    }

    fn host(&self) -> Option<String> {
        Some(self.authority().to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_urls_follow_rfc_9728() {
        assert_eq!(
            metadata_url("https://hr.example.com/mcp"),
            "https://hr.example.com/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            metadata_url("https://hr.example.com"),
            "https://hr.example.com/.well-known/oauth-protected-resource"
        );
        assert_eq!(resource_path("http://127.0.0.1:9/a/b/"), "/a/b");
    }

    #[test]
    fn scopes_come_from_scope_or_scp() {
        let p = principal(
            json!({"sub": "u", "scope": "a  b"})
                .as_object()
                .unwrap()
                .clone(),
        )
        .unwrap();
        assert_eq!(p.scopes, ["a", "b"]);
        let p = principal(
            json!({"sub": "u", "scp": ["c"]})
                .as_object()
                .unwrap()
                .clone(),
        )
        .unwrap();
        assert_eq!(p.scopes, ["c"]);
        assert!(principal(json!({"sub": 7}).as_object().unwrap().clone()).is_none());
    }

    #[test]
    fn short_secrets_are_refused() {
        assert!(Keys::hmac_secret(b"short").is_err());
        assert!(Keys::hmac_secret(&[7; 32]).is_ok());
    }
}
