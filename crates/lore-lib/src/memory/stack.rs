//! Reading several scopes as one: a handle reads its own store and, beside it, the stores of
//! the other scopes its front end named (the personal store, team stores, other projects on
//! this machine), each opened on first use with its own index, searched with the same ranking
//! and merged into one list by score (each store's scores are normalised among its own
//! candidates: its best match scores near 1, and a relevance floor in each store keeps
//! unrelated memories out). Every hit carries its scope's label.

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::index::{Hit, ListFilter, RankOptions};
use crate::model::Memory;
use crate::scope::{Scope, ScopePaths, Selection, registry, teams};
use crate::store::{GitEnv, Store, StoreKind};

use super::Lore;

/// What a front end tells a handle about the scopes around its store.
#[derive(Clone, Debug, Default)]
pub struct ScopeSources {
    /// Where the personal store, team stores and the registry are (`None`: this store alone).
    pub paths: Option<ScopePaths>,
    /// The team stores this project reads by default (named by its `.lore` or the user's
    /// configuration).
    pub teams: Vec<String>,
    /// The scopes read when a request names none (`None`: project, personal and the teams).
    pub default: Option<Selection>,
    /// This project's path in the registry (left out of `all`, which adds the others).
    pub this_project: Option<PathBuf>,
}

/// What [`Lore::across_scopes`] gives back: this store's result (when it was read) and each
/// other scope's.
pub type Across<U, T> = (Option<U>, Vec<(Scope, T)>);

/// The other scopes' handles, opened on first use (`None`: that store does not exist here).
#[derive(Default)]
pub(super) struct Stack {
    sources: ScopeSources,
    opened: Vec<(Scope, Option<Lore>)>,
}

impl Lore {
    /// Tells the handle where the other scopes' stores are and which it reads by default.
    pub fn set_scopes(&mut self, sources: ScopeSources) {
        self.stack = Stack {
            sources,
            opened: Vec::new(),
        };
    }

    /// What the front end said about the other scopes.
    pub fn scope_sources(&self) -> &ScopeSources {
        &self.stack.sources
    }

    /// The scope this handle's own store is (project or personal unless set: a team store
    /// opened for writing says so).
    pub fn own_scope(&self) -> &Scope {
        &self.own_scope
    }

    /// Labels this handle's own store as `scope`.
    pub fn set_own_scope(&mut self, scope: Scope) {
        self.own_scope = scope;
    }

    /// The scopes a read covers: `asked`, else the front end's default, else project, personal
    /// and the teams this project names. Scopes whose store does not exist here are left out;
    /// a team named but never added is an error.
    pub fn scopes_read(&self, asked: Option<&Selection>) -> Result<Vec<Scope>> {
        let sources = &self.stack.sources;
        let default;
        let selection = match asked.or(sources.default.as_ref()) {
            Some(s) => s,
            None => {
                let mut scopes = vec![Scope::Project, Scope::Personal];
                // A team the configuration names but this machine never added is left out
                // (`lore scope list` names it); asked for by name, it is an error.
                let added = |name: &&String| {
                    sources
                        .paths
                        .as_ref()
                        .is_some_and(|p| p.team(name).join("HEAD").exists())
                };
                scopes.extend(sources.teams.iter().filter(added).cloned().map(Scope::Team));
                default = Selection { all: false, scopes };
                &default
            }
        };
        let mut read = Vec::new();
        let mut add = |s: Scope| {
            if !read.contains(&s) {
                read.push(s);
            }
        };
        if selection.reads(&self.own_scope) {
            add(self.own_scope.clone());
        }
        if self.own_scope != Scope::Project
            && selection.reads(&Scope::Project)
            && sources.this_project.is_some()
        {
            add(Scope::Project);
        }
        let Some(paths) = &sources.paths else {
            return Ok(read);
        };
        let personal_here = paths.personal.join("HEAD").exists();
        if selection.reads(&Scope::Personal) && personal_here {
            add(Scope::Personal);
        }
        for scope in &selection.scopes {
            if let Scope::Team(name) = scope {
                if !paths.team(name).join("HEAD").exists() {
                    return Err(Error::NotFound(format!(
                        "no team store named {name} (lore scope list shows those added here)"
                    )));
                }
                add(scope.clone());
            }
        }
        if selection.all {
            for team in teams::list(paths)? {
                add(Scope::Team(team.name));
            }
            for project in registry::projects(&paths.registry())? {
                if Some(&project) != sources.this_project.as_ref() {
                    add(Scope::Other(project));
                }
            }
        }
        Ok(read)
    }

