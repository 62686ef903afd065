//! `ctx merge`: a two-parent commit whose roadmap is merged three-way (libgit2's `merge_file`)
//! and whose metadata is merged segment by segment; conflicts refuse the merge unless a
//! resolution is given.

use git2::Oid;

use super::files::{
    normalize_doc, read_meta, read_segments, segment_bytes, segment_path, text_of, to_yaml,
    to_yaml_text, upsert,
};
use super::log_md::Step;
use super::metadata::parse_metadata;
use super::summary::{commit_md_entry, compose_summary, new_sentences};
use super::{
    BRANCH_FILE, BranchMeta, COMMIT_FILE, Entry, EntryKind, METADATA_FILE, MergeOutcome,
    ROADMAP_FILE, Resolution, Workspace, branch_ref,
};
use crate::error::{Error, Result};
use crate::store::{Edit, RefWrite, Snapshot, WriteContext};
use jiff::Timestamp;

impl Workspace<'_> {
    /// The branches of a merge of `source` into `into` (default: the current branch), and the
    /// source's tip; a branch merged into itself or without commits is refused.
    pub(super) fn merge_branches(
        &self,
        source: &str,
        into: Option<&str>,
    ) -> Result<(String, String, git2::Oid)> {
        let target = self.resolve(into)?;
        let source = self.resolve(Some(source))?;
        if source == target {
            return Err(Error::Invalid {
                what: "merge",
                value: source,
                reason: "a branch cannot be merged into itself".into(),
            });
        }
        let source_tip = self
            .tip(&source)?
            .ok_or_else(|| self.unknown_branch(&source))?;
        Ok((source, target, source_tip))
    }

    /// `ctx merge`: merges `source` into the current (or given) branch as a two-parent commit.
    /// The roadmap and metadata are merged three-way; conflicting edits refuse the merge (with
    /// every conflict listed) unless a resolution is given. The source's log steps not yet in
    /// the target come over with their origin, and the summaries are combined.
    pub fn merge(
        &self,
        source: &str,
        into: Option<&str>,
        resolution: &Resolution,
        ctx: &WriteContext,
    ) -> Result<MergeOutcome> {
        let screened;
        let resolution = match resolution {
            Resolution::Roadmap(r) => {
                screened = Resolution::Roadmap(self.screened("roadmap", r)?);
                &screened
            }
            other => other,
        };
        let (source, target, source_tip) = self.merge_branches(source, into)?;
        let source_snap = self.store.snapshot(Some(source_tip))?;
        let from = MergeSource {
            meta: read_meta(&source_snap)?
                .ok_or_else(|| Error::ContextNotFound(format!("{source} has no {BRANCH_FILE}")))?,
            steps: read_segments(&source_snap)?,
            roadmap: text_of(&source_snap, ROADMAP_FILE)?,
            metadata: text_of(&source_snap, METADATA_FILE)?,
            name: source,
            tip: source_tip,
        };
        let uncommitted_left = self.uncommitted(&from.name)?.items.len();
        let now = Self::now(ctx);
        let repo = self.store.repo();
        let ((summary, steps, resolved), commit) =
            self.store.transact_ref(&branch_ref(&target), |snap| {
                let tip = snap.commit().ok_or_else(|| self.unknown_branch(&target))?;
                if tip == source_tip || repo.graph_descendant_of(tip, source_tip)? {
                    return Ok((RefWrite::default(), (None, 0, Vec::new())));
                }
                let (roadmap, metadata, resolved) =
                    self.merged_texts(snap, &from, &target, resolution)?;
                let (mut edits, meta, contribution, incoming) =
                    self.merge_record(snap, &from, &target, now)?;
                edits.push(upsert(ROADMAP_FILE, roadmap.into_bytes()));
                edits.push(upsert(METADATA_FILE, metadata.into_bytes()));
                let mut body = contribution;
                if !resolved.is_empty() {
                    body.push_str("\n\nResolved conflicts:\n");
                    for r in &resolved {
                        body.push_str(&format!("- {r}\n"));
                    }
                }
                let message = self.message(
                    format!("ctx merge {} into {target}", from.name),
                    Some(body),
                    EntryKind::Merge,
                    &target,
                    ctx,
                );
                Ok((
                    RefWrite {
                        merge_parent: Some(source_tip),
                        ..RefWrite::on_tip(edits, message)
                    },
                    (Some(meta.summary), incoming, resolved),
                ))
            })?;
        let wrote = summary.is_some();
        let summary = match summary {
            Some(s) => s,
            None => self.meta(&target)?.summary,
        };
        Ok(MergeOutcome {
            into: target,
            from: from.name,
            commit: commit.filter(|_| wrote).map(|c| c.to_string()),
            steps,
            resolved,
            summary,
            uncommitted_left,
        })
    }

    /// The roadmap and metadata merged three-way against the branches' merge base (an empty
    /// one, said, when they share no history), and the conflicts the resolution settled; any
    /// conflict left refuses the merge, listing them all.
    fn merged_texts(
        &self,
        snap: &Snapshot<'_>,
        from: &MergeSource,
        target: &str,
        resolution: &Resolution,
    ) -> Result<(String, String, Vec<String>)> {
        let tip = snap.commit().ok_or_else(|| self.unknown_branch(target))?;
        let base = merge_base(self.store.repo(), tip, from.tip)?;
        if base.is_none() {
            self.warn(format!(
                "{} and {target} share no history (an imported branch?): merged against an \
                 empty base, so roadmap lines and metadata segments that differ conflict",
                from.name
            ));
        }
        let base_snap = self.store.snapshot(base)?;
        let mut conflicts = Vec::new();
        let mut resolved = Vec::new();
        let roadmap = merge_roadmap(
            &text_of(&base_snap, ROADMAP_FILE)?,
            &text_of(snap, ROADMAP_FILE)?,
            &from.roadmap,
            resolution,
            &mut conflicts,
            &mut resolved,
        )?;
        let metadata = merge_metadata(
            &text_of(&base_snap, METADATA_FILE)?,
            &text_of(snap, METADATA_FILE)?,
            &from.metadata,
            resolution,
            &mut conflicts,
            &mut resolved,
        )?;
        if !conflicts.is_empty() {
            return Err(Error::MergeConflict {
                into: target.to_string(),
                from: from.name.clone(),
                conflicts,
            });
        }
        Ok((roadmap, metadata, resolved))
    }

    /// The merge's record on the target: a segment of the source's steps the target lacks
    /// (each naming its origin), the summary with the source's contribution, the `commit.md`
    /// entry and the branch record. Returns those edits, the new branch record, the
    /// contribution, and how many steps came over.
    fn merge_record(
        &self,
        snap: &Snapshot<'_>,
        from: &MergeSource,
        target: &str,
        now: Timestamp,
    ) -> Result<(Vec<Edit>, BranchMeta, String, usize)> {
        let source = &from.name;
        let mut meta = read_meta(snap)?.ok_or_else(|| self.unknown_branch(target))?;
        let have: std::collections::HashSet<String> =
            read_segments(snap)?.into_iter().map(|s| s.id).collect();
        let incoming: Vec<Step> = from
            .steps
            .iter()
            .filter(|s| !have.contains(&s.id))
            .map(|s| {
                let mut s = s.clone();
                if s.origin.is_none() {
                    s.origin = Some(source.clone());
                }
                s
            })
            .collect();
        let mut edits = Vec::new();
        let segment = if incoming.is_empty() {
            None
        } else {
            meta.segments += 1;
            let path = segment_path(meta.segments);
            edits.push(upsert(&path, segment_bytes(&incoming)?));
            Some(path)
        };
        // What the branch adds: its summary less what this branch already states (a branch
        // starts from its parent's summary), so nothing is stated twice.
        let added = new_sentences(&meta.summary, &from.meta.summary);
        let contribution = if added.is_empty() {
            format!("Merged branch {source} ({}).", from.meta.purpose)
        } else {
            format!("Merged branch {source} ({}): {added}", from.meta.purpose)
        };
        meta.commits += 1;
        let new_summary = compose_summary(&meta.summary, &contribution);
        let entry = Entry {
            steps: incoming.len(),
            segment,
            merged: Some(source.clone()),
            ..self.entry(&meta, EntryKind::Merge, &contribution, &new_summary, now)
        };
        let mut commit_md = text_of(snap, COMMIT_FILE)?;
        commit_md.push_str(&commit_md_entry(target, Some(&commit_md), &entry));
        edits.push(upsert(COMMIT_FILE, commit_md.into_bytes()));
        meta.summary = new_summary;
        if !meta.merged.contains(source) {
            meta.merged.push(source.clone());
        }
        meta.last = Some(entry);
        edits.push(upsert(BRANCH_FILE, to_yaml(&meta, BRANCH_FILE)?));
        Ok((edits, meta, contribution, incoming.len()))
    }
}

