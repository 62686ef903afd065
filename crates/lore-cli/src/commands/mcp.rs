//! `lore mcp`: lore as an MCP server (the server itself is in `crate::mcp`), over stdio or
//! streamable HTTP.

use std::net::SocketAddr;

use clap::Args;

use super::common;
use crate::error::{CmdResult, CommandError};
use crate::global::GlobalArgs;
use crate::location;
use crate::mcp::{LoreServer, http, stdio};

/// Serve lore to MCP clients (agents): over stdio, or streamable HTTP with --http.
///
/// Over HTTP the server binds loopback unless told otherwise, checks the Origin of browser
/// requests (loopback origins and --allow-origin), and requires `Authorization: Bearer TOKEN`
/// whenever it is bound beyond loopback (--token or LORE_MCP_TOKEN; optional on loopback).
/// Protocol revisions: 2026-07-28 (stateless, server/discover) and the earlier ones with the
/// initialize handshake.
#[derive(Args, Debug)]
pub struct McpArgs {
    /// Serve streamable HTTP at /mcp on ADDR: IP:PORT, localhost:PORT, or a bare PORT (loopback).
    /// Without a value: 127.0.0.1:8765. Port 0 picks a free one.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:8765")]
    pub http: Option<String>,
    /// The bearer token HTTP clients must send (required beyond loopback).
    #[arg(
        long,
        env = "LORE_MCP_TOKEN",
        value_name = "TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,
    /// Also accept browser requests from this origin (e.g. https://app.example.com:443).
    #[arg(long, value_name = "ORIGIN")]
    pub allow_origin: Vec<String>,
}

/// Whether an address is loopback only.
pub(crate) fn loopback(addr: &SocketAddr) -> bool {
    addr.ip().is_loopback()
}

/// `IP:PORT`, `localhost:PORT` or a bare `PORT` (on loopback).
pub(crate) fn parse_addr(given: &str) -> Option<SocketAddr> {
    let given = given.trim();
    if let Ok(port) = given.parse::<u16>() {
        return Some(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    if let Some(port) = given.strip_prefix("localhost:") {
        return port
            .parse::<u16>()
            .ok()
            .map(|p| SocketAddr::from(([127, 0, 0, 1], p)));
    }
    given.parse().ok()
}

pub fn run(global: &GlobalArgs, args: &McpArgs) -> CmdResult {
    let mut lore = location::open(global)?;
    // A client waits on each call: upkeep a read finds due runs apart, started after the call.
    lore.defer_upkeep();
    common::say_which_store(&mut crate::ui::Ui::new(false), global, &lore);
    let server = LoreServer::new(lore, common::write_context(global))
        .with_upkeep(crate::upkeep_start::Starter::new(global));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CommandError::usage(format!("cannot start the async runtime: {e}")))?;
    match &args.http {
        None => runtime.block_on(stdio::serve(
            server,
            tokio::io::stdin(),
            tokio::io::stdout(),
        )),
        Some(addr) => {
            let addr = parse_addr(addr).ok_or_else(|| {
                CommandError::usage(format!("--http {addr}: not an address"))
                    .hint("give IP:PORT (127.0.0.1:8765), localhost:PORT or a port")
            })?;
            let token = args.token.clone().filter(|t| !t.is_empty());
            if !loopback(&addr) && token.is_none() {
                return Err(CommandError::usage(format!(
                    "--http {addr} is reachable beyond this machine; a bearer token is required"
                ))
                .hint("pass --token TOKEN or set LORE_MCP_TOKEN (clients send Authorization: Bearer TOKEN)"));
            }
            runtime.block_on(http::serve(server, addr, token, &args.allow_origin))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_default_to_loopback() {
        assert_eq!(
            parse_addr("8765"),
            Some(SocketAddr::from(([127, 0, 0, 1], 8765)))
        );
        assert_eq!(
            parse_addr("localhost:9"),
            Some(SocketAddr::from(([127, 0, 0, 1], 9)))
        );
        assert!(loopback(&parse_addr("[::1]:80").unwrap()));
        assert!(!loopback(&parse_addr("0.0.0.0:80").unwrap()));
        assert_eq!(parse_addr("example.com:80"), None);
        assert_eq!(parse_addr("localhost:x"), None);
    }
}
