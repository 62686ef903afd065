//! What changed between the tip the index reflects and the tip a write is about to land on: the
//! memories a retried write re-checks, without a full catch-up of the index.
//!
//! A write reads the index first (fast), then commits by compare-and-swap. When another writer
//! moved the ref meanwhile, the write's closure runs again on the new tip; what it learnt from
//! the index is brought forward by diffing the two trees ([`Store::diff`]: only the files that
//! changed are read).

use std::collections::{HashMap, HashSet};

use git2::Oid;

use crate::error::Result;
use crate::index::Index;
use crate::model::Memory;
use crate::record;
use crate::store::layout::{self, PathKind};
use crate::store::{Snapshot, Store};

/// A memory file that differs between two tips.
pub(super) struct ChangedMemory {
    /// Its path in the memory tree.
    pub path: String,
    /// The memory there on the newer tip (none: the file was removed, or is not a readable
    /// memory — the index reports those as invalid).
    pub memory: Option<Memory>,
}

/// The memory files that differ between `since` (a tip the index reflected) and the snapshot.
/// When `since` is no longer in the repository (lore's refs were rewritten), every memory of
/// the snapshot counts as changed.
pub(super) fn changed_memories(
    store: &Store,
    since: Option<Oid>,
    snap: &Snapshot<'_>,
) -> Result<Vec<ChangedMemory>> {
    let base = since.filter(|c| store.has_commit(*c));
    let mut out = Vec::new();
    for change in store.diff(base, snap.commit())? {
        if layout::classify(&change.path) != PathKind::Memory {
            continue;
        }
        let memory = match change.new {
            Some(blob) => readable_memory(&store.read_blob(blob)?, &change.path),
            None => None,
        };
        out.push(ChangedMemory {
            path: change.path,
            memory,
        });
    }
    Ok(out)
}

/// The memory a file holds, if it is one (a file that does not parse is reported by `status`
/// as invalid; it holds no memory a write could repeat or collide with).
fn readable_memory(bytes: &[u8], path: &str) -> Option<Memory> {
    let text = std::str::from_utf8(bytes).ok()?;
    record::parse(text, path).ok()
}

/// Where some ids live, as the index saw them at its tip.
pub(super) struct IdPaths {
    tip: Option<Oid>,
    asked: HashSet<String>,
    paths: HashMap<String, String>,
}

impl IdPaths {
    /// Nothing indexed yet (an empty store).
    pub fn empty(ids: &[&str]) -> IdPaths {
        IdPaths {
            tip: None,
            asked: ids.iter().map(|id| id.to_string()).collect(),
            paths: HashMap::new(),
        }
    }

    /// Where the index has each of `ids`, with the tip it reflects. Another process may catch
    /// the shared index up between two reads, so the tip is read before and after: the paths
    /// belong to the tip only when both agree.
    pub fn read(index: &Index, ids: &[&str]) -> Result<IdPaths> {
        loop {
            let tip = index.indexed_tip()?;
            let paths = index.paths_of(ids)?.into_iter().collect();
            if index.indexed_tip()? == tip {
                return Ok(IdPaths {
                    tip,
                    paths,
                    ..IdPaths::empty(ids)
                });
            }
        }
    }

    /// Where each id lives on the snapshot's tip: the indexed paths, with the files that changed
    /// since the indexed tip applied.
    pub fn on(&self, store: &Store, snap: &Snapshot<'_>) -> Result<HashMap<String, String>> {
        if snap.commit() == self.tip {
            return Ok(self.paths.clone());
        }
        let mut by_path: HashMap<String, String> = self
            .paths
            .iter()
            .map(|(id, path)| (path.clone(), id.clone()))
            .collect();
        for change in changed_memories(store, self.tip, snap)? {
            by_path.remove(&change.path);
            if let Some(m) = change.memory
                && self.asked.contains(m.id.as_str())
            {
                by_path.insert(change.path, m.id.to_string());
            }
        }
        Ok(by_path.into_iter().map(|(path, id)| (id, path)).collect())
    }
}
