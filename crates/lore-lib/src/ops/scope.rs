//! Scopes as operations: which scopes a project reads, team stores (add, list, remove), and
//! moving a memory from one scope to another.

use std::path::PathBuf;
use std::time::Duration;

use jiff::Timestamp;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Effect, Env, Operation};
use crate::context::scope_name;
use crate::error::{Error, Result};
use crate::memory::{Lore, Written};
use crate::model::Memory;
use crate::scope::config::{ScopeConfig, project_file};
use crate::scope::teams::{self, TeamStore};
use crate::scope::{Scope, ScopePaths, registry};
use crate::secrets::SecretReport;
use crate::sync::{Direction, SyncOptions};

/// Where the other scopes live, or why there is no knowing.
fn paths(lore: &Lore) -> Result<ScopePaths> {
    lore.scope_sources()
        .paths
        .clone()
        .ok_or_else(|| Error::Invalid {
            what: "scope",
            value: String::new(),
            reason: "lore's data directory is unknown here (set LORE_HOME, XDG_DATA_HOME or HOME)"
                .into(),
        })
}

/// List the scopes read here, the team stores on this machine and the registered projects.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScopeList {}

/// A team store and who names it.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct TeamListed {
    /// The store.
    #[serde(flatten)]
    pub store: TeamStore,
    /// Whether this project's `.lore` names it.
    pub named_by_project: bool,
    /// Whether the user's configuration names it.
    pub named_by_user: bool,
}

/// The scopes around this store.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Scopes {
    /// This store's scope.
    pub this: String,
    /// The scopes a read covers by default, in order.
    pub read: Vec<String>,
    /// The personal store.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub personal: Option<PathBuf>,
    /// Team stores on this machine.
    pub teams: Vec<TeamListed>,
    /// Teams the configuration names that are not added on this machine.
    pub missing_teams: Vec<String>,
    /// Projects on this machine with a store (what `all` adds).
    pub projects: Vec<PathBuf>,
}

impl Operation for ScopeList {
    const NAME: &'static str = "scope_list";
    const TITLE: &'static str = "Scopes";
    const DESCRIPTION: &'static str = "The scopes recall and context read here (project, \
        personal, team stores), the team stores on this machine and the projects `all` adds.";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = Scopes;

    fn run(self, env: &mut Env<'_>) -> Result<Scopes> {
        let read = env.lore.scopes_read(None)?;
        let this = scope_name(env.lore.own_scope());
        let Some(paths) = env.lore.scope_sources().paths.clone() else {
            return Ok(Scopes {
                this,
                read: read.iter().map(scope_name).collect(),
                personal: None,
                teams: Vec::new(),
                missing_teams: Vec::new(),
                projects: Vec::new(),
            });
        };
        let project = match project_file(env.lore.store().workdir()) {
            Some(f) => ScopeConfig::read(&f)?,
            None => ScopeConfig::default(),
        };
        let user = ScopeConfig::read(&paths.user_config())?;
        let teams: Vec<TeamListed> = teams::list(&paths)?
            .into_iter()
            .map(|t| TeamListed {
                named_by_project: project.names().any(|n| n == t.name),
                named_by_user: user.names().any(|n| n == t.name),
                store: t,
            })
            .collect();
        let missing_teams = project
            .names()
            .chain(user.names())
            .filter(|n| !teams.iter().any(|t| t.store.name == *n))
            .map(str::to_string)
            .collect();
        Ok(Scopes {
            this,
            read: read.iter().map(scope_name).collect(),
            personal: paths
                .personal
                .join("HEAD")
                .exists()
                .then(|| paths.personal.clone()),
            teams,
            missing_teams,
            projects: registry::projects(&paths.registry())?,
        })
    }
}

/// Make a team store from a git remote, and read it in every project (or in this one).
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScopeAdd {
    /// The team store's name (lower-case letters, digits, `-`, `_`).
    pub name: String,
    /// Its git remote: a URL or a path (a bare repository on a server, a hosted repository).
    /// Default: the URL this project's `.lore` gives for the name.
    #[serde(default)]
    pub url: Option<String>,
    /// Name it in this project's `.lore` (to commit, so the team's clones read it) instead of
    /// the user's configuration.
    #[serde(default)]
    pub project: bool,
    /// Time limit of each network call, in seconds (default 60).
    #[serde(default)]
    pub timeout_secs: Option<u64>,
}

