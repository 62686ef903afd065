//! `lore forget`: delete a memory (a deletion commit), or purge it from history.

use clap::Args;
use lore::ops::memory as ops;

use super::common::{self, Session};

use crate::error::CmdResult;
use crate::ui::Ui;

/// Forget a memory (or, with --purge, erase it from history).
///
/// Plain forget is a deletion commit: the memory leaves recall and listings but
/// its history stays in git. `--purge` is for leaked secrets: it rewrites lore's refs so that no
/// version of the memory is reachable, deletes lore's reflogs and rebuilds the index. Then run
/// `git gc --prune=now` to drop the objects from disk, and purge every other clone too (a pushed
/// secret must be rotated: others may have fetched it).
#[derive(Args, Debug)]
pub struct ForgetArgs {
    /// Id, id prefix, `namespace/key` or key (for --purge, a forgotten memory's full id works too).
    pub memory: String,
    /// Rewrite lore's history so no version of the memory remains reachable.
    #[arg(long)]
    pub purge: bool,
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &ForgetArgs) -> CmdResult {
    let out = session.run(
        ui,
        ops::Forget {
            memory: args.memory.clone(),
            purge: args.purge,
        },
    )?;
    ui.emit(&out, |s| {
        if out.purged {
            s.push_str(&format!(
                "Purged {}: {} removed, {} rewritten.\nNext:\n",
                out.memory.id,
                common::count(out.versions_removed.unwrap_or(0), "version", "versions"),
                common::count(out.commits_rewritten.unwrap_or(0), "commit", "commits")
            ));
            for step in &out.next_steps {
                s.push_str(&format!("  - {step}\n"));
            }
        } else {
            s.push_str(&format!(
                "Forgot {} ({}) at {}; `lore history {}` still shows it, `lore forget --purge {}` removes it from history\n",
                out.memory.id,
                out.path,
                out.commit.as_deref().map(common::short).unwrap_or(""),
                out.memory.id,
                out.memory.id
            ));
        }
    });
    Ok(())
}
