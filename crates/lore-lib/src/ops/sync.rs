//! Operations that make memory travel: sync with a remote (and its one-time setup), the open
//! contradictions, and resolving one.

use std::time::Duration;

use jiff::Timestamp;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Effect, Env, Operation};
use crate::error::{Error, Result};
use crate::memory::{Conflict, GcReport, Resolution, Resolved};
use crate::sync::setup::SetupReport;
use crate::sync::{Direction, SyncOptions, SyncReport};

pub use crate::sync::DEFAULT_SYNC_TIMEOUT_SECS;

/// Sync lore's refs with a remote: fetch, merge, push.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Sync {
    /// The remote (default: the current branch's upstream remote, else `origin`).
    #[serde(default)]
    pub remote: Option<String>,
    /// Fetch and merge, push nothing.
    #[serde(default)]
    pub fetch_only: bool,
    /// Push what is ahead, fetch and merge nothing.
    #[serde(default)]
    pub push_only: bool,
    /// Only report what would be merged, pushed and contradicted.
    #[serde(default)]
    pub dry_run: bool,
    /// Time limit of each network call, in seconds (default 60).
    #[serde(default)]
    pub timeout_secs: Option<u64>,
}

/// What a sync did.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Synced {
    /// The sync itself: refs, counts, rounds.
    #[serde(flatten)]
    pub report: SyncReport,
    /// Memories in the store afterwards (the index caught up with the new tip).
    pub stored: usize,
    /// What to do next (after purges: the gc that drops the old objects).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub next_steps: Vec<String>,
}

impl Operation for Sync {
    const NAME: &'static str = "sync";
    const TITLE: &'static str = "Sync memory with a remote";
    const DESCRIPTION: &'static str = "Fetch lore's refs from a remote, merge them with this \
        clone's (memories by id and field; a keyed memory both sides changed differently \
        becomes an open contradiction, never a silent overwrite), and push the result with a \
        lease. Reports memories new, updated and forgotten, contradictions, and refs pushed.";
    const EFFECT: Effect = Effect::Write { idempotent: true };
    type Output = Synced;

    fn run(self, env: &mut Env<'_>) -> Result<Synced> {
        let direction = match (self.fetch_only, self.push_only) {
            (true, true) => {
                return Err(Error::Invalid {
                    what: "sync",
                    value: "fetch_only and push_only".into(),
                    reason: "choose one direction, or neither for both".into(),
                });
            }
            (true, false) => Direction::FetchOnly,
            (false, true) => Direction::PushOnly,
            (false, false) => Direction::Both,
        };
        let options = SyncOptions {
            remote: self.remote,
            direction,
            dry_run: self.dry_run,
            timeout: Duration::from_secs(self.timeout_secs.unwrap_or(DEFAULT_SYNC_TIMEOUT_SECS)),
            now: env.write.now.unwrap_or_else(Timestamp::now),
        };
        env.progress.phase("syncing", None);
        let report = crate::sync::sync(env.lore.store(), &options)?;
        env.progress.phase("indexing", None);
        if !report.purged.is_empty() && !report.dry_run {
            // The index may hold the purged texts: it is rebuilt, not caught up.
            env.lore.reset_index()?;
        }
        let memories = env.lore.index()?.doc_count()?.max(0) as usize;
        let mut next_steps = Vec::new();
        if !report.dry_run && (!report.purged.is_empty() || report.replaced_remote_history) {
            next_steps.push(
                "run `git gc --prune=now` here to drop the purged objects from this clone".into(),
            );
        }
        if report.replaced_remote_history {
            next_steps.push(format!(
                "the remote {} no longer references the purged history; run `git gc --prune=now` \
                 on the server (or ask its host) to drop the objects there",
                report.remote
            ));
        }
        Ok(Synced {
            report,
            stored: memories,
            next_steps,
        })
    }
}

/// Set a remote up so that a plain `git fetch` brings lore's refs along.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SyncSetup {
    /// The remote (default: the current branch's upstream remote, else `origin`).
    #[serde(default)]
    pub remote: Option<String>,
    /// Also install a pre-push hook running this lore binary's sync (never fails the push).
    #[serde(default)]
    pub hook_command: Option<String>,
}

impl Operation for SyncSetup {
    const NAME: &'static str = "sync_setup";
    const TITLE: &'static str = "Set up sync for a remote";
    const DESCRIPTION: &'static str = "Add one fetch refspec (+refs/lore/*:refs/lore-remotes/\
        <remote>/*) so a plain git fetch brings lore's refs along; optionally a pre-push hook \
        that syncs lore and never fails the push. remote.<name>.push is never changed.";
    const EFFECT: Effect = Effect::Write { idempotent: true };
    type Output = SetupReport;

