//! Merging two diverged memory chains in process, by memory rather than by line.
//!
//! Both sides' changes since their merge base are read as memories (grouped by id, so a memory
//! that moved between its key path and its id path is one change), and each memory is decided
//! once:
//! - changed on one side only: that side's version; distinct ids never conflict;
//! - changed on both: merged field by field ([`fields`]); a keyed memory whose content both
//!   changed differently is a **contradiction**;
//! - gone from one side: only a tombstone (`forget`) or a conflict record that parked it removes
//!   it; a memory missing without one is kept (never deletion by absence); an edit against a
//!   forget is a contradiction, and the edit stays live;
//! - two different memories claiming one key path: a contradiction, ours stays at the path.
//!
//! A contradiction keeps the version in force live (the chain stays writable and readable) and
//! every other version, with the base, as data in a conflict record (`.conflicts/…`, see
//! [`records`]) until someone resolves it. Other files (store file, namespace markers,
//! tombstones) merge by path: the side that changed a file wins, ours when both did.

mod fields;
pub mod records;

use std::collections::{BTreeMap, HashMap, HashSet};

use git2::Oid;
use jiff::Timestamp;
use schemars::JsonSchema;
use serde::Serialize;

use crate::error::Result;
use crate::model::{Memory, MemoryId};
use crate::record;
use crate::store::layout::{self, PathKind};
use crate::store::{Edit, Snapshot, Store};
use fields::FieldMerge;
use records::{ConflictKind, ConflictRecord, ConflictSide, Tombstone};

/// What a merge did, counted from the receiving side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct MergeCounts {
    /// Memories the other side added.
    pub new: usize,
    /// Memories changed by the merge (the other side's edits, or both merged).
    pub updated: usize,
    /// Memories the other side forgot.
    pub forgotten: usize,
    /// Contradictions found (new or newly extended conflict records).
    pub conflicts: usize,
}

impl MergeCounts {
    /// Adds another merge's counts.
    pub fn add(&mut self, other: MergeCounts) {
        self.new += other.new;
        self.updated += other.updated;
        self.forgotten += other.forgotten;
        self.conflicts += other.conflicts;
    }
}

/// The edits that turn our tree into the merge of both sides, and what they amount to.
pub(crate) struct TreeMerge {
    pub edits: Vec<Edit>,
    pub counts: MergeCounts,
    /// The memory paths newly contested.
    pub contested: Vec<String>,
}

/// A memory file as one side has it.
#[derive(Clone)]
struct Located {
    path: String,
    blob: Oid,
    memory: Memory,
}

/// One side's changes since the merge base.
#[derive(Default)]
struct Side {
    /// The new state of every memory this side touched (none: gone from this side's tree).
    touched: HashMap<MemoryId, Option<Located>>,
    /// The base state of the memories this side touched.
    base: HashMap<MemoryId, Located>,
    /// Tombstones this side added.
    tombstones: HashMap<MemoryId, Tombstone>,
    /// Ids this side's changed conflict records keep out of its live tree.
    parked: HashSet<MemoryId>,
    /// Conflict records changed (none: removed, i.e. resolved).
    conflicts: BTreeMap<String, Option<Oid>>,
    /// Any other file changed (store file, namespace markers, unreadable files).
    files: BTreeMap<String, Option<Oid>>,
}

impl Side {
    fn read(store: &Store, base: Option<Oid>, tip: Oid) -> Result<Side> {
        let mut side = Side::default();
        for change in store.diff(base, Some(tip))? {
            match layout::classify(&change.path) {
                PathKind::Memory => {
                    let old = change
                        .old
                        .map(|b| located(store, &change.path, b))
                        .transpose()?;
                    let new = change
                        .new
                        .map(|b| located(store, &change.path, b))
                        .transpose()?;
                    if old.as_ref().is_some_and(Option::is_none)
                        || new.as_ref().is_some_and(Option::is_none)
                    {
                        // Not readable as a memory: merged as a plain file.
                        side.files.insert(change.path, change.new);
                        continue;
                    }
                    if let Some(Some(old)) = old {
                        side.touched.entry(old.memory.id.clone()).or_insert(None);
                        side.base.insert(old.memory.id.clone(), old);
                    }
                    if let Some(Some(new)) = new {
                        side.touched.insert(new.memory.id.clone(), Some(new));
                    }
                }
                PathKind::Tombstone => {
                    if let Some(blob) = change.new
                        && let Ok(t) = Tombstone::parse(&store.read_blob(blob)?, &change.path)
                    {
                        side.tombstones.insert(t.id.clone(), t);
                    }
                    side.files.insert(change.path, change.new);
                }
                PathKind::Conflict => {
                    if let Some(blob) = change.new
                        && let Ok(c) = ConflictRecord::parse(&store.read_blob(blob)?, &change.path)
                    {
                        side.parked.extend(c.parked_ids().cloned());
                    }
                    side.conflicts.insert(change.path, change.new);
                }
                _ => {
                    side.files.insert(change.path, change.new);
                }
            }
        }
        Ok(side)
    }

