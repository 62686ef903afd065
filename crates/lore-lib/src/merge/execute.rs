//! Carrying out a merge's plan: the edits that turn our tree into the merge of both sides
//! (memories, plain files by path, conflict records), and what they amount to.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::markers::ConflictRecord;
use super::plan::{Decision, Plan, Sides};
use super::{MergeCounts, TreeMerge};
use crate::error::Result;
use crate::model::{Memory, MemoryId};
use crate::record;
use crate::store::layout;
use crate::store::{Edit, Snapshot, Store};

/// The edits of a plan, on our snapshot.
pub(super) fn execute(
    store: &Store,
    ours_snap: &Snapshot<'_>,
    sides: &Sides<'_>,
    plan: Plan,
) -> Result<TreeMerge> {
    let mut out = TreeMerge {
        edits: Vec::new(),
        counts: MergeCounts::default(),
        contested: plan.contradictions.keys().cloned().collect(),
    };
    memory_edits(&plan.decisions, &mut out)?;
    file_edits(store, sides, &plan.tombstones_kept_out, &mut out)?;
    let in_force: HashMap<String, &Memory> = plan
        .decisions
        .iter()
        .filter_map(|d| d.result.as_ref().map(|m| (layout::path_of(m), m)))
        .collect();
    conflict_record_edits(ours_snap, sides, plan.contradictions, &in_force, &mut out)?;
    Ok(out)
}

/// Each decided memory written at its path (unless unchanged there), and every old path it
/// left removed.
fn memory_edits(decisions: &[Decision], out: &mut TreeMerge) -> Result<()> {
    // The paths that hold a decided memory after the merge: written, or left as they are.
    let mut kept: HashSet<String> = HashSet::new();
    for d in decisions {
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
            kept.insert(o.path.clone());
            continue;
        }
        if let Some(m) = &d.result {
            let path = new_path.clone().unwrap_or_default();
            kept.insert(path.clone());
            out.edits.push(Edit::Upsert {
                path,
                content: record::render(m)?.into_bytes(),
            });
        }
    }
    for d in decisions {
        if let Some(o) = &d.ours
            && !kept.contains(&o.path)
        {
            out.edits.push(Edit::Remove {
                path: o.path.clone(),
            });
        }
    }
    Ok(())
}

/// Files merged by path: the side that changed one wins, ours when both did; a tombstone of a
/// memory whose edit stayed live is not taken (and ours is removed).
fn file_edits(
    store: &Store,
    sides: &Sides<'_>,
    kept_out: &HashSet<MemoryId>,
    out: &mut TreeMerge,
) -> Result<()> {
    let kept_out_paths: HashSet<String> = kept_out.iter().map(layout::tombstone_path).collect();
    for (path, new) in &sides.theirs.files {
        if sides.ours.files.contains_key(path) || kept_out_paths.contains(path) {
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
    for id in kept_out {
        if sides.ours.tombstones.contains_key(id) {
            out.edits.push(Edit::Remove {
                path: layout::tombstone_path(id),
            });
        }
    }
    Ok(())
}

/// Conflict records: a record resolved on one side and untouched on the other is resolved;
/// records both sides changed keep every side; new contradictions join the record at their
/// path. A record of ours that does not parse is an error, never overwritten.
fn conflict_record_edits(
    ours_snap: &Snapshot<'_>,
    sides: &Sides<'_>,
    contradictions: BTreeMap<String, ConflictRecord>,
    in_force: &HashMap<String, &Memory>,
    out: &mut TreeMerge,
) -> Result<()> {
    let mut records: BTreeMap<String, Option<ConflictRecord>> = BTreeMap::new();
    for (path, theirs) in &sides.theirs.conflicts {
        let merged = match sides.ours.conflicts.get(path) {
            None => theirs.clone(),
            Some(ours) => match (ours.clone(), theirs.clone()) {
                (Some(mut o), Some(t)) => {
                    o.absorb(t);
                    Some(o)
                }
                (o, t) => o.or(t),
            },
        };
        records.insert(path.clone(), merged);
    }
    for (memory_path, record) in contradictions {
        let path = layout::conflict_path(&memory_path);
        let existing = match records.remove(&path) {
            Some(r) => r,
            None => ours_snap
                .read(&path)?
                .map(|bytes| ConflictRecord::parse(&bytes, &path))
                .transpose()?,
        };
        let merged = match existing {
            Some(mut e) => {
                let before = e.sides.len();
                // The new contradiction names the version in force now.
                let (live, live_commit) = (record.live.clone(), record.live_commit.clone());
                e.absorb(record);
                e.live = live;
                e.live_commit = live_commit;
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
        let record = match record {
            Some(mut r) => {
                // A version once kept aside that is in force now is no longer an "other".
                let live_now = match in_force.get(&r.path) {
                    Some(m) => Some((*m).clone()),
                    None => ours_snap
                        .read(&r.path)?
                        .and_then(|b| String::from_utf8(b).ok())
                        .and_then(|t| record::parse(&t, &r.path).ok()),
                };
                if let Some(live) = live_now {
                    r.sides.retain(|s| s.memory().as_ref() != Some(&live));
                }
                (!r.sides.is_empty()).then_some(r)
            }
            None => None,
        };
        out.edits.push(match record {
            Some(r) => Edit::Upsert {
                path,
                content: r.render()?,
            },
            None => Edit::Remove { path },
        });
    }
    Ok(())
}
