//! Scopes: the stores a read stacks (this project, the personal store, team stores, other
//! projects on this machine), their names, and where each lives under lore's data directory.
//!
//! Only paths and names live here; opening the stores and searching them together is the
//! handle's work (`memory/stack.rs`).

pub mod config;
pub mod registry;
pub mod teams;

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// This repository's store.
pub const PROJECT: &str = "project";
/// The personal store.
pub const PERSONAL: &str = "personal";
/// Every scope there is: project, personal, every team store and every registered project.
pub const ALL: &str = "all";

/// One scope a memory can belong to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    /// The store of the repository lore runs in.
    Project,
    /// The user's personal store.
    Personal,
    /// A team store, by name.
    Team(String),
    /// Another repository on this machine (from the registry), by its path.
    Other(PathBuf),
}

impl Scope {
    /// The scope's label on a hit: `project`, `personal` or the team's name (another project's
    /// hits say `project` and name the project beside it).
    pub fn label(&self) -> String {
        match self {
            Scope::Project | Scope::Other(_) => PROJECT.into(),
            Scope::Personal => PERSONAL.into(),
            Scope::Team(name) => name.clone(),
        }
    }

    /// The project a hit of another repository names (its path).
    pub fn project(&self) -> Option<String> {
        match self {
            Scope::Other(path) => Some(path.display().to_string()),
            _ => None,
        }
    }

    /// Reads one scope name: `project`, `personal` or a team's name (`all` is a selection, not
    /// a scope: see [`Selection::parse`]).
    pub fn parse(name: &str) -> Result<Scope> {
        match name.trim() {
            PROJECT => Ok(Scope::Project),
            PERSONAL => Ok(Scope::Personal),
            other => {
                validate_team_name(other)?;
                Ok(Scope::Team(other.to_string()))
            }
        }
    }
}

/// The scopes a read asks for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// Every scope there is (`all`).
    pub all: bool,
    /// The scopes named.
    pub scopes: Vec<Scope>,
}

impl Selection {
    /// Reads a list of names (`project,personal`, `all`, a team's name), separated by commas
    /// or given one by one. An empty list is refused.
    pub fn parse(names: &[String]) -> Result<Selection> {
        let mut selection = Selection::default();
        let names_given = names
            .iter()
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .filter(|n| !n.is_empty());
        for name in names_given {
            if name == ALL {
                selection.all = true;
            } else {
                let scope = Scope::parse(name)?;
                if !selection.scopes.contains(&scope) {
                    selection.scopes.push(scope);
                }
            }
        }
        if !selection.all && selection.scopes.is_empty() {
            return Err(Error::Invalid {
                what: "scope",
                value: names.join(","),
                reason: "name one or more of project, personal, a team's name, or all".into(),
            });
        }
        Ok(selection)
    }

    /// Whether this selection reads `scope`.
    pub fn reads(&self, scope: &Scope) -> bool {
        self.all || self.scopes.contains(scope)
    }
}

/// Checks a team store's name: 1 to 40 characters of lower-case letters, digits, `-` and `_`,
/// starting with a letter or digit, and none of the reserved names (`project`, `personal`,
/// `all`).
pub fn validate_team_name(name: &str) -> Result<()> {
    let bad = |reason: &str| Error::Invalid {
        what: "scope name",
        value: crate::agent_text::neutralize_controls(name).into_owned(),
        reason: reason.into(),
    };
    if [PROJECT, PERSONAL, ALL].contains(&name) {
        return Err(bad("project, personal and all are reserved names"));
    }
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    let rest_ok =
        chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if !first_ok || !rest_ok || name.len() > 40 {
        return Err(bad(
            "expected project, personal, all, or a team's name: 1 to 40 lower-case letters, \
             digits, - and _, starting with a letter or digit",
        ));
    }
    Ok(())
}

/// Where the stores of the scopes other than the project live: the personal store, and beside
/// it lore's data directory with the team stores and the user's scope configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopePaths {
    /// The personal store (a bare repository).
    pub personal: PathBuf,
    /// lore's data directory (the personal store's parent).
    pub data: PathBuf,
}

impl ScopePaths {
    /// The paths around a personal store at `personal` (its parent is lore's data directory).
    pub fn around(personal: &Path) -> ScopePaths {
        ScopePaths {
            personal: personal.to_path_buf(),
            data: personal
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| PathBuf::from(".")),
        }
    }

    /// The directory of team stores.
    pub fn teams(&self) -> PathBuf {
        self.data.join("teams")
    }

    /// A team store's directory.
    pub fn team(&self, name: &str) -> PathBuf {
        self.teams().join(format!("{name}.git"))
    }

    /// The registry of projects (a file of the personal store's local data).
    pub fn registry(&self) -> PathBuf {
        self.personal.join("lore").join("projects.json")
    }

    /// The user's scope configuration (the team stores read in every project).
    pub fn user_config(&self) -> PathBuf {
        self.data.join("scopes.yaml")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked() {
        assert_eq!(Scope::parse("personal").unwrap(), Scope::Personal);
        assert_eq!(
            Scope::parse("infra-team").unwrap(),
            Scope::Team("infra-team".into())
        );
        for bad in [
            "",
            "All",
            "a/b",
            "../x",
            "-x",
            "a b",
            "x\u{1b}[2J",
            &"a".repeat(41),
        ] {
            assert!(Scope::parse(bad).is_err(), "{bad:?}");
        }
        assert!(validate_team_name("all").is_err());
        let s = Selection::parse(&["project,all".into()]).unwrap();
        assert!(s.all && s.reads(&Scope::Personal));
        assert!(Selection::parse(&[" , ".into()]).is_err());
    }
}
