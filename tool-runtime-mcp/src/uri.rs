//! URIs as OAuth's well-known documents need them (RFC 8414 §3, RFC 9728 §3): the well-known
//! name goes between a URI's origin and its path.

/// A URI split into its origin and its path, without a trailing `/`
/// (`https://h/mcp/` → `https://h`, `/mcp`).
pub(crate) fn split(uri: &str) -> (&str, &str) {
    let start = uri.find("://").map_or(0, |i| i + 3);
    match uri[start..].find('/') {
        Some(i) => {
            let (origin, path) = uri.split_at(start + i);
            (origin, path.trim_end_matches('/'))
        }
        None => (uri, ""),
    }
}

/// The well-known document `name` of `uri`: `{origin}/.well-known/{name}{path}`.
pub(crate) fn well_known(uri: &str, name: &str) -> String {
    let (origin, path) = split(uri);
    format!("{origin}/.well-known/{name}{path}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_well_known_name_goes_between_origin_and_path() {
        assert_eq!(
            split("https://as.example/tenant/"),
            ("https://as.example", "/tenant")
        );
        assert_eq!(split("https://as.example"), ("https://as.example", ""));
        assert_eq!(
            well_known("https://hr.example.com/mcp", "oauth-protected-resource"),
            "https://hr.example.com/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            well_known("https://login.example", "oauth-authorization-server"),
            "https://login.example/.well-known/oauth-authorization-server"
        );
    }
}
