//! The merge's plan: what happens to each memory either side touched, decided once per memory
//! from the two sides alone (no writes), and the contradictions found on the way.

use std::collections::{BTreeMap, HashMap, HashSet};

use jiff::Timestamp;

use super::fields::{self, FieldMerge};
use super::records::{ConflictKind, ConflictRecord, ConflictSide};
use super::side::{Located, Side};
use crate::error::Result;
use crate::model::{Memory, MemoryId};
use crate::record;
use crate::store::layout;

/// What the merge does with one memory.
pub(super) struct Decision {
    pub id: MemoryId,
    /// Our state before the merge.
    pub ours: Option<Located>,
    /// The merged state (none: not in the live tree).
    pub result: Option<Memory>,
}

/// Every decision, the contradictions (keyed by memory path), and the memories whose
/// forget lost against an edit (their tombstone stays out of the merged tree).
pub(super) struct Plan {
    pub decisions: Vec<Decision>,
    pub contradictions: BTreeMap<String, ConflictRecord>,
    pub tombstones_kept_out: HashSet<MemoryId>,
}

/// The fixed facts of one merge: its two sides, their tips and the time it records.
pub(super) struct Sides<'a> {
    pub ours: &'a Side,
    pub theirs: &'a Side,
    pub ours_commit: String,
    pub theirs_commit: String,
    pub now: Timestamp,
}

/// What one memory comes to.
enum Verdict {
    /// Nothing to do: unchanged, or absent from the live tree on both sides.
    Unchanged,
    /// The merged state.
    Take(Option<Memory>),
    /// The versions contradict each other: the record, and whether a forget lost.
    Contradiction(ConflictRecord, bool),
    /// An edit won over a forget on the other side: the edit stays live, with the record.
    EditOverForget(Option<Memory>, ConflictRecord),
}

/// Plans the merge of `theirs` into `ours`. `holder_at` names the memory our tree holds at a
/// path (for key paths neither side's changes mention).
pub(super) fn plan(
    sides: &Sides<'_>,
    holder_at: &mut dyn FnMut(&str) -> Result<Option<MemoryId>>,
) -> Result<Plan> {
    let mut out = Plan {
        decisions: Vec::new(),
        contradictions: BTreeMap::new(),
        tombstones_kept_out: HashSet::new(),
    };
    let mut ids: Vec<&MemoryId> = sides.theirs.touched.keys().collect();
    ids.sort();
    for id in ids {
        let base = sides
            .theirs
            .base
            .get(id)
            .or_else(|| sides.ours.base.get(id));
        let ours = match sides.ours.touched.get(id) {
            Some(state) => state.clone(),
            None => base.cloned(),
        };
        let result = match decide(sides, id, base, ours.as_ref()) {
            Verdict::Unchanged => continue,
            Verdict::Take(result) => result,
            Verdict::Contradiction(record, forget_lost) => {
                if forget_lost {
                    out.tombstones_kept_out.insert(id.clone());
                }
                absorb(&mut out.contradictions, record);
                continue;
            }
            Verdict::EditOverForget(result, record) => {
                out.tombstones_kept_out.insert(id.clone());
                absorb(&mut out.contradictions, record);
                result
            }
        };
        out.decisions.push(Decision {
            id: id.clone(),
            ours,
            result,
        });
    }
    settle_key_paths(sides, &mut out, holder_at)?;
    Ok(out)
}

