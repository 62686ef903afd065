//! Opening a store (a project's repository or the personal store) with git's configuration and
//! identity composed from a [`GitEnv`], and the warnings a store collects for its front end.

use std::collections::HashSet;
use std::path::Path;

use git2::{ErrorCode, Repository};

use super::git_env::{self, GitEnv, Identity};
use super::{Store, StoreKind};
use crate::error::{Error, Result};

/// Warnings not yet taken by the front end, and every warning given so far (each is given once).
#[derive(Debug, Default)]
pub(super) struct Warnings {
    pending: Vec<String>,
    given: HashSet<String>,
}

/// libgit2 re-checks that every object a new tree or commit names exists. lore builds trees
/// only from entries it read or wrote itself, so the check is redundant on the write path (it
/// costs a sizeable share of a write); `git fsck` stays clean.
///
/// libgit2 also hashes every object it reads to compare it with its id, which git does not do
/// for the trees and blobs it reads (only `git fsck` checks them all): a large store's write
/// reads dozens of trees of a few kilobytes each, and the hashing was a twentieth of a `lore
/// remember` at a million memories. Objects are still checked as they are inflated (zlib's
/// checksum catches damaged bytes, though not an index pointing at another whole object);
/// objects fetched by sync are hashed by git as it indexes their pack, and a bundle's by
/// libgit2's pack writer. The setting is process-wide, as the creation check is.
fn relax_libgit2_checks() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        git2::opts::strict_object_creation(false);
        git2::opts::strict_hash_verification(false);
    });
}

impl Store {
    /// Opens the repository containing `start` (any worktree of it shares one store), reading
    /// only the repository's own configuration (see [`GitEnv::repository_only`]).
    pub fn discover(start: &Path) -> Result<Store> {
        Self::discover_with(start, &GitEnv::repository_only())
    }

    /// Opens the repository containing `start`, with the configuration files and identity git
    /// would use under `env`.
    pub fn discover_with(start: &Path, env: &GitEnv) -> Result<Store> {
        match Repository::discover(start) {
            Ok(repo) => Self::wrap(repo, StoreKind::Repository, env),
            Err(e) if e.code() == ErrorCode::NotFound => {
                Err(Error::NotARepository(start.to_path_buf()))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Opens the repository whose git directory is exactly `git_dir` (no search upward: a path
    /// that is no repository is an error, never the repository around it).
    pub fn open_git_dir_with(git_dir: &Path, env: &GitEnv) -> Result<Store> {
        let flags = git2::RepositoryOpenFlags::NO_SEARCH;
        match Repository::open_ext(git_dir, flags, std::iter::empty::<&std::ffi::OsStr>()) {
            Ok(repo) => Self::wrap(repo, StoreKind::Repository, env),
            Err(e) if e.code() == ErrorCode::NotFound => {
                Err(Error::NotARepository(git_dir.to_path_buf()))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Opens (creating on first use) a personal store: a bare repository at `dir`, reading only
    /// its own configuration.
    pub fn open_personal(dir: &Path) -> Result<Store> {
        Self::open_personal_with(dir, &GitEnv::repository_only())
    }

    /// Opens (creating on first use) a personal store at `dir` under `env`.
    pub fn open_personal_with(dir: &Path, env: &GitEnv) -> Result<Store> {
        let repo = if dir.join("HEAD").exists() {
            Repository::open_bare(dir)?
        } else {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
            Repository::init_bare(dir)?
        };
        Self::wrap(repo, StoreKind::Personal, env)
    }

    fn wrap(repo: Repository, kind: StoreKind, env: &GitEnv) -> Result<Store> {
        relax_libgit2_checks();
        let conditional = git_env::configure(&repo, env)?;
        let store = Store {
            repo,
            kind,
            git_env: env.clone(),
            identity: std::sync::OnceLock::new(),
            warnings: std::sync::Mutex::new(Warnings::default()),
            before_ref_update: None,
            secret_policy: None,
            last_diff: std::sync::Mutex::new(None),
        };
        if !conditional.is_empty() {
            store.warn(format!(
                "git config has conditional includes ({}), which lore does not evaluate: a value \
                 set only in an included file (user.name, user.email, lore.secrets) is not seen",
                conditional.join(", ")
            ));
        }
        Ok(store)
    }

    /// The environment this store was opened under.
    pub fn git_env(&self) -> &GitEnv {
        &self.git_env
    }

    /// The author and committer of lore's commits, resolved once (warning once when a part of
    /// the identity is a placeholder).
    pub(super) fn resolved_identity(&self) -> &Identity {
        self.identity.get_or_init(|| {
            let identity = git_env::resolve(&self.repo, &self.git_env);
            for warning in &identity.warnings {
                self.warn(warning.clone());
            }
            identity
        })
    }

    /// The author of lore's commits (`GIT_AUTHOR_*`, else `author.*`, else `user.*` from git's
    /// configuration), read once; the placeholder `lore <lore@localhost>` when unset, with a
    /// warning (see [`Store::take_warnings`]).
    pub fn identity(&self) -> (&str, &str) {
        let author = &self.resolved_identity().author;
        (&author.name, &author.email)
    }

    /// A value from git's configuration (`lore.secrets`, …), as git resolves it (worktree,
    /// repository, user and system files); `None` when unset. A configuration that cannot be
    /// read is reported as a warning and read as unset.
    pub fn config_string(&self, name: &str) -> Option<String> {
        let read = self.repo.config().and_then(|c| c.get_string(name));
        match read {
            Ok(value) => Some(value),
            Err(e) if e.code() == ErrorCode::NotFound => None,
            Err(e) => {
                self.warn(format!("reading git config {name}: {}", e.message()));
                None
            }
        }
    }

    /// A boolean from git's configuration, read by git's own rules (`true`/`yes`/`on`/`1`, …);
    /// a value that is not one is a warning and reads as unset.
    pub fn config_bool(&self, name: &str) -> Option<bool> {
        let read = self.repo.config().and_then(|c| c.get_bool(name));
        match read {
            Ok(value) => Some(value),
            Err(e) if e.code() == ErrorCode::NotFound => None,
            Err(e) => {
                self.warn(format!("reading git config {name}: {}", e.message()));
                None
            }
        }
    }

    /// Records a warning for the front end; the same warning is recorded once per store.
    pub fn warn(&self, message: String) {
        let mut warnings = self
            .warnings
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if warnings.given.insert(message.clone()) {
            warnings.pending.push(message);
        }
    }

    /// The warnings recorded since the last call (a placeholder identity, conditional includes
    /// that are not evaluated, local state that could not be read): front ends show them.
    pub fn take_warnings(&self) -> Vec<String> {
        let mut warnings = self
            .warnings
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        std::mem::take(&mut warnings.pending)
    }
}
