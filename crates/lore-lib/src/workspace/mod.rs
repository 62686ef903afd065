//! The context controller: an agent's working context as a versioned workspace of context
//! branches, each a commit chain under `refs/lore/ctx/<branch>`.
//!
//! ```text
//! refs/lore/ctx/<branch> ─► commit ─► tree
//!   main.md            the roadmap: goals, milestones, to-do
//!   commit.md          one entry per commit: branch purpose, previous summary, contribution
//!   branch.yaml        name, purpose, parent, latest summary, counters, the latest entry
//!   metadata.yaml      addressable segments (file structure, env config, dependencies, …)
//!   log/NNNNNN.jsonl   the steps each commit (or merge) added, one JSON step per line
//! <git common dir>/lore/ctx/HEAD                 the current branch (per clone)
//! <git common dir>/lore/ctx/journal/<b>.jsonl    uncommitted steps (per clone, durable)
//! <git common dir>/lore/ctx/trajectory.sqlite   each branch's trajectory index (derived)
//! ```
//!
//! Every change is one git commit moved by compare-and-swap ([`crate::Store::transact_ref`]); each
//! records the code HEAD of its moment (`Lore-Code-Head`). A merge is a two-parent commit.
//!
//! Where each part lives: `handle.rs` (the workspace, the current branch, secret screening,
//! warnings), `branching.rs` (init, branch, switch), `commit.rs` (log, status, commit, an import's
//! write), `merge.rs`, `metadata.rs`, `history.rs` (a branch's history and the blog's four tools),
//! `summary.rs` (composed summaries, `commit.md` entries), `recall.rs` (the steps branches hold
//! and trajectory recall over them), `recall_index.rs` (each branch's trajectory index kept
//! between processes), `files.rs` (reading and writing a commit's files), `view.rs`
//! (the CONTEXT views), `gcc.rs` (the `.GCC/` layout), `gcc_foreign.rs` (the forms another
//! implementation writes in it), `log_md.rs` (a step's `log.md` form).

mod branching;
mod commit;
mod files;
pub mod gcc;
mod gcc_compat;
mod gcc_foreign;
mod history;
mod merge;
pub(crate) use merge::merge_base;
mod handle;
pub mod log_md;
mod metadata;
pub mod preview;
mod recall;
mod recall_index;
mod summary;
pub mod sync_merge;
pub mod view;

use jiff::Timestamp;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use log_md::Step;

pub use crate::steps::TrajectoryStep;
pub use files::{read_meta, read_segments};
pub use handle::Workspace;
pub use metadata::metadata_value;
pub use summary::{commit_md_entry, compose_summary};

/// The prefix of context branch refs.
pub const CTX_REF_PREFIX: &str = "refs/lore/ctx/";
/// The roadmap file.
pub const ROADMAP_FILE: &str = "main.md";
/// The commit entries file.
pub const COMMIT_FILE: &str = "commit.md";
/// The branch record.
pub const BRANCH_FILE: &str = "branch.yaml";
/// The metadata file.
pub const METADATA_FILE: &str = "metadata.yaml";
/// The directory of committed log segments.
pub const LOG_DIR: &str = "log";
/// The longest progress summary composed without `--summary` (characters).
pub const SUMMARY_MAX_CHARS: usize = 600;
/// The branch `ctx init` creates.
pub const MAIN_BRANCH: &str = "main";

/// What made a context commit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    /// `ctx init`.
    Init,
    /// `ctx branch`.
    Branch,
    /// `ctx commit`.
    Commit,
    /// `ctx merge`.
    Merge,
    /// `ctx update` (the roadmap replaced).
    Update,
    /// `ctx metadata set`.
    Metadata,
    /// `ctx import`.
    Import,
}

impl EntryKind {
    /// The kind's name.
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::Init => "init",
            EntryKind::Branch => "branch",
            EntryKind::Commit => "commit",
            EntryKind::Merge => "merge",
            EntryKind::Update => "update",
            EntryKind::Metadata => "metadata",
            EntryKind::Import => "import",
        }
    }
}

