//! `sync`: lore's refs travel to and from a remote and merge, without touching the user's
//! branches or configuration.
//!
//! One round: fetch `+refs/lore/*` into a tracking namespace of the remote
//! (`refs/lore-remotes/<remote>/…`, forced, so a diverged remote never fails the fetch); for each
//! lore ref, fast-forward or merge (memory in process by memory, context branches by step and
//! segment, see [`crate::merge`]); then push every ref that is ahead in one atomic push whose
//! lease per ref is the value just fetched. A rejected push (someone pushed meanwhile) starts
//! the round again, a bounded number of times. A ref that could not be merged is parked and not
//! pushed, so nothing of the remote's is ever overwritten.

mod purges;
pub mod setup;

use std::time::Duration;

use git2::{ErrorCode, Oid, Repository};
use jiff::Timestamp;
use schemars::JsonSchema;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::merge::{self, MergeCounts};
use crate::model::MemoryId;
use crate::record;
use crate::retry::Backoff;
use crate::store::git_cli::{GitCli, PushOutcome, PushUpdate};
use crate::store::layout::{self, PathKind};
use crate::store::ref_target;
pub use crate::store::remotes::{
    RemoteStanding, TRACKING_PREFIX, parked_name, standing, tracking_prefix,
};
use crate::store::remotes::{lore_ref_names, tracked_name};
use crate::store::{LORE_REF_PREFIX, MEMORY_REF, Message, RefWrite, Store};

/// How many fetch–merge–push rounds a sync tries before giving up on a busy remote.
const MAX_ROUNDS: u32 = 30;
/// How long a sync keeps retrying a push the remote refused because it moved.
const MAX_RETRY_TIME: Duration = Duration::from_secs(90);

/// Where lore's refs live on a remote: `refs/lore/` (the default), or `refs/heads/lore/` for
/// hosts that refuse refs outside `refs/heads/` (`git config lore.sync.remoteRefs heads`).
pub fn remote_prefix(store: &Store) -> Result<&'static str> {
    match store
        .config_string("lore.sync.remoteRefs")
        .as_deref()
        .map(str::trim)
    {
        None | Some("lore") => Ok(LORE_REF_PREFIX),
        Some("heads") => Ok("refs/heads/lore/"),
        Some(other) => Err(Error::Invalid {
            what: "lore.sync.remoteRefs",
            value: other.to_string(),
            reason: "use lore (refs/lore/*, the default) or heads (refs/heads/lore/*)".into(),
        }),
    }
}

/// Which directions a sync goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Fetch, merge and push.
    #[default]
    Both,
    /// Fetch and merge; push nothing.
    FetchOnly,
    /// Push what is ahead of what was last fetched; fetch and merge nothing.
    PushOnly,
}

/// The default time limit of one git network call during sync, in seconds.
pub const DEFAULT_SYNC_TIMEOUT_SECS: u64 = 60;

/// How to sync.
#[derive(Clone, Debug)]
pub struct SyncOptions {
    /// The remote (default: the current branch's upstream remote, else `origin`).
    pub remote: Option<String>,
    /// Which directions.
    pub direction: Direction,
    /// Only say what would happen.
    pub dry_run: bool,
    /// The time limit of each git network call.
    pub timeout: Duration,
    /// The time to record in merge commits and conflict records.
    pub now: Timestamp,
}

impl Default for SyncOptions {
    /// Both directions with the upstream remote, for real, the default time limit, now.
    fn default() -> Self {
        SyncOptions {
            remote: None,
            direction: Direction::Both,
            dry_run: false,
            timeout: Duration::from_secs(DEFAULT_SYNC_TIMEOUT_SECS),
            now: Timestamp::now(),
        }
    }
}

/// What happened to one lore ref.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RefAction {
    /// Both sides have the same commit.
    UpToDate,
    /// Only the remote has it: created locally.
    Created,
    /// The local ref moved forward to the remote's.
    FastForwarded,
    /// Both sides had new commits: merged.
    Merged,
    /// Only the local side has new commits (pushed unless fetch-only or dry-run).
    Ahead,
    /// Diverged and not mergeable automatically: the remote's version is kept beside it.
    Parked,
}

/// One lore ref's outcome.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct RefOutcome {
    /// The ref (`refs/lore/memory`).
    pub name: String,
    /// What happened (or, in a dry run, would happen).
    pub action: RefAction,
    /// Whether it was pushed.
    pub pushed: bool,
}

