//! Operations for looking around a store (the web UI's pages, and anyone who wants the same):
//! the line diff between two versions of a memory, the store's overview (counts, growth,
//! health), a reasoning session drawn as a tree, the preview of a context merge, and the tips
//! of lore's refs (to notice another process's writes).

use std::collections::BTreeMap;

use jiff::Timestamp;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Effect, Env, Operation};
use crate::error::{Error, Result};
use crate::index::{ListFilter, SortBy};
use crate::memory::{MemoryVersion, StoreStatus};
use crate::record;
use crate::thoughts::bundle;
use crate::thoughts::index::{IndexedThought, ThoughtIndex};
use crate::thoughts::read::{DiffLine, line_diff};
use crate::workspace::Workspace;
use crate::workspace::preview::MergePreview;

/// The line diff between two versions of a memory.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryDiff {
    /// Id, id prefix, `namespace/key` or key.
    pub memory: String,
    /// The older version's commit (or a unique prefix of it; default: the version before `to`).
    #[serde(default)]
    pub from: Option<String>,
    /// The newer version's commit (or a unique prefix of it; default: the newest version).
    #[serde(default)]
    pub to: Option<String>,
}

/// Two versions of a memory, line by line.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct MemoryDiff {
    /// The older version (none: `to` is the first version).
    pub from: Option<MemoryVersion>,
    /// The newer version.
    pub to: MemoryVersion,
    /// The memory file (front matter and body), line by line: `-` older, `+` newer, ` ` both,
    /// `@` a hunk header.
    pub lines: Vec<DiffLine>,
}

fn version_text(version: Option<&MemoryVersion>) -> Result<String> {
    match version.and_then(|v| v.memory.as_ref()) {
        Some(m) => record::render(m),
        None => Ok(String::new()),
    }
}

fn find_version(versions: &[MemoryVersion], commit: &str) -> Result<usize> {
    let c = commit.trim().to_lowercase();
    let found: Vec<usize> = versions
        .iter()
        .enumerate()
        .filter(|(_, v)| c.len() >= 4 && v.commit.starts_with(&c))
        .map(|(i, _)| i)
        .collect();
    // One commit can hold two entries of a memory (it moved path: removed at one, written at
    // the other): the one that holds the memory is that commit's version.
    let commits: std::collections::BTreeSet<&str> =
        found.iter().map(|i| versions[*i].commit.as_str()).collect();
    let found: Vec<usize> = if commits.len() == 1 && found.len() > 1 {
        let holding: Vec<usize> = found
            .iter()
            .copied()
            .filter(|i| versions[*i].memory.is_some())
            .collect();
        if holding.is_empty() {
            found[..1].to_vec()
        } else {
            holding[..1].to_vec()
        }
    } else {
        found
    };
    match found.as_slice() {
        [one] => Ok(*one),
        [] => Err(Error::NotFound(format!(
            "no version of this memory at commit {commit:?}"
        ))),
        _ => Err(Error::Ambiguous {
            query: commit.to_string(),
            candidates: found.iter().map(|i| versions[*i].commit.clone()).collect(),
        }),
    }
}

/// The version before `to` that a diff shows by default: the nearest older one that reads
/// differently from `to` (whose text is `new`), else simply the next older one.
fn version_before(versions: &[MemoryVersion], to: usize, new: &str) -> Result<Option<usize>> {
    for (i, v) in versions.iter().enumerate().skip(to + 1) {
        if version_text(Some(v))? != new {
            return Ok(Some(i));
        }
    }
    Ok((to + 1 < versions.len()).then_some(to + 1))
}

impl Operation for HistoryDiff {
    const NAME: &'static str = "history_diff";
    const TITLE: &'static str = "Diff two versions of a memory";
    const DESCRIPTION: &'static str = "The line diff of a memory's file (front matter and body) \
        between two of its versions from git, by commit: by default the newest version against \
        the nearest older one that differs.";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = MemoryDiff;

    fn run(self, env: &mut Env<'_>) -> Result<MemoryDiff> {
        let (_, versions) = env.lore.history(&self.memory)?;
        if versions.is_empty() {
            return Err(Error::NotFound(format!(
                "no versions of {:?} in lore's history",
                self.memory
            )));
        }
        // Versions are newest first: the older one has the larger index.
        let to = match &self.to {
            Some(c) => find_version(&versions, c)?,
            None => 0,
        };
        let new = version_text(Some(&versions[to]))?;
        let from = match &self.from {
            Some(c) => Some(find_version(&versions, c)?),
            None => version_before(&versions, to, &new)?,
        };
        let old = version_text(from.map(|i| &versions[i]))?;
        Ok(MemoryDiff {
            lines: line_diff(old.as_bytes(), new.as_bytes(), "memory.md")?,
            from: from.map(|i| versions[i].clone()),
            to: versions[to].clone(),
        })
    }
}

