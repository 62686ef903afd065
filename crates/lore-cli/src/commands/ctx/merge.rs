//! `lore ctx merge`: shows the merged branch's context, then merges it into the current (or
//! named) branch.

use clap::Args;
use lore::ops::ctx as ops;

use super::report_secrets;
use crate::commands::common::{self, Session, read_text};
use crate::error::CmdResult;
use crate::ui::Ui;

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The branch to merge.
    pub branch: String,
    /// Merge into this branch instead of the current one.
    #[arg(long)]
    pub into: Option<String>,
    /// Settle conflicting roadmap/metadata edits: ours (current branch) or theirs.
    #[arg(long, value_name = "SIDE", conflicts_with = "roadmap")]
    pub prefer: Option<String>,
    /// The merged roadmap from FILE (or - for stdin), when the roadmaps conflict.
    #[arg(long, value_name = "FILE")]
    pub roadmap: Option<String>,
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &MergeArgs) -> CmdResult {
    if !ui.json() {
        // GCC's MERGE shows the merged branch's context first, whatever the merge does.
        let shown = session.run(
            ui,
            ops::CtxShow {
                branch: Some(args.branch.clone()),
                ..ops::CtxShow::default()
            },
        )?;
        ui.text(&format!("{}\n", shown.text));
    }
    let out = session.run(
        ui,
        ops::CtxMerge {
            branch: args.branch.clone(),
            into: args.into.clone(),
            prefer: args.prefer.clone(),
            roadmap: args.roadmap.as_deref().map(read_text).transpose()?,
        },
    )?;
    report_secrets(ui, &out.secrets);
    let m = &out.merge;
    ui.emit(&out, |s| match &m.commit {
        Some(c) => {
            s.push_str(&format!(
                "merged {} into {} ({}; {} brought over)\n",
                m.from,
                m.into,
                common::short(c),
                common::count(m.steps, "step", "steps")
            ));
            for r in &m.resolved {
                s.push_str(&format!("resolved: {r}\n"));
            }
            s.push_str(&format!("summary: {}\n", m.summary));
        }
        None => s.push_str(&format!(
            "{} is already merged into {}; nothing to do\n",
            m.from, m.into
        )),
    });
    Ok(())
}
