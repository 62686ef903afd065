//! One side of a merge: what a chain changed since the merge base, read as memories (grouped by
//! id), tombstones, conflict records and plain files.

use std::collections::{BTreeMap, HashMap, HashSet};

use git2::Oid;

use super::markers::{ConflictRecord, Tombstone};
use crate::error::Result;
use crate::model::{Memory, MemoryId};
use crate::record;
use crate::store::Store;
use crate::store::layout::{self, PathKind};

/// A memory file as one side has it.
#[derive(Clone)]
pub(super) struct Located {
    pub path: String,
    pub blob: Oid,
    /// The file's text, as stored (what a conflict record keeps of a version).
    pub text: String,
    pub memory: Memory,
}

/// One side's changes since the merge base.
#[derive(Default)]
pub(super) struct Side {
    /// The new state of every memory this side touched (none: gone from this side's tree).
    pub touched: HashMap<MemoryId, Option<Located>>,
    /// The base state of the memories this side touched.
    pub base: HashMap<MemoryId, Located>,
    /// Tombstones this side added.
    pub tombstones: HashMap<MemoryId, Tombstone>,
    /// The blob of each tombstone this side added (to find the commit that wrote it).
    pub tombstone_blobs: HashMap<MemoryId, Oid>,
    /// Ids this side's changed conflict records keep out of its live tree.
    pub parked: HashSet<MemoryId>,
    /// Conflict records changed (none: removed, i.e. resolved), read.
    pub conflicts: BTreeMap<String, Option<ConflictRecord>>,
    /// Any other file changed (store file, namespace markers, tombstones, unreadable files).
    pub files: BTreeMap<String, Option<Oid>>,
}

impl Side {
    /// Reads the changes from `base` to `tip`. A tombstone or conflict record that does not
    /// parse is an error naming its path: taking it as absent would let a forget or a parked
    /// version silently not travel.
    pub fn read(store: &Store, base: Option<Oid>, tip: Oid) -> Result<Side> {
        let mut side = Side::default();
        for change in store.diff(base, Some(tip))? {
            match layout::classify(&change.path) {
                PathKind::Memory => side.read_memory(store, change.path, change.old, change.new)?,
                PathKind::Tombstone => {
                    if let Some(blob) = change.new {
                        let t = Tombstone::parse(&store.read_blob(blob)?, &change.path)?;
                        side.tombstone_blobs.insert(t.id.clone(), blob);
                        side.tombstones.insert(t.id.clone(), t);
                    }
                    side.files.insert(change.path, change.new);
                }
                PathKind::Conflict => {
                    let record = change
                        .new
                        .map(|blob| ConflictRecord::parse(&store.read_blob(blob)?, &change.path))
                        .transpose()?;
                    if let Some(c) = &record {
                        side.parked.extend(c.parked_ids().cloned());
                    }
                    side.conflicts.insert(change.path, record);
                }
                _ => {
                    side.files.insert(change.path, change.new);
                }
            }
        }
        Ok(side)
    }

    fn read_memory(
        &mut self,
        store: &Store,
        path: String,
        old: Option<Oid>,
        new: Option<Oid>,
    ) -> Result<()> {
        let old = old.map(|b| located(store, &path, b)).transpose()?;
        let new_state = new.map(|b| located(store, &path, b)).transpose()?;
        if old.as_ref().is_some_and(Option::is_none)
            || new_state.as_ref().is_some_and(Option::is_none)
        {
            // Not readable as a memory: merged as a plain file.
            self.files.insert(path, new);
            return Ok(());
        }
        if let Some(Some(old)) = old {
            self.touched.entry(old.memory.id.clone()).or_insert(None);
            self.base.insert(old.memory.id.clone(), old);
        }
        if let Some(Some(new)) = new_state {
            self.touched.insert(new.memory.id.clone(), Some(new));
        }
        Ok(())
    }

    /// Whether this side removed `id` on purpose (forgot it, or parked it in a conflict).
    pub fn removed_on_purpose(&self, id: &MemoryId) -> bool {
        self.tombstones.contains_key(id) || self.parked.contains(id)
    }
}

/// A memory file at a path, or none when the blob is not a readable memory.
pub(super) fn located(store: &Store, path: &str, blob: Oid) -> Result<Option<Located>> {
    let bytes = store.read_blob(blob)?;
    let Ok(text) = String::from_utf8(bytes) else {
        return Ok(None);
    };
    Ok(record::parse(&text, path).ok().map(|memory| Located {
        path: path.to_string(),
        blob,
        text,
        memory,
    }))
}

/// The commit between `base` and `tip` that wrote `blob` at `path` (the newest whose parents
/// did not hold it there); `tip` itself when none is found (a history rewritten meanwhile).
pub(super) fn writer_commit(
    store: &Store,
    base: Option<Oid>,
    tip: Oid,
    path: &str,
    blob: Oid,
) -> Result<Oid> {
    let repo = store.repo();
    let mut walk = repo.revwalk()?;
    walk.set_sorting(git2::Sort::TOPOLOGICAL)?;
    walk.push(tip)?;
    if let Some(base) = base {
        walk.hide(base)?;
    }
    let holds = |commit: &git2::Commit<'_>| -> Result<bool> {
        Ok(crate::store::blob_at(&commit.tree()?, path)? == Some(blob))
    };
    for oid in walk {
        let commit = repo.find_commit(oid?)?;
        if !holds(&commit)? {
            continue;
        }
        let mut parents_hold = false;
        for parent in commit.parents() {
            parents_hold |= holds(&parent)?;
        }
        if !parents_hold {
            return Ok(commit.id());
        }
    }
    Ok(tip)
}
