//! `lore think bundle`: writes reasoning sessions into a git bundle.

use std::path::PathBuf;

use clap::Args;
use lore::ops::thoughts as ops;

use super::absolute_path;
use crate::commands::common::Session;
use crate::error::CmdResult;
use crate::ui::Ui;

#[derive(Args, Debug)]
pub struct BundleArgs {
    /// The bundle file.
    pub file: PathBuf,
    /// The sessions.
    pub sessions: Vec<String>,
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &BundleArgs) -> CmdResult {
    let out = session.run(
        ui,
        ops::ThinkBundle {
            sessions: args.sessions.clone(),
            file: absolute_path(&args.file),
        },
    )?;
    ui.emit(&out, |s| {
        s.push_str(&format!(
            "Bundled {} ({} refs, {} bytes) into {}\n",
            out.sessions.join(", "),
            out.refs.len(),
            out.bytes,
            out.path
        ));
    });
    Ok(())
}
