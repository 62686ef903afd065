//! Command-line grammar and dispatch: the only module that knows every command. Commands know
//! the global options, the session and the output, never each other.

use clap::{Parser, Subcommand};

use crate::commands::{self, common::Session};
use crate::error::CmdResult;
use crate::global::GlobalArgs;
use crate::ui::Ui;

/// git-native memory for coding agents: what they decided, learned and tried, kept in the
/// repository's own refs (refs/lore/*), travelling with git push and pull.
#[derive(Parser, Debug)]
#[command(name = "lore", version, about, max_term_width = 100)]
#[command(
    after_help = "Exit codes: 0 ok, 1 internal failure, 2 invalid input, 3 not found, 4 conflict."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    Init(commands::init::InitArgs),
    Remember(commands::remember::RememberArgs),
    Show(commands::show::ShowArgs),
    List(commands::list::ListArgs),
    History(commands::history::HistoryArgs),
    Update(commands::update::UpdateArgs),
    Supersede(commands::supersede::SupersedeArgs),
    Forget(commands::forget::ForgetArgs),
    Move(commands::moves::MoveArgs),
    Recall(commands::recall::RecallArgs),
    Context(commands::context::ContextArgs),
    Ctx(commands::ctx::CtxArgs),
    Verify(commands::verify::VerifyArgs),
    Reindex(commands::reindex::ReindexArgs),
    Upkeep(commands::upkeep::UpkeepArgs),
    Doctor(commands::doctor::DoctorArgs),
    Status(commands::status::StatusArgs),
    Namespace(commands::namespace::NamespaceArgs),
    Import(commands::import::ImportArgs),
    Export(commands::export::ExportArgs),
    Bench(commands::bench::BenchArgs),
    Embedder(commands::embedder::EmbedderArgs),
    Eval(commands::eval::EvalArgs),
    Scan(commands::scan::ScanArgs),
    Review(commands::review::ReviewArgs),
    Sync(commands::sync::SyncArgs),
    Scope(commands::scope::ScopeArgs),
    Conflicts(commands::conflicts::ConflictsArgs),
    Resolve(commands::conflicts::ResolveArgs),
    Gc(commands::gc::GcArgs),
    Hook(commands::hook::HookArgs),
    Setup(commands::setup::SetupArgs),
    Mcp(commands::mcp::McpArgs),
    Think(commands::think::ThinkArgs),
    Ui(commands::ui::UiArgs),
}

/// Runs the parsed command line.
pub fn run(ui: &mut Ui, cli: Cli) -> CmdResult {
    let global = &cli.global;
    // Commands that open a store of their own, or none.
    match &cli.command {
        Command::Bench(args) => return commands::bench::run(ui, global, args),
        Command::Embedder(args) => return commands::embedder::run(ui, global, args),
        Command::Hook(args) => {
            commands::hook::run(global, args);
            return Ok(());
        }
        Command::Mcp(args) => return commands::mcp::run(global, args),
        Command::Ui(args) => return commands::ui::run(global, args),
        Command::Setup(args) => return commands::setup::run(ui, global, args),
        Command::Eval(args) => return commands::eval::run(ui, global, args),
        Command::Upkeep(args) => return commands::upkeep::run(ui, global, args),
        _ => {}
    }
    let mut session = Session::open(ui, global)?;
    let s = &mut session;
    let result = match cli.command {
        Command::Init(args) => commands::init::run(ui, s, &args),
        Command::Remember(args) => commands::remember::run(ui, s, &args),
        Command::Show(args) => commands::show::run(ui, s, &args),
        Command::List(args) => commands::list::run(ui, s, &args),
        Command::History(args) => commands::history::run(ui, s, &args),
        Command::Update(args) => commands::update::run(ui, s, &args),
        Command::Supersede(args) => commands::supersede::run(ui, s, &args),
        Command::Forget(args) => commands::forget::run(ui, s, &args),
        Command::Move(args) => commands::moves::run(ui, s, &args),
        Command::Recall(args) => commands::recall::run(ui, s, &args),
        Command::Context(args) => commands::context::run(ui, s, &args),
        Command::Ctx(args) => commands::ctx::run(ui, s, &args),
        Command::Verify(args) => commands::verify::run(ui, s, &args),
        Command::Reindex(args) => commands::reindex::run(ui, s, &args),
        Command::Doctor(args) => commands::doctor::run(ui, s, &args),
        Command::Status(args) => commands::status::run(ui, s, &args),
        Command::Namespace(args) => commands::namespace::run(ui, s, &args),
        Command::Import(args) => commands::import::run(ui, s, &args),
        Command::Export(args) => commands::export::run(ui, s, &args),
        Command::Scan(args) => commands::scan::run(ui, s, &args),
        Command::Review(args) => commands::review::run(ui, s, &args),
        Command::Sync(args) => commands::sync::run(ui, s, &args),
        Command::Scope(args) => commands::scope::run(ui, s, &args),
        Command::Conflicts(args) => commands::conflicts::run(ui, s, &args),
        Command::Resolve(args) => commands::conflicts::run_resolve(ui, s, &args),
        Command::Gc(args) => commands::gc::run(ui, s, &args),
        Command::Think(args) => commands::think::run(ui, s, &args),
        Command::Bench(_)
        | Command::Embedder(_)
        | Command::Eval(_)
        | Command::Hook(_)
        | Command::Setup(_)
        | Command::Mcp(_)
        | Command::Ui(_)
        | Command::Upkeep(_) => Ok(()),
    };
    crate::upkeep_start::start_if_wanted(&mut session.lore, global);
    result
}