/// The store at a glance.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Overview {}

/// Memories added on one day.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct GrowthPoint {
    /// The day (UTC), `2026-01-31`.
    pub day: String,
    /// Memories created that day that are still in the store.
    pub added: u64,
    /// Memories in the store created up to the end of that day.
    pub total: u64,
}

/// Counts, growth and health.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct StoreOverview {
    /// Where memory is stored, counts per namespace and status, the index, remotes.
    pub status: StoreStatus,
    /// Memories by the day they were created, oldest first.
    pub growth: Vec<GrowthPoint>,
    /// Context branches.
    pub context_branches: usize,
    /// Reasoning sessions.
    pub reasoning_sessions: usize,
}

impl Operation for Overview {
    const NAME: &'static str = "overview";
    const TITLE: &'static str = "Store overview";
    const DESCRIPTION: &'static str = "The store at a glance: its status (counts per namespace \
        and status, index health, remotes, open contradictions), how many memories were \
        created each day, and how many context branches and reasoning sessions it holds.";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = StoreOverview;

    fn run(self, env: &mut Env<'_>) -> Result<StoreOverview> {
        let status = env.lore.status()?;
        let memories = env.lore.list(&ListFilter {
            sort: SortBy::CreatedAsc,
            limit: None,
            ..ListFilter::default()
        })?;
        let mut days: BTreeMap<String, u64> = BTreeMap::new();
        for m in &memories {
            let day = m.created.strftime("%Y-%m-%d").to_string();
            *days.entry(day).or_default() += 1;
        }
        let mut total = 0;
        let growth = days
            .into_iter()
            .map(|(day, added)| {
                total += added;
                GrowthPoint { day, added, total }
            })
            .collect();
        let context_branches = Workspace::new(env.lore.store()).branches()?.len();
        let reasoning_sessions = bundle::sessions(env.lore.store())?.len();
        Ok(StoreOverview {
            status,
            growth,
            context_branches,
            reasoning_sessions,
        })
    }
}

/// A reasoning session as a tree.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThinkTree {
    /// The session (default: none, only the list of sessions).
    #[serde(default)]
    pub session: Option<String>,
}

/// The sessions, and one session's thoughts.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ReasoningTree {
    /// Every reasoning session's name.
    pub sessions: Vec<String>,
    /// The session shown.
    pub session: Option<String>,
    /// Its thoughts, in the order they were written.
    pub thoughts: Vec<IndexedThought>,
    /// The best path, root first: to the thought marked best, else to the best-scored
    /// success, else to the best-scored leaf.
    pub best_path: Vec<String>,
}

impl Operation for ThinkTree {
    const NAME: &'static str = "think_tree";
    const TITLE: &'static str = "Reasoning tree";
    const DESCRIPTION: &'static str = "The reasoning sessions, and one session's thoughts as a \
        tree: each thought's parent, depth, current score, outcome, and the best path from the \
        root.";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = ReasoningTree;

    fn run(self, env: &mut Env<'_>) -> Result<ReasoningTree> {
        let mut sessions = bundle::sessions(env.lore.store())?;
        sessions.sort();
        let Some(session) = self.session.filter(|s| !s.is_empty()) else {
            return Ok(ReasoningTree {
                sessions,
                session: None,
                thoughts: Vec::new(),
                best_path: Vec::new(),
            });
        };
        if !sessions.contains(&session) {
            return Err(Error::ThoughtNotFound(format!(
                "no reasoning session {session:?}"
            )));
        }
        let index = ThoughtIndex::open(env.lore.store())?;
        let thoughts = index.session_thoughts(&session)?;
        let end = thoughts.iter().find(|t| t.best).or_else(|| {
            index
                .best_candidate(&session)
                .ok()
                .flatten()
                .and_then(|id| {
                    let id = id.to_string();
                    thoughts.iter().find(|t| t.id == id)
                })
        });
        let mut best_path = Vec::new();
        let mut at = end.map(|t| t.id.clone());
        while let Some(id) = at.take() {
            if best_path.contains(&id) {
                break;
            }
            at = thoughts
                .iter()
                .find(|t| t.id == id)
                .and_then(|t| t.parent.clone());
            best_path.push(id);
        }
        best_path.reverse();
        Ok(ReasoningTree {
            sessions,
            session: Some(session),
            thoughts,
            best_path,
        })
    }
}

/// What merging a context branch would do, without merging.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CtxMergePreview {
    /// The branch to merge.
    pub branch: String,
    /// The branch to merge into (default: the current one).
    #[serde(default)]
    pub into: Option<String>,
}

