//! Operations that make memory travel: sync with a remote (and its one-time setup), the open
//! contradictions, and resolving one.

use std::time::Duration;

use jiff::Timestamp;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Effect, Env, Operation};
use crate::error::{Error, Result};
use crate::memory::{Conflict, GcReport, Lore, Resolution, Resolved};
use crate::scope::Scope;
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
    /// The team stores this project reads, each synced with its own remote.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub teams: Vec<TeamSynced>,
}

/// How one team store's sync went.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct TeamSynced {
    /// The team store.
    pub name: String,
    /// The sync, when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<SyncReport>,
    /// Memories in the team store afterwards.
    pub stored: usize,
    /// Why it failed, when it did (the project's sync stands).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Syncs one store and catches its index up; returns the report and the memories stored.
pub(crate) fn sync_store(lore: &mut Lore, options: &SyncOptions) -> Result<(SyncReport, usize)> {
    let report = crate::sync::sync(lore.store(), options)?;
    if !report.purged.is_empty() && !report.dry_run {
        // The index may hold the purged texts: it is rebuilt, not caught up.
        lore.reset_index()?;
    }
    let memories = lore.index()?.doc_count()?.max(0) as usize;
    Ok((report, memories))
}

/// Syncs every team store the handle reads by default with the team's remote: only the team
/// store's own refs travel there.
fn sync_teams(env: &mut Env<'_>, options: &SyncOptions) -> Result<Vec<TeamSynced>> {
    let own = env.lore.own_scope().clone();
    let teams: Vec<Scope> = env
        .lore
        .scopes_read(None)?
        .into_iter()
        .filter(|s| matches!(s, Scope::Team(_)) && *s != own)
        .collect();
    let team_options = SyncOptions {
        remote: Some(crate::scope::teams::TEAM_REMOTE.into()),
        ..options.clone()
    };
    let mut done = Vec::new();
    for team in teams {
        env.progress
            .phase(&format!("syncing {}", team.label()), None);
        let result = env
            .lore
            .with_scope(&team, |t| sync_store(t, &team_options))
            .and_then(|r| r.ok_or_else(|| Error::NotFound(team.label())));
        done.push(match result {
            Ok((report, stored)) => TeamSynced {
                name: team.label(),
                report: Some(report),
                stored,
                error: None,
            },
            Err(e) => TeamSynced {
                name: team.label(),
                report: None,
                stored: 0,
                error: Some(e.to_string()),
            },
        });
    }
    Ok(done)
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
        let (report, memories) = sync_store(env.lore, &options)?;
        let teams = sync_teams(env, &options)?;
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
            teams,
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
        history stays in git), in one commit; then pack refs and loose objects, and the index's file.";
    const EFFECT: Effect = Effect::Destructive { idempotent: true };
    type Output = GcReport;

    fn run(self, env: &mut Env<'_>) -> Result<GcReport> {
        env.lore.gc(self.dry_run, &env.write)
    }
}
