//! Operations on memories: remember, show, list, history, update, supersede, forget (and
//! purge). Recall and context are in [`super::recall`], re-exported here.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use super::recall::{
    Context, FusionKind, MAX_RECALL, RECALL_NOTICE, Ranking, Recall, Recalled,
};
use super::{Effect, Env, Operation, one_of, parse_time, split_list};
use crate::error::Result;
use crate::index::{ListFilter, SortBy};
use crate::memory::{
    FileContent, FileLimits, MemoryVersion, NewMemory, Novelty, Patch, Remembered, Superseded,
    Written,
};
use crate::model::{Citation, LineRange, Memory, Status};

/// Reads `path[:N[-M]]` (a path relative to the repository root, optionally with lines).
pub fn parse_cite(spec: &str) -> Result<(String, Option<LineRange>)> {
    match spec.rsplit_once(':') {
        Some((p, r)) if !p.is_empty() && LineRange::parse(r).is_ok() => {
            Ok((p.to_string(), Some(LineRange::parse(r)?)))
        }
        // Something shaped like a range (`3-1`, `0`, `5-`) that is not a valid one is a bad
        // range, not part of a file name.
        Some((p, r))
            if !p.is_empty()
                && !r.is_empty()
                && r.chars().all(|c| c.is_ascii_digit() || c == '-')
                && r.chars().any(|c| c.is_ascii_digit()) =>
        {
            Err(LineRange::parse(r).unwrap_err())
        }
        _ => Ok((spec.to_string(), None)),
    }
}

fn citations(env: &Env<'_>, specs: &[String]) -> Result<Vec<Citation>> {
    specs
        .iter()
        .map(|spec| {
            let (path, lines) = parse_cite(spec)?;
            env.lore.cite(&path, lines)
        })
        .collect()
}

fn status(value: Option<&str>) -> Result<Option<Status>> {
    value.map(str::parse::<Status>).transpose()
}

/// Filters shared by list, recall and export.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Filter {
    /// Only this namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Only memories with this tag.
    #[serde(default)]
    pub tag: Option<String>,
    /// Only these statuses; empty: all.
    #[serde(default)]
    pub status: Vec<Status>,
    /// Only memories updated since: 2026-01-31, RFC 3339, or an age (30m, 12h, 7d, 2w).
    #[serde(default)]
    pub since: Option<String>,
    /// Only memories updated before this time (same forms as `since`).
    #[serde(default)]
    pub until: Option<String>,
}

impl Filter {
    /// The index filter this asks for. A namespace that is neither built in nor registered
    /// (and holds no memory) is refused, with the closest known name, as a write refuses it.
    pub fn to_list_filter(&self, lore: &mut crate::Lore) -> Result<ListFilter> {
        let namespace = self.namespace.clone().filter(|n| !n.is_empty());
        if let Some(ns) = &namespace {
            lore.check_namespace_filter(ns)?;
        }
        let now = jiff::Timestamp::now();
        let mut statuses = Vec::new();
        for st in &self.status {
            if !statuses.contains(st) {
                statuses.push(*st);
            }
        }
        Ok(ListFilter {
            namespace,
            tag: self.tag.clone().filter(|t| !t.is_empty()),
            statuses,
            since: self
                .since
                .as_deref()
                .map(|t| parse_time(t, now))
                .transpose()?,
            until: self
                .until
                .as_deref()
                .map(|t| parse_time(t, now))
                .transpose()?,
            ..ListFilter::default()
        })
    }
}

/// What to do when a new memory repeats one of its namespace.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum OnDuplicate {
    /// Refuse the write and name the existing memory.
    #[default]
    Check,
    /// Supersede the existing memory with the new one.
    Upsert,
    /// Keep both.
    Force,
}

/// Save a memory.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Remember {
    /// Namespace: decisions, learnings, blockers, progress, patterns, research, reviews,
    /// retrospective, inception, elicitation, or a registered one (default learnings).
    #[serde(default)]
    pub namespace: Option<String>,
    /// One line, at most 100 characters.
    pub summary: String,
    /// Markdown body: the reasoning, evidence, details.
    #[serde(default)]
    pub body: String,
    /// Tags (lower-case words; `a,b` is split).
    #[serde(default)]
    pub tags: Vec<String>,
    /// A topic slug: one memory per key and namespace; two agents writing different content
    /// to the same key conflict on merge.
    #[serde(default)]
    pub key: Option<String>,
    /// Confidence in 0..=1.
    #[serde(default)]
    pub confidence: Option<f64>,
    /// Initial status (default active).
    #[serde(default)]
    pub status: Option<String>,
    /// Files this memory is about, relative to the repository root, optionally with lines
    /// (`src/lib.rs:10-20`); recorded with their content hash.
    #[serde(default)]
    pub cites: Vec<String>,
    /// Ids of related memories.
    #[serde(default)]
    pub relates_to: Vec<String>,
    /// When it repeats an existing memory: check (refuse), upsert (supersede it) or force
    /// (keep both).
    #[serde(default)]
    pub on_duplicate: OnDuplicate,
}

