//! `lore ctx import`: reads a `.GCC/` directory into context branches.

use std::path::PathBuf;

use clap::Args;
use lore::ops::ctx as ops;

use crate::commands::common::{self, Session};
use crate::error::CmdResult;
use crate::ui::Ui;

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The directory (e.g. .GCC).
    pub dir: PathBuf,
    /// Replace branches that exist.
    #[arg(long)]
    pub force: bool,
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &ImportArgs) -> CmdResult {
    let report = session.run(
        ui,
        ops::CtxImport {
            dir: args.dir.display().to_string(),
            force: args.force,
        },
    )?;
    ui.emit(&report, |s| {
        s.push_str(&format!(
            "imported {} ({}): {}\n",
            common::count(report.branches.len(), "branch", "branches"),
            common::count(report.steps, "step", "steps"),
            report.branches.join(", ")
        ))
    });
    Ok(())
}
