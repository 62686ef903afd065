//! `lore doctor`: check refs/lore/memory and, when it is lost or damaged, put it back.

use clap::Args;
use lore::RefState;
use lore::ops::store as ops;

use super::common::{self, Session};
use crate::error::CmdResult;
use crate::ui::Ui;

/// Check refs/lore/memory; when it is missing or damaged, list what still knows the memories
/// (the commit the index was last caught up to, each remote's copy as last fetched).
#[derive(Args, Debug)]
pub struct DoctorArgs {
    /// Put the ref back at the first of them (the index's, else the newest remote copy).
    #[arg(long)]
    pub restore: bool,
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &DoctorArgs) -> CmdResult {
    let out = session.run(
        ui,
        ops::Doctor {
            restore: args.restore,
        },
    )?;
    ui.emit(&out, |s| {
        let check = &out.check;
        match check.state {
            RefState::Sound => s.push_str("refs/lore/memory is sound.\n"),
            RefState::Missing => s.push_str("refs/lore/memory is missing.\n"),
            RefState::Damaged => s.push_str(&format!(
                "refs/lore/memory is damaged: {}\n",
                check.problem.as_deref().unwrap_or("unreadable")
            )),
        }
        for p in &check.restore_points {
            s.push_str(&format!(
                "  {} ({}, {}): {}\n",
                common::short(&p.commit),
                p.source,
                p.when,
                common::count(p.memories, "memory", "memories")
            ));
        }
        match (&out.restored, &check.state) {
            (Some(c), _) => s.push_str(&format!("Restored refs/lore/memory to {c}.\n")),
            (None, RefState::Sound) => {}
            (None, _) if check.restore_points.is_empty() => {
                s.push_str("Nothing here knows the memories; fetch them from a remote.\n")
            }
            (None, _) => {
                s.push_str("`lore doctor --restore` puts it back at the first of these.\n")
            }
        }
    });
    Ok(())
}
