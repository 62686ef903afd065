//! `lore list`: memories filtered by namespace, tag, status and time.

use clap::{Args, ValueEnum};
use lore::ops::memory as ops;

use super::common::{self, Session};
use crate::error::CmdResult;
use crate::ui::Ui;

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Sort {
    /// Most recently updated first.
    Updated,
    /// Most recently created first.
    Created,
    /// Oldest first.
    Oldest,
    /// By namespace, then most recently updated.
    Namespace,
}

/// List memories.
#[derive(Args, Debug)]
pub struct ListArgs {
    #[command(flatten)]
    pub filter: common::FilterArgs,
    /// Order.
    #[arg(long, value_enum, default_value = "updated")]
    pub sort: Sort,
    /// At most this many (0: all).
    #[arg(long, default_value_t = 100)]
    pub limit: usize,
}

pub fn run(ui: &mut Ui, session: &mut Session, args: &ListArgs) -> CmdResult {
    let out = session.run(
        ui,
        ops::List {
            filter: args.filter.filter(),
            sort: Some(
                match args.sort {
                    Sort::Updated => "updated",
                    Sort::Created => "created",
                    Sort::Oldest => "oldest",
                    Sort::Namespace => "namespace",
                }
                .to_string(),
            ),
            limit: Some(args.limit),
        },
    )?;
    ui.emit(&out, |s| {
        if out.memories.is_empty() {
            s.push_str("No memories match.\n");
            if let Some(hint) = &out.hint {
                s.push_str(&format!("Hint: {hint}\n"));
            }
        }
        for m in &out.memories {
            common::memory_line(s, m);
        }
    });
    Ok(())
}
