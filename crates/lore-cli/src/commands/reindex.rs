//! `lore reindex`: delete the derived index and rebuild it from the refs.

use std::time::Instant;

use clap::Args;
use lore::Lore;
use serde::Serialize;

use crate::error::CmdResult;
use crate::ui::Ui;

/// Rebuild the index from refs/lore/memory (it is derived data: safe to delete at any time).
#[derive(Args, Debug)]
pub struct ReindexArgs {}

#[derive(Serialize)]
struct ReindexOutput {
    files: usize,
    seconds: f64,
    index: String,
}

pub fn run(ui: &mut Ui, lore: &mut Lore, _args: &ReindexArgs) -> CmdResult {
    let started = Instant::now();
    let done = lore.reindex()?;
    let out = ReindexOutput {
        files: done.upserted,
        seconds: started.elapsed().as_secs_f64(),
        index: lore::index::index_path(lore.store()).display().to_string(),
    };
    ui.emit(&out, |s| {
        s.push_str(&format!(
            "Reindexed {} memory file(s) in {:.2}s ({})\n",
            out.files, out.seconds, out.index
        ));
    });
    Ok(())
}
