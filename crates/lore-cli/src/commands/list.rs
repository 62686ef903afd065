//! `lore list`: memories filtered by namespace, tag, status and time.

use clap::{Args, ValueEnum};
use lore::{ListFilter, Lore, SortBy};

use super::common;
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

/// Filters shared by list and recall.
#[derive(Args, Debug, Clone)]
pub struct FilterArgs {
    /// Only this namespace.
    #[arg(long, short = 'n')]
    pub namespace: Option<String>,
    /// Only memories with this tag.
    #[arg(long, short = 't')]
    pub tag: Option<String>,
    /// Only these statuses (comma-separated or repeated): active, resolved, superseded, archived.
    #[arg(long)]
    pub status: Vec<String>,
    /// Only memories updated since (2026-01-31, RFC 3339, or an age: 30m, 12h, 7d, 2w).
    #[arg(long)]
    pub since: Option<String>,
    /// Only memories updated before this time.
    #[arg(long)]
    pub until: Option<String>,
}

impl FilterArgs {
    pub fn to_filter(&self) -> CmdResult<ListFilter> {
        Ok(ListFilter {
            namespace: self.namespace.clone(),
            tag: self.tag.clone(),
            statuses: common::parse_statuses(&self.status)?,
            since: self.since.as_deref().map(common::parse_time).transpose()?,
            until: self.until.as_deref().map(common::parse_time).transpose()?,
            ..ListFilter::default()
        })
    }
}

/// List memories.
#[derive(Args, Debug)]
pub struct ListArgs {
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Order.
    #[arg(long, value_enum, default_value = "updated")]
    pub sort: Sort,
    /// At most this many (0: all).
    #[arg(long, default_value_t = 100)]
    pub limit: usize,
}

pub fn run(ui: &mut Ui, lore: &mut Lore, args: &ListArgs) -> CmdResult {
    let mut filter = args.filter.to_filter()?;
    filter.sort = match args.sort {
        Sort::Updated => SortBy::Updated,
        Sort::Created => SortBy::Created,
        Sort::Oldest => SortBy::CreatedAsc,
        Sort::Namespace => SortBy::Namespace,
    };
    filter.limit = (args.limit > 0).then_some(args.limit);
    let memories = lore.list(&filter)?;
    ui.emit(&memories, |s| {
        if memories.is_empty() {
            s.push_str("No memories match.\n");
        }
        for m in &memories {
            common::memory_line(s, m);
        }
    });
    Ok(())
}
