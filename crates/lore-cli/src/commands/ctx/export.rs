//! `lore ctx export`: writes the context workspace in the `.GCC/` layout.

use std::path::PathBuf;

use clap::Args;
use lore::ops::ctx as ops;

use crate::commands::common::{self, Session};
use crate::error::CmdResult;
use crate::ui::Ui;

#[derive(Args, Debug)]
pub struct DirArgs {
    /// The directory (e.g. .GCC).
    pub dir: PathBuf,
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &DirArgs) -> CmdResult {
    let report = session.run(
        ui,
        ops::CtxExport {
            dir: args.dir.display().to_string(),
        },
    )?;
    ui.emit(&report, |s| {
        s.push_str(&format!(
            "exported {} ({} committed steps) to {}\n",
            common::count(report.branches.len(), "branch", "branches"),
            report.steps,
            args.dir.display()
        ))
    });
    Ok(())
}
