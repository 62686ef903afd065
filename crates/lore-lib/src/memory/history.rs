//! A memory's history from git: its versions along the memory chain, newest first, following
//! the supersedes chain back through the memories it replaced; and finding a forgotten memory.

use std::collections::HashSet;

use jiff::Timestamp;
use serde::Serialize;

use super::Lore;
use crate::error::{Error, Result};
use crate::model::{Memory, MemoryId};
use crate::record;
use crate::store::FileVersion;
use crate::store::layout::{self, id_path, memory_path};

/// One version of a memory in its history.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct MemoryVersion {
    /// The memory this version belongs to: the one asked for, or one it superseded (directly
    /// or down the chain).
    pub id: String,
    /// The commit.
    pub commit: String,
    /// Commit time.
    pub time: Timestamp,
    /// The commit's subject.
    pub subject: String,
    /// Who committed it.
    pub committer: String,
    /// Path at that version.
    pub path: String,
    /// The memory at that version (none: deleted by this commit).
    pub memory: Option<Memory>,
    /// For a sync merge that made a version of its own (it combined both sides' changes): what
    /// it brought to this clone's version. Absent for every other commit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merge: Option<MergeBrought>,
}

/// What a merge brought to the version this clone had before it.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct MergeBrought {
    /// The remote it merged (the commit's `Lore-Remote` trailer), if it names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<String>,
    /// The fields that differ from this clone's version before the merge (`summary`, `body`,
    /// `tags`, `status`, `key`, `citations`, `relations`, `confidence`, `anchor`, `author`,
    /// `agent`, `session`); empty when only its times changed.
    pub fields: Vec<String>,
    /// The commit of this clone's version before the merge (the one its first parent holds),
    /// where the diff of what it brought starts; absent when this clone had no version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
}

impl Lore {
    /// The versions of a memory, newest first (including its deletion, if forgotten — give
    /// the id of a forgotten memory and its history is still found in git), then those of the
    /// memory it superseded, and so on down the supersedes chain; each version names the memory
    /// it belongs to.
    pub fn history(&mut self, query: &str) -> Result<(Memory, Vec<MemoryVersion>)> {
        let (path, m) = self.resolve_or_forgotten(query)?;
        let mut versions = self.versions(&path, &m)?;
        let mut seen = HashSet::from([m.id.clone()]);
        let mut older = m.supersedes.clone();
        while let Some(id) = older.take() {
            if !seen.insert(id.clone()) {
                break;
            }
            let (path, predecessor) = match self.resolve_or_forgotten(id.as_str()) {
                Ok(found) if found.1.id == id => found,
                Ok(_) | Err(Error::NotFound(_)) => {
                    self.warn(format!(
                        "history: memory {id}, which {} superseded, is no longer in lore's history",
                        m.id
                    ));
                    break;
                }
                Err(e) => return Err(e),
            };
            versions.extend(self.versions(&path, &predecessor)?);
            older = predecessor.supersedes;
        }
        Ok((m, versions))
    }

    /// The versions of a memory along the chain, newest first, with the parsed record.
    pub(super) fn tracked_versions(
        &self,
        path: &str,
        m: &Memory,
    ) -> Result<Vec<(FileVersion, Option<Memory>)>> {
        let raw = self.store.history(&candidate_paths(path, m))?;
        self.filter_versions(raw, &m.id)
    }

    fn filter_versions(
        &self,
        raw: Vec<FileVersion>,
        id: &MemoryId,
    ) -> Result<Vec<(FileVersion, Option<Memory>)>> {
        let mut parsed: Vec<(FileVersion, Option<Memory>)> = Vec::new();
        for v in raw {
            let m = match v.blob {
                Some(b) => {
                    let bytes = self.store.read_blob(b)?;
                    let read = std::str::from_utf8(&bytes)
                        .map_err(|e| e.to_string())
                        .and_then(|t| record::parse(t, &v.path).map_err(|e| e.to_string()));
                    match read {
                        Ok(m) => Some(m),
                        Err(why) => {
                            self.warn(format!(
                                "history: {} at commit {} is not a readable memory ({why}); left out",
                                v.path, v.commit
                            ));
                            None
                        }
                    }
                }
                None => None,
            };
            parsed.push((v, m));
        }
        // A deletion belongs to this memory if the next older version at that path is its own.
        let mut keep = Vec::new();
        for (i, (v, m)) in parsed.iter().enumerate() {
            let ours = match (v.blob, m) {
                (Some(_), Some(m)) => &m.id == id,
                (Some(_), None) => false,
                (None, _) => parsed[i + 1..]
                    .iter()
                    .find(|(older, _)| older.path == v.path)
                    .is_some_and(|(_, om)| om.as_ref().is_some_and(|om| &om.id == id)),
            };
            if ours {
                keep.push((v.clone(), m.clone()));
            }
        }
        Ok(keep)
    }

