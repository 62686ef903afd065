//! Which team stores a project reads: those its `.lore` file names (committed, so every clone
//! of the project reads them) and those the user's `scopes.yaml` names (in lore's data
//! directory, read in every project).
//!
//! ```yaml
//! # .lore at the root of a repository, or scopes.yaml in lore's data directory
//! teams:
//!   - platform                      # a team store added here with `lore scope add`
//!   - name: security
//!     url: git@example.com:org/security-lore.git   # where `lore scope add security` finds it
//! ```

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The project's scope configuration file, at the root of its work tree.
pub const PROJECT_FILE: &str = ".lore";

/// A team named by a configuration: its name, and where it lives when the file says so.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum TeamEntry {
    /// Only the name.
    Name(String),
    /// The name and the remote.
    Full {
        /// The team store's name.
        name: String,
        /// Its git remote.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        url: Option<String>,
    },
}

impl TeamEntry {
    /// The team store's name.
    pub fn name(&self) -> &str {
        match self {
            TeamEntry::Name(n) | TeamEntry::Full { name: n, .. } => n,
        }
    }

    /// Its remote, when the file gives one.
    pub fn url(&self) -> Option<&str> {
        match self {
            TeamEntry::Name(_) => None,
            TeamEntry::Full { url, .. } => url.as_deref(),
        }
    }
}

/// A scope configuration (`.lore` or `scopes.yaml`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScopeConfig {
    /// The team stores read.
    #[serde(default)]
    pub teams: Vec<TeamEntry>,
}

impl ScopeConfig {
    /// Reads the file at `path` (an empty configuration when there is none). A file that does
    /// not parse is an error naming it.
    pub fn read(path: &Path) -> Result<ScopeConfig> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => return Err(Error::io(format!("reading {}", path.display()), e)),
        };
        if text.trim().is_empty() {
            return Ok(Self::default());
        }
        let config: ScopeConfig = serde_norway::from_str(&text).map_err(|e| Error::Parse {
            context: format!("reading {}", path.display()),
            message: e.to_string(),
        })?;
        for team in &config.teams {
            super::validate_team_name(team.name())?;
        }
        Ok(config)
    }

    /// Writes the configuration to `path` (replaced whole).
    pub fn write(&self, path: &Path) -> Result<()> {
        let text = serde_norway::to_string(self).map_err(|e| Error::Parse {
            context: format!("writing {}", path.display()),
            message: e.to_string(),
        })?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
        }
        crate::localstate::replace_contents(path, text.as_bytes())
    }

    /// The names of the teams it reads.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.teams.iter().map(TeamEntry::name)
    }

    /// Adds a team (once); true when it was not there.
    pub fn add(&mut self, name: &str, url: Option<&str>) -> bool {
        if self.names().any(|n| n == name) {
            return false;
        }
        self.teams.push(match url {
            Some(u) => TeamEntry::Full {
                name: name.into(),
                url: Some(u.into()),
            },
            None => TeamEntry::Name(name.into()),
        });
        true
    }

    /// Removes a team; true when it was there.
    pub fn remove(&mut self, name: &str) -> bool {
        let before = self.teams.len();
        self.teams.retain(|t| t.name() != name);
        self.teams.len() != before
    }
}

/// The project's `.lore` file, when the store has a work tree.
pub fn project_file(workdir: Option<&Path>) -> Option<PathBuf> {
    workdir.map(|w| w.join(PROJECT_FILE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms_of_an_entry_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(".lore");
        std::fs::write(
            &file,
            "teams:\n  - platform\n  - name: sec\n    url: /srv/sec.git\n",
        )
        .unwrap();
        let c = ScopeConfig::read(&file).unwrap();
        assert_eq!(c.names().collect::<Vec<_>>(), ["platform", "sec"]);
        assert_eq!(c.teams[1].url(), Some("/srv/sec.git"));
        std::fs::write(&file, "teams:\n  - ../escape\n").unwrap();
        assert!(ScopeConfig::read(&file).is_err());
        assert!(
            ScopeConfig::read(&dir.path().join("none"))
                .unwrap()
                .teams
                .is_empty()
        );
    }
}
