//! The `lore` command: parses arguments, finds the store, runs one command, renders the result.

mod cli;
mod commands;
mod error;
mod global;
mod http_guard;
mod location;
mod mcp;
mod progress_bar;
mod ui;
mod upkeep_start;
mod webui;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // Past a file-size limit (`ulimit -f`) the kernel would kill lore with SIGXFSZ mid-write;
    // with the signal handled, the write fails with "File too large" and lore says so. Should
    // registering fail, the default stays, as it was.
    let _ = signal_hook::flag::register(
        signal_hook::consts::SIGXFSZ,
        std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)),
    );
    let cli = cli::Cli::parse();
    let mut ui = ui::Ui::new(cli.global.json);
    match cli::run(&mut ui, cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            ui.error(&err);
            ExitCode::from(err.exit_code())
        }
    }
}