/// The record of one context commit, kept in `branch.yaml` as `last` (older ones are in the
/// branch's history).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Entry {
    /// What made it.
    pub kind: EntryKind,
    /// 1 for the branch's first commit, then counting.
    pub seq: u32,
    /// When.
    pub time: Timestamp,
    /// The code HEAD at that moment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_head: Option<String>,
    /// The branch's purpose.
    pub purpose: String,
    /// The summary before this commit.
    #[serde(default)]
    pub previous_summary: String,
    /// What this commit contributed.
    pub contribution: String,
    /// The summary after it.
    #[serde(default)]
    pub summary: String,
    /// How many steps it added to the log.
    #[serde(default)]
    pub steps: usize,
    /// The log segment it added, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment: Option<String>,
    /// The merged branch (merges only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<String>,
}

/// `branch.yaml`: a branch's identity and state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BranchMeta {
    /// The branch's name.
    pub name: String,
    /// Why it exists.
    pub purpose: String,
    /// The branch it was made from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// When it was made.
    pub created: Timestamp,
    /// The latest progress summary.
    #[serde(default)]
    pub summary: String,
    /// How many entries `commit.md` holds.
    #[serde(default)]
    pub commits: u32,
    /// How many log segments were written (names are numbered from 1).
    #[serde(default)]
    pub segments: u32,
    /// Branches merged into this one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged: Vec<String>,
    /// The latest commit's record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<Entry>,
}

/// Checks a context branch name: 1–64 of `A-Z a-z 0-9 . _ -`, starting with a letter or digit.
pub fn check_branch_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.as_bytes()[0].is_ascii_alphanumeric()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-')
        && !name.contains("..")
        && !name.ends_with(".lock")
        && !name.ends_with('.');
    if ok {
        Ok(())
    } else {
        Err(Error::Invalid {
            what: "context branch",
            value: name.to_string(),
            reason: "use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"
                .into(),
        })
    }
}

/// The ref of a context branch.
pub fn branch_ref(name: &str) -> String {
    format!("{CTX_REF_PREFIX}{name}")
}

/// The state `ctx status` reports.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Status {
    /// The branch.
    pub branch: String,
    /// Its record.
    pub meta: BranchMeta,
    /// Its tip.
    pub tip: String,
    /// Steps logged since the last commit.
    pub uncommitted: Vec<Step>,
    /// Journal lines that could not be read.
    pub damaged: usize,
    /// Committed steps.
    pub committed_steps: usize,
    /// The code HEAD now.
    pub code_head: Option<String>,
}

/// How to settle conflicting roadmap or metadata edits in a merge.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Resolution {
    /// Refuse the merge and report the conflicts.
    #[default]
    Refuse,
    /// Keep the current branch's side.
    Ours,
    /// Take the merged branch's side.
    Theirs,
    /// Use this roadmap (metadata conflicts still refuse).
    Roadmap(String),
}

/// What a merge did.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct MergeOutcome {
    /// The branch merged into.
    pub into: String,
    /// The branch merged.
    pub from: String,
    /// The merge commit (none: nothing to merge).
    pub commit: Option<String>,
    /// Steps brought over.
    pub steps: usize,
    /// Conflicts settled by the resolution given.
    pub resolved: Vec<String>,
    /// The summary after the merge.
    pub summary: String,
    /// Uncommitted steps left on the merged branch (not merged).
    pub uncommitted_left: usize,
}

/// What a commit did.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct CommitOutcome {
    /// The branch.
    pub branch: String,
    /// The new commit.
    pub commit: String,
    /// The entry written.
    pub entry: Entry,
}

/// One version of the roadmap (the blog's context document).
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ContextVersion {
    /// 1 for the oldest.
    pub version: usize,
    /// The commit.
    pub commit: String,
    /// When.
    pub time: Timestamp,
    /// The commit's subject.
    pub message: String,
}

#[cfg(test)]
mod tests;