    /// Runs `f` on the handle of `scope` (this one, or another store's, opened on first use);
    /// `None` when that store does not exist here.
    pub fn with_scope<T>(
        &mut self,
        scope: &Scope,
        f: impl FnOnce(&mut Lore) -> Result<T>,
    ) -> Result<Option<T>> {
        if *scope == self.own_scope {
            return f(self).map(Some);
        }
        let opener = self.opener();
        let mut warnings = Vec::new();
        let out = self.stack.with_opened(scope, &opener, &mut warnings, f);
        for w in warnings {
            self.warn(w);
        }
        out
    }

    /// Runs `own` on this handle (when `scopes` names its scope), then `other` on each other
    /// scope's handle (opened on first use). Results come back in the order of `scopes`, only
    /// for stores that exist here. (Reading the other stores in a second thread was measured
    /// slower on a two-core machine with another process busy: see docs/scopes.md.)
    pub fn across_scopes<T, U>(
        &mut self,
        scopes: &[Scope],
        own: impl FnOnce(&mut Lore) -> Result<U>,
        other: impl Fn(&mut Lore, &Scope) -> Result<T>,
    ) -> Result<Across<U, T>> {
        let mine = if scopes.contains(&self.own_scope) {
            Some(own(self)?)
        } else {
            None
        };
        let opener = self.opener();
        let mut warnings = Vec::new();
        let mut theirs = Vec::new();
        let mut failed = None;
        for scope in scopes.iter().filter(|s| **s != self.own_scope) {
            match self
                .stack
                .with_opened(scope, &opener, &mut warnings, |l| other(l, scope))
            {
                Ok(Some(t)) => theirs.push((scope.clone(), t)),
                Ok(None) => {}
                // A damaged or locked store of another scope costs its own hits only: the
                // others (and a hook's context) still answer, and the failure is said.
                Err(e) => {
                    warnings.push(format!("{}: left out of this read: {e}", scope.label()));
                    failed.get_or_insert(e);
                }
            }
        }
        for w in warnings {
            self.warn(w);
        }
        match failed {
            // Nothing read at all: the failure is the answer.
            Some(e) if mine.is_none() && theirs.is_empty() => Err(e),
            _ => Ok((mine, theirs)),
        }
    }

    /// Creates the personal store if it does not exist yet (for a write into it).
    pub fn create_personal_store(&mut self) -> Result<()> {
        let Some(paths) = &self.stack.sources.paths else {
            return Ok(());
        };
        if !paths.personal.join("HEAD").exists() {
            Store::open_personal_with(&paths.personal, self.store.git_env())?;
            self.stack.opened.retain(|(s, _)| *s != Scope::Personal);
        }
        Ok(())
    }

    /// What opening another scope's store needs from this handle.
    fn opener(&self) -> Opener {
        Opener {
            env: self.store.git_env().clone(),
            paths: self.stack.sources.paths.clone(),
            this_project: self.stack.sources.this_project.clone(),
            embedder: self.embedder.clone(),
            time_zone: self.time_zone.clone(),
            secret_policy: self.store.secret_policy_override(),
            defer_upkeep: self.defer_upkeep,
        }
    }

    /// Recall over several scopes: each store searched with the same filter and ranking, the
    /// hits fused by score into one list (best first, at most the filter's limit), each
    /// labelled with its scope (and, for another project, that project's path).
    pub fn search_scoped(
        &mut self,
        scopes: &[Scope],
        text: &str,
        filter: &ListFilter,
        options: &RankOptions,
        explain: bool,
    ) -> Result<Vec<Hit>> {
        let search = |l: &mut Lore| -> Result<Vec<Hit>> {
            if l.store().tip()?.is_none() {
                return Ok(Vec::new());
            }
            l.search(text, filter, options, explain)
        };
        let (own, others) = self.across_scopes(scopes, search, |l, _| search(l))?;
        let mut all: Vec<Hit> = own.unwrap_or_default();
        all.extend(others.into_iter().flat_map(|(_, hits)| hits));
        // Stable: on equal scores the earlier scope (this store first) stays ahead.
        all.sort_by(|a, b| b.score.total_cmp(&a.score));
        if let Some(limit) = filter.limit {
            all.truncate(limit);
        }
        Ok(all)
    }