    fn versions(&self, path: &str, m: &Memory) -> Result<Vec<MemoryVersion>> {
        let mut versions = self
            .tracked_versions(path, m)?
            .into_iter()
            .map(|(v, memory)| {
                let time = Timestamp::from_second(v.time).map_err(|e| Error::Parse {
                    context: format!("the time of commit {}", v.commit),
                    message: e.to_string(),
                })?;
                Ok(MemoryVersion {
                    id: m.id.to_string(),
                    commit: v.commit.to_string(),
                    time,
                    subject: v.subject,
                    committer: v.committer,
                    path: v.path,
                    memory,
                    merge: None,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        for i in 0..versions.len() {
            versions[i].merge = self.merge_brought(&versions, i)?;
        }
        Ok(versions)
    }

    /// For a version made by a merge commit: the version this clone had before (the newest
    /// older one its first parent reaches) and the fields the merge changed.
    fn merge_brought(&self, versions: &[MemoryVersion], i: usize) -> Result<Option<MergeBrought>> {
        let repo = self.store.repo();
        let (Some(after), Ok(oid)) = (
            &versions[i].memory,
            git2::Oid::from_str(&versions[i].commit),
        ) else {
            return Ok(None);
        };
        let commit = repo.find_commit(oid)?;
        if commit.parent_count() < 2 {
            return Ok(None);
        }
        let first = commit.parent_id(0)?;
        let mut before = None;
        for v in &versions[i + 1..] {
            let c = git2::Oid::from_str(&v.commit)?;
            if c == first || repo.graph_descendant_of(first, c)? {
                before = Some(v);
                break;
            }
        }
        let message = String::from_utf8_lossy(commit.message_bytes());
        let remote = message
            .lines()
            .find_map(|l| l.strip_prefix("Lore-Remote:"))
            .map(|r| r.trim().to_string());
        Ok(Some(MergeBrought {
            remote,
            fields: before
                .and_then(|b| b.memory.as_ref())
                .map(|b| changed_fields(b, after))
                .unwrap_or_default(),
            from: before.map(|b| b.commit.clone()),
        }))
    }

    /// Looks for a memory that is no longer at the tip, by exact id, through the chain: the
    /// newest commit naming it in a `Lore-Memory` trailer, read on that commit's parent.
    pub(super) fn find_forgotten(&self, query: &str) -> Result<(String, Memory)> {
        let id = MemoryId::parse(query).map_err(|_| Error::NotFound(query.to_string()))?;
        let Some(tip) = self.store.tip()? else {
            return Err(Error::NotFound(query.to_string()));
        };
        let trailer = format!("Lore-Memory: {id}");
        let mut walk = self.store.repo().revwalk()?;
        walk.push(tip)?;
        for oid in walk {
            let commit = self.store.repo().find_commit(oid?)?;
            let message = String::from_utf8_lossy(commit.message_bytes());
            if !message.contains(&trailer) {
                continue;
            }
            for parent in commit.parents() {
                let snap = self.store.snapshot(Some(parent.id()))?;
                for change in self.store.diff(Some(parent.id()), Some(commit.id()))? {
                    if layout::classify(&change.path) != layout::PathKind::Memory {
                        continue;
                    }
                    let Some(bytes) = snap.read(&change.path)? else {
                        continue;
                    };
                    // A file that is not a readable memory cannot be the one asked for.
                    if let Ok(text) = std::str::from_utf8(&bytes)
                        && let Ok(m) = record::parse(text, &change.path)
                        && m.id == id
                    {
                        return Ok((change.path, m));
                    }
                }
            }
        }
        Err(Error::NotFound(query.to_string()))
    }
}

/// The fields (by their names in a memory file) in which two versions of a memory differ, the
/// three relation fields as one `relations`; the times are left out.
fn changed_fields(before: &Memory, after: &Memory) -> Vec<String> {
    let relations = |m: &Memory| {
        (
            m.relates_to.clone(),
            m.supersedes.clone(),
            m.superseded_by.clone(),
        )
    };
    let checks = [
        ("summary", before.summary != after.summary),
        ("body", before.body != after.body),
        ("tags", before.tags != after.tags),
        ("status", before.status != after.status),
        ("key", before.key != after.key),
        ("citations", before.citations != after.citations),
        ("relations", relations(before) != relations(after)),
        ("confidence", before.confidence != after.confidence),
        ("anchor", before.anchor != after.anchor),
        ("author", before.author != after.author),
        ("agent", before.agent != after.agent),
        ("session", before.session != after.session),
    ];
    checks
        .into_iter()
        .filter(|(_, changed)| *changed)
        .map(|(name, _)| name.to_string())
        .collect()
}

/// Every path a memory may have had: where it is, its id path, and its key path.
fn candidate_paths(path: &str, m: &Memory) -> Vec<String> {
    let mut paths = vec![path.to_string(), id_path(&m.namespace, &m.id)];
    if let Some(k) = &m.key {
        paths.push(memory_path(&m.namespace, Some(k), &m.id));
    }
    paths.sort();
    paths.dedup();
    paths
}
