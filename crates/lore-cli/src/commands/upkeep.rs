//! `lore upkeep`: the index's upkeep that commands leave to run apart (the vector cache written
//! again as one segment); [`crate::upkeep_start`] starts it detached.

use std::path::PathBuf;

use clap::Args;
use lore::ops::store as ops;

use super::common::Session;
use crate::error::CmdResult;
use crate::global::GlobalArgs;
use crate::ui::Ui;

/// Catch the index up and write its vector cache again as one segment if catch-ups have
/// appended too many.
///
/// Commands do not wait for this: a command that finds the cache grown starts `lore upkeep` in
/// the background (at a million memories it takes seconds).
#[derive(Args, Debug)]
pub struct UpkeepArgs {
    /// The stores by their git directories, whatever their scopes, kept up one after another
    /// (how commands start it: a store is neither looked for nor added to the list of
    /// projects).
    #[arg(long, value_name = "GIT_DIR", hide = true)]
    pub store: Vec<PathBuf>,
}

pub fn run(ui: &mut Ui, global: &GlobalArgs, args: &UpkeepArgs) -> CmdResult {
    if args.store.is_empty() {
        let mut session = Session::open(ui, global)?;
        return keep_up(ui, &mut session);
    }
    for git_dir in &args.store {
        let lore = crate::location::open_store(global, git_dir)?;
        let mut session = Session::of(ui, global, lore);
        keep_up(ui, &mut session)?;
    }
    Ok(())
}

fn keep_up(ui: &mut Ui, session: &mut Session) -> CmdResult {
    let out = session.run(ui, ops::Upkeep {})?;
    ui.emit(&out, |s| {
        if out.vectors_compacted {
            s.push_str(&format!(
                "Wrote the vector cache again as one segment in {:.2}s\n",
                out.seconds
            ));
        } else {
            s.push_str("Nothing to do\n");
        }
    });
    Ok(())
}