    /// Whether this side removed `id` on purpose (forgot it, or parked it in a conflict).
    fn removed_on_purpose(&self, id: &MemoryId) -> bool {
        self.tombstones.contains_key(id) || self.parked.contains(id)
    }
}

/// A memory file at a path, or none when the blob is not a readable memory.
fn located(store: &Store, path: &str, blob: Oid) -> Result<Option<Located>> {
    let bytes = store.read_blob(blob)?;
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return Ok(None);
    };
    Ok(record::parse(text, path).ok().map(|memory| Located {
        path: path.to_string(),
        blob,
        memory,
    }))
}

/// What the merge does with one memory.
struct Decision {
    id: MemoryId,
    /// Our state before the merge.
    ours: Option<Located>,
    /// The merged state (none: not in the live tree).
    result: Option<Memory>,
}

/// Merges `theirs` into `ours` (the snapshot a transaction sees) against `base`.
pub(crate) fn merge_trees(
    store: &Store,
    ours_snap: &Snapshot<'_>,
    base: Option<Oid>,
    theirs: Oid,
    now: Timestamp,
) -> Result<TreeMerge> {
    let ours_tip = ours_snap.commit();
    let ours = match ours_tip {
        Some(tip) => Side::read(store, base, tip)?,
        None => Side::default(),
    };
    let theirs_side = Side::read(store, base, theirs)?;
    let theirs_commit = theirs.to_string();
    let ours_commit = ours_tip.map(|c| c.to_string()).unwrap_or_default();

    let mut decisions: Vec<Decision> = Vec::new();
    let mut conflicts: BTreeMap<String, ConflictRecord> = BTreeMap::new();
    let mut keep_tombstone_out: HashSet<MemoryId> = HashSet::new();
    let mut ids: Vec<&MemoryId> = theirs_side.touched.keys().collect();
    ids.sort();
    for id in ids {
        let t = theirs_side.touched[id].clone();
        let b = theirs_side
            .base
            .get(id)
            .or_else(|| ours.base.get(id))
            .cloned();
        let o = match ours.touched.get(id) {
            Some(state) => state.clone(),
            None => b.clone(),
        };
        let record_conflict = |conflicts: &mut BTreeMap<String, ConflictRecord>,
                               path: &str,
                               kind: ConflictKind,
                               live: Option<&MemoryId>,
                               side: ConflictSide| {
            let record = ConflictRecord {
                path: path.to_string(),
                kind,
                live: live.cloned(),
                detected: now,
                base: b.as_ref().map(|l| text_of(store, l.blob)),
                sides: vec![side],
            };
            absorb(conflicts, record);
        };
        let result: Option<Memory> = if !ours.touched.contains_key(id) {
            match &t {
                None if !theirs_side.removed_on_purpose(id) => continue,
                _ => t.as_ref().map(|l| l.memory.clone()),
            }
        } else {
            match (&o, &t) {
                (None, None) => continue,
                (Some(o), Some(t)) if o.blob == t.blob && o.path == t.path => continue,
                (Some(o), None) => {
                    let Some(tomb) = theirs_side.tombstones.get(id) else {
                        continue; // absent without a tombstone, or parked there: ours stays
                    };
                    record_conflict(
                        &mut conflicts,
                        &o.path,
                        ConflictKind::EditForget,
                        Some(id),
                        ConflictSide {
                            id: id.clone(),
                            commit: theirs_commit.clone(),
                            text: None,
                            forgotten: Some(tomb.clone()),
                        },
                    );
                    keep_tombstone_out.insert(id.clone());
                    continue;
                }
                (None, Some(t)) => {
                    if ours.parked.contains(id) {
                        continue;
                    }
                    if let Some(tomb) = ours.tombstones.get(id) {
                        record_conflict(
                            &mut conflicts,
                            &t.path,
                            ConflictKind::EditForget,
                            Some(id),
                            ConflictSide {
                                id: id.clone(),
                                commit: ours_commit.clone(),
                                text: None,
                                forgotten: Some(tomb.clone()),
                            },
                        );
                        keep_tombstone_out.insert(id.clone());
                    }
                    Some(t.memory.clone())
                }
                (Some(o), Some(t)) => {
                    let base_memory = b.as_ref().map(|l| &l.memory);
                    match fields::merge_memory(base_memory, &o.memory, &t.memory) {
                        FieldMerge::Merged(m) => Some(*m),
                        FieldMerge::Contradiction => {
                            record_conflict(
                                &mut conflicts,
                                &o.path,
                                ConflictKind::BothChanged,
                                Some(id),
                                ConflictSide {
                                    id: id.clone(),
                                    commit: theirs_commit.clone(),
                                    text: Some(text_of(store, t.blob)),
                                    forgotten: None,
                                },
                            );
                            continue;
                        }
                    }
                }
            }
        };
        decisions.push(Decision {
            id: id.clone(),
            ours: o,
            result,
        });
    }

    // Two different memories claiming one key path: ours stays, the other is parked.
    let removed: HashSet<String> = decisions
        .iter()
        .filter_map(|d| {
            let o = d.ours.as_ref()?;
            let stays = d.result.as_ref().map(layout::path_of).as_deref() == Some(o.path.as_str());
            (!stays).then(|| o.path.clone())
        })
        .collect();
    let mut claimed: HashMap<String, MemoryId> = HashMap::new();
    for d in &decisions {
        if let Some(o) = &d.ours
            && d.result.as_ref().map(layout::path_of).as_deref() == Some(o.path.as_str())
        {
            claimed.insert(o.path.clone(), d.id.clone());
        }
    }
    for d in decisions.iter_mut() {
        let Some(m) = &d.result else { continue };
        let path = layout::path_of(m);
        let holder = match claimed.get(&path) {
            Some(holder) => Some(holder.clone()),
            None if removed.contains(&path) => None,
            None => match ours_snap.blob_id(&path)? {
                Some(blob) => located(store, &path, blob)?.map(|l| l.memory.id),
                None => None,
            },
        };
        match holder {
            Some(holder) if holder != d.id => {
                let text = record::render(m)?;
                absorb(
                    &mut conflicts,
                    ConflictRecord {
                        path: path.clone(),
                        kind: ConflictKind::BothAdded,
                        live: Some(holder),
                        detected: now,
                        base: None,
                        sides: vec![ConflictSide {
                            id: d.id.clone(),
                            commit: theirs_commit.clone(),
                            text: Some(text),
                            forgotten: None,
                        }],
                    },
                );
                d.result = None;
            }
            _ => {
                claimed.insert(path, d.id.clone());
            }
        }
    }

    let mut out = TreeMerge {
        edits: Vec::new(),
        counts: MergeCounts::default(),
        contested: conflicts.keys().cloned().collect(),
    };
    let mut written: HashSet<String> = HashSet::new();
    for d in &decisions {
        let new_path = d.result.as_ref().map(layout::path_of);
        match (&d.ours, &d.result) {
            (None, Some(_)) => out.counts.new += 1,
            (Some(_), None) => out.counts.forgotten += 1,
            (Some(o), Some(m)) if &o.memory != m => out.counts.updated += 1,
            _ => {}
        }
        if let (Some(o), Some(m)) = (&d.ours, &d.result)
            && &o.memory == m
            && new_path.as_deref() == Some(o.path.as_str())
        {
            continue;
        }
        if let Some(m) = &d.result {
            let path = new_path.clone().unwrap_or_default();
            written.insert(path.clone());
            out.edits.push(Edit::Upsert {
                path,
                content: record::render(m)?.into_bytes(),
            });
        }
    }
    for d in &decisions {
        if let Some(o) = &d.ours
            && !written.contains(&o.path)
        {
            out.edits.push(Edit::Remove {
                path: o.path.clone(),
            });
        }
    }

    // Files merged by path: the side that changed one wins, ours when both did; a tombstone of
    // a memory whose edit stayed live is not taken.
    let kept_out_paths: HashSet<String> = keep_tombstone_out
        .iter()
        .map(layout::tombstone_path)
        .collect();
    for (path, new) in &theirs_side.files {
        if ours.files.contains_key(path) {
            continue;
        }
        if kept_out_paths.contains(path) {
            continue;
        }
        out.edits.push(match new {
            Some(blob) => Edit::Upsert {
                path: path.clone(),
                content: store.read_blob(*blob)?,
            },
            None => Edit::Remove { path: path.clone() },
        });
    }
    for id in &keep_tombstone_out {
        if ours.tombstones.contains_key(id) {
            out.edits.push(Edit::Remove {
                path: layout::tombstone_path(id),
            });
        }
    }

    // Conflict records: a record resolved on one side and untouched on the other is resolved;
    // records both sides changed keep every side; new contradictions join the record at their path.
    let mut records: BTreeMap<String, Option<ConflictRecord>> = BTreeMap::new();
    for (path, theirs_blob) in &theirs_side.conflicts {
        let theirs_record = theirs_blob
            .map(|b| ConflictRecord::parse(&store.read_blob(b)?, path))
            .transpose()?;
        let merged = match ours.conflicts.get(path) {
            None => theirs_record,
            Some(ours_blob) => {
                let ours_record = ours_blob
                    .map(|b| ConflictRecord::parse(&store.read_blob(b)?, path))
                    .transpose()?;
                match (ours_record, theirs_record) {
                    (Some(mut o), Some(t)) => {
                        o.absorb(t);
                        Some(o)
                    }
                    (o, t) => o.or(t),
                }
            }
        };
        records.insert(path.clone(), merged);
    }
    for (memory_path, record) in conflicts {
        let path = layout::conflict_path(&memory_path);
        let existing = match records.remove(&path) {
            Some(r) => r,
            None => match ours_snap.read(&path)? {
                Some(bytes) => ConflictRecord::parse(&bytes, &path).ok(),
                None => None,
            },
        };
        let merged = match existing {
            Some(mut e) => {
                let before = e.sides.len();
                e.absorb(record);
                if e.sides.len() > before {
                    out.counts.conflicts += 1;
                }
                e
            }
            None => {
                out.counts.conflicts += 1;
                record
            }
        };
        records.insert(path, Some(merged));
    }
    for (path, record) in records {
        out.edits.push(match record {
            Some(r) => Edit::Upsert {
                path,
                content: r.render()?,
            },
            None => Edit::Remove { path },
        });
    }
    Ok(out)
}

fn absorb(records: &mut BTreeMap<String, ConflictRecord>, record: ConflictRecord) {
    match records.get_mut(&record.path) {
        Some(existing) => existing.absorb(record),
        None => {
            records.insert(record.path.clone(), record);
        }
    }
}

fn text_of(store: &Store, blob: Oid) -> String {
    store
        .read_blob(blob)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
}

/// The open contradictions in a tree: every conflict record, sorted by path.
pub fn open_conflicts(snap: &Snapshot<'_>) -> Result<Vec<ConflictRecord>> {
    let mut out = Vec::new();
    collect_conflicts(snap, layout::CONFLICT_DIR, &mut out)?;
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

fn collect_conflicts(snap: &Snapshot<'_>, dir: &str, out: &mut Vec<ConflictRecord>) -> Result<()> {
    for (name, _) in snap.dirs_in(dir)? {
        collect_conflicts(snap, &format!("{dir}/{name}"), out)?;
    }
    for (name, blob) in snap.files_in(dir)? {
        let path = format!("{dir}/{name}");
        if layout::classify(&path) == PathKind::Conflict {
            out.push(ConflictRecord::parse(&snap.blob(blob)?, &path)?);
        }
    }
    Ok(())
}