/// What a sync did.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct SyncReport {
    /// The remote synced with.
    pub remote: String,
    /// Only a plan: nothing was written or pushed.
    pub dry_run: bool,
    /// Memories that arrived or changed, and contradictions found.
    pub memories: MergeCounts,
    /// Every lore ref on either side.
    pub refs: Vec<RefOutcome>,
    /// How many refs were pushed.
    pub pushed: usize,
    /// Open contradictions after the sync.
    pub open_conflicts: usize,
    /// Fetch–merge–push rounds it took (more than one: the remote moved meanwhile).
    pub rounds: u32,
    /// Memories the remote's purge records removed from this clone (in a dry run: would
    /// remove).
    pub purged: Vec<String>,
    /// Whether the remote's memory history held purged memories and was replaced by the
    /// rewritten one (pushed with a lease on the value fetched).
    pub replaced_remote_history: bool,
}

/// Finds the remote to sync with: the one named, else the current branch's upstream remote,
/// else `origin`.
pub fn resolve_remote(repo: &Repository, given: Option<&str>) -> Result<String> {
    let name = match given {
        Some(name) => name.to_string(),
        None => upstream_remote(repo).unwrap_or_else(|| "origin".to_string()),
    };
    match repo.find_remote(&name) {
        Ok(_) => Ok(name),
        Err(e) if e.code() == ErrorCode::NotFound || e.code() == ErrorCode::InvalidSpec => {
            let known: Vec<String> = repo
                .remotes()
                .map(|r| r.iter().flatten().flatten().map(str::to_string).collect())
                .unwrap_or_default();
            Err(Error::NoRemote(if known.is_empty() {
                format!("no remote {name:?}: this repository has no remotes")
            } else {
                format!("no remote {name:?} (remotes: {})", known.join(", "))
            }))
        }
        Err(e) => Err(e.into()),
    }
}

fn upstream_remote(repo: &Repository) -> Option<String> {
    let head = repo.head().ok()?;
    let branch = head.shorthand().ok()?;
    repo.config()
        .ok()?
        .get_string(&format!("branch.{branch}.remote"))
        .ok()
        .filter(|r| r != ".")
}

/// Runs one sync.
pub fn sync(store: &Store, options: &SyncOptions) -> Result<SyncReport> {
    let repo = store.repo();
    let remote = resolve_remote(repo, options.remote.as_deref())?;
    // One sync per clone at a time (their fetches would race on the tracking refs); other
    // writers go on meanwhile, and the merge commits by compare-and-swap as every write does.
    let _one_at_a_time =
        crate::localstate::FileLock::exclusive(&store.common_dir().join("lore").join("sync"))?;
    // A fetch or a write killed mid-update leaves a ref lock no one holds: heal it first.
    store.heal_stale_locks()?;
    let git = GitCli::new(&store.common_dir(), options.timeout);
    let prefix = tracking_prefix(&remote);
    let on_remote = remote_prefix(store)?;
    let mut backoff = Backoff::new(
        Duration::from_millis(50),
        Duration::from_secs(2),
        MAX_RETRY_TIME,
    );
    let mut report = SyncReport {
        remote: remote.clone(),
        dry_run: options.dry_run,
        memories: MergeCounts::default(),
        refs: Vec::new(),
        pushed: 0,
        open_conflicts: 0,
        rounds: 0,
        purged: Vec::new(),
        replaced_remote_history: false,
    };
    // Each round fetches, merges every ref and pushes; a push the remote refused (it moved
    // meanwhile) starts another round after a pause.
    loop {
        report.rounds += 1;
        if options.direction != Direction::PushOnly {
            git.fetch(&remote, on_remote, &prefix)?;
        }
        let pushes = sync_refs(store, options, &prefix, &mut report)?;
        if options.dry_run || pushes.is_empty() {
            // A plan says which refs would be pushed.
            report.replaced_remote_history = options.dry_run && pushes.iter().any(|p| p.replace);
            report.open_conflicts = count_conflicts(store)?;
            return Ok(report);
        }
        match git.push(&remote, on_remote, &pushes)? {
            PushOutcome::Pushed => {
                // The remote now has exactly the commits pushed (a local write since then is
                // pushed by the next sync).
                for p in &pushes {
                    let tracked = tracked_name(&prefix, &p.local_ref);
                    repo.reference(&tracked, p.commit, true, "lore sync: pushed")?;
                    report.replaced_remote_history |= p.replace;
                }
                report.open_conflicts = count_conflicts(store)?;
                return Ok(report);
            }
            PushOutcome::Rejected(why) => {
                let rounds = report.rounds;
                if rounds >= MAX_ROUNDS
                    || options.direction == Direction::PushOnly
                    || !backoff.wait()
                {
                    return Err(Error::Remote {
                        remote,
                        message: format!(
                            "the push was refused after {rounds} round(s) because the remote kept \
                             moving ({why}); sync again"
                        ),
                    });
                }
            }
        }
    }
}

