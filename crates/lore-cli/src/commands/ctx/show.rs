//! `lore ctx show`: the CONTEXT views — the roadmap and branches, one branch's commits, one
//! commit, the step log, or metadata.

use clap::Args;
use lore::ops::ctx as ops;

use crate::commands::common::Session;
use crate::error::CmdResult;
use crate::ui::Ui;

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// One branch's commits (a window of --window, newest first).
    #[arg(long, short)]
    pub branch: Option<String>,
    /// One commit in full.
    #[arg(long, value_name = "COMMIT", conflicts_with_all = ["log", "metadata"])]
    pub commit: Option<String>,
    /// The step log (a window of --window steps, newest first; default 20).
    #[arg(long, conflicts_with = "metadata")]
    pub log: bool,
    /// Metadata: one segment, or all without a name.
    #[arg(long, value_name = "SEGMENT", num_args = 0..=1, default_missing_value = "")]
    pub metadata: Option<String>,
    /// Window size: commits with --branch (default 1), steps with --log (default 20).
    #[arg(long, short = 'k', value_name = "K")]
    pub window: Option<usize>,
    /// Skip this many newer entries (scrolling).
    #[arg(long, default_value_t = 0)]
    pub offset: usize,
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &ShowArgs) -> CmdResult {
    let out = session.run(
        ui,
        ops::CtxShow {
            branch: args.branch.clone(),
            commit: args.commit.clone(),
            log: args.log,
            metadata: args.metadata.clone(),
            window: args.window,
            offset: args.offset,
        },
    )?;
    ui.emit(&out, |s| s.push_str(&out.text));
    Ok(())
}
