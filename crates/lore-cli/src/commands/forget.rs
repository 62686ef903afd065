//! `lore forget`: delete a memory (a deletion commit), or purge it from history.

use clap::Args;
use lore::{Lore, WriteContext};
use serde::Serialize;

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

#[derive(Serialize)]
struct PurgeOutput {
    id: String,
    purged: bool,
    versions_removed: usize,
    commits_rewritten: usize,
    refs_rewritten: Vec<String>,
    next_steps: Vec<&'static str>,
}

const NEXT_STEPS: [&str; 2] = [
    "git gc --prune=now   # drop the now-unreachable objects from this clone",
    "lore sync / git push --force the rewritten refs/lore/* to remotes, and purge other clones",
];

pub fn run(ui: &mut Ui, lore: &mut Lore, ctx: &WriteContext, args: &ForgetArgs) -> CmdResult {
    if args.purge {
        let (memory, report, versions) = lore.purge(&args.memory)?;
        let out = PurgeOutput {
            id: memory.id.to_string(),
            purged: true,
            versions_removed: versions,
            commits_rewritten: report.commits_rewritten,
            refs_rewritten: report.refs_rewritten,
            next_steps: NEXT_STEPS.to_vec(),
        };
        ui.emit(&out, |s| {
            s.push_str(&format!(
                "Purged {}: {} version(s) removed, {} commit(s) rewritten.\nNext:\n",
                out.id, out.versions_removed, out.commits_rewritten
            ));
            for step in &out.next_steps {
                s.push_str(&format!("  {step}\n"));
            }
        });
        return Ok(());
    }
    let written = lore.forget(&args.memory, ctx)?;
    ui.emit(&written, |s| {
        s.push_str(&format!(
            "Forgot {} ({}) at {}; `lore history {}` still shows it, `lore forget --purge {}` removes it from history\n",
            written.memory.id,
            written.path,
            &written.commit[..written.commit.len().min(12)],
            written.memory.id,
            written.memory.id
        ));
    });
    Ok(())
}
