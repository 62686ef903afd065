//! `lore upkeep`: the index's upkeep that commands leave to run apart (the vector cache written
//! again as one segment); [`crate::upkeep_start`] starts it detached.

use clap::Args;
use lore::ops::store as ops;

use super::common::Session;
use crate::error::CmdResult;
use crate::ui::Ui;

/// Catch the index up and write its vector cache again as one segment if catch-ups have
/// appended too many.
///
/// Commands do not wait for this: a command that finds the cache grown starts `lore upkeep` in
/// the background (at a million memories it takes seconds).
#[derive(Args, Debug)]
pub struct UpkeepArgs {}

pub fn run(ui: &mut Ui, session: &mut Session, _args: &UpkeepArgs) -> CmdResult {
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
