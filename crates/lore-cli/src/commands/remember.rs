//! `lore remember`: write a new memory.

use clap::Args;
use lore::ops::memory::{self as ops, OnDuplicate};

use super::common::{self, Session};
use crate::error::CmdResult;
use crate::ui::Ui;

/// Remember something: a decision, a lesson, a blocker…
///
/// One commit on refs/lore/memory. A repeat of an existing memory in the namespace (the same
/// text, or a near-duplicate with the same numbers and names) is refused with that memory's id
/// (exit 4), unless --upsert (supersede it) or --force (keep both).
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
    /// If this repeats an existing memory of the namespace, supersede that one with it.
    #[arg(long, conflicts_with = "force")]
    pub upsert: bool,
    /// Write even if it repeats an existing memory (skips the novelty check).
    #[arg(long)]
    pub force: bool,
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &RememberArgs) -> CmdResult {
    let (summary, body) = args.message.read()?;
    let request = ops::Remember {
        namespace: Some(args.namespace.clone()),
        key: args.key.clone(),
        summary,
        body,
        tags: args.tags.clone(),
        status: args.status.clone(),
        confidence: args.confidence,
        cites: common::cite_specs(&session.lore, &args.cites)?,
        relates_to: args.relates_to.clone(),
        on_duplicate: if args.force {
            OnDuplicate::Force
        } else if args.upsert {
            OnDuplicate::Upsert
        } else {
            OnDuplicate::Check
        },
    };
    let done = session.run(ui, request)?;
    let written = &done.written;
    common::report_secrets(ui, written.secrets.as_ref());
    ui.emit(&done, |s| {
        s.push_str(&format!(
            "Remembered {} in {} ({}) at {}\n",
            written.memory.id,
            written.memory.namespace,
            written.path,
            common::short(&written.commit)
        ));
        if let Some(old) = &done.superseded {
            s.push_str(&format!(
                "It supersedes {} (a near-duplicate).\n",
                old.memory.id
            ));
        }
    });
    Ok(())
}
