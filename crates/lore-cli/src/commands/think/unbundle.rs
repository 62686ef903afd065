//! `lore think unbundle`: reads reasoning sessions from a git bundle of this project.

use std::path::PathBuf;

use clap::Args;
use lore::ops::thoughts as ops;

use super::absolute_path;
use crate::commands::common::Session;
use crate::error::CmdResult;
use crate::ui::Ui;

#[derive(Args, Debug)]
pub struct UnbundleArgs {
    /// The bundle file.
    pub file: PathBuf,
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &UnbundleArgs) -> CmdResult {
    let out = session.run(
        ui,
        ops::ThinkUnbundle {
            file: absolute_path(&args.file),
        },
    )?;
    ui.emit(&out, |s| {
        s.push_str(&format!(
            "Imported {}: {} refs updated\n",
            out.sessions.join(", "),
            out.updated.len()
        ));
        for lesson in &out.lessons {
            s.push_str(&format!(
                "  lesson {} ({}): {}{}\n",
                lesson.path,
                lesson.session,
                lesson.action,
                lesson
                    .detail
                    .as_deref()
                    .map(|d| format!(" — {d}"))
                    .unwrap_or_default()
            ));
        }
    });
    Ok(())
}
