//! The merge's plan: what happens to each memory either side touched, decided once per memory
//! from the two sides alone (no writes), and the contradictions found on the way.

use std::collections::{BTreeMap, HashMap, HashSet};

use git2::Oid;
use jiff::Timestamp;

use super::fields::{self, FieldMerge};
use super::markers::{ConflictKind, ConflictRecord, ConflictSide, Tombstone};
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

/// Which side of a merge.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Which {
    Ours,
    Theirs,
}

/// Finds the commit of one side that wrote a file (path and blob): what a conflict record
/// credits a version to.
pub(super) type WriterOf<'a> = dyn FnMut(Which, &str, Oid) -> Result<String> + 'a;

/// The in-force rule for two versions that contradict: the one updated last stays in force,
/// ties broken by the greater blob id, so every clone picks the same one whichever merges
/// first.
fn theirs_in_force(ours: &Located, theirs: &Located) -> bool {
    (theirs.memory.updated, theirs.blob.to_string()) > (ours.memory.updated, ours.blob.to_string())
}

/// What one memory comes to.
enum Verdict {
    /// Nothing to do: unchanged, or absent from the live tree on both sides.
    Unchanged,
    /// The merged state.
    Take(Option<Memory>),
    /// The versions contradict each other: the record, whether a forget lost, and the
    /// version in force when it is not ours (none: ours stays as it is).
    Contradiction {
        record: ConflictRecord,
        forget_lost: bool,
        take: Option<Memory>,
    },
}

/// Plans the merge of `theirs` into `ours`. `holder_at` names the memory our tree holds at a
/// path (for key paths neither side's changes mention).
pub(super) fn plan(
    sides: &Sides<'_>,
    holder_at: &mut dyn FnMut(&str) -> Result<Option<Located>>,
    writer: &mut WriterOf<'_>,
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
        let result = match decide(sides, id, base, ours.as_ref(), writer)? {
            Verdict::Unchanged => continue,
            Verdict::Take(result) => result,
            Verdict::Contradiction {
                record,
                forget_lost,
                take,
            } => {
                if forget_lost {
                    out.tombstones_kept_out.insert(id.clone());
                }
                absorb(&mut out.contradictions, record);
                match take {
                    Some(m) => Some(m),
                    None => continue,
                }
            }
        };
        out.decisions.push(Decision {
            id: id.clone(),
            ours,
            result,
        });
    }
    settle_key_paths(sides, &mut out, holder_at, writer)?;
    Ok(out)
}

/// Decides one memory their side touched, from its base and our state.
fn decide(
    sides: &Sides<'_>,
    id: &MemoryId,
    base: Option<&Located>,
    ours: Option<&Located>,
    writer: &mut WriterOf<'_>,
) -> Result<Verdict> {
    let theirs = sides.theirs.touched[id].as_ref();
    let record = |path: &str, kind, live_commit: String, side: ConflictSide| ConflictRecord {
        path: path.to_string(),
        kind,
        live: Some(id.clone()),
        live_commit: Some(live_commit),
        detected: sides.now,
        base: base.map(|l| l.text.clone()),
        sides: vec![side],
    };
    let forgetting = |which: Which, tomb: &Tombstone, writer: &mut WriterOf<'_>| {
        forgetting_side(sides, id, which, tomb, writer)
    };
    if !sides.ours.touched.contains_key(id) {
        return Ok(match theirs {
            None if !sides.theirs.removed_on_purpose(id) => Verdict::Unchanged,
            _ => Verdict::Take(theirs.map(|l| l.memory.clone())),
        });
    }
    Ok(match (ours, theirs) {
        (None, None) => Verdict::Unchanged,
        (Some(o), Some(t)) if o.blob == t.blob && o.path == t.path => Verdict::Unchanged,
        (Some(o), None) => match sides.theirs.tombstones.get(id) {
            // Absent without a tombstone, or parked there: ours stays.
            None => Verdict::Unchanged,
            // An edit stays in force against a forget, whichever side made it.
            Some(tomb) => Verdict::Contradiction {
                record: record(
                    &o.path,
                    ConflictKind::EditForget,
                    writer(Which::Ours, &o.path, o.blob)?,
                    forgetting(Which::Theirs, tomb, writer)?,
                ),
                forget_lost: true,
                take: None,
            },
        },
        (None, Some(_)) if sides.ours.parked.contains(id) => Verdict::Unchanged,
        (None, Some(t)) => match sides.ours.tombstones.get(id) {
            None => Verdict::Take(Some(t.memory.clone())),
            Some(tomb) => Verdict::Contradiction {
                record: record(
                    &t.path,
                    ConflictKind::EditForget,
                    writer(Which::Theirs, &t.path, t.blob)?,
                    forgetting(Which::Ours, tomb, writer)?,
                ),
                forget_lost: true,
                take: Some(t.memory.clone()),
            },
        },
        (Some(o), Some(t)) => {
            match fields::merge_memory(base.map(|l| &l.memory), &o.memory, &t.memory) {
                FieldMerge::Merged(m) => Verdict::Take(Some(*m)),
                FieldMerge::Contradiction => both_changed(id, o, t, writer, record)?,
            }
        }
    })
}

