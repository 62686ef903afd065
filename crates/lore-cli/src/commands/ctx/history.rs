//! `lore ctx history` (get_context_history): every version of a branch's context document.

use lore::ops::ctx as ops;

use super::BranchOpt;
use crate::commands::common::{self, Session};
use crate::error::CmdResult;
use crate::ui::Ui;

pub fn run(ui: &mut Ui, session: &mut Session, args: &BranchOpt) -> CmdResult {
    let out = session.run(
        ui,
        ops::CtxHistory {
            branch: args.branch.clone(),
        },
    )?;
    ui.emit(&out, |s| {
        for v in &out.versions {
            s.push_str(&format!(
                "{:>3}  {}  {}  {}\n",
                v.version,
                common::short(&v.commit),
                v.time,
                v.message
            ));
        }
    });
    Ok(())
}
