//! Team stores: bare repositories under lore's data directory (`teams/<name>.git`), each with
//! its team's remote as `origin`. `lore sync` fetches, merges and pushes them by the same rules
//! as a project's store; nothing but the team store's own refs ever goes to its remote.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{ScopePaths, validate_team_name};
use crate::error::{Error, Result};
use crate::store::{GitEnv, Store};

/// The remote a team store syncs with.
pub const TEAM_REMOTE: &str = "origin";

/// A team store on this machine.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct TeamStore {
    /// Its name.
    pub name: String,
    /// Its remote (`origin`'s URL).
    pub url: Option<String>,
    /// Where it is.
    pub path: PathBuf,
}

/// Checks a team's remote: a git URL or path, without spaces or control characters, not an
/// option.
pub fn validate_url(url: &str) -> Result<()> {
    let bad = |reason: &str| Error::Invalid {
        what: "scope URL",
        value: crate::agent_text::neutralize_controls(url).into_owned(),
        reason: reason.into(),
    };
    if url.trim().is_empty() {
        return Err(bad("give the team store's git remote (a URL or a path)"));
    }
    if url.starts_with('-') {
        return Err(bad("a remote cannot start with -"));
    }
    if url.len() > 2048 || url.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(bad(
            "a remote has no spaces or control characters and is at most 2048 bytes",
        ));
    }
    Ok(())
}

/// Makes the team store `name` with `url` as its remote (refused when one by that name exists).
pub fn add(paths: &ScopePaths, name: &str, url: &str, env: &GitEnv) -> Result<Store> {
    validate_team_name(name)?;
    validate_url(url)?;
    let dir = paths.team(name);
    if dir.exists() {
        return Err(Error::Invalid {
            what: "scope name",
            value: name.into(),
            reason: format!(
                "a team store by that name exists already at {} (lore scope remove {name} first)",
                dir.display()
            ),
        });
    }
    let store = Store::open_personal_with(&dir, env)?;
    store.repo().remote(TEAM_REMOTE, url)?;
    Ok(store)
}

/// Opens the team store `name` (an error naming `lore scope add` when there is none).
pub fn open(paths: &ScopePaths, name: &str, env: &GitEnv) -> Result<Store> {
    validate_team_name(name)?;
    let dir = paths.team(name);
    if !dir.join("HEAD").exists() {
        return Err(Error::NotFound(format!(
            "no team store named {name} (add one with `lore scope add {name} URL`)"
        )));
    }
    Store::open_personal_with(&dir, env)
}

/// Every team store on this machine, by name.
pub fn list(paths: &ScopePaths) -> Result<Vec<TeamStore>> {
    let dir = paths.teams();
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(format!("reading {}", dir.display()), e)),
    };
    let mut teams = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(name) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".git"))
        else {
            continue;
        };
        if validate_team_name(name).is_err() || !path.join("HEAD").exists() {
            continue;
        }
        teams.push(TeamStore {
            name: name.to_string(),
            url: remote_url(&path),
            path,
        });
    }
    teams.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(teams)
}

fn remote_url(dir: &Path) -> Option<String> {
    let repo = git2::Repository::open_bare(dir).ok()?;
    let remote = repo.find_remote(TEAM_REMOTE).ok()?;
    remote.url().ok().map(str::to_string)
}

/// Removes the team store `name` from this machine (its remote keeps what was pushed).
pub fn remove(paths: &ScopePaths, name: &str) -> Result<PathBuf> {
    validate_team_name(name)?;
    let dir = paths.team(name);
    if !dir.join("HEAD").exists() {
        return Err(Error::NotFound(format!("no team store named {name}")));
    }
    std::fs::remove_dir_all(&dir)
        .map_err(|e| Error::io(format!("removing {}", dir.display()), e))?;
    Ok(dir)
}
