//! Changing memories that exist: update (a patch applied to the version at the tip), supersede
//! (a new memory replaces an old one, linked both ways), forget (a deletion commit that leaves a
//! tombstone, so the deletion travels through merges) and purge (every version removed from
//! lore's history).

use std::collections::HashSet;

use serde::Serialize;

use super::Lore;
use super::namespaces::check_namespace;
use super::screening::screen_memory;
use super::write::{NewMemory, Written, commit_text, display_name, free_path};
use crate::error::{Error, Result};
use crate::merge::markers::Tombstone;
use crate::model::{Citation, Memory, MemoryId, Status, check_summary, normalize_tags};
use crate::record;
use crate::store::layout::{id_path, path_of, purge_path, tombstone_path};
use crate::store::purged::{PurgeRecord, text_digest};
use crate::store::{Edit, Message, Snapshot, WriteContext, purge::PurgeReport};

/// Changes to apply to an existing memory.
#[derive(Clone, Debug, Default)]
pub struct Patch {
    /// New summary.
    pub summary: Option<String>,
    /// New body.
    pub body: Option<String>,
    /// Tags to add.
    pub add_tags: Vec<String>,
    /// Tags to remove.
    pub remove_tags: Vec<String>,
    /// New status.
    pub status: Option<Status>,
    /// New confidence.
    pub confidence: Option<f64>,
    /// Citations to add.
    pub add_citations: Vec<Citation>,
    /// Related memory ids to add.
    pub add_relates_to: Vec<String>,
}

impl Patch {
    /// Whether the patch changes nothing.
    pub fn is_empty(&self) -> bool {
        self.summary.is_none()
            && self.body.is_none()
            && self.add_tags.is_empty()
            && self.remove_tags.is_empty()
            && self.status.is_none()
            && self.confidence.is_none()
            && self.add_citations.is_empty()
            && self.add_relates_to.is_empty()
    }
}

/// The result of `supersede`.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Superseded {
    /// The old memory, now marked superseded.
    pub old: Written,
    /// The new memory.
    pub new: Written,
}

impl Lore {
    /// Whether the memory `id` was forgotten here (its tombstone is in the tree at the tip).
    pub fn was_forgotten(&self, id: &MemoryId) -> Result<bool> {
        let snap = self.store.snapshot(self.store.tip()?)?;
        Ok(snap.blob_id(&tombstone_path(id))?.is_some())
    }