/// One round's work on every lore ref (see [`sync_ref`]), recorded in the report: the refs'
/// outcomes, the memories merged (counted once for a plan) and which refs are to be pushed.
fn sync_refs(
    store: &Store,
    options: &SyncOptions,
    prefix: &str,
    report: &mut SyncReport,
) -> Result<Vec<PushUpdate>> {
    report.refs.clear();
    let mut pushes: Vec<PushUpdate> = Vec::new();
    for name in lore_ref_names(store.repo(), prefix)? {
        let (outcome, counts, push) = sync_ref(store, options, prefix, name, report)?;
        if !options.dry_run || report.rounds == 1 {
            report.memories.add(counts);
        }
        pushes.extend(push);
        report.refs.push(outcome);
    }
    report.pushed = pushes.len();
    for r in report.refs.iter_mut() {
        r.pushed = pushes.iter().any(|p| p.local_ref == r.name);
    }
    Ok(pushes)
}

/// One lore ref's part of a sync round: purges settled (memory ref), the fetched side merged
/// in (or, pushing only, the relation read), and the push it needs, if any. The ids purged
/// here are added to the report's.
fn sync_ref(
    store: &Store,
    options: &SyncOptions,
    prefix: &str,
    name: String,
    report: &mut SyncReport,
) -> Result<(RefOutcome, MergeCounts, Option<PushUpdate>)> {
    let repo = store.repo();
    let tracking = tracked_name(prefix, &name);
    let fetched = ref_target(repo, &tracking)?;
    let mut tracked = fetched;
    let mut replaces_remote = false;
    if name == MEMORY_REF {
        let settled = purges::settle(store, &tracking, fetched, options.dry_run)?;
        tracked = settled.tracked;
        replaces_remote = settled.replaces_remote;
        for id in settled.purged_here {
            if !report.purged.contains(&id.to_string()) {
                report.purged.push(id.to_string());
            }
        }
    }
    let local = ref_target(repo, &name)?;
    let (action, counts) = if options.direction == Direction::PushOnly {
        (relation(repo, local, tracked)?, MergeCounts::default())
    } else {
        reconcile(store, &name, local, tracked, &report.remote, options)?
    };
    let local_now = ref_target(repo, &name)?;
    let ahead = match (local_now, tracked) {
        (Some(l), Some(t)) => l != t && repo.graph_descendant_of(l, t)?,
        (Some(_), None) => true,
        _ => false,
    };
    let ahead = ahead || (options.dry_run && action == RefAction::Merged);
    let push = match local_now {
        Some(local)
            if ahead
                && options.direction != Direction::FetchOnly
                && action != RefAction::Parked =>
        {
            Some(PushUpdate {
                local_ref: name.clone(),
                commit: local,
                lease: fetched,
                replace: replaces_remote,
            })
        }
        _ => None,
    };
    let outcome = RefOutcome {
        name,
        action,
        pushed: false,
    };
    Ok((outcome, counts, push))
}

/// Every lore ref on either side: local `refs/lore/*` and the remote's tracked ones.
/// How the local ref stands against the remote's, without changing anything.
fn relation(repo: &Repository, local: Option<Oid>, remote: Option<Oid>) -> Result<RefAction> {
    Ok(match (local, remote) {
        (None, None) => RefAction::UpToDate,
        (None, Some(_)) => RefAction::Created,
        (Some(_), None) => RefAction::Ahead,
        (Some(l), Some(r)) if l == r => RefAction::UpToDate,
        (Some(l), Some(r)) if repo.graph_descendant_of(l, r)? => RefAction::Ahead,
        (Some(l), Some(r)) if repo.graph_descendant_of(r, l)? => RefAction::FastForwarded,
        _ => RefAction::Merged,
    })
}

/// Brings one local ref up to the remote's: create, fast-forward or merge.
fn reconcile(
    store: &Store,
    name: &str,
    local: Option<Oid>,
    remote_tip: Option<Oid>,
    remote: &str,
    options: &SyncOptions,
) -> Result<(RefAction, MergeCounts)> {
    let repo = store.repo();
    let action = relation(repo, local, remote_tip)?;
    let Some(theirs) = remote_tip else {
        return Ok((action, MergeCounts::default()));
    };
    let is_memory = name == MEMORY_REF;
    match action {
        RefAction::UpToDate | RefAction::Ahead | RefAction::Parked => {
            Ok((action, MergeCounts::default()))
        }
        RefAction::Created | RefAction::FastForwarded => {
            let counts = if is_memory {
                count_changes(store, local, theirs)?
            } else {
                MergeCounts::default()
            };
            if !options.dry_run {
                store.compare_and_swap(name, local, theirs, "sync: fast-forward")?;
            }
            Ok((action, counts))
        }
        RefAction::Merged if is_memory => {
            merge_memory(store, theirs, remote, options).map(|c| (RefAction::Merged, c))
        }
        RefAction::Merged => {
            // Reasoning sessions (ledger, scores, outcomes) always merge, by their rules.
            let merged = if crate::thoughts::merge::merges(name) {
                options.dry_run || crate::thoughts::merge::merge_ref(store, name, theirs, remote)?
            } else if options.dry_run {
                crate::workspace::sync_merge::can_merge(store, name, theirs)?
            } else {
                crate::workspace::sync_merge::merge_branch(
                    store,
                    name,
                    theirs,
                    remote,
                    options.now,
                )?
            };
            if merged {
                Ok((RefAction::Merged, MergeCounts::default()))
            } else {
                if !options.dry_run {
                    park(repo, name, remote, theirs)?;
                }
                Ok((RefAction::Parked, MergeCounts::default()))
            }
        }
    }
}

