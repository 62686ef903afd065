//! Reading several scopes as one: a handle reads its own store and, beside it, the stores of
//! the other scopes its front end named (the personal store, team stores, other projects on
//! this machine), each opened on first use with its own index, searched with the same ranking
//! and fused into one list by score (score fusion normalises each store's candidates the same
//! way, so scores of two stores compare). Every hit carries its scope's label.

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::index::{Hit, ListFilter, RankOptions};
use crate::model::Memory;
use crate::scope::{Scope, ScopePaths, Selection, registry, teams};
use crate::store::{Store, StoreKind};

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
                scopes.extend(sources.teams.iter().cloned().map(Scope::Team));
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
        let at = match self.stack.opened.iter().position(|(s, _)| s == scope) {
            Some(at) => at,
            None => {
                let opened = self.open_scope(scope)?;
                self.stack.opened.push((scope.clone(), opened));
                self.stack.opened.len() - 1
            }
        };
        let Some(other) = self.stack.opened[at].1.as_mut() else {
            return Ok(None);
        };
        let out = f(other);
        let warnings = other.take_warnings();
        for w in warnings {
            self.warn(format!("{}: {w}", scope.label()));
        }
        out.map(Some)
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

    fn open_scope(&self, scope: &Scope) -> Result<Option<Lore>> {
        let env = self.store.git_env().clone();
        let Some(paths) = &self.stack.sources.paths else {
            return Ok(None);
        };
        let store = match scope {
            Scope::Project => match &self.stack.sources.this_project {
                // A handle of another scope inside a repository reaches the project to move a
                // memory there; reads name it like any other scope.
                Some(path) => Store::discover_with(path, &env)?,
                None => return Ok(None),
            },
            Scope::Personal if !paths.personal.join("HEAD").exists() => return Ok(None),
            Scope::Personal => Store::open_personal_with(&paths.personal, &env)?,
            Scope::Team(name) => teams::open(paths, name, &env)?,
            Scope::Other(path) => match Store::discover_with(path, &env) {
                Ok(store) => store,
                Err(Error::NotARepository(_)) => return Ok(None),
                Err(e) => return Err(e),
            },
        };
        let mut lore = Lore::new(store);
        lore.set_embedder(self.embedder.clone());
        lore.set_time_zone(self.time_zone.clone());
        lore.own_scope = scope.clone();
        Ok(Some(lore))
    }

    /// Whether any of `scopes` holds memories (its memory ref has a commit).
    pub fn scopes_hold_memories(&mut self, scopes: &[Scope]) -> Result<bool> {
        for scope in scopes {
            if self.with_scope(scope, |l| Ok(l.store().tip()?.is_some()))? == Some(true) {
                return Ok(true);
            }
        }
        Ok(false)
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
        let mut all: Vec<Hit> = Vec::new();
        for scope in scopes {
            let hits = self.with_scope(scope, |l| {
                if l.store().tip()?.is_none() {
                    return Ok(Vec::new());
                }
                l.search(text, filter, options, explain)
            })?;
            all.extend(hits.into_iter().flatten());
        }
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

/// The scope a store is when nothing says otherwise.
pub(super) fn default_scope(store: &Store) -> Scope {
    match store.kind() {
        StoreKind::Repository => Scope::Project,
        StoreKind::Personal => Scope::Personal,
    }
}
