//! `lore doctor`: check refs/lore/memory and, when it is lost or damaged, put it back.

use clap::Args;
use lore::ops::store as ops;
use lore::{RefCheck, RefState, RestorePoint};

use super::common::{self, Session};
use crate::error::CmdResult;
use crate::ui::Ui;

/// Check refs/lore/memory; when it is missing or damaged, list what still knows the memories
/// (memory commits written after the index's tip and still in the object database, the ref's
/// reflog, the commit the index was last caught up to, each remote's copy as last fetched).
#[derive(Args, Debug)]
pub struct DoctorArgs {
    /// Put the ref back at the first of them (this clone's newest, else the newest remote copy).
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
                "  {} ({}, {}): {}{}\n",
                common::short(&p.commit),
                p.source,
                p.when,
                common::count(p.memories, "memory", "memories"),
                written_after(check, p)
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
        other_heads(s, check);
    });
    Ok(())
}

/// For a restore point found in the object database, what it was written after.
fn written_after(check: &RefCheck, p: &RestorePoint) -> String {
    let Some(base) = &p.descends_from else {
        return String::new();
    };
    let base_source = check
        .restore_points
        .iter()
        .find(|q| q.commit == *base)
        .map_or(String::new(), |q| format!(" ({})", q.source));
    format!(", written after {}{base_source}", common::short(base))
}

/// The other lines of writes found: those with writes the first point lacks one by one, the
/// rest as a count.
fn other_heads(s: &mut String, check: &RefCheck) {
    let (apart, held): (Vec<_>, Vec<_>) = check
        .other_heads
        .iter()
        .partition(|h| h.not_in_restore_point > 0);
    if !apart.is_empty() {
        s.push_str(&format!(
            "{} found in the object database that the first does not hold \
             (not restored; `git log -p COMMIT` shows each):\n",
            common::count(apart.len(), "other line of writes", "other lines of writes")
        ));
        for h in apart {
            s.push_str(&format!(
                "  {} ({}): {}, {} it wrote not in the first\n",
                h.commit,
                h.when,
                common::count(h.memories, "memory", "memories"),
                common::count(h.not_in_restore_point, "file", "files")
            ));
        }
    }
    if !held.is_empty() {
        s.push_str(&format!(
            "{} whose writes the first holds alike (writes made again after losing a race).\n",
            common::count(held.len(), "other line of writes", "other lines of writes")
        ));
    }
}
