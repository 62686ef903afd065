//! The `lore` command: parses arguments, finds the store, runs one command, renders the result.

mod cli;
mod commands;
mod error;
mod location;
mod ui;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let mut ui = ui::Ui::new(cli.global.json);
    match commands::run(&mut ui, cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            ui.error(&err);
            ExitCode::from(err.exit_code())
        }
    }
}
