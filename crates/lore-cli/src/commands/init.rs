//! `lore init`: create the store explicitly (never required; the first write creates it too).

use clap::Args;
use lore::Lore;
use serde::Serialize;

use crate::error::CmdResult;
use crate::ui::Ui;

/// Create lore's store in this repository (optional).
///
/// Writes refs/lore/memory with lore.yaml (format, project identity). The first write does the
/// same, so this is never required.
#[derive(Args, Debug)]
pub struct InitArgs {}

#[derive(Serialize)]
struct InitOutput {
    created: bool,
    git_dir: String,
    memory_ref: &'static str,
    project: Option<String>,
}

pub fn run(ui: &mut Ui, lore: &mut Lore, _args: &InitArgs) -> CmdResult {
    let created = lore.store().init()?;
    let tip = lore.store().tip()?;
    let out = InitOutput {
        created,
        git_dir: lore.store().common_dir().display().to_string(),
        memory_ref: lore::store::MEMORY_REF,
        project: lore.store().meta(tip)?.and_then(|m| m.project),
    };
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