    fn run(self, env: &mut Env<'_>) -> Result<SetupReport> {
        crate::sync::setup::setup(
            env.lore.store(),
            self.remote.as_deref(),
            self.hook_command.as_deref(),
        )
    }
}

/// List the open contradictions.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Conflicts {}

/// The open contradictions.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ConflictList {
    /// Each one, with the version in force, the others and the base.
    pub conflicts: Vec<Conflict>,
}

impl Operation for Conflicts {
    const NAME: &'static str = "conflicts";
    const TITLE: &'static str = "Open contradictions";
    const DESCRIPTION: &'static str = "Memories that two clones or agents changed in \
        contradicting ways, found by sync: the version in force, every other version (author, \
        agent, session, date, commit) and the version both started from.";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = ConflictList;

    fn run(self, env: &mut Env<'_>) -> Result<ConflictList> {
        Ok(ConflictList {
            conflicts: env.lore.conflicts()?,
        })
    }
}

/// Which version a resolution keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Keep {
    /// The version in force.
    Ours,
    /// The other version (`id` picks one when there are several).
    Theirs,
    /// Both: another memory stays beside it without the key; another version of the same
    /// memory has its body appended.
    Both,
    /// New text (`summary` and/or `body`) replaces the version in force.
    Edit,
}

/// Settle one open contradiction.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Resolve {
    /// The contradiction: its name (`decisions/db-engine`), key, or the id of any version.
    pub conflict: String,
    /// Which version to keep.
    pub keep: Keep,
    /// With keep=theirs: the other version's id, when there are several.
    #[serde(default)]
    pub id: Option<String>,
    /// With keep=edit: the new summary.
    #[serde(default)]
    pub summary: Option<String>,
    /// With keep=edit: the new body.
    #[serde(default)]
    pub body: Option<String>,
}

impl Operation for Resolve {
    const NAME: &'static str = "resolve";
    const TITLE: &'static str = "Resolve a contradiction";
    const DESCRIPTION: &'static str = "Record a decision on an open contradiction in one commit \
        (with the agent and session): keep ours, take theirs, keep both, or edit. The versions \
        not kept stay in history as superseded. Syncing carries the decision to every clone.";
    const EFFECT: Effect = Effect::Write { idempotent: false };
    type Output = Resolved;

    fn run(self, env: &mut Env<'_>) -> Result<Resolved> {
        let misplaced = |field: &str, keep: &str| Error::Invalid {
            what: "resolution",
            value: field.to_string(),
            reason: format!("{field} goes with keep={keep}"),
        };
        if self.id.is_some() && self.keep != Keep::Theirs {
            return Err(misplaced("id", "theirs"));
        }
        if (self.summary.is_some() || self.body.is_some()) && self.keep != Keep::Edit {
            return Err(misplaced("summary/body", "edit"));
        }
        let resolution = match self.keep {
            Keep::Ours => Resolution::Ours,
            Keep::Theirs => Resolution::Theirs { id: self.id },
            Keep::Both => Resolution::Both,
            Keep::Edit => {
                if self.summary.is_none() && self.body.is_none() {
                    return Err(Error::Invalid {
                        what: "resolution",
                        value: "edit".into(),
                        reason: "give the new summary or body".into(),
                    });
                }
                Resolution::Edit {
                    summary: self.summary,
                    body: self.body,
                }
            }
        };
        env.lore
            .resolve_conflict(&self.conflict, &resolution, &env.write)
    }
}

/// Apply the lifecycle rules and pack lore's refs.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Gc {
    /// Only report what would be archived and expired.
    #[serde(default)]
    pub dry_run: bool,
}

impl Operation for Gc {
    const NAME: &'static str = "gc";
    const TITLE: &'static str = "Tidy shared memory";
    const DESCRIPTION: &'static str = "Archive active progress memories untouched for \
        lore.decay.progress days (default 30), remove archived memories untouched for \
        lore.gc.archiveRetention days (default 180) from the live tree with a tombstone (their \
        history stays in git), in one commit; then pack refs and loose objects.";
    const EFFECT: Effect = Effect::Destructive { idempotent: true };
    type Output = GcReport;

    fn run(self, env: &mut Env<'_>) -> Result<GcReport> {
        env.lore.gc(self.dry_run, &env.write)
    }
}
