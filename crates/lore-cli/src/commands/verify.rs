//! `lore verify`: check citations against the current files and mark stale memories.

use clap::Args;
use lore::Lore;

use crate::error::CmdResult;
use crate::ui::Ui;

/// Check every memory's citations against the current files (work tree, else HEAD). A memory
/// whose cited lines are gone or changed is marked stale; `recall` and `context` show it.
#[derive(Args, Debug)]
pub struct VerifyArgs {}

pub fn run(ui: &mut Ui, lore: &mut Lore, _args: &VerifyArgs) -> CmdResult {
    let report = lore.verify()?;
    ui.emit(&report, |s| {
        s.push_str(&format!(
            "checked {} memories with citations: {} stale",
            report.checked,
            report.stale.len()
        ));
        if report.unpinned > 0 {
            s.push_str(&format!(
                " ({} citation(s) without a recorded blob skipped)",
                report.unpinned
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
