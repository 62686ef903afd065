//! When `refs/lore/memory` is lost or damaged: what still knows the memories (the ref's reflog,
//! the commit the index was last caught up to, a kept ref, memory commits written after those
//! and still in the object database, each remote's copy as last fetched), and putting the ref
//! back.

use git2::{ErrorCode, Oid};
use serde::Serialize;

use super::Lore;
use crate::error::{Error, Result};
use crate::index;
use crate::store::MEMORY_REF;
use crate::store::layout::{self, PathKind};

/// The restore point the index knows.
const INDEX_SOURCE: &str = "index";
/// The restore point the ref's own reflog knows (when git kept one).
const REFLOG_SOURCE: &str = "reflog of refs/lore/memory";
/// A restore point found by searching the object database.
pub(super) const FOUND_SOURCE: &str = "object database";
/// Where the commit the index knew is kept when `refs/lore/memory` goes missing (outside
/// `refs/lore/`, so it is never synced).
pub const LOST_REF: &str = "refs/lore-lost/memory";

/// How the memory ref stands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RefState {
    /// It points at a commit.
    Sound,
    /// There is none (a store with nothing written, or one whose ref was deleted).
    Missing,
    /// It cannot be read, or names no commit.
    Damaged,
}

/// A commit the memory ref can be put back to.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct RestorePoint {
    /// The commit.
    pub commit: String,
    /// What knows it: `object database` (a memory commit no ref reaches, written after one of
    /// this clone's own points), `reflog of refs/lore/memory`, `index` (the tip the index was
    /// last caught up to), `kept ref refs/lore-lost/memory`, or `remote <name>` (that remote's
    /// copy, as last fetched).
    pub source: String,
    /// For a commit found in the object database: the point it descends from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub descends_from: Option<String>,
    /// When it was written.
    pub when: jiff::Timestamp,
    /// The memories in its tree.
    pub memories: usize,
}

/// A memory commit found in the object database that descends from this clone's own last
/// known state but neither from nor to the first restore point: another line of writes.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct OtherHead {
    /// The commit.
    pub commit: String,
    /// When it was written.
    pub when: jiff::Timestamp,
    /// The memories in its tree.
    pub memories: usize,
    /// The files it wrote or removed since the commit it shares with the first restore point
    /// that the first restore point does not hold alike (0: every write of this line is in it,
    /// as for a write that lost a race to another writer and was made again on its commit).
    pub not_in_restore_point: usize,
}

/// What the check found.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct RefCheck {
    /// How the ref stands.
    pub state: RefState,
    /// What is wrong with it, in git's words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// Commits it can be put back to, the one a restore takes first: the newest memory commit
    /// found in the object database beyond this clone's own last known state (when the ref is
    /// lost and the database was searched), then that state (the ref's reflog, the index's
    /// tip, the kept ref), then remotes' copies, newest first.
    pub restore_points: Vec<RestorePoint>,
    /// Other lines of writes found in the object database beyond this clone's own last known
    /// state, which the first restore point neither holds nor descends from (named, never
    /// restored silently).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub other_heads: Vec<OtherHead>,
}

/// The order restore points are offered in: this clone's own newest state first (restoring a
/// remote's copy could drop commits never pushed), then remotes' copies.
fn rank(p: &RestorePoint) -> u8 {
    match p.source.as_str() {
        FOUND_SOURCE => 0,
        REFLOG_SOURCE => 1,
        INDEX_SOURCE => 2,
        s if s.starts_with("kept ref") => 3,
        _ => 4,
    }
}

/// Whether a point is this clone's own knowledge (what a found commit must descend from).
pub(super) fn own(p: &RestorePoint) -> bool {
    (1..=3).contains(&rank(p))
}

impl Lore {
    /// Checks the memory ref without the index's help (nothing is caught up or written) and
    /// lists the restore points this clone's refs and index name. The object database is not
    /// searched (see [`Lore::diagnose_memory_ref`]).
    pub fn check_memory_ref(&self) -> Result<RefCheck> {
        let repo = self.store.repo();
        let (state, problem) = match repo.find_reference(MEMORY_REF) {
            Ok(r) => match r.target().map(|t| repo.find_commit(t)) {
                Some(Ok(_)) => (RefState::Sound, None),
                Some(Err(e)) => (RefState::Damaged, Some(e.message().to_string())),
                None => (RefState::Damaged, Some("it names no commit".to_string())),
            },
            Err(e) if e.code() == ErrorCode::NotFound => (RefState::Missing, None),
            Err(e) => (RefState::Damaged, Some(e.message().to_string())),
        };
        let mut points = Vec::new();
        // The newest entry of the ref's reflog naming a commit that is still here. Only a log
        // git kept is read: libgit2 creates an empty one on reading, and then logs every
        // update of the ref.
        let log_file = self.store.common_dir().join("logs").join(MEMORY_REF);
        if log_file.is_file()
            && let Ok(log) = repo.reflog(MEMORY_REF)
            && let Some(last) = log
                .iter()
                .map(|e| e.id_new())
                .find(|id| !id.is_zero() && self.store.has_commit(*id))
        {
            points.extend(self.restore_point(last, REFLOG_SOURCE.into())?);
        }
        match index::recorded_tip(&index::index_path(&self.store)) {
            Ok(Some(tip)) => points.extend(self.restore_point(tip, INDEX_SOURCE.into())?),
            Ok(None) => {}
            Err(e) => self.warn(format!("the index's recorded tip could not be read: {e}")),
        }
        if let Some(kept) = crate::store::ref_target(repo, LOST_REF)? {
            points.extend(self.restore_point(kept, format!("kept ref {LOST_REF}"))?);
        }
        for r in repo.references_glob(&format!(
            "{}*/memory",
            crate::store::remotes::TRACKING_PREFIX
        ))? {
            let r = r?;
            if let (Ok(name), Some(target)) = (r.name(), r.target()) {
                let remote = name
                    .strip_prefix(crate::store::remotes::TRACKING_PREFIX)
                    .and_then(|n| n.strip_suffix("/memory"))
                    .unwrap_or(name);
                points.extend(self.restore_point(target, format!("remote {remote}"))?);
            }
        }
        points.sort_by_key(|p| (rank(p), std::cmp::Reverse(p.when)));
        // One commit known several ways is offered once, under the first of them.
        let mut seen = std::collections::HashSet::new();
        points.retain(|p| seen.insert(p.commit.clone()));
        Ok(RefCheck {
            state,
            problem,
            restore_points: points,
            other_heads: Vec::new(),
        })
    }

