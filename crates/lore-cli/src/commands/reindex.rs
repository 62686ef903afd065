//! `lore reindex`: delete the derived index and rebuild it from the refs.

use clap::Args;
use lore::ops::store as ops;

use super::common::{self, Session};
use crate::error::CmdResult;
use crate::ui::Ui;

/// Rebuild the index from refs/lore/memory (it is derived data: safe to delete at any time).
#[derive(Args, Debug)]
pub struct ReindexArgs {}

pub fn run(ui: &mut Ui, session: &mut Session, _args: &ReindexArgs) -> CmdResult {
    let out = session.run(ui, ops::Reindex {})?;
    ui.emit(&out, |s| {
        s.push_str(&format!(
            "Reindexed {} in {:.2}s ({})\n",
            common::count(out.files, "memory file", "memory files"),
            out.seconds,
            out.index
        ));
    });
    Ok(())
}
