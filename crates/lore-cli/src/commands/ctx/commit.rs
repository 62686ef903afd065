//! `lore ctx commit`: commits a branch's logged steps with a contribution, an updated summary
//! and, optionally, a new roadmap.

use clap::Args;
use lore::ops::ctx as ops;

use super::{BranchOpt, report_secrets};
use crate::commands::common::{self, Session, read_text};
use crate::error::CmdResult;
use crate::ui::Ui;

#[derive(Args, Debug)]
pub struct CommitArgs {
    /// What this commit contributes.
    pub contribution: String,
    /// The updated progress summary (default: composed from the previous one and the
    /// contribution, at most 600 characters).
    #[arg(long)]
    pub summary: Option<String>,
    /// A new roadmap (main.md) from FILE, or - for stdin.
    #[arg(long, value_name = "FILE")]
    pub roadmap: Option<String>,
    #[command(flatten)]
    pub branch: BranchOpt,
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &CommitArgs) -> CmdResult {
    let out = session.run(
        ui,
        ops::CtxCommit {
            contribution: args.contribution.clone(),
            summary: args.summary.clone(),
            roadmap: args.roadmap.as_deref().map(read_text).transpose()?,
            branch: args.branch.branch.clone(),
        },
    )?;
    report_secrets(ui, &out.secrets);
    let done = &out.outcome;
    ui.emit(&out, |s| {
        s.push_str(&format!(
            "committed {} on {} ({})\nsummary: {}\n",
            common::short(&done.commit),
            done.branch,
            common::count(done.entry.steps, "step", "steps"),
            done.entry.summary
        ))
    });
    Ok(())
}
