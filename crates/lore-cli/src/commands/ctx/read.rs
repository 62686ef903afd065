//! `lore ctx read` (read_context): prints a branch's context document, its roadmap.

use lore::ops::ctx as ops;

use super::BranchOpt;
use crate::commands::common::Session;
use crate::error::CmdResult;
use crate::ui::Ui;

pub fn run(ui: &mut Ui, session: &mut Session, args: &BranchOpt) -> CmdResult {
    let out = session.run(
        ui,
        ops::CtxRead {
            branch: args.branch.clone(),
        },
    )?;
    ui.emit(&out, |s| {
        s.push_str(&lore::agent_text::neutralize(&out.content))
    });
    Ok(())
}