    /// Which of these ids were forgotten (a tombstone at the tip), read from one snapshot.
    pub fn forgotten_among<'i>(&self, ids: &[&'i str]) -> Result<HashSet<&'i str>> {
        let snap = self.store.snapshot(self.store.tip()?)?;
        let mut out = HashSet::new();
        for id in ids {
            let Ok(parsed) = MemoryId::parse(id) else {
                continue;
            };
            if snap.blob_id(&tombstone_path(&parsed))?.is_some() {
                out.insert(*id);
            }
        }
        Ok(out)
    }

    /// Applies a patch to a memory (one commit). The patch is applied to the version at the tip,
    /// so concurrent updates of different fields all take effect.
    pub fn update(&mut self, query: &str, patch: &Patch, ctx: &WriteContext) -> Result<Written> {
        let (path, found) = self.resolve(query)?;
        if patch.is_empty() {
            return Err(Error::Invalid {
                what: "update",
                value: found.id.to_string(),
                reason: "nothing to change; give --summary, --body, --tag, --status, …".into(),
            });
        }
        let now = ctx.now();
        let policy = self.write_rules()?;
        let ((memory, path, secrets), commit) = self.store.transact(|snap| {
            let mut m = read_memory_at(snap, &path, &found.id)?;
            apply_patch(&mut m, patch)?;
            m.updated = now.max(m.created);
            m.validate()?;
            let secrets = screen_memory(&mut m, policy)?;
            let message = Message {
                subject: format!("update {}: {}", display_name(&m), m.summary),
                body: None,
                trailers: ctx.trailers("update", &[&m.id]),
            };
            let content = record::render(&m)?.into_bytes();
            Ok((
                vec![Edit::Upsert {
                    path: path.clone(),
                    content,
                }],
                message,
                (m, path.clone(), secrets),
            ))
        })?;
        Ok(Written {
            memory,
            path,
            commit: commit_text(commit),
            secrets,
        })
    }

    /// Replaces a memory by a new one: the old is marked superseded and linked both ways. A keyed
    /// memory's key passes to the new memory (the old one moves to its id path).
    ///
    /// What `new` leaves empty carries over from the old memory (as it is at the tip the write
    /// lands on): the namespace (empty string), the key (`None`), the body (empty or blank), the
    /// tags, citations and related memories (empty lists) and the confidence (`None`). Give a
    /// field to replace it; the summary is always the new one's.
    pub fn supersede(
        &mut self,
        query: &str,
        new: &NewMemory,
        ctx: &WriteContext,
    ) -> Result<Superseded> {
        let (old_path, found) = self.resolve(query)?;
        self.supersede_at(old_path, found, new, ctx)
    }

    /// [`Lore::supersede`] of a memory already found, at the path it has.
    pub(super) fn supersede_at(
        &mut self,
        old_path: String,
        found: Memory,
        new: &NewMemory,
        ctx: &WriteContext,
    ) -> Result<Superseded> {
        let mut new = new.clone();
        if new.namespace.is_empty() {
            new.namespace = found.namespace.to_string();
        }
        if new.key.is_none() {
            new.key = found.key.as_ref().map(|k| k.to_string());
        }
        let prepared = self.prepare(&new, ctx)?;
        let policy = self.write_rules()?;
        let now = prepared.created;
        let ((old, old_new_path, fresh, fresh_path, secrets), commit) =
            self.store.transact(|snap| {
                let mut old = read_memory_at(snap, &old_path, &found.id)?;
                if let Some(by) = &old.superseded_by {
                    return Err(Error::Invalid {
                        what: "supersede",
                        value: old.id.to_string(),
                        reason: format!("it is already superseded by {by}"),
                    });
                }
                let mut fresh = prepared.clone();
                carry_over(&mut fresh, &old, &new);
                fresh.supersedes = Some(old.id.clone());
                fresh.validate()?;
                let secrets = screen_memory(&mut fresh, policy)?;
                check_namespace(snap, &fresh.namespace)?;
                old.status = Status::Superseded;
                old.superseded_by = Some(fresh.id.clone());
                old.updated = now.max(old.created);
                let (edits, old_target, fresh_path) =
                    supersession_edits(snap, &old_path, &old, &mut fresh)?;
                let message = Message {
                    subject: format!(
                        "supersede {} by {}: {}",
                        display_name(&old),
                        fresh.id,
                        fresh.summary
                    ),
                    body: None,
                    trailers: ctx.trailers("supersede", &[&old.id, &fresh.id]),
                };
                Ok((
                    edits,
                    message,
                    (old, old_target, fresh, fresh_path, secrets),
                ))
            })?;
        let commit = commit_text(commit);
        Ok(Superseded {
            old: Written {
                memory: old,
                path: old_new_path,
                commit: commit.clone(),
                secrets: None,
            },
            new: Written {
                memory: fresh,
                path: fresh_path,
                commit,
                secrets,
            },
        })
    }

    /// Deletes a memory (a deletion commit; its history stays in git).
    pub fn forget(&mut self, query: &str, ctx: &WriteContext) -> Result<Written> {
        let (path, found) = self.resolve(query)?;
        let author = self.author(ctx);
        let (memory, commit) = self.store.transact(|snap| {
            let m = read_memory_at(snap, &path, &found.id)?;
            let message = Message {
                subject: format!("forget {}: {}", display_name(&m), m.summary),
                body: None,
                trailers: ctx.trailers("forget", &[&m.id]),
            };
            let tombstone =
                Tombstone::of(&m, &path, ctx.now(), (&author, &ctx.agent, &ctx.session));
            let edits = vec![
                Edit::Remove { path: path.clone() },
                Edit::Upsert {
                    path: tombstone_path(&m.id),
                    content: tombstone.render()?,
                },
            ];
            Ok((edits, message, m))
        })?;
        Ok(Written {
            memory,
            path,
            commit: commit_text(commit),
            secrets: None,
        })
    }

    /// Removes every version of a memory from lore's history (for a leaked secret) and leaves
    /// a purge record in its place (its id, paths and digests, never its text), so the purge
    /// travels with `lore sync` and no write or merge brings the memory back; then rebuilds the
    /// index so no copy of its text remains there either. Returns the memory, what was
    /// rewritten, and how many distinct versions (blobs) were removed.
    pub fn purge(
        &mut self,
        query: &str,
        ctx: &WriteContext,
    ) -> Result<(Memory, PurgeReport, usize)> {
        let (path, found) = self.resolve_or_forgotten(query)?;
        let mut record = PurgeRecord {
            id: found.id.clone(),
            paths: vec![path_of(&found), id_path(&found.namespace, &found.id)],
            blobs: Vec::new(),
            texts: vec![text_digest(&found)],
            purged: ctx.now(),
            author: self.author(ctx),
        };
        for (v, m) in self.tracked_versions(&path, &found)? {
            if let (Some(blob), Some(m)) = (v.blob, m) {
                let blob = blob.to_string();
                if !record.blobs.contains(&blob) {
                    record.blobs.push(blob);
                }
                let digest = text_digest(&m);
                if !record.texts.contains(&digest) {
                    record.texts.push(digest);
                }
                if !record.paths.contains(&v.path) {
                    record.paths.push(v.path.clone());
                }
            }
        }
        record.paths.dedup();
        let versions = record.blobs.len();
        let mut report =
            crate::merge::purged::purge_here(&self.store, std::slice::from_ref(&record))?;
        let message = Message {
            subject: format!("purge {}", found.id),
            body: None,
            trailers: vec![
                ("Lore-Action".into(), "purge".into()),
                ("Lore-Purged".into(), found.id.to_string()),
            ],
        };
        let content = record.render()?;
        let record_path = purge_path(&found.id);
        self.store.transact(|_| {
            let edits = vec![Edit::Upsert {
                path: record_path.clone(),
                content: content.clone(),
            }];
            Ok((edits, message.clone(), ()))
        })?;
        report.refs_rewritten.dedup();
        self.reset_index()?;
        Ok((found, report, versions))
    }

    /// Empties and rebuilds the index (after a purge here or one a sync brought), so no copy
    /// of purged text stays in it.
    pub fn reset_index(&mut self) -> Result<()> {
        let index = match self.index.take() {
            Some(i) => i.reset()?,
            None => self.fresh_index()?.0.reset()?,
        };
        self.index = Some(index);
        self.index()?;
        Ok(())
    }
}