impl Operation for CtxMergePreview {
    const NAME: &'static str = "ctx_merge_preview";
    const TITLE: &'static str = "Context: merge preview";
    const DESCRIPTION: &'static str = "What merging a context branch into the current one (or \
        `into`) would do, without writing: the merged roadmap and metadata, the conflicts that \
        would refuse it, and the steps that would come over.";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = MergePreview;

    fn run(self, env: &mut Env<'_>) -> Result<MergePreview> {
        Workspace::new(env.lore.store()).merge_preview(&self.branch, self.into.as_deref())
    }
}

/// The tips of lore's refs and the stamps of its per-clone files.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tips {}

/// Where everything stands now: equal stamps mean nothing was written in between.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct RefTips {
    /// Each of lore's refs (`refs/lore/…`, `refs/lore-remotes/…`, `refs/notes/lore/…`) and its
    /// target.
    pub refs: BTreeMap<String, String>,
    /// Each per-clone file (the review queue, context journals and the current branch) and
    /// its size and modification time.
    pub files: BTreeMap<String, String>,
    /// One value standing for all of the above.
    pub stamp: String,
}

fn file_stamps(dir: &std::path::Path, prefix: &str, out: &mut BTreeMap<String, String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
        let Ok(meta) = entry.metadata() else { continue };
        if meta.is_dir() {
            file_stamps(&path, &format!("{name}/"), out);
        } else {
            let modified = meta
                .modified()
                .ok()
                .and_then(|t| Timestamp::try_from(t).ok())
                .map(|t| t.as_nanosecond())
                .unwrap_or_default();
            out.insert(name, format!("{}:{modified}", meta.len()));
        }
    }
}

impl Operation for Tips {
    const NAME: &'static str = "tips";
    const TITLE: &'static str = "Ref tips";
    const DESCRIPTION: &'static str = "The tips of lore's refs and the size and time of its \
        per-clone files (review queue, context journals), with one stamp for all: poll it to \
        notice writes by other processes.";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = RefTips;

    fn run(self, env: &mut Env<'_>) -> Result<RefTips> {
        let store = env.lore.store();
        let mut refs = BTreeMap::new();
        for glob in ["refs/lore/*", "refs/lore-remotes/*", "refs/notes/lore/*"] {
            for r in store.repo().references_glob(glob)? {
                let r = r?;
                if let (Ok(name), Some(target)) = (r.name(), r.target()) {
                    refs.insert(name.to_string(), target.to_string());
                }
            }
        }
        let mut files = BTreeMap::new();
        let local = store.common_dir().join("lore");
        for part in ["capture", "ctx"] {
            file_stamps(&local.join(part), &format!("{part}/"), &mut files);
        }
        let mut all = String::new();
        for (k, v) in refs.iter().chain(files.iter()) {
            all.push_str(k);
            all.push('=');
            all.push_str(v);
            all.push('\n');
        }
        let stamp = format!("{:016x}", crate::hash::fnv1a(all.as_bytes()));
        Ok(RefTips { refs, files, stamp })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Memory;

    fn version(commit: &str, memory: Option<Memory>) -> MemoryVersion {
        MemoryVersion {
            id: "abcdefghjkmn".into(),
            commit: commit.into(),
            time: jiff::Timestamp::UNIX_EPOCH,
            subject: String::new(),
            committer: String::new(),
            path: "learnings/x.md".into(),
            memory,
            merge: None,
        }
    }

    #[test]
    fn the_default_diff_skips_versions_that_read_the_same_and_a_commit_names_one_version() {
        let bare = |summary: &str| {
            Memory::bare(
                crate::model::MemoryId::parse("abcdefghjkmn").unwrap(),
                "learnings",
                summary,
                crate::model::Status::Active,
                jiff::Timestamp::UNIX_EPOCH,
            )
        };
        let (a, b) = (bare("first"), bare("second"));
        // Newest first: b, a repeated (a merge or a move listed it twice), then a.
        let versions = vec![
            version("cccc1111", Some(b.clone())),
            version("bbbb2222", Some(b.clone())),
            version("aaaa3333", Some(a.clone())),
        ];
        let new = version_text(Some(&versions[0])).unwrap();
        assert_eq!(version_before(&versions, 0, &new).unwrap(), Some(2));
        // Nothing older differs: the next older one, as before.
        let same = vec![versions[0].clone(), versions[1].clone()];
        assert_eq!(version_before(&same, 0, &new).unwrap(), Some(1));
        // One commit with two entries (removed at one path, written at another).
        let moved = vec![version("dddd4444", None), version("dddd4444", Some(b))];
        assert_eq!(find_version(&moved, "dddd4444").unwrap(), 1);
        let two = vec![
            version("eeee5555", Some(a.clone())),
            version("eeee6666", Some(a)),
        ];
        assert!(matches!(
            find_version(&two, "eeee"),
            Err(Error::Ambiguous { .. })
        ));
    }
}