/// Decides one memory their side touched, from its base and our state.
fn decide(
    sides: &Sides<'_>,
    id: &MemoryId,
    base: Option<&Located>,
    ours: Option<&Located>,
) -> Verdict {
    let theirs = sides.theirs.touched[id].as_ref();
    let record = |path: &str, kind, commit: &str, text: Option<String>, forgotten| ConflictRecord {
        path: path.to_string(),
        kind,
        live: Some(id.clone()),
        detected: sides.now,
        base: base.map(|l| l.text.clone()),
        sides: vec![ConflictSide {
            id: id.clone(),
            commit: commit.to_string(),
            text,
            forgotten,
        }],
    };
    if !sides.ours.touched.contains_key(id) {
        return match theirs {
            None if !sides.theirs.removed_on_purpose(id) => Verdict::Unchanged,
            _ => Verdict::Take(theirs.map(|l| l.memory.clone())),
        };
    }
    match (ours, theirs) {
        (None, None) => Verdict::Unchanged,
        (Some(o), Some(t)) if o.blob == t.blob && o.path == t.path => Verdict::Unchanged,
        (Some(o), None) => match sides.theirs.tombstones.get(id) {
            // Absent without a tombstone, or parked there: ours stays.
            None => Verdict::Unchanged,
            Some(tomb) => Verdict::Contradiction(
                record(
                    &o.path,
                    ConflictKind::EditForget,
                    &sides.theirs_commit,
                    None,
                    Some(tomb.clone()),
                ),
                true,
            ),
        },
        (None, Some(_)) if sides.ours.parked.contains(id) => Verdict::Unchanged,
        (None, Some(t)) => match sides.ours.tombstones.get(id) {
            None => Verdict::Take(Some(t.memory.clone())),
            Some(tomb) => Verdict::EditOverForget(
                Some(t.memory.clone()),
                record(
                    &t.path,
                    ConflictKind::EditForget,
                    &sides.ours_commit,
                    None,
                    Some(tomb.clone()),
                ),
            ),
        },
        (Some(o), Some(t)) => {
            match fields::merge_memory(base.map(|l| &l.memory), &o.memory, &t.memory) {
                FieldMerge::Merged(m) => Verdict::Take(Some(*m)),
                FieldMerge::Contradiction => Verdict::Contradiction(
                    record(
                        &o.path,
                        ConflictKind::BothChanged,
                        &sides.theirs_commit,
                        Some(t.text.clone()),
                        None,
                    ),
                    false,
                ),
            }
        }
    }
}

/// Two different memories claiming one key path: the one our tree keeps there stays, the
/// other is parked in a conflict record (out of the live tree).
fn settle_key_paths(
    sides: &Sides<'_>,
    plan: &mut Plan,
    holder_at: &mut dyn FnMut(&str) -> Result<Option<MemoryId>>,
) -> Result<()> {
    let stays_at_its_path = |d: &Decision| {
        let o = d.ours.as_ref()?;
        let stays = d.result.as_ref().map(layout::path_of).as_deref() == Some(o.path.as_str());
        Some((o.path.clone(), stays))
    };
    let removed: HashSet<String> = plan
        .decisions
        .iter()
        .filter_map(|d| stays_at_its_path(d).filter(|(_, stays)| !stays))
        .map(|(path, _)| path)
        .collect();
    let mut claimed: HashMap<String, MemoryId> = plan
        .decisions
        .iter()
        .filter_map(|d| {
            stays_at_its_path(d)
                .filter(|(_, stays)| *stays)
                .map(|(path, _)| (path, d.id.clone()))
        })
        .collect();
    for d in plan.decisions.iter_mut() {
        let Some(m) = &d.result else { continue };
        let path = layout::path_of(m);
        let holder = match claimed.get(&path) {
            Some(holder) => Some(holder.clone()),
            None if removed.contains(&path) => None,
            None => holder_at(&path)?,
        };
        match holder {
            Some(holder) if holder != d.id => {
                let record = ConflictRecord {
                    path: path.clone(),
                    kind: ConflictKind::BothAdded,
                    live: Some(holder),
                    detected: sides.now,
                    base: None,
                    sides: vec![ConflictSide {
                        id: d.id.clone(),
                        commit: sides.theirs_commit.clone(),
                        text: Some(record::render(m)?),
                        forgotten: None,
                    }],
                };
                absorb(&mut plan.contradictions, record);
                d.result = None;
            }
            _ => {
                claimed.insert(path, d.id.clone());
            }
        }
    }
    Ok(())
}

/// Adds a contradiction to the one already found at its path, if any.
pub(super) fn absorb(records: &mut BTreeMap<String, ConflictRecord>, record: ConflictRecord) {
    match records.get_mut(&record.path) {
        Some(existing) => existing.absorb(record),
        None => {
            records.insert(record.path.clone(), record);
        }
    }
}