fn park(repo: &Repository, name: &str, remote: &str, theirs: Oid) -> Result<()> {
    repo.reference(
        &parked_name(remote, name),
        theirs,
        true,
        "lore sync: parked a version that could not be merged",
    )?;
    Ok(())
}

/// Merges the remote's memory chain into ours as one two-parent commit.
fn merge_memory(
    store: &Store,
    theirs: Oid,
    remote: &str,
    options: &SyncOptions,
) -> Result<MergeCounts> {
    let repo = store.repo();
    if options.dry_run {
        let snap = store.snapshot(store.tip()?)?;
        let base = match snap.commit() {
            Some(ours) => crate::workspace::merge_base(repo, ours, theirs)?,
            None => None,
        };
        return Ok(merge::merge_trees(store, &snap, base, theirs, options.now)?.counts);
    }
    let (counts, _) = store.transact_ref(MEMORY_REF, |snap| {
        let Some(ours) = snap.commit() else {
            return Ok((RefWrite::default(), MergeCounts::default()));
        };
        if ours == theirs || repo.graph_descendant_of(ours, theirs)? {
            return Ok((RefWrite::default(), MergeCounts::default()));
        }
        let base = crate::workspace::merge_base(repo, ours, theirs)?;
        let merged = merge::merge_trees(store, snap, base, theirs, options.now)?;
        let c = merged.counts;
        let message = Message {
            subject: format!(
                "merge {remote}: {} new, {} updated, {} forgotten, {} contradiction(s)",
                c.new, c.updated, c.forgotten, c.conflicts
            ),
            body: (!merged.contested.is_empty()).then(|| {
                let mut body = String::from("Contradictions (see `lore conflicts`):\n");
                for path in &merged.contested {
                    body.push_str(&format!("- {path}\n"));
                }
                body
            }),
            trailers: vec![
                ("Lore-Action".into(), "merge".into()),
                ("Lore-Remote".into(), remote.to_string()),
            ],
        };
        Ok((
            RefWrite {
                merge_parent: Some(theirs),
                ..RefWrite::on_tip(merged.edits, message)
            },
            c,
        ))
    })?;
    Ok(counts)
}

/// What a fast-forward brings: memories added, changed and forgotten between two tips.
fn count_changes(store: &Store, from: Option<Oid>, to: Oid) -> Result<MergeCounts> {
    let mut counts = MergeCounts::default();
    let mut added: Vec<MemoryId> = Vec::new();
    let mut removed: Vec<MemoryId> = Vec::new();
    for change in store.diff(from, Some(to))? {
        match layout::classify(&change.path) {
            PathKind::Memory => {
                // An id path names its memory; only a key path needs its file read.
                let id = |blob: Option<Oid>| -> Option<MemoryId> {
                    if change.path.split('/').count() == 4
                        && let Ok(id) = MemoryId::parse(layout::name_from_path(&change.path))
                    {
                        return Some(id);
                    }
                    let bytes = store.read_blob(blob?).ok()?;
                    record::parse(std::str::from_utf8(&bytes).ok()?, &change.path)
                        .ok()
                        .map(|m| m.id)
                };
                match (change.old, change.new) {
                    (Some(_), Some(_)) => counts.updated += 1,
                    (None, Some(_)) => added.extend(id(change.new)),
                    (Some(_), None) => removed.extend(id(change.old)),
                    (None, None) => {}
                }
            }
            PathKind::Conflict if change.old.is_none() => counts.conflicts += 1,
            _ => {}
        }
    }
    for id in &added {
        if removed.contains(id) {
            counts.updated += 1;
        } else {
            counts.new += 1;
        }
    }
    counts.forgotten = removed.iter().filter(|id| !added.contains(id)).count();
    Ok(counts)
}

fn count_conflicts(store: &Store) -> Result<usize> {
    let snap = store.snapshot(store.tip()?)?;
    Ok(merge::open_conflicts(&snap)?.len())
}
