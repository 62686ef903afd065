//! `lore init`: create the store explicitly (never required; the first write creates it too).

use clap::Args;
use lore::ops::store as ops;

use super::common::Session;
use crate::error::CmdResult;
use crate::ui::Ui;

/// Create lore's store in this repository (optional).
///
/// Writes refs/lore/memory with lore.yaml (format, project identity). The first write does the
/// same, so this is never required.
#[derive(Args, Debug)]
pub struct InitArgs {}

pub fn run(ui: &mut Ui, session: &mut Session, _args: &InitArgs) -> CmdResult {
    let out = session.run(ui, ops::Init {})?;
    ui.emit(&out, |s| {
        let verb = if out.created { "Created" } else { "Found" };
        s.push_str(&format!(
            "{verb} lore store in {} ({})\n",
            out.git_dir, out.memory_ref
        ));
        if let Some(p) = &out.project {
            s.push_str(&format!("project: {p}\n"));
        }
    });
    Ok(())
}