    /// [`Lore::check_memory_ref`], and when the ref is lost or damaged, a search of the object
    /// database for memory commits written after this clone's own restore points (writes
    /// never read back leave the index behind the ref): the newest line of them becomes the
    /// first restore point, and other lines are named. Linear in the object database.
    pub fn diagnose_memory_ref(&self) -> Result<RefCheck> {
        let mut check = self.check_memory_ref()?;
        if check.state != RefState::Sound {
            self.find_lost_writes(&mut check)?;
        }
        Ok(check)
    }

    /// Before the index is caught up (which would empty it to match a missing ref): a memory
    /// ref that cannot be read is an error naming what can restore it; a missing one while the
    /// index was built from memories (so the ref existed here) is kept under [`LOST_REF`]
    /// (where `doctor` finds it) with a notice, and the read goes on over the empty store. A
    /// remote's copy alone does not count: a fresh clone that only fetched is not broken.
    pub(super) fn keep_a_lost_memory_ref(&mut self) -> Result<()> {
        let sound = matches!(self.store.tip(), Ok(Some(_)));
        if sound {
            return Ok(());
        }
        let check = self.check_memory_ref()?;
        let with_memories = |p: &&RestorePoint| p.memories > 0;
        match check.state {
            RefState::Sound => Ok(()),
            RefState::Missing => {
                let Some(point) = check
                    .restore_points
                    .iter()
                    .filter(with_memories)
                    .find(|p| p.source == INDEX_SOURCE)
                else {
                    return Ok(());
                };
                let commit = Oid::from_str(&point.commit)?;
                self.store.repo().reference(
                    LOST_REF,
                    commit,
                    true,
                    "lore: the commit the index knew when refs/lore/memory went missing",
                )?;
                self.notices.push(crate::IndexNotice::MemoryRefMissing {
                    commit: point.commit.clone(),
                    kept_as: LOST_REF.to_string(),
                });
                Ok(())
            }
            RefState::Damaged => {
                let known = check.restore_points.iter().find(with_memories);
                let known = known.map_or(String::new(), |p| {
                    format!(
                        "; the {} still knows commit {} with {} memories",
                        p.source, p.commit, p.memories
                    )
                });
                Err(Error::MemoryRefLost(format!(
                    "{MEMORY_REF} cannot be read ({}){known}",
                    check.problem.as_deref().unwrap_or("damaged")
                )))
            }
        }
    }

    pub(super) fn restore_point(
        &self,
        commit: Oid,
        source: String,
    ) -> Result<Option<RestorePoint>> {
        let Ok(found) = self.store.repo().find_commit(commit) else {
            return Ok(None);
        };
        let memories = self
            .store
            .diff(None, Some(commit))?
            .iter()
            .filter(|c| layout::classify(&c.path) == PathKind::Memory)
            .count();
        Ok(Some(RestorePoint {
            commit: commit.to_string(),
            source,
            descends_from: None,
            when: when(found.time().seconds()),
            memories,
        }))
    }

    /// Puts the memory ref back at `commit`, one of the restore points of `found` (what
    /// [`Lore::diagnose_memory_ref`] returned), replacing a damaged ref file. A sound ref is
    /// left alone: this repairs, it does not rewind.
    pub fn restore_memory_ref(&mut self, found: &RefCheck, commit: &str) -> Result<Oid> {
        let now = self.check_memory_ref()?;
        if now.state == RefState::Sound {
            return Err(Error::Invalid {
                what: "restore",
                value: commit.to_string(),
                reason: format!("{MEMORY_REF} is sound; nothing to restore"),
            });
        }
        let Some(point) = found.restore_points.iter().find(|p| p.commit == commit) else {
            return Err(Error::NotFound(format!(
                "{commit} is not a commit {MEMORY_REF} can be put back to"
            )));
        };
        let id = Oid::from_str(&point.commit)?;
        if now.state == RefState::Damaged {
            let file = self.store.common_dir().join(MEMORY_REF);
            if file.is_file() {
                std::fs::remove_file(&file)
                    .map_err(|e| Error::io(format!("removing {}", file.display()), e))?;
            }
        }
        self.store.repo().reference(
            MEMORY_REF,
            id,
            false,
            &format!("lore doctor: restored from {}", point.source),
        )?;
        Ok(id)
    }
}

/// A commit time as a timestamp.
pub(super) fn when(seconds: i64) -> jiff::Timestamp {
    jiff::Timestamp::from_second(seconds).unwrap_or(jiff::Timestamp::UNIX_EPOCH)
}