impl Operation for Remember {
    const NAME: &'static str = "remember";
    const TITLE: &'static str = "Remember";
    const DESCRIPTION: &'static str = "Save a memory: a decision, lesson, blocker, progress \
        note, pattern or research finding, in a namespace, with a one-line summary (≤100 \
        chars) and a markdown body. Refuses near-duplicates of existing memories unless \
        on_duplicate says otherwise. Secrets in the text are redacted (or the write blocked) \
        per the repository's policy; the result reports what was found. Returns the stored \
        memory, its path and commit.";
    const EFFECT: Effect = Effect::Write { idempotent: false };
    type Output = Remembered;

    fn run(self, env: &mut Env<'_>) -> Result<Remembered> {
        let new = NewMemory {
            namespace: self.namespace.unwrap_or_else(|| "learnings".into()),
            key: self.key.filter(|k| !k.is_empty()),
            summary: self.summary,
            body: self.body,
            tags: split_list(&self.tags),
            status: status(self.status.as_deref())?,
            confidence: self.confidence,
            citations: citations(env, &self.cites)?,
            relates_to: self.relates_to,
        };
        let novelty = match self.on_duplicate {
            OnDuplicate::Check => Novelty::Check,
            OnDuplicate::Upsert => Novelty::Upsert,
            OnDuplicate::Force => Novelty::Force,
        };
        env.lore.remember_checked(&new, &env.write.clone(), novelty)
    }
}

/// How much of a memory to return.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// The front matter only.
    Summary,
    /// With the markdown body.
    #[default]
    Full,
    /// Also the cited files as they were when the memory was captured.
    Files,
}

/// Read one memory.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Show {
    /// Id, unique id prefix (4+ characters), `namespace/key` or key.
    pub memory: String,
    /// Hydration level: summary, full (default) or files.
    #[serde(default)]
    pub level: Level,
    /// With level files: at most this many files (default 10).
    #[serde(default)]
    pub max_files: Option<usize>,
    /// With level files: at most this many bytes per file (default 16384).
    #[serde(default)]
    pub max_bytes: Option<usize>,
}

/// One memory, hydrated.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Shown {
    /// The level it was read at.
    pub level: Level,
    /// Its path in the memory tree.
    pub path: String,
    /// The memory (no body at level summary).
    pub memory: Memory,
    /// The cited files (level files only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<FileContent>>,
}

impl Operation for Show {
    const NAME: &'static str = "show";
    const TITLE: &'static str = "Show a memory";
    const DESCRIPTION: &'static str = "Read one memory by id, id prefix, namespace/key or key, \
        hydrated to a level: summary (front matter only), full (with the markdown body; \
        default) or files (also the cited files as they were at the commit the memory was \
        captured at).";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = Shown;

    fn run(self, env: &mut Env<'_>) -> Result<Shown> {
        let (path, mut memory) = env.lore.resolve(&self.memory)?;
        let defaults = FileLimits::default();
        let files = if self.level == Level::Files {
            Some(env.lore.hydrate_files(
                &memory,
                FileLimits {
                    max_files: self.max_files.unwrap_or(defaults.max_files),
                    max_bytes: self.max_bytes.unwrap_or(defaults.max_bytes),
                },
            )?)
        } else {
            None
        };
        if self.level == Level::Summary {
            memory.body.clear();
        }
        Ok(Shown {
            level: self.level,
            path,
            memory,
            files,
        })
    }
}

