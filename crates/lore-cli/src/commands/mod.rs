//! One module per command; `run` dispatches and shows index notices afterwards.

pub mod bench;
pub mod common;
pub mod context;
pub mod ctx;
pub mod embedder;
pub mod eval;
pub mod export;
pub mod forget;
pub mod history;
pub mod hook;
pub mod import;
pub mod init;
pub mod list;
pub mod mcp;
mod mcp_http;
pub mod namespace;
pub mod recall;
pub mod reindex;
pub mod remember;
pub mod review;
pub mod scan;
pub mod setup;
pub mod show;
pub mod status;
pub mod supersede;
pub mod update;
pub mod verify;

use crate::cli::{Cli, Command};
use crate::error::CmdResult;
use crate::location;
use crate::ui::Ui;

/// Runs the parsed command line.
pub fn run(ui: &mut Ui, cli: Cli) -> CmdResult {
    if let Command::Bench(args) = &cli.command {
        return bench::run(ui, &cli.global, args);
    }
    if let Command::Embedder(args) = &cli.command {
        return embedder::run(ui, &cli.global, args);
    }
    if let Command::Hook(args) = &cli.command {
        hook::run(&cli.global, args);
        return Ok(());
    }
    if let Command::Mcp(args) = &cli.command {
        return mcp::run(&cli.global, args);
    }
    if let Command::Setup(args) = &cli.command {
        return setup::run(ui, &cli.global, args);
    }
    if let Command::Eval(args) = &cli.command {
        return eval::run(ui, &cli.global, args);
    }
    let mut lore = location::open(&cli.global)?;
    let ctx = common::write_context(&cli.global);
    let result = match cli.command {
        Command::Init(args) => init::run(ui, &mut lore, &args),
        Command::Remember(args) => remember::run(ui, &mut lore, &ctx, &args),
        Command::Show(args) => show::run(ui, &mut lore, &args),
        Command::List(args) => list::run(ui, &mut lore, &args),
        Command::History(args) => history::run(ui, &mut lore, &args),
        Command::Update(args) => update::run(ui, &mut lore, &ctx, &args),
        Command::Supersede(args) => supersede::run(ui, &mut lore, &ctx, &args),
        Command::Forget(args) => forget::run(ui, &mut lore, &ctx, &args),
        Command::Recall(args) => recall::run(ui, &mut lore, &args),
        Command::Context(args) => context::run(ui, &mut lore, &args),
        Command::Ctx(args) => ctx::run(ui, &cli.global, &mut lore, &ctx, &args),
        Command::Verify(args) => verify::run(ui, &mut lore, &args),
        Command::Reindex(args) => reindex::run(ui, &mut lore, &args),
        Command::Status(args) => status::run(ui, &mut lore, &args),
        Command::Namespace(args) => namespace::run(ui, &mut lore, &ctx, &args),
        Command::Import(args) => import::run(ui, &mut lore, &ctx, &args),
        Command::Export(args) => export::run(ui, &mut lore, &args),
        Command::Scan(args) => scan::run(ui, &mut lore, &args),
        Command::Review(args) => review::run(ui, &mut lore, &ctx, &args),
        Command::Bench(_)
        | Command::Embedder(_)
        | Command::Eval(_)
        | Command::Hook(_)
        | Command::Setup(_)
        | Command::Mcp(_) => Ok(()),
    };
    common::show_notices(ui, &mut lore);
    result
}