/// The new memory takes what the caller left empty from the old one (see [`Lore::supersede`]).
fn carry_over(fresh: &mut Memory, old: &Memory, given: &NewMemory) {
    if given.body.trim().is_empty() {
        fresh.body = old.body.clone();
    }
    if given.tags.is_empty() {
        fresh.tags = old.tags.clone();
    }
    if given.citations.is_empty() {
        fresh.citations = old.citations.clone();
    }
    if given.relates_to.is_empty() {
        fresh.relates_to = old.relates_to.clone();
    }
    if given.confidence.is_none() {
        fresh.confidence = old.confidence;
    }
}

/// The memory at `path` on this tip, which must still be `id` (else another writer changed it).
fn read_memory_at(snap: &Snapshot<'_>, path: &str, id: &MemoryId) -> Result<Memory> {
    let changed = || Error::Changed { id: id.to_string() };
    let bytes = snap.read(path)?.ok_or_else(changed)?;
    let text = std::str::from_utf8(&bytes).map_err(|_| changed())?;
    let m = record::parse(text, path)?;
    if &m.id != id {
        return Err(changed());
    }
    Ok(m)
}

fn apply_patch(m: &mut Memory, patch: &Patch) -> Result<()> {
    if let Some(s) = &patch.summary {
        check_summary(s)?;
        m.summary = s.clone();
    }
    if let Some(b) = &patch.body {
        m.body = b.clone();
    }
    let add = normalize_tags(&patch.add_tags)?;
    let remove = normalize_tags(&patch.remove_tags)?;
    m.tags.retain(|t| !remove.contains(t));
    for t in add {
        if !m.tags.contains(&t) {
            m.tags.push(t);
        }
    }
    if let Some(st) = patch.status {
        m.status = st;
    }
    if let Some(c) = patch.confidence {
        m.confidence = Some(c);
    }
    for c in &patch.add_citations {
        if !m.citations.contains(c) {
            m.citations.push(c.clone());
        }
    }
    for r in &patch.add_relates_to {
        let id = MemoryId::parse(r)?;
        if !m.relates_to.contains(&id) {
            m.relates_to.push(id);
        }
    }
    Ok(())
}

/// The edits of a supersession: the old memory rewritten (superseded) where its record now
/// belongs, and the new one at its path. A superseded memory releases its key path (see
/// `path_of`) unless the key passes to the new memory; the new memory without the key takes
/// a free path. Returns the edits, the old memory's path and the new one's.
fn supersession_edits(
    snap: &crate::store::Snapshot<'_>,
    old_path: &str,
    old: &Memory,
    fresh: &mut Memory,
) -> Result<(Vec<Edit>, String, String)> {
    let mut edits = Vec::new();
    // A superseded memory releases its key path (see `path_of`).
    let old_target = path_of(old);
    let key_passes = old.key.is_some() && old.key == fresh.key && old.namespace == fresh.namespace;
    if old_target != old_path && !key_passes {
        edits.push(Edit::Remove {
            path: old_path.to_string(),
        });
    }
    // When the key passes on, the new memory's upsert at the key path replaces the
    // old file there (a remove and an upsert of one path in one edit set is refused).
    edits.push(Edit::Upsert {
        path: old_target.clone(),
        content: record::render(old)?.into_bytes(),
    });
    let fresh_path = if key_passes {
        path_of(fresh)
    } else {
        free_path(snap, fresh)?
    };
    edits.push(Edit::Upsert {
        path: fresh_path.clone(),
        content: record::render(fresh)?.into_bytes(),
    });
    Ok((edits, old_target, fresh_path))
}