/// List memories.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct List {
    /// Which memories.
    #[serde(default, flatten)]
    pub filter: Filter,
    /// Order: updated (newest first, default), created (newest first), oldest, namespace.
    #[serde(default)]
    pub sort: Option<String>,
    /// At most this many (default 100; 0: all).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// Memories, as listed.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Listed {
    /// The memories, in the order asked for.
    pub memories: Vec<Memory>,
    /// When nothing is listed and a remote's memory is not merged here (or none is here yet):
    /// what to run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl Operation for List {
    const NAME: &'static str = "list";
    const TITLE: &'static str = "List memories";
    const DESCRIPTION: &'static str = "List memories, filtered by namespace, tag, status and \
        time, newest first (or by creation, oldest first, or namespace).";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = Listed;

    fn run(self, env: &mut Env<'_>) -> Result<Listed> {
        let mut filter = self.filter.to_list_filter(env.lore)?;
        filter.sort = one_of(
            "sort",
            self.sort.as_deref().unwrap_or("updated"),
            &[
                ("updated", SortBy::Updated),
                ("created", SortBy::Created),
                ("oldest", SortBy::CreatedAsc),
                ("namespace", SortBy::Namespace),
            ],
        )?;
        let limit = self.limit.unwrap_or(100);
        filter.limit = (limit > 0).then_some(limit);
        let memories = env.lore.list(&filter)?;
        let hint = if memories.is_empty() {
            crate::store::remotes::unmerged_memory_hint(env.lore.store())?
        } else {
            None
        };
        Ok(Listed { memories, hint })
    }
}

/// Every version of a memory.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct History {
    /// Id, id prefix, `namespace/key` or key (a forgotten memory's full id works too).
    pub memory: String,
}

/// A memory's versions.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct HistoryOutput {
    /// The memory as it is now (or was last).
    pub memory: Memory,
    /// Its versions, newest first.
    pub versions: Vec<MemoryVersion>,
}

impl Operation for History {
    const NAME: &'static str = "history";
    const TITLE: &'static str = "Memory history";
    const DESCRIPTION: &'static str = "Every version of a memory from git, newest first: \
        commit, time, subject, committer and the memory at that version (none where a commit \
        deleted it), following what it superseded.";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = HistoryOutput;

    fn run(self, env: &mut Env<'_>) -> Result<HistoryOutput> {
        let (memory, versions) = env.lore.history(&self.memory)?;
        Ok(HistoryOutput { memory, versions })
    }
}

/// Change a memory in place.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Update {
    /// Id, id prefix, `namespace/key` or key.
    pub memory: String,
    /// New summary.
    #[serde(default)]
    pub summary: Option<String>,
    /// New body.
    #[serde(default)]
    pub body: Option<String>,
    /// Tags to add.
    #[serde(default)]
    pub add_tags: Vec<String>,
    /// Tags to remove.
    #[serde(default)]
    pub remove_tags: Vec<String>,
    /// New status: active, resolved, superseded, archived.
    #[serde(default)]
    pub status: Option<String>,
    /// New confidence in 0..=1.
    #[serde(default)]
    pub confidence: Option<f64>,
    /// Citations to add (`path[:lines]`, relative to the repository root).
    #[serde(default)]
    pub add_cites: Vec<String>,
    /// Related memory ids to add.
    #[serde(default)]
    pub add_relates_to: Vec<String>,
}

impl Operation for Update {
    const NAME: &'static str = "update";
    const TITLE: &'static str = "Update a memory";
    const DESCRIPTION: &'static str = "Change a memory in place: summary, body, tags, status \
        (active, resolved, archived), confidence, citations, relations; one commit, history \
        kept. Text is screened for secrets.";
    const EFFECT: Effect = Effect::Write { idempotent: true };
    type Output = Written;

    fn run(self, env: &mut Env<'_>) -> Result<Written> {
        let patch = Patch {
            summary: self.summary,
            body: self.body,
            add_tags: split_list(&self.add_tags),
            remove_tags: split_list(&self.remove_tags),
            status: status(self.status.as_deref())?,
            confidence: self.confidence,
            add_citations: citations(env, &self.add_cites)?,
            add_relates_to: self.add_relates_to,
        };
        env.lore.update(&self.memory, &patch, &env.write.clone())
    }
}

/// Replace a memory with a new one.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Supersede {
    /// The memory to replace: id, id prefix, `namespace/key` or key.
    pub memory: String,
    /// The new memory's summary.
    pub summary: String,
    /// The new memory's body (default: the old one's).
    #[serde(default)]
    pub body: Option<String>,
    /// The new memory's namespace (default: the old one's).
    #[serde(default)]
    pub namespace: Option<String>,
    /// The new memory's tags (default: the old one's).
    #[serde(default)]
    pub tags: Vec<String>,
    /// The new memory's citations (`path[:lines]`; default: the old one's).
    #[serde(default)]
    pub cites: Vec<String>,
    /// The new memory's confidence.
    #[serde(default)]
    pub confidence: Option<f64>,
}

impl Operation for Supersede {
    const NAME: &'static str = "supersede";
    const TITLE: &'static str = "Supersede a memory";
    const DESCRIPTION: &'static str = "Replace a memory with a new one: the old one stays, \
        marked superseded, linked both ways; a keyed memory's key passes to the new one. What \
        is not given (body, tags, citations) is carried over from the old memory.";
    const EFFECT: Effect = Effect::Write { idempotent: false };
    type Output = Superseded;

