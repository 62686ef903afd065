//! `lore status`: where the store is, what it holds, and the index's state.

use clap::Args;
use lore::StoreStatus;
use lore::ops::store as ops;

use super::common::{self, Session};
use crate::error::CmdResult;
use crate::ui::Ui;

/// Show where memory is stored, counts per namespace, unreadable files and index freshness.
#[derive(Args, Debug)]
pub struct StatusArgs {}

pub fn run(ui: &mut Ui, session: &mut Session, _args: &StatusArgs) -> CmdResult {
    let st = session.run(ui, ops::Status {})?;
    ui.emit(&st, |s| {
        where_and_what(s, &st);
        namespaces(s, &st);
        standing(s, &st);
    });
    Ok(())
}

/// The store, its ref and index, the counts, the disk and the scopes read.
fn where_and_what(s: &mut String, st: &StoreStatus) {
    let kind = match st.kind {
        lore::StoreKind::Repository => "repository",
        lore::StoreKind::Personal => "personal store",
    };
    s.push_str(&format!("store:    {kind} at {}\n", st.git_dir));
    if let Some(w) = &st.workdir {
        s.push_str(&format!("worktree: {w}\n"));
    }
    if let Some(p) = &st.project {
        s.push_str(&format!("project:  {p}\n"));
    }
    let tip = st
        .tip
        .as_deref()
        .map(common::short)
        .unwrap_or("(no memories yet)");
    s.push_str(&format!("ref:      {} {tip}\n", st.memory_ref));
    let fresh = if st.index.was_current {
        "up to date".to_string()
    } else {
        format!(
            "caught up ({})",
            common::count(st.index.caught_up_files, "file", "files")
        )
    };
    s.push_str(&format!("index:    {} ({fresh})\n", st.index.path));
    s.push_str(&format!("embedder: {}\n", st.index.embedder));
    s.push_str(&format!("memories: {}\n", st.total));
    s.push_str(&format!(
        "disk:     {} index and caches, {} of packed objects, about {} loose objects\n",
        common::megabytes(st.disk.derived_bytes),
        common::megabytes(st.disk.packed_bytes),
        st.disk.loose_objects
    ));
    if !st.scopes.is_empty() {
        s.push_str(&format!("scopes:   {}\n", st.scopes.join(", ")));
    }
}

/// One line per namespace that holds memories (or that the user made), by status.
fn namespaces(s: &mut String, st: &StoreStatus) {
    for ns in &st.namespaces {
        if ns.total == 0 && ns.builtin {
            continue;
        }
        let detail: Vec<String> = ns
            .by_status
            .iter()
            .map(|(k, v)| format!("{v} {k}"))
            .collect();
        s.push_str(&format!(
            "  {:<14} {:>6}  {}\n",
            ns.namespace,
            ns.total,
            detail.join(", ")
        ));
    }
}

/// Where the store stands against its remotes, and what needs a person: open conflicts, stale
/// locks, purges not yet everywhere, unreadable files.
fn standing(s: &mut String, st: &StoreStatus) {
    for r in &st.remotes {
        let standing = if r.fetched {
            format!(
                "{} ahead, {} behind (as of the last fetch)",
                r.ahead, r.behind
            )
        } else {
            format!("never synced ({} commits to push)", r.ahead)
        };
        s.push_str(&format!("remote:   {} — {standing}\n", r.remote));
        for p in &r.parked {
            s.push_str(&format!("          parked, not mergeable: {p}\n"));
        }
    }
    if st.open_conflicts > 0 {
        s.push_str(&format!(
            "conflicts: {} open (`lore conflicts`)\n",
            st.open_conflicts
        ));
    }
    for lock in &st.stale_locks {
        s.push_str(&format!(
            "stale lock: {} ({} ms old, its writer is gone; the next write removes it)\n",
            lock.path, lock.age_ms
        ));
    }
    let p = &st.purges;
    if p.records > 0 {
        s.push_str(&format!("purged:   {} memories\n", p.records));
        if p.objects_here > 0 {
            s.push_str(&format!(
                "          {} purged versions still in this clone's objects: run `git gc --prune=now`\n",
                p.objects_here
            ));
        }
        for r in &p.remotes_behind {
            s.push_str(&format!(
                "          {r} may still hold purged memories: run `lore sync {r}`\n"
            ));
        }
    }
    if !st.invalid.is_empty() {
        s.push_str(&format!("unreadable memory files: {}\n", st.invalid.len()));
        for f in &st.invalid {
            s.push_str(&format!("  {} ({}): {}\n", f.name, f.path, f.message));
        }
    }
}