/// The side of a contradiction that forgot the memory: its tombstone, at the commit that
/// wrote it (or the side's tip when the tombstone came from further back).
fn forgetting_side(
    sides: &Sides<'_>,
    id: &MemoryId,
    which: Which,
    tomb: &Tombstone,
    writer: &mut WriterOf<'_>,
) -> Result<ConflictSide> {
    let (side, tip) = match which {
        Which::Ours => (sides.ours, &sides.ours_commit),
        Which::Theirs => (sides.theirs, &sides.theirs_commit),
    };
    let commit = match side.tombstone_blobs.get(id) {
        Some(blob) => writer(which, &layout::tombstone_path(id), *blob)?,
        None => tip.clone(),
    };
    Ok(ConflictSide {
        id: id.clone(),
        commit,
        text: None,
        forgotten: Some(tomb.clone()),
    })
}

/// Both sides changed the memory's fields in ways that do not merge: the version in force
/// ([`theirs_in_force`]) is live, the other recorded as a side; `record` builds the conflict
/// record at a path from the live commit and the other side.
fn both_changed(
    id: &MemoryId,
    o: &Located,
    t: &Located,
    writer: &mut WriterOf<'_>,
    record: impl Fn(&str, ConflictKind, String, ConflictSide) -> ConflictRecord,
) -> Result<Verdict> {
    let (live, live_which, other, other_which) = if theirs_in_force(o, t) {
        (t, Which::Theirs, o, Which::Ours)
    } else {
        (o, Which::Ours, t, Which::Theirs)
    };
    let side = ConflictSide {
        id: id.clone(),
        commit: writer(other_which, &other.path, other.blob)?,
        text: Some(other.text.clone()),
        forgotten: None,
    };
    Ok(Verdict::Contradiction {
        record: record(
            &o.path,
            ConflictKind::BothChanged,
            writer(live_which, &live.path, live.blob)?,
            side,
        ),
        forget_lost: false,
        take: (live_which == Which::Theirs).then(|| live.memory.clone()),
    })
}

/// Two different memories claiming one key path: the in-force rule ([`theirs_in_force`])
/// decides which holds the path when ours is a memory this merge does not otherwise touch;
/// ours stays when it is one of the merge's own decisions. The other is parked in a conflict
/// record (out of the live tree).
fn settle_key_paths(
    sides: &Sides<'_>,
    plan: &mut Plan,
    holder_at: &mut dyn FnMut(&str) -> Result<Option<Located>>,
    writer: &mut WriterOf<'_>,
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
        let (holder, located) = match claimed.get(&path) {
            Some(holder) => (Some(holder.clone()), None),
            None if removed.contains(&path) => (None, None),
            None => {
                let l = holder_at(&path)?;
                (l.as_ref().map(|l| l.memory.id.clone()), l)
            }
        };
        let Some(holder) = holder.filter(|h| *h != d.id) else {
            claimed.insert(path, d.id.clone());
            continue;
        };
        let candidate = sides
            .theirs
            .touched
            .get(&d.id)
            .and_then(Option::as_ref)
            .filter(|l| l.memory == *m);
        let (record, theirs_holds) =
            key_path_contest(sides, &path, d, m, holder, located, candidate, writer)?;
        absorb(&mut plan.contradictions, record);
        if theirs_holds {
            claimed.insert(path, d.id.clone());
        } else {
            d.result = None;
        }
    }
    Ok(())
}

/// The conflict record of two memories claiming `path`: theirs (`d`, result `m`) takes it
/// when it is in force against the memory held there; otherwise the holder keeps the path and
/// theirs is parked. Returns the record and whether theirs holds the path.
#[allow(clippy::too_many_arguments)] // one contest's parts, each read once
fn key_path_contest(
    sides: &Sides<'_>,
    path: &str,
    d: &Decision,
    m: &Memory,
    holder: MemoryId,
    located: Option<Located>,
    candidate: Option<&Located>,
    writer: &mut WriterOf<'_>,
) -> Result<(ConflictRecord, bool)> {
    if let (Some(held), Some(cand)) = (&located, candidate)
        && theirs_in_force(held, cand)
    {
        let record = ConflictRecord {
            path: path.to_string(),
            kind: ConflictKind::BothAdded,
            live: Some(d.id.clone()),
            live_commit: Some(writer(Which::Theirs, &cand.path, cand.blob)?),
            detected: sides.now,
            base: None,
            sides: vec![ConflictSide {
                id: held.memory.id.clone(),
                commit: writer(Which::Ours, &held.path, held.blob)?,
                text: Some(held.text.clone()),
                forgotten: None,
            }],
        };
        return Ok((record, true));
    }
    let record = ConflictRecord {
        path: path.to_string(),
        kind: ConflictKind::BothAdded,
        live: Some(holder),
        live_commit: match &located {
            Some(h) => Some(writer(Which::Ours, &h.path, h.blob)?),
            None => None,
        },
        detected: sides.now,
        base: None,
        sides: vec![ConflictSide {
            id: d.id.clone(),
            commit: match candidate {
                Some(c) => writer(Which::Theirs, &c.path, c.blob)?,
                None => sides.theirs_commit.clone(),
            },
            text: Some(record::render(m)?),
            forgotten: None,
        }],
    };
    Ok((record, false))
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
