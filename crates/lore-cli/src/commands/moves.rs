//! `lore move`: move a memory to another scope.

use clap::Args;
use lore::ops::scope as ops;

use super::common::Session;
use crate::error::CmdResult;
use crate::ui::Ui;

/// Move a memory to another scope (project, personal, a team store).
///
/// The memory is written there with its id, dates and provenance, screened for secrets again
/// under that store's policy, and forgotten here with a tombstone; its history stays in this
/// store's git history. Use --scope to say which store it is in now (default: the project).
#[derive(Args, Debug)]
pub struct MoveArgs {
    /// Id, id prefix, `namespace/key` or key.
    pub memory: String,
    /// The scope it goes to: project, personal or a team store's name.
    #[arg(long, value_name = "SCOPE")]
    pub to: String,
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &MoveArgs) -> CmdResult {
    let out = session.run(
        ui,
        ops::Move {
            memory: args.memory.clone(),
            to: args.to.clone(),
        },
    )?;
    ui.emit(&out, |s| {
        s.push_str(&format!(
            "Moved {} from {} to {} (tombstone left in {})\n",
            out.memory.id, out.from, out.to, out.from
        ));
        if let Some(report) = &out.secrets {
            s.push_str(&format!("  secrets: {}\n", report.describe()));
        }
    });
    Ok(())
}