/// What a merge takes from its source branch, read once before the target's transaction.
struct MergeSource {
    name: String,
    tip: Oid,
    meta: BranchMeta,
    steps: Vec<Step>,
    roadmap: String,
    metadata: String,
}

/// The merge when only one side changed (or both alike).
fn trivial_merge(base: &str, ours: &str, theirs: &str) -> Option<String> {
    if ours == theirs || base == theirs {
        Some(ours.to_string())
    } else if base == ours {
        Some(theirs.to_string())
    } else {
        None
    }
}

pub(super) fn merge_roadmap(
    base: &str,
    ours: &str,
    theirs: &str,
    resolution: &Resolution,
    conflicts: &mut Vec<String>,
    resolved: &mut Vec<String>,
) -> Result<String> {
    if let Some(merged) = trivial_merge(base, ours, theirs) {
        return Ok(merged);
    }
    let mut b = git2::MergeFileInput::new();
    b.content(base.as_bytes()).path(ROADMAP_FILE);
    let mut o = git2::MergeFileInput::new();
    o.content(ours.as_bytes()).path(ROADMAP_FILE);
    let mut t = git2::MergeFileInput::new();
    t.content(theirs.as_bytes()).path(ROADMAP_FILE);
    let mut opts = git2::MergeFileOptions::new();
    opts.our_label("current").their_label("merged");
    let merged = crate::store::merge_file(&b, &o, &t, &mut opts)?;
    let text = String::from_utf8_lossy(merged.content()).into_owned();
    if merged.is_automergeable() {
        return Ok(text);
    }
    match resolution {
        Resolution::Refuse => {
            for hunk in conflict_hunks(&text) {
                conflicts.push(format!("{ROADMAP_FILE}:\n{hunk}"));
            }
            Ok(text)
        }
        Resolution::Roadmap(r) => {
            resolved.push(format!("{ROADMAP_FILE}: replaced by the roadmap given"));
            Ok(normalize_doc(r))
        }
        Resolution::Ours | Resolution::Theirs => {
            let favor = if *resolution == Resolution::Ours {
                git2::FileFavor::Ours
            } else {
                git2::FileFavor::Theirs
            };
            opts.favor(favor);
            let merged = crate::store::merge_file(&b, &o, &t, &mut opts)?;
            resolved.push(format!(
                "{ROADMAP_FILE}: conflicting lines taken from {}",
                if *resolution == Resolution::Ours {
                    "the current branch"
                } else {
                    "the merged branch"
                }
            ));
            Ok(String::from_utf8_lossy(merged.content()).into_owned())
        }
    }
}

