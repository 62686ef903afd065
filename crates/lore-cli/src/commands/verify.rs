//! `lore verify`: check citations against the current files and mark stale memories.

use clap::Args;
use lore::ops::store as ops;

use super::common::{self, Session};
use crate::error::CmdResult;
use crate::ui::Ui;

/// Check every memory's citations against the current files (work tree, else HEAD). A memory
/// whose cited lines are gone or changed is marked stale; `recall` and `context` show it.
#[derive(Args, Debug)]
pub struct VerifyArgs {}

pub fn run(ui: &mut Ui, session: &mut Session, _args: &VerifyArgs) -> CmdResult {
    let report = session.run(ui, ops::Verify {})?;
    ui.emit(&report, |s| {
        s.push_str(&format!(
            "checked {} with citations: {} stale",
            common::count(report.checked, "memory", "memories"),
            report.stale.len()
        ));
        if report.unpinned > 0 {
            s.push_str(&format!(
                " ({} without a recorded blob skipped)",
                common::count(report.unpinned, "citation", "citations")
            ));
        }
        s.push('\n');
        for m in &report.stale {
            s.push_str(&format!("  {}  {}\n", m.id, m.summary));
            for r in &m.reasons {
                s.push_str(&format!("      {r}\n"));
            }
        }
    });
    Ok(())
}