    fn run(self, env: &mut Env<'_>) -> Result<Superseded> {
        let new = NewMemory {
            namespace: self.namespace.unwrap_or_default(),
            key: None,
            summary: self.summary,
            body: self.body.unwrap_or_default(),
            tags: split_list(&self.tags),
            status: None,
            confidence: self.confidence,
            citations: citations(env, &self.cites)?,
            relates_to: Vec::new(),
        };
        env.lore.supersede(&self.memory, &new, &env.write.clone())
    }
}

/// Forget a memory.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Forget {
    /// Id, id prefix, `namespace/key` or key (for purge, a forgotten memory's full id works
    /// too).
    pub memory: String,
    /// Also erase every version from lore's history (for a leaked secret; irreversible).
    #[serde(default)]
    pub purge: bool,
}

/// What forgetting did.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Forgotten {
    /// The memory as it was when forgotten.
    pub memory: Memory,
    /// Its path in the memory tree.
    pub path: String,
    /// The deletion commit (plain forget).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Whether every version was erased from history.
    pub purged: bool,
    /// Versions removed (purge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub versions_removed: Option<usize>,
    /// Commits rewritten (purge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commits_rewritten: Option<usize>,
    /// Refs that moved (purge).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub refs_rewritten: Vec<String>,
    /// What the user should do next.
    pub next_steps: Vec<String>,
}

impl Operation for Forget {
    const NAME: &'static str = "forget";
    const TITLE: &'static str = "Forget a memory";
    const DESCRIPTION: &'static str = "Forget a memory: a deletion commit (it leaves recall \
        and listings; its history stays in git). With purge=true, erase every version from \
        lore's history instead — for a leaked secret; irreversible, and other clones must \
        purge too.";
    const EFFECT: Effect = Effect::Destructive { idempotent: true };
    type Output = Forgotten;

    fn run(self, env: &mut Env<'_>) -> Result<Forgotten> {
        if self.purge {
            let (memory, report, versions) = env.lore.purge(&self.memory, &env.write.clone())?;
            return Ok(Forgotten {
                path: crate::store::layout::path_of(&memory),
                memory,
                commit: None,
                purged: true,
                versions_removed: Some(versions),
                commits_rewritten: Some(report.commits_rewritten),
                refs_rewritten: report.refs_rewritten,
                next_steps: vec![
                    "run `git gc --prune=now` to drop the unreachable objects from this clone"
                        .into(),
                    "run `lore sync` with each remote: it pushes the rewritten history (with a \
                     lease) and every clone that syncs removes the memory too"
                        .into(),
                    "rotate the secret: others may have fetched it".into(),
                ],
            });
        }
        let written = env.lore.forget(&self.memory, &env.write.clone())?;
        Ok(Forgotten {
            next_steps: vec![format!(
                "its history stays in git; forget {} with purge to erase it",
                written.memory.id
            )],
            memory: written.memory,
            path: written.path,
            commit: Some(written.commit),
            purged: false,
            versions_removed: None,
            commits_rewritten: None,
            refs_rewritten: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cites_split_lines_off_the_path() {
        assert_eq!(parse_cite("a.rs").unwrap(), ("a.rs".into(), None));
        let (p, l) = parse_cite("src/a.rs:3-9").unwrap();
        assert_eq!(p, "src/a.rs");
        assert_eq!(l.unwrap().to_string(), "3-9");
        assert_eq!(parse_cite("c:\\x").unwrap().0, "c:\\x");
        for bad in ["a.rs:3-1", "a.rs:0", "a.rs:5-"] {
            let err = parse_cite(bad).unwrap_err().to_string();
            assert!(err.contains("line range"), "{bad}: {err}");
        }
    }

    #[test]
    fn a_status_filter_is_typed_and_its_schema_lists_the_statuses() {
        let f: Filter =
            serde_json::from_value(serde_json::json!({ "status": ["active", "superseded"] }))
                .unwrap();
        assert_eq!(f.status, [Status::Active, Status::Superseded]);
        let err = serde_json::from_value::<Filter>(serde_json::json!({ "status": ["bogus"] }))
            .unwrap_err()
            .to_string();
        assert!(err.contains("archived"), "{err}");
        let schema = serde_json::to_value(schemars::schema_for!(Filter))
            .unwrap()
            .to_string();
        for s in Status::ALL {
            assert!(schema.contains(&format!("\"{}\"", s.as_str())), "{schema}");
        }
    }
}