/// The conflict regions of a merged file, markers included.
fn conflict_hunks(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if line.starts_with("<<<<<<<") {
            current = Some(String::new());
        }
        if let Some(c) = current.as_mut() {
            c.push_str(line);
            c.push('\n');
        }
        if line.starts_with(">>>>>>>")
            && let Some(c) = current.take()
        {
            out.push(c);
        }
    }
    out
}

pub(super) fn merge_metadata(
    base: &str,
    ours: &str,
    theirs: &str,
    resolution: &Resolution,
    conflicts: &mut Vec<String>,
    resolved: &mut Vec<String>,
) -> Result<String> {
    if let Some(merged) = trivial_merge(base, ours, theirs) {
        return Ok(merged);
    }
    let base = parse_metadata(base)?;
    let ours_v = parse_metadata(ours)?;
    let theirs_v = parse_metadata(theirs)?;
    let empty = serde_norway::Mapping::new();
    let bm = base.as_mapping().unwrap_or(&empty);
    let om = ours_v.as_mapping().unwrap_or(&empty);
    let tm = theirs_v.as_mapping().unwrap_or(&empty);
    let mut out = om.clone();
    let mut keys: Vec<&serde_norway::Value> = om.keys().collect();
    keys.extend(tm.keys().filter(|k| !om.contains_key(*k)));
    keys.extend(
        bm.keys()
            .filter(|k| !om.contains_key(*k) && !tm.contains_key(*k)),
    );
    for key in keys {
        let (b, o, t) = (bm.get(key), om.get(key), tm.get(key));
        if o == t || b == t {
            continue;
        }
        if b == o {
            match t {
                Some(t) => {
                    out.insert(key.clone(), t.clone());
                }
                None => {
                    out.remove(key);
                }
            }
            continue;
        }
        let name = match key.as_str() {
            Some(name) => name.to_string(),
            None => yaml_inline(key)?,
        };
        match resolution {
            Resolution::Theirs => {
                match t {
                    Some(t) => {
                        out.insert(key.clone(), t.clone());
                    }
                    None => {
                        out.remove(key);
                    }
                }
                resolved.push(format!(
                    "{METADATA_FILE} segment {name}: taken from the merged branch"
                ));
            }
            Resolution::Ours => {
                resolved.push(format!(
                    "{METADATA_FILE} segment {name}: kept the current branch's"
                ));
            }
            _ => {
                let show = |v: Option<&serde_norway::Value>| match v {
                    Some(v) => yaml_inline(v),
                    None => Ok("(removed)".into()),
                };
                conflicts.push(format!(
                    "{METADATA_FILE} segment {name}: current has {}, merged has {}",
                    show(o)?,
                    show(t)?
                ));
            }
        }
    }
    to_yaml_text(&serde_norway::Value::Mapping(out), METADATA_FILE)
}

