//! The rules every HTTP front end of lore follows (the MCP server and the web UI): which
//! browser origins may call it (loopback ones, plus any given), and the token check, compared
//! in constant time.

use axum::http::{HeaderMap, header};
use subtle::ConstantTimeEq;

/// The origins a loopback server accepts browser requests from (any port), then `extra`.
pub fn allowed_origins(extra: &[String]) -> Vec<String> {
    let mut origins: Vec<String> = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    origins.extend(extra.iter().cloned());
    origins
}

/// `scheme://host[:port]`, lower-cased, with the port the scheme implies when none is given.
fn origin_parts(origin: &str) -> Option<(String, String, Option<u16>)> {
    let (scheme, rest) = origin.trim().split_once("://")?;
    if rest.is_empty() || rest.contains(['/', '?', '#', '@']) {
        return None;
    }
    let (host, port) = match rest.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(':') && (h.starts_with('[') == h.ends_with(']')) => {
            if p == "*" {
                (h, None)
            } else {
                (h, Some(p.parse::<u16>().ok()?))
            }
        }
        _ => (rest, None),
    };
    let scheme = scheme.to_ascii_lowercase();
    let port = port.or(match scheme.as_str() {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    });
    Some((scheme, host.to_ascii_lowercase(), port))
}

/// Whether a request's `Origin` matches one of `allowed` (`scheme://host:port`, or `:*` for
/// any port). `null` and malformed origins never match.
pub fn origin_allowed(origin: &str, allowed: &[String]) -> bool {
    let Some((scheme, host, port)) = origin_parts(origin) else {
        return false;
    };
    if origin.trim().ends_with(":*") {
        return false;
    }
    allowed.iter().any(|pattern| {
        let any_port = pattern.trim().ends_with(":*");
        match origin_parts(pattern) {
            Some((s, h, p)) => s == scheme && h == host && (any_port || p == port),
            None => false,
        }
    })
}

/// Compares in constant time, so timing does not reveal the token (only its length).
pub fn token_matches(given: &str, token: &str) -> bool {
    given.as_bytes().ct_eq(token.as_bytes()).into()
}

/// The credentials of an `Authorization` value with the Bearer scheme, whose name is
/// case-insensitive (RFC 9110 §11.1): `Bearer t`, `bearer t`, `BEARER  t`.
pub fn bearer_credentials(value: &str) -> Option<&str> {
    let (scheme, rest) = value.trim_start().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
}

/// Whether the request carries `Authorization: Bearer TOKEN` with this token.
pub fn bearer_matches(headers: &HeaderMap, token: &str) -> bool {
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer_credentials)
        .unwrap_or("");
    token_matches(given, token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bearer_scheme_is_case_insensitive() {
        for given in ["Bearer t0k", "bearer t0k", "BEARER  t0k"] {
            assert_eq!(bearer_credentials(given), Some("t0k"), "{given}");
        }
        assert_eq!(bearer_credentials("Basic t0k"), None);
        assert_eq!(bearer_credentials("Bearer"), None);
    }

    #[test]
    fn loopback_origins_match_on_any_port_and_nothing_else_does() {
        let allowed = allowed_origins(&["https://app.example.com:8443".into()]);
        for ok in [
            "http://127.0.0.1:4000",
            "http://localhost:1",
            "http://[::1]:9",
            "HTTP://LOCALHOST:80",
            "https://app.example.com:8443",
        ] {
            assert!(origin_allowed(ok, &allowed), "{ok}");
        }
        for refused in [
            "http://evil.example",
            "http://127.0.0.1.evil.example:80",
            "https://127.0.0.1:4000",
            "https://app.example.com",
            "null",
            "",
            "http://localhost:*",
            "http://user@localhost:80",
        ] {
            assert!(!origin_allowed(refused, &allowed), "{refused}");
        }
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(token_matches("abc", "abc"));
        assert!(!token_matches("abd", "abc"));
        assert!(!token_matches("ab", "abc"));
    }
}