/// What adding a team store did.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ScopeAdded {
    /// The store.
    pub store: TeamStore,
    /// The configuration file that now names it.
    pub named_in: PathBuf,
    /// Memories it holds after the first sync.
    pub stored: usize,
}

impl Operation for ScopeAdd {
    const NAME: &'static str = "scope_add";
    const TITLE: &'static str = "Add a team store";
    const DESCRIPTION: &'static str = "Make a team store from a git remote under lore's data \
        directory, fetch what the team has, and name it in the user's configuration (or this \
        project's `.lore`).";
    const EFFECT: Effect = Effect::Write { idempotent: false };
    type Output = ScopeAdded;

    fn run(self, env: &mut Env<'_>) -> Result<ScopeAdded> {
        let paths = paths(env.lore)?;
        let config_file = if self.project {
            project_file(env.lore.store().workdir()).ok_or_else(|| Error::Invalid {
                what: "scope",
                value: self.name.clone(),
                reason: "naming a team in the project's .lore needs a repository with a work tree"
                    .into(),
            })?
        } else {
            paths.user_config()
        };
        let mut config = ScopeConfig::read(&config_file)?;
        let url = match self.url.clone() {
            Some(u) => u,
            None => named_url(env.lore, &self.name)?,
        };
        let store = teams::add(&paths, &self.name, &url, env.lore.store().git_env())?;
        let mut team = Lore::new(store);
        team.set_own_scope(Scope::Team(self.name.clone()));
        team.set_embedder(env.lore.embedder().cloned());
        let first = first_sync(&mut team, self.timeout_secs, env.write.now);
        let stored = match first {
            Ok(n) => n,
            Err(e) => {
                drop(team);
                let _ = teams::remove(&paths, &self.name);
                return Err(e);
            }
        };
        config.add(&self.name, self.project.then_some(url.as_str()));
        config.write(&config_file)?;
        Ok(ScopeAdded {
            store: TeamStore {
                name: self.name.clone(),
                url: Some(url),
                path: paths.team(&self.name),
            },
            named_in: config_file,
            stored,
        })
    }
}

/// The URL this project's `.lore` gives for a team.
fn named_url(lore: &Lore, name: &str) -> Result<String> {
    let file = project_file(lore.store().workdir());
    let config = match &file {
        Some(f) => ScopeConfig::read(f)?,
        None => ScopeConfig::default(),
    };
    config
        .teams
        .iter()
        .find(|t| t.name() == name)
        .and_then(|t| t.url().map(str::to_string))
        .ok_or_else(|| Error::Invalid {
            what: "scope URL",
            value: name.into(),
            reason: "give the team store's git remote (lore scope add NAME URL)".into(),
        })
}

/// The first sync of a new team store: what the team has comes in, and the store's own first
/// commit goes out when the remote has none.
fn first_sync(team: &mut Lore, timeout: Option<u64>, now: Option<Timestamp>) -> Result<usize> {
    team.store().init()?;
    let options = SyncOptions {
        remote: Some(teams::TEAM_REMOTE.into()),
        direction: Direction::Both,
        dry_run: false,
        timeout: Duration::from_secs(timeout.unwrap_or(super::sync::DEFAULT_SYNC_TIMEOUT_SECS)),
        now: now.unwrap_or_else(Timestamp::now),
    };
    Ok(super::sync::sync_store(team, &options)?.1)
}

/// Remove a team store from this machine (its remote keeps what was pushed).
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScopeRemove {
    /// The team store's name.
    pub name: String,
}

/// What removing a team store did.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ScopeRemoved {
    /// The team store.
    pub name: String,
    /// The directory removed.
    pub path: PathBuf,
    /// Whether the user's configuration named it (it no longer does).
    pub unnamed_for_user: bool,
    /// Whether this project's `.lore` still names it (a committed file: edit it by hand).
    pub named_by_project: bool,
}

impl Operation for ScopeRemove {
    const NAME: &'static str = "scope_remove";
    const TITLE: &'static str = "Remove a team store";
    const DESCRIPTION: &'static str = "Remove a team store from this machine and from the \
        user's configuration; what was synced stays on the team's remote.";
    const EFFECT: Effect = Effect::Destructive { idempotent: false };
    type Output = ScopeRemoved;

