//! `lore mcp --http`: the MCP server on streamable HTTP at `/mcp` (axum + rmcp's tower
//! service): Host and Origin checks, and a bearer token when one is set.

use std::net::SocketAddr;

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::LoreServer;
use crate::error::{CmdResult, CommandError};

/// Compares without stopping at the first difference, so timing does not reveal the token.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The credentials of an `Authorization` value with the Bearer scheme, whose name is
/// case-insensitive (RFC 9110 §11.1): `Bearer t`, `bearer t`, `BEARER  t`.
fn bearer_credentials(value: &str) -> Option<&str> {
    let (scheme, rest) = value.trim_start().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
}

async fn require_token(token: String, request: Request, next: Next) -> Response {
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer_credentials)
        .unwrap_or("");
    if same(given.as_bytes(), token.as_bytes()) {
        return next.run(request).await;
    }
    let mut response = (
        StatusCode::UNAUTHORIZED,
        "lore mcp: missing or wrong bearer token\n",
    )
        .into_response();
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"lore\""),
    );
    response
}

pub async fn serve(
    server: LoreServer,
    addr: SocketAddr,
    token: Option<String>,
    extra_origins: &[String],
) -> CmdResult {
    let cancel = CancellationToken::new();
    let mut origins: Vec<String> = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    origins.extend(extra_origins.iter().cloned());
    let mut config = StreamableHttpServerConfig::default()
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_cancellation_token(cancel.clone());
    if !addr.ip().is_loopback() {
        // Clients reach it by whatever name or address they know it by; the token guards it.
        config = config.disable_allowed_hosts();
    }
    let service: StreamableHttpService<LoreServer, LocalSessionManager> =
        StreamableHttpService::new(move || Ok(server.clone()), Default::default(), config);
    let mut router = axum::Router::new().nest_service("/mcp", service);
    if let Some(token) = token {
        router = router.layer(middleware::from_fn(move |req: Request, next: Next| {
            require_token(token.clone(), req, next)
        }));
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| CommandError::usage(format!("cannot listen on {addr}: {e}")))?;
    let local = listener
        .local_addr()
        .map_err(|e| CommandError::usage(format!("cannot read the bound address: {e}")))?;
    eprintln!("lore mcp: listening on http://{local}/mcp");
    let shutdown = cancel.clone();
    axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            let _ = tokio::signal::ctrl_c().await;
            shutdown.cancel();
        })
        .await
        .map_err(|e| CommandError::usage(format!("HTTP server: {e}")))
}

#[cfg(test)]
mod tests {
    use super::bearer_credentials;

    #[test]
    fn the_bearer_scheme_is_case_insensitive() {
        for given in ["Bearer t0k", "bearer t0k", "BEARER  t0k"] {
            assert_eq!(bearer_credentials(given), Some("t0k"), "{given}");
        }
        assert_eq!(bearer_credentials("Basic t0k"), None);
        assert_eq!(bearer_credentials("Bearer"), None);
    }
}
