//! Command-line grammar: global options and the list of subcommands.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::commands;

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

/// Options every command takes.
#[derive(Args, Debug, Clone)]
pub struct GlobalArgs {
    /// Use the repository at PATH instead of the one around the current directory.
    #[arg(long, global = true, value_name = "PATH", conflicts_with = "personal")]
    pub repo: Option<PathBuf>,
    /// Use the personal store (under the XDG data directory) even inside a repository.
    #[arg(long, global = true)]
    pub personal: bool,
    /// Print one JSON document instead of text (errors too, with their exit code).
    #[arg(long, global = true)]
    pub json: bool,
    /// The agent writing (recorded in memories and commit trailers).
    #[arg(long, global = true, env = "LORE_AGENT", value_name = "NAME")]
    pub agent: Option<String>,
    /// The agent session writing (recorded in memories and commit trailers).
    #[arg(long, global = true, env = "LORE_SESSION", value_name = "ID")]
    pub session: Option<String>,
    /// Embedder for semantic recall: none (lexical only), static (built in) or minilm (the
    /// transformer; needs a build with --features minilm and a model directory).
    #[arg(
        long,
        global = true,
        env = "LORE_EMBEDDER",
        value_name = "TIER",
        default_value = "static"
    )]
    pub embedder: String,
    /// What a write does with secrets it finds: block, redact or warn (default: `git config
    /// lore.secrets`, else redact). `<private>…</private>` spans are always removed.
    #[arg(long, global = true, env = "LORE_SECRETS", value_name = "POLICY")]
    pub secrets: Option<String>,
    /// Where the minilm model is (a directory with config.json, tokenizer.json and
    /// model.safetensors, or a Hugging Face cache); default: the Hugging Face cache.
    #[arg(long, global = true, env = "LORE_MINILM_DIR", value_name = "DIR")]
    pub model_dir: Option<PathBuf>,
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
    Recall(commands::recall::RecallArgs),
    Context(commands::context::ContextArgs),
    Ctx(commands::ctx::CtxArgs),
    Verify(commands::verify::VerifyArgs),
    Reindex(commands::reindex::ReindexArgs),
    Status(commands::status::StatusArgs),
    Namespace(commands::namespace::NamespaceArgs),
    Import(commands::import::ImportArgs),
    Export(commands::export::ExportArgs),
    Bench(commands::bench::BenchArgs),
    Embedder(commands::embedder::EmbedderArgs),
    Eval(commands::eval::EvalArgs),
    Scan(commands::scan::ScanArgs),
    Review(commands::review::ReviewArgs),
    Hook(commands::hook::HookArgs),
    Setup(commands::setup::SetupArgs),
    Mcp(commands::mcp::McpArgs),
}
