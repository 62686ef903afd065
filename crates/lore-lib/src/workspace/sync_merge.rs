//! Merging one context branch that diverged between two clones (the same branch, written on
//! both sides), as `sync` does: steps are united by step id in time order, commit entries are
//! united, the roadmap and metadata merge three-way. A branch whose roadmap or metadata edits
//! conflict is not merged: sync parks the other side's version beside it.

use git2::Oid;
use jiff::Timestamp;

use super::files::{
    read_meta, read_segments, segment_bytes, segment_path, text_of, to_yaml, upsert,
};
use super::merge::{merge_base, merge_metadata, merge_roadmap};
use super::{BRANCH_FILE, BranchMeta, COMMIT_FILE, METADATA_FILE, ROADMAP_FILE, Resolution};
use crate::error::Result;
use crate::store::{Edit, Message, RefWrite, Snapshot, Store};

/// Whether the remote's version of a context branch would merge into ours cleanly.
pub fn can_merge(store: &Store, refname: &str, theirs: Oid) -> Result<bool> {
    // A branch we do not have merges by being created; any other failure to read it is an error.
    let Some(ours) = crate::store::ref_target(store.repo(), refname)? else {
        return Ok(true);
    };
    let snap = store.snapshot(Some(ours))?;
    Ok(merged_edits(store, &snap, theirs)?.is_some())
}

/// Merges the remote's version of a context branch into ours as a two-parent commit. Returns
/// false (and writes nothing) when the roadmap or metadata edits conflict.
pub fn merge_branch(
    store: &Store,
    refname: &str,
    theirs: Oid,
    remote: &str,
    now: Timestamp,
) -> Result<bool> {
    let repo = store.repo();
    let (merged, _) = store.transact_ref(refname, |snap| {
        let Some(ours) = snap.commit() else {
            return Ok((RefWrite::default(), true));
        };
        if ours == theirs || repo.graph_descendant_of(ours, theirs)? {
            return Ok((RefWrite::default(), true));
        }
        let Some((edits, steps)) = merged_edits(store, snap, theirs)? else {
            return Ok((RefWrite::default(), false));
        };
        let branch = refname.rsplit('/').next().unwrap_or(refname);
        let message = Message {
            subject: format!("ctx sync {branch}: merge {remote} ({steps} step(s) from there)"),
            body: None,
            trailers: vec![
                ("Lore-Action".into(), "merge".into()),
                ("Lore-Remote".into(), remote.to_string()),
                ("Lore-Time".into(), now.to_string()),
            ],
        };
        Ok((
            RefWrite {
                merge_parent: Some(theirs),
                ..RefWrite::on_tip(edits, message)
            },
            true,
        ))
    })?;
    Ok(merged)
}

/// The edits merging `theirs` into the branch at `ours`, and how many steps came over; none
/// when roadmap or metadata conflict.
fn merged_edits(
    store: &Store,
    ours: &Snapshot<'_>,
    theirs: Oid,
) -> Result<Option<(Vec<Edit>, usize)>> {
    let Some(ours_tip) = ours.commit() else {
        return Ok(Some((Vec::new(), 0)));
    };
    let base = merge_base(store.repo(), ours_tip, theirs)?;
    let base_snap = store.snapshot(base)?;
    let theirs_snap = store.snapshot(Some(theirs))?;
    let (mut conflicts, mut resolved) = (Vec::new(), Vec::new());
    let roadmap = merge_roadmap(
        &text_of(&base_snap, ROADMAP_FILE)?,
        &text_of(ours, ROADMAP_FILE)?,
        &text_of(&theirs_snap, ROADMAP_FILE)?,
        &Resolution::Refuse,
        &mut conflicts,
        &mut resolved,
    )?;
    let metadata = merge_metadata(
        &text_of(&base_snap, METADATA_FILE)?,
        &text_of(ours, METADATA_FILE)?,
        &text_of(&theirs_snap, METADATA_FILE)?,
        &Resolution::Refuse,
        &mut conflicts,
        &mut resolved,
    )?;
    if !conflicts.is_empty() {
        return Ok(None);
    }
    let (Some(mut meta), Some(their_meta)) = (read_meta(ours)?, read_meta(&theirs_snap)?) else {
        return Ok(None);
    };
    let base_meta = read_meta(&base_snap)?;
    let have: std::collections::HashSet<String> =
        read_segments(ours)?.into_iter().map(|s| s.id).collect();
    let mut incoming: Vec<_> = read_segments(&theirs_snap)?;
    incoming.retain(|s| !have.contains(&s.id));
    incoming.sort_by(|a, b| a.time.cmp(&b.time).then_with(|| a.id.cmp(&b.id)));
    let mut edits = vec![
        upsert(ROADMAP_FILE, roadmap.into_bytes()),
        upsert(METADATA_FILE, metadata.into_bytes()),
    ];
    if !incoming.is_empty() {
        meta.segments += 1;
        edits.push(upsert(
            &segment_path(meta.segments),
            segment_bytes(&incoming)?,
        ));
    }
    let commit_md = merged_commit_log(&base_snap, ours, &theirs_snap)?;
    edits.push(upsert(COMMIT_FILE, commit_md.into_bytes()));
    merge_meta(&mut meta, base_meta.as_ref(), &their_meta);
    edits.push(upsert(BRANCH_FILE, to_yaml(&meta, BRANCH_FILE)?));
    Ok(Some((edits, incoming.len())))
}

/// The branch's commit log merged: ours, then the entries the other side wrote since the base
/// (unless ours holds them already).
fn merged_commit_log(
    base: &Snapshot<'_>,
    ours: &Snapshot<'_>,
    theirs: &Snapshot<'_>,
) -> Result<String> {
    let base_entries = text_of(base, COMMIT_FILE)?;
    let their_entries = text_of(theirs, COMMIT_FILE)?;
    let mut commit_md = text_of(ours, COMMIT_FILE)?;
    let theirs_new = their_entries
        .strip_prefix(base_entries.as_str())
        .unwrap_or(&their_entries);
    if !commit_md.contains(theirs_new) {
        commit_md.push_str(theirs_new);
    }
    Ok(commit_md)
}

/// The branch's metadata merged into `meta` (ours): the commits the other side made since the
/// base are counted, branches it merged are added, and its summary and last commit are taken
/// when its last commit is the later one.
fn merge_meta(meta: &mut BranchMeta, base: Option<&BranchMeta>, theirs: &BranchMeta) {
    let base_commits = base.map_or(0, |m| m.commits);
    meta.commits += theirs.commits.saturating_sub(base_commits);
    for name in &theirs.merged {
        if !meta.merged.contains(name) {
            meta.merged.push(name.clone());
        }
    }
    let theirs_later = match (&meta.last, &theirs.last) {
        (Some(o), Some(t)) => t.time > o.time,
        (None, Some(_)) => true,
        _ => false,
    };
    if theirs_later {
        meta.summary = theirs.summary.clone();
        meta.last = theirs.last.clone();
    }
}