    /// Memories of one scope matching a filter, with the scope's label (empty when that store
    /// does not exist here or holds nothing).
    pub fn list_in(&mut self, scope: &Scope, filter: &ListFilter) -> Result<Vec<Memory>> {
        let listed = self.with_scope(scope, |l| {
            if l.store().tip()?.is_none() {
                return Ok(Vec::new());
            }
            l.list(filter)
        })?;
        Ok(listed.unwrap_or_default())
    }
}

/// What opening another scope's store takes: this handle's git environment, the scopes' paths,
/// the embedder and the time zone (cloned, so a second thread can open stores).
struct Opener {
    env: GitEnv,
    paths: Option<ScopePaths>,
    this_project: Option<PathBuf>,
    embedder: Option<crate::embed::SharedEmbedder>,
    time_zone: super::ZoneSource,
    /// The front end's `--secrets` override: it holds for every store a command writes to.
    secret_policy: Option<crate::secrets::SecretPolicy>,
    /// Whether this handle leaves upkeep to run apart (see [`Lore::defer_upkeep`]): the stores
    /// it stacks with do too.
    defer_upkeep: bool,
}

impl Opener {
    fn open(&self, scope: &Scope) -> Result<Option<Lore>> {
        let env = &self.env;
        let Some(paths) = &self.paths else {
            return Ok(None);
        };
        let store = match scope {
            Scope::Project => match &self.this_project {
                // A handle of another scope inside a repository reaches the project to move a
                // memory there; reads name it like any other scope.
                Some(path) => Store::discover_with(path, env)?,
                None => return Ok(None),
            },
            Scope::Personal if !paths.personal.join("HEAD").exists() => return Ok(None),
            Scope::Personal => Store::open_personal_with(&paths.personal, env)?,
            Scope::Team(name) => teams::open(paths, name, env)?,
            Scope::Other(path) => match Store::discover_with(path, env) {
                Ok(store) => store,
                Err(Error::NotARepository(_)) => return Ok(None),
                Err(e) => return Err(e),
            },
        };
        let mut lore = Lore::new(store);
        lore.set_embedder(self.embedder.clone());
        lore.time_zone = self.time_zone.clone();
        lore.set_secret_policy(self.secret_policy);
        lore.own_scope = scope.clone();
        if self.defer_upkeep {
            lore.defer_upkeep();
        }
        Ok(Some(lore))
    }
}

impl Stack {
    /// The other scopes' handles opened so far.
    pub(super) fn opened_mut(&mut self) -> impl Iterator<Item = &mut Lore> {
        self.opened.iter_mut().filter_map(|(_, l)| l.as_mut())
    }

    /// Runs `f` on the handle of another scope, opened on first use; its warnings, labelled,
    /// go to `warnings`.
    fn with_opened<T>(
        &mut self,
        scope: &Scope,
        opener: &Opener,
        warnings: &mut Vec<String>,
        f: impl FnOnce(&mut Lore) -> Result<T>,
    ) -> Result<Option<T>> {
        let at = match self.opened.iter().position(|(s, _)| s == scope) {
            Some(at) => at,
            None => {
                let opened = opener.open(scope)?;
                self.opened.push((scope.clone(), opened));
                self.opened.len() - 1
            }
        };
        let Some(other) = self.opened[at].1.as_mut() else {
            return Ok(None);
        };
        let out = f(other);
        for w in other.take_warnings() {
            warnings.push(format!("{}: {w}", scope.label()));
        }
        out.map(Some)
    }
}

/// The scope a store is when nothing says otherwise.
pub(super) fn default_scope(store: &Store) -> Scope {
    match store.kind() {
        StoreKind::Repository => Scope::Project,
        StoreKind::Personal => Scope::Personal,
    }
}
