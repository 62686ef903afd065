//! `lore mcp --http`: the MCP server on streamable HTTP at `/mcp` (axum + rmcp's tower
//! service): Host and Origin checks (the origins of `crate::http_guard`), and a bearer token
//! when one is set.

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
use crate::http_guard;

async fn require_token(token: String, request: Request, next: Next) -> Response {
    if http_guard::bearer_matches(request.headers(), &token) {
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

/// Closing a session (`DELETE /mcp`) answers 200: the service's 202 reads as a failure to the
/// official SDK, which expects 200 or 204.
async fn session_close_ok(request: Request, next: Next) -> Response {
    let closing = request.method() == axum::http::Method::DELETE;
    let mut response = next.run(request).await;
    if closing && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::OK;
    }
    response
}

pub async fn serve(
    server: LoreServer,
    addr: SocketAddr,
    token: Option<String>,
    extra_origins: &[String],
) -> CmdResult {
    let cancel = CancellationToken::new();
    let origins = http_guard::allowed_origins(extra_origins);
    let mut config = StreamableHttpServerConfig::default()
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_cancellation_token(cancel.clone());
    if !addr.ip().is_loopback() {
        // Clients reach it by whatever name or address they know it by; the token guards it.
        config = config.disable_allowed_hosts();
    }
    let service: StreamableHttpService<LoreServer, LocalSessionManager> =
        StreamableHttpService::new(
            move || Ok(server.for_connection()),
            Default::default(),
            config,
        );
    let mut router = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(middleware::from_fn(session_close_ok));
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
