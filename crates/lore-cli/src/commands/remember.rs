//! `lore remember`: write a new memory.

use clap::Args;
use lore::{Lore, NewMemory, Status, WriteContext};

use super::common;
use crate::error::CmdResult;
use crate::ui::Ui;

/// Remember something: a decision, a lesson, a blocker…
///
/// One commit on refs/lore/memory.
///
/// The summary is one line (at most 100 characters). Give `-` as the summary to read a whole
/// message from standard input: its first line is the summary, the rest the body.
#[derive(Args, Debug)]
pub struct RememberArgs {
    #[command(flatten)]
    pub message: common::MessageArgs,
    /// Namespace (decisions, learnings, blockers, progress, patterns, research, reviews,
    /// retrospective, inception, elicitation, or a registered one).
    #[arg(long, short = 'n', default_value = "learnings")]
    pub namespace: String,
    /// Topic key: the memory gets a stable path (`<namespace>/<key>.md`); one memory per key.
    #[arg(long, short = 'k')]
    pub key: Option<String>,
    /// Tags (repeat, or separate with commas).
    #[arg(long = "tag", short = 't', value_name = "TAG")]
    pub tags: Vec<String>,
    /// Cite a file of the work tree, optionally with lines: `src/a.rs:10-20` (repeatable).
    #[arg(long = "cite", value_name = "PATH[:LINES]")]
    pub cites: Vec<String>,
    /// Id of a related memory (repeatable).
    #[arg(long = "relates-to", value_name = "ID")]
    pub relates_to: Vec<String>,
    /// How sure you are, between 0 and 1.
    #[arg(long)]
    pub confidence: Option<f64>,
    /// Initial status (default active).
    #[arg(long)]
    pub status: Option<String>,
}

pub fn run(ui: &mut Ui, lore: &mut Lore, ctx: &WriteContext, args: &RememberArgs) -> CmdResult {
    let (summary, body) = args.message.read()?;
    let status = args
        .status
        .as_deref()
        .map(str::parse::<Status>)
        .transpose()?;
    let new = NewMemory {
        namespace: args.namespace.clone(),
        key: args.key.clone(),
        summary,
        body,
        tags: common::split_tags(&args.tags),
        status,
        confidence: args.confidence,
        citations: common::parse_citations(lore, &args.cites)?,
        relates_to: args.relates_to.clone(),
    };
    let written = lore.remember(&new, ctx)?;
    ui.emit(&written, |s| {
        s.push_str(&format!(
            "Remembered {} in {} ({}) at {}\n",
            written.memory.id,
            written.memory.namespace,
            written.path,
            &written.commit[..written.commit.len().min(12)]
        ));
    });
    Ok(())
}
