//! `lore gc`: stale progress memories decay to archived, old archived ones leave the live tree,
//! lore's refs and loose objects are packed, and the index's file.

use clap::Args;
use lore::ops::sync as ops;

use super::common::{self, Session};
use crate::error::CmdResult;
use crate::ui::Ui;

/// Tidy shared memory: archive stale progress, expire old archived memories, pack.
///
/// Active `progress` memories untouched for `git config lore.decay.progress` days (default 30)
/// are archived; archived memories untouched for `lore.gc.archiveRetention` days (default 180)
/// leave the live tree with a tombstone, so the removal travels with `lore sync` (their history
/// stays in git). Either setting takes `never`. Then `git pack-refs --all` and `git repack -d`,
/// and the index's file is written again without the room removed rows left in it.
#[derive(Args, Debug)]
pub struct GcArgs {
    /// Only print what would be archived and expired.
    #[arg(long)]
    pub dry_run: bool,
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &GcArgs) -> CmdResult {
    let out = session.run(
        ui,
        ops::Gc {
            dry_run: args.dry_run,
        },
    )?;
    ui.emit(&out, |s| {
        let verb = if args.dry_run {
            "Would archive"
        } else {
            "Archived"
        };
        s.push_str(&format!(
            "{verb} {}, {} {}",
            common::count(
                out.archived.len(),
                "stale progress memory",
                "stale progress memories"
            ),
            if args.dry_run {
                "would expire"
            } else {
                "expired"
            },
            common::count(out.expired.len(), "archived memory", "archived memories"),
        ));
        if let Some(c) = &out.commit {
            s.push_str(&format!(" at {}", common::short(c)));
        }
        s.push('\n');
        if out.packed {
            s.push_str("Packed refs and loose objects.\n");
        }
        if let Some(index) = &out.index_packed {
            s.push_str(&format!(
                "Packed the index: {} -> {}.\n",
                common::megabytes(index.before_bytes),
                common::megabytes(index.after_bytes)
            ));
        }
    });
    Ok(())
}
