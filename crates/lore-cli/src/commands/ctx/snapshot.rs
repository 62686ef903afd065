//! `lore ctx snapshot` (get_snapshot): a branch's context document at one version.

use clap::Args;
use lore::ops::ctx as ops;

use super::BranchOpt;
use crate::commands::common::Session;
use crate::error::CmdResult;
use crate::ui::Ui;

#[derive(Args, Debug)]
pub struct SnapshotArgs {
    /// A version number (from `lore ctx history`) or a commit id.
    pub version: String,
    #[command(flatten)]
    pub branch: BranchOpt,
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &SnapshotArgs) -> CmdResult {
    let out = session.run(
        ui,
        ops::CtxSnapshot {
            version: ops::Version::Text(args.version.clone()),
            branch: args.branch.branch.clone(),
        },
    )?;
    ui.emit(&out, |s| {
        s.push_str(&lore::agent_text::neutralize(&out.content))
    });
    Ok(())
}
