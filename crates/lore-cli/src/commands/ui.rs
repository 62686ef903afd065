//! `lore ui`: serve the local web UI (the server itself is in `crate::webui`).

use clap::Args;

use super::common;
use super::mcp::{loopback, parse_addr};
use crate::error::{CmdResult, CommandError};
use crate::global::GlobalArgs;
use crate::location;
use crate::webui;

/// Serve a local web UI to look at and steer memory, context branches, reasoning trees, the
/// review queue and sync; prints its address (with the token) and opens the browser.
///
/// It binds loopback unless told otherwise; every request carries the token (the printed
/// address sets it as a cookie), and every change is a form POST that must come from the UI's
/// own origin (or --allow-origin) with the token.
#[derive(Args, Debug)]
pub struct UiArgs {
    /// Listen on ADDR: IP:PORT, localhost:PORT, or a bare PORT (loopback). Port 0 picks a free
    /// one.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8767")]
    pub addr: String,
    /// Do not open the browser.
    #[arg(long)]
    pub no_open: bool,
    /// The token (default: a random one per run).
    #[arg(
        long,
        env = "LORE_UI_TOKEN",
        value_name = "TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,
    /// Also accept form posts from this origin (e.g. https://proxy.example.com:443).
    #[arg(long, value_name = "ORIGIN")]
    pub allow_origin: Vec<String>,
}

pub fn run(global: &GlobalArgs, args: &UiArgs) -> CmdResult {
    let addr = parse_addr(&args.addr).ok_or_else(|| {
        CommandError::usage(format!("--addr {}: not an address", args.addr))
            .hint("give IP:PORT (127.0.0.1:8767), localhost:PORT or a port")
    })?;
    let token = args.token.clone().filter(|t| !t.is_empty());
    if !loopback(&addr) && token.is_none() {
        return Err(CommandError::usage(format!(
            "--addr {addr} is reachable beyond this machine; give the token yourself"
        ))
        .hint("pass --token TOKEN or set LORE_UI_TOKEN"));
    }
    let mut lore = location::open(global)?;
    // A page waits on its reads: upkeep they find due runs apart, started after the page.
    lore.defer_upkeep();
    common::say_which_store(&mut crate::ui::Ui::new(false), global, &lore);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CommandError::usage(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(webui::serve(
        lore,
        common::write_context(global),
        webui::Options {
            addr,
            token,
            extra_origins: args.allow_origin.clone(),
            open_browser: !args.no_open,
            upkeep: Some(crate::upkeep_start::Starter::new(global)),
        },
    ))
}
