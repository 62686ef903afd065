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
//! - two different memories claiming one key path: a contradiction; the in-force rule below
//!   decides which holds the path.
//!
//! Which version stays in force is the same on every clone whatever the order of merges: an
//! edit beats a forget, otherwise the version updated last, ties by the greater blob id.
//!
//! A contradiction keeps the version in force live (the chain stays writable and readable) and
//! every other version, with the base, as data in a conflict record (`.conflicts/…`, see
//! [`records`]) until someone resolves it. Other files (store file, namespace markers,
//! tombstones) merge by path: the side that changed a file wins, ours when both did.

mod execute;
mod fields;
pub mod markers;
mod plan;
pub(crate) mod purged;
mod side;

use git2::Oid;
use jiff::Timestamp;
use schemars::JsonSchema;
use serde::Serialize;

use crate::error::Result;
use crate::store::layout::{self, PathKind};
use crate::store::{Edit, Snapshot, Store};
use markers::ConflictRecord;
use plan::Sides;
use side::{Side, located};

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

/// Merges `theirs` into `ours` (the snapshot a transaction sees) against `base`: both sides'
/// changes are read, every memory is decided once ([`plan`]), and the plan becomes edits
/// ([`execute`]).
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
    let sides = Sides {
        ours: &ours,
        theirs: &theirs_side,
        ours_commit: ours_tip.map(|c| c.to_string()).unwrap_or_default(),
        theirs_commit: theirs.to_string(),
        now,
    };
    let mut holder_at = |path: &str| -> Result<Option<side::Located>> {
        Ok(match ours_snap.blob_id(path)? {
            Some(blob) => located(store, path, blob)?,
            None => None,
        })
    };
    let mut writer = |which: plan::Which, path: &str, blob: Oid| -> Result<String> {
        let tip = match which {
            plan::Which::Ours => ours_tip,
            plan::Which::Theirs => Some(theirs),
        };
        Ok(match tip {
            Some(tip) => side::writer_commit(store, base, tip, path, blob)?.to_string(),
            None => String::new(),
        })
    };
    let plan = plan::plan(&sides, &mut holder_at, &mut writer)?;
    execute::execute(store, ours_snap, &sides, plan)
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
