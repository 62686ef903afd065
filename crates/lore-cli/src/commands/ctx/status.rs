//! `lore ctx status`: a branch's purpose, counts, summary and the steps not committed yet.

use lore::ops::ctx as ops;

use super::BranchOpt;
use crate::commands::common::{self, Session};
use crate::error::CmdResult;
use crate::ui::Ui;

pub fn run(ui: &mut Ui, session: &mut Session, args: &BranchOpt) -> CmdResult {
    let status = session.run(
        ui,
        ops::CtxStatus {
            branch: args.branch.clone(),
        },
    )?;
    ui.emit(&status, |s| write_status(s, &status));
    Ok(())
}

/// The text form of a branch's status.
fn write_status(s: &mut String, status: &lore::workspace::Status) {
    s.push_str(&format!(
        "branch {} — {}\ncommits: {}, committed steps: {}, tip {}\n",
        status.branch,
        status.meta.purpose,
        status.meta.commits,
        status.committed_steps,
        common::short(&status.tip)
    ));
    s.push_str(&format!(
        "summary: {}\n",
        if status.meta.summary.is_empty() {
            "(none yet)"
        } else {
            &status.meta.summary
        }
    ));
    if status.uncommitted.is_empty() {
        s.push_str("no uncommitted steps\n");
    } else {
        s.push_str(&format!(
            "{} (`lore ctx commit \"…\"` adds them):\n",
            common::count(
                status.uncommitted.len(),
                "uncommitted step",
                "uncommitted steps"
            )
        ));
        for step in &status.uncommitted {
            s.push_str(&format!("  - {}\n", step.compact()));
        }
    }
}
