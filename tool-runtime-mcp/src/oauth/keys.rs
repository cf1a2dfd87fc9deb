//! The keys access tokens are signed with: given, or read from a JWK set, and why a key set
//! cannot be used.

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey};

/// The keys access tokens are signed with.
#[derive(Clone)]
pub struct Keys(KeySet);

#[derive(Clone)]
enum KeySet {
    /// One key, for the algorithms of its family.
    One(DecodingKey, Vec<Algorithm>),
    /// A JWK set: a token names its key by `kid` (or the set has one key).
    Jwks(Vec<(Option<String>, DecodingKey, Algorithm)>),
}

/// Keys that could not be read or fetched. Where a library's error is the cause, it is the
/// [`source`](std::error::Error::source).
#[derive(Debug)]
#[non_exhaustive]
pub enum KeyError {
    /// An HMAC secret shorter than 32 bytes.
    SecretTooShort {
        /// Its length.
        bytes: usize,
    },
    /// A PEM key, or a key of a JWK set, that is not a key of its kind.
    Unreadable {
        /// Which key: `RSA key`, `EC key`, `JWK <kid>`, `the JWK set`.
        key: String,
        /// Why.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A key of a JWK set that does not name its algorithm (`alg`), or names one that is not
    /// for signatures.
    Algorithm {
        /// The key (`JWK <kid>`).
        key: String,
        /// The algorithm it names, if any.
        alg: Option<String>,
    },
    /// A JWK set with no keys.
    NoKeys,
    /// The authorization server's metadata could not be used: `problem` says why.
    Metadata {
        /// Where it was read (or, when none could be, the issuer).
        url: String,
        /// What is wrong with it, or why each place failed.
        problem: String,
    },
    /// A JWK set or metadata document could not be fetched.
    Fetch {
        /// Its URL.
        url: String,
        /// Why (an HTTP status, a body too large or not JSON, the connection).
        problem: String,
    },
}

impl std::fmt::Display for KeyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeyError::SecretTooShort { bytes } => {
                write!(f, "an HMAC secret needs at least 32 bytes, got {bytes}")
            }
            KeyError::Unreadable { key, .. } => write!(f, "{key} could not be read"),
            KeyError::Algorithm { key, alg: None } => {
                write!(f, "{key} does not name its algorithm (alg)")
            }
            KeyError::Algorithm {
                key,
                alg: Some(alg),
            } => {
                write!(f, "{key}: algorithm {alg} is not for signatures")
            }
            KeyError::NoKeys => f.write_str("the JWK set has no keys"),
            KeyError::Metadata { url, problem } => {
                write!(f, "the authorization server metadata at {url}: {problem}")
            }
            KeyError::Fetch { url, problem } => write!(f, "{url} could not be fetched: {problem}"),
        }
    }
}

impl std::error::Error for KeyError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            KeyError::Unreadable { source, .. } => Some(&**source),
            _ => None,
        }
    }
}

impl KeyError {
    pub(super) fn unreadable(
        key: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        KeyError::Unreadable {
            key: key.into(),
            source: Box::new(source),
        }
    }
}

impl Keys {
    /// A shared secret (HS256/384/512): for an authorization server you run yourself and tests.
    /// Shorter than 32 bytes is refused.
    pub fn hmac_secret(secret: &[u8]) -> Result<Keys, KeyError> {
        if secret.len() < 32 {
            return Err(KeyError::SecretTooShort {
                bytes: secret.len(),
            });
        }
        let key =
            DecodingKey::from_secret(secret).map_err(|e| KeyError::unreadable("the secret", e))?;
        Ok(Keys(KeySet::One(
            key,
            vec![Algorithm::HS256, Algorithm::HS384, Algorithm::HS512],
        )))
    }

    /// An RSA public key in PEM (RS256/384/512, PS256/384/512).
    pub fn rsa_pem(pem: &[u8]) -> Result<Keys, KeyError> {
        let key = DecodingKey::from_rsa_pem(pem).map_err(|e| KeyError::unreadable("RSA key", e))?;
        Ok(Keys(KeySet::One(
            key,
            vec![
                Algorithm::RS256,
                Algorithm::RS384,
                Algorithm::RS512,
                Algorithm::PS256,
                Algorithm::PS384,
                Algorithm::PS512,
            ],
        )))
    }

    /// An EC public key in PEM (ES256/384).
    pub fn ec_pem(pem: &[u8]) -> Result<Keys, KeyError> {
        let key = DecodingKey::from_ec_pem(pem).map_err(|e| KeyError::unreadable("EC key", e))?;
        Ok(Keys(KeySet::One(
            key,
            vec![Algorithm::ES256, Algorithm::ES384],
        )))
    }

    /// A JWK set, as an authorization server publishes at its `jwks_uri`. Every key must name its
    /// algorithm (`alg`); keys this crate cannot use are refused rather than skipped.
    pub fn jwks(json: &str) -> Result<Keys, KeyError> {
        let set: JwkSet =
            serde_json::from_str(json).map_err(|e| KeyError::unreadable("the JWK set", e))?;
        let mut keys = Vec::with_capacity(set.keys.len());
        for jwk in &set.keys {
            let kid = jwk.common.key_id.clone();
            let name = kid.as_deref().unwrap_or("(no kid)");
            let alg = jwk
                .common
                .key_algorithm
                .ok_or_else(|| KeyError::Algorithm {
                    key: format!("JWK {name}"),
                    alg: None,
                })?;
            let alg: Algorithm = alg.to_string().parse().map_err(|_| KeyError::Algorithm {
                key: format!("JWK {name}"),
                alg: Some(alg.to_string()),
            })?;
            let key = DecodingKey::from_jwk(jwk)
                .map_err(|e| KeyError::unreadable(format!("JWK {name}"), e))?;
            keys.push((kid, key, alg));
        }
        if keys.is_empty() {
            return Err(KeyError::NoKeys);
        }
        Ok(Keys(KeySet::Jwks(keys)))
    }

    /// The key and algorithms a token with this header is checked against.
    pub(super) fn for_token(
        &self,
        header: &jsonwebtoken::Header,
    ) -> Option<(&DecodingKey, Vec<Algorithm>)> {
        match &self.0 {
            KeySet::One(key, algs) => Some((key, algs.clone())),
            KeySet::Jwks(keys) => {
                let found = match &header.kid {
                    Some(kid) => keys.iter().find(|(k, ..)| k.as_deref() == Some(kid)),
                    None if keys.len() == 1 => keys.first(),
                    None => None,
                };
                found.map(|(_, key, alg)| (key, vec![*alg]))
            }
        }
    }
}