/// A metadata value (or key) as YAML text, for a conflict message.
fn yaml_inline(value: &serde_norway::Value) -> Result<String> {
    Ok(to_yaml_text(value, METADATA_FILE)?.trim().to_string())
}

/// The merge base of two context commits: `None` when they share no history (an imported
/// branch meets the others only in merges). Any other failure is an error: a merge against the
/// wrong base would take back or duplicate edits.
pub(crate) fn merge_base(repo: &git2::Repository, a: Oid, b: Oid) -> Result<Option<Oid>> {
    match repo.merge_base(a, b) {
        Ok(base) => Ok(Some(base)),
        Err(e) if e.code() == git2::ErrorCode::NotFound && e.class() == git2::ErrorClass::Merge => {
            Ok(None)
        }
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_conflicts_name_segments_whatever_their_keys() {
        let (mut conflicts, mut resolved) = (Vec::new(), Vec::new());
        let merged = merge_metadata(
            "7: base\nname: base\n",
            "7: ours\nname: ours\n",
            "7: theirs\nname: theirs\n",
            &Resolution::Refuse,
            &mut conflicts,
            &mut resolved,
        )
        .unwrap();
        assert!(merged.contains("ours"));
        assert_eq!(
            conflicts,
            vec![
                "metadata.yaml segment 7: current has ours, merged has theirs".to_string(),
                "metadata.yaml segment name: current has ours, merged has theirs".to_string(),
            ]
        );
        assert!(resolved.is_empty());
    }
}
