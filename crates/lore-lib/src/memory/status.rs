//! The store's state: where it is, what it holds per namespace and status, unreadable files, and
//! the index (with `reindex`, which rebuilds it from the refs).

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Lore, missing_index};
use crate::error::Result;
use crate::index::{CatchUp, InvalidFile};
use crate::model::BUILTIN_NAMESPACES;
use crate::store::{MEMORY_REF, StoreKind};

/// Where the store is and what it holds.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct StoreStatus {
    /// Repository or personal store.
    #[schemars(with = "StoreKindSchema")]
    pub kind: StoreKind,
    /// The git directory holding lore's refs.
    pub git_dir: String,
    /// The work tree, if any.
    pub workdir: Option<String>,
    /// Project identity recorded in the store (or computed, if nothing is written yet).
    pub project: Option<String>,
    /// The memory ref.
    pub memory_ref: String,
    /// Its tip.
    pub tip: Option<String>,
    /// Total memories.
    pub total: u64,
    /// Counts per namespace.
    pub namespaces: Vec<NamespaceCount>,
    /// Unreadable memory files.
    pub invalid: Vec<InvalidFile>,
    /// The index.
    pub index: IndexStatus,
    /// How lore's refs stand against each remote, as of its last fetch.
    pub remotes: Vec<crate::store::remotes::RemoteStanding>,
    /// Open contradictions (see `conflicts`).
    pub open_conflicts: usize,
    /// Locks of lore's refs left by a process that died (the next write removes them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stale_locks: Vec<crate::store::locks::StaleLock>,
    /// What the store takes on disk.
    pub disk: super::DiskUse,
    /// Purged memories, and where their text may still be.
    #[serde(default, skip_serializing_if = "PurgeStanding::is_empty")]
    pub purges: PurgeStanding,
    /// The scopes recall and context read here (set by the status operation).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
}

/// Where purged text may still be: this clone's object database (until
/// `git gc --prune=now`), and remotes whose last fetched memory lacks a purge this clone has.
#[derive(Clone, Debug, Default, Serialize, schemars::JsonSchema)]
pub struct PurgeStanding {
    /// Purge records in the memory tree.
    pub records: usize,
    /// Purged versions whose objects this clone still holds (unreachable).
    pub objects_here: usize,
    /// Remotes whose last fetched memory has not received every purge (`lore sync` them).
    pub remotes_behind: Vec<String>,
}

impl PurgeStanding {
    fn is_empty(&self) -> bool {
        self.records == 0
    }
}

/// The schema of [`StoreKind`] as it serializes (`repository` or `personal`).
#[derive(schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum StoreKindSchema {
    /// lore's refs in a project's repository.
    Repository,
    /// A personal store.
    Personal,
}

/// Counts for one namespace.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct NamespaceCount {
    /// Namespace name.
    pub namespace: String,
    /// Built in (true) or registered.
    pub builtin: bool,
    /// Memories per status.
    pub by_status: BTreeMap<String, u64>,
    /// All memories in it.
    pub total: u64,
}

/// The index's state.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct IndexStatus {
    /// Where the file is.
    pub path: String,
    /// Whether it was current before this command caught it up.
    pub was_current: bool,
    /// What the catch-up did.
    pub caught_up_files: usize,
    /// The embedder whose vectors the index holds (`none`: lexical only).
    pub embedder: String,
}

impl Lore {
    /// Deletes and rebuilds the index from the refs.
    pub fn reindex(&mut self) -> Result<CatchUp> {
        self.reindex_with(&crate::progress::Silent)
    }

    /// [`Lore::reindex`], reporting progress to `progress`.
    pub fn reindex_with(&mut self, progress: &dyn crate::progress::Progress) -> Result<CatchUp> {
        self.open_index()?;
        let index = self.index.take().ok_or_else(missing_index)?.reset()?;
        let index = self.index.insert(index);
        index.catch_up_with(&self.store, progress)
    }

    /// Where the store is, what it holds, and the index's state.
    pub fn status(&mut self) -> Result<StoreStatus> {
        // Freshness as this call found it (a long-lived handle caught up long ago).
        self.last_catch_up = None;
        self.index()?;
        let caught = self.last_catch_up.clone().unwrap_or_default();
        let was_current = !caught.moved;
        let index = self.index.as_ref().ok_or_else(missing_index)?;
        let counts = index.counts()?;
        let registered = index.registered_namespaces()?;
        let mut namespaces: Vec<NamespaceCount> = Vec::new();
        for name in BUILTIN_NAMESPACES
            .iter()
            .map(|s| s.to_string())
            .chain(registered.iter().cloned())
            .chain(counts.iter().map(|(n, _, _)| n.clone()))
        {
            if namespaces.iter().any(|n| n.namespace == name) {
                continue;
            }
            let mut by_status = BTreeMap::new();
            for (n, st, c) in &counts {
                if *n == name {
                    by_status.insert(st.clone(), *c);
                }
            }
            namespaces.push(NamespaceCount {
                builtin: BUILTIN_NAMESPACES.contains(&name.as_str()),
                total: by_status.values().sum(),
                namespace: name,
                by_status,
            });
        }
        let tip = self.store.tip()?;
        let project = match self.store.meta(tip)? {
            Some(meta) => meta.project,
            None if *self.store.kind() == StoreKind::Repository => {
                Some(self.store.project_identity())
            }
            None => None,
        };
        Ok(StoreStatus {
            kind: self.store.kind().clone(),
            git_dir: self.store.common_dir().display().to_string(),
            workdir: self.store.workdir().map(|w| w.display().to_string()),
            project,
            memory_ref: MEMORY_REF.to_string(),
            tip: tip.map(|t| t.to_string()),
            total: namespaces.iter().map(|n| n.total).sum(),
            namespaces,
            invalid: index.invalid_files()?,
            index: IndexStatus {
                path: index.path().display().to_string(),
                was_current,
                caught_up_files: caught.upserted + caught.removed,
                embedder: self
                    .embedder
                    .as_ref()
                    .map(|e| e.id().to_string())
                    .unwrap_or_else(|| "none".into()),
            },
            remotes: crate::store::remotes::standing(&self.store)?,
            disk: super::upkeep::disk_use(&self.store.common_dir()),
            open_conflicts: self.contradictions()?.len(),
            stale_locks: self.store.stale_locks(),
            purges: self.purge_standing()?,
            scopes: Vec::new(),
        })
    }

    fn purge_standing(&self) -> Result<PurgeStanding> {
        let records =
            crate::store::purged::purge_records(&self.store.snapshot(self.store.tip()?)?)?;
        let mut out = PurgeStanding {
            records: records.len(),
            ..PurgeStanding::default()
        };
        if records.is_empty() {
            return Ok(out);
        }
        out.objects_here = records
            .iter()
            .flat_map(|r| &r.blobs)
            .filter_map(|b| git2::Oid::from_str(b).ok())
            .filter(|b| self.store.holds_object(*b))
            .count();
        let repo = self.store.repo();
        for remote in repo.remotes()?.iter().flatten().flatten() {
            let fetched = format!("{}memory", crate::store::remotes::tracking_prefix(remote));
            let Some(tip) = crate::store::ref_target(repo, &fetched)? else {
                continue;
            };
            let there = crate::store::purged::purge_records(&self.store.snapshot(Some(tip))?)?;
            if records.iter().any(|r| !there.iter().any(|t| t.id == r.id)) {
                out.remotes_behind.push(remote.to_string());
            }
        }
        Ok(out)
    }
}
