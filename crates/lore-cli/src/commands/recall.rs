//! `lore recall`: BM25 search over summary, body and tags.

use clap::Args;
use lore::{Hit, Lore};

use super::common;
use super::list::FilterArgs;
use crate::error::{CmdResult, CommandError};
use crate::ui::Ui;

/// Find memories relevant to a query (BM25 over summary ×3, tags ×2, body ×1).
#[derive(Args, Debug)]
pub struct RecallArgs {
    /// What to look for, in plain words.
    pub query: Vec<String>,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// At most this many results.
    #[arg(long, short = 'l', default_value_t = 10)]
    pub limit: usize,
}

pub fn run(ui: &mut Ui, lore: &mut Lore, args: &RecallArgs) -> CmdResult {
    let query = args.query.join(" ");
    if query.trim().is_empty() {
        return Err(CommandError::usage(
            "give something to recall: lore recall <words>",
        ));
    }
    let mut filter = args.filter.to_filter()?;
    filter.limit = Some(args.limit.max(1));
    let hits: Vec<Hit> = lore.recall(&query, &filter)?;
    ui.emit(&hits, |s| {
        if hits.is_empty() {
            s.push_str("Nothing relevant found.\n");
        }
        for h in &hits {
            s.push_str(&format!("{:>6.2}  ", h.score));
            common::memory_line(s, &h.memory);
        }
    });
    Ok(())
}