    fn run(self, env: &mut Env<'_>) -> Result<ScopeRemoved> {
        let paths = paths(env.lore)?;
        // Read (and so checked) before anything is deleted.
        let mut user = ScopeConfig::read(&paths.user_config())?;
        // Memories written into the team store and never pushed exist nowhere else.
        let store = teams::open(&paths, &self.name, env.lore.store().git_env())?;
        let unpushed: usize = crate::store::remotes::standing(&store)?
            .iter()
            .map(|r| r.ahead)
            .max()
            .unwrap_or(0);
        if unpushed > 0 {
            let dir = paths.team(&self.name);
            return Err(Error::Invalid {
                what: "team store",
                value: self.name,
                reason: format!(
                    "it holds {unpushed} memory commit(s) its remote has not received: run \
                     `lore sync` first (or delete {} by hand to drop them)",
                    dir.display()
                ),
            });
        }
        drop(store);
        let path = teams::remove(&paths, &self.name)?;
        let unnamed_for_user = user.remove(&self.name);
        if unnamed_for_user {
            user.write(&paths.user_config())?;
        }
        let named_by_project = match project_file(env.lore.store().workdir()) {
            Some(f) => ScopeConfig::read(&f)?.names().any(|n| n == self.name),
            None => false,
        };
        Ok(ScopeRemoved {
            name: self.name,
            path,
            unnamed_for_user,
            named_by_project,
        })
    }
}

/// Move a memory to another scope.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Move {
    /// Id, id prefix, `namespace/key` or key, in this store.
    pub memory: String,
    /// The scope it goes to: `project`, `personal` or a team store's name.
    pub to: String,
}

/// What a move did.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Moved {
    /// The memory as it now is in the scope it went to.
    pub memory: Memory,
    /// The scope it left.
    pub from: String,
    /// The scope it went to.
    pub to: String,
    /// The commit that wrote it there.
    pub commit: Option<String>,
    /// The commit that left a tombstone where it was.
    pub tombstone_commit: String,
    /// What the secret scanner found on the way (under the receiving store's policy).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secrets: Option<SecretReport>,
}

impl Operation for Move {
    const NAME: &'static str = "move";
    const TITLE: &'static str = "Move a memory to another scope";
    const DESCRIPTION: &'static str = "Move a memory to another scope (project, personal, a \
        team store): written there with its id, dates and provenance, screened for secrets \
        again, and forgotten here with a tombstone (its history stays).";
    const EFFECT: Effect = Effect::Write { idempotent: false };
    type Output = Moved;

    fn run(self, env: &mut Env<'_>) -> Result<Moved> {
        let to = Scope::parse(&self.to)?;
        let from = env.lore.own_scope().clone();
        if to == from {
            return Err(Error::Invalid {
                what: "scope",
                value: self.to,
                reason: format!("the memory is in {} already", from.label()),
            });
        }
        let memory = env.lore.get(&self.memory)?;
        if to == Scope::Personal {
            env.lore.create_personal_store()?;
        }
        let write = env.write.clone();
        let subject = format!("move {} from {}", memory.id, from.label());
        let landed = env
            .lore
            .with_scope(&to, |target| {
                let how = crate::BatchWrite {
                    subject: &subject,
                    action: "move",
                    collisions: crate::Collisions::Report,
                };
                let report = target.write_batch(std::slice::from_ref(&memory), &how, &write)?;
                if let Some(conflict) = report.conflicts.first() {
                    return Err(Error::Invalid {
                        what: "move",
                        value: memory.id.to_string(),
                        reason: conflict.clone(),
                    });
                }
                let moved = target.get(memory.id.as_str())?;
                Ok((moved, report.commit, report.secrets))
            })?
            .ok_or_else(|| {
                Error::NotFound(format!("the {} store does not exist here", to.label()))
            })?;
        let (moved, commit, secrets) = landed;
        let forgotten: Written = env.lore.forget(memory.id.as_str(), &write)?;
        Ok(Moved {
            memory: moved,
            from: from.label(),
            to: to.label(),
            commit,
            tombstone_commit: forgotten.commit,
            secrets: secrets.into_iter().next().map(|(_, r)| r),
        })
    }
}
