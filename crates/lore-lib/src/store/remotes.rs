//! Where lore keeps what it fetched from each remote (`refs/lore-remotes/<remote>/`) and the
//! remote versions it could not merge (`refs/lore-parked/<remote>/`), and how lore's refs stand
//! against each remote as of its last fetch (no network).

use git2::Repository;
use schemars::JsonSchema;
use serde::Serialize;

use super::layout::LORE_REF_PREFIX;
use super::{Store, ref_target};
use crate::error::Result;

/// Where the refs fetched from a remote are kept.
pub const TRACKING_PREFIX: &str = "refs/lore-remotes/";
/// The tracking namespace of one remote (`refs/lore-remotes/origin/`).
pub fn tracking_prefix(remote: &str) -> String {
    format!("{TRACKING_PREFIX}{remote}/")
}

/// Where a ref's unmergeable remote version is kept (`refs/lore-parked/<remote>/ctx/main`).
pub fn parked_name(remote: &str, name: &str) -> String {
    format!(
        "refs/lore-parked/{remote}/{}",
        &name[LORE_REF_PREFIX.len()..]
    )
}

/// How lore's refs stand against one remote, as of its last fetch (no network).
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct RemoteStanding {
    /// The remote.
    pub remote: String,
    /// Whether lore's refs were ever fetched from it.
    pub fetched: bool,
    /// Commits of lore's refs here that the remote lacks (to push).
    pub ahead: usize,
    /// Commits of lore's refs there that this clone lacks (to merge).
    pub behind: usize,
    /// Lore refs whose remote version could not be merged and is parked.
    pub parked: Vec<String>,
}

/// Every remote's standing (see [`RemoteStanding`]).
pub fn standing(store: &Store) -> Result<Vec<RemoteStanding>> {
    let repo = store.repo();
    let mut out = Vec::new();
    let remotes = repo.remotes()?;
    for remote in remotes.iter().flatten().flatten() {
        let prefix = tracking_prefix(remote);
        let fetched = repo
            .references_glob(&format!("{prefix}*"))?
            .next()
            .is_some();
        let (mut ahead, mut behind) = (0, 0);
        for name in lore_ref_names(repo, &prefix)? {
            match (
                ref_target(repo, &name)?,
                ref_target(repo, &tracked_name(&prefix, &name))?,
            ) {
                (Some(l), Some(t)) => {
                    let (a, b) = repo.graph_ahead_behind(l, t)?;
                    ahead += a;
                    behind += b;
                }
                (Some(l), None) => {
                    let mut walk = repo.revwalk()?;
                    walk.push(l)?;
                    ahead += walk.count();
                }
                (None, Some(t)) => {
                    let mut walk = repo.revwalk()?;
                    walk.push(t)?;
                    behind += walk.count();
                }
                _ => {}
            }
        }
        let mut parked = Vec::new();
        for r in repo.references_glob(&format!("refs/lore-parked/{remote}/*"))? {
            if let Ok(name) = r?.name() {
                parked.push(name.to_string());
            }
        }
        out.push(RemoteStanding {
            remote: remote.to_string(),
            fetched,
            ahead,
            behind,
            parked,
        });
    }
    Ok(out)
}

pub(crate) fn lore_ref_names(repo: &Repository, prefix: &str) -> Result<Vec<String>> {
    let mut names = std::collections::BTreeSet::new();
    for r in repo.references_glob(&format!("{LORE_REF_PREFIX}*"))? {
        if let Ok(name) = r?.name() {
            names.insert(name.to_string());
        }
    }
    for r in repo.references_glob(&format!("{prefix}*"))? {
        if let Ok(name) = r?.name() {
            names.insert(format!("{LORE_REF_PREFIX}{}", &name[prefix.len()..]));
        }
    }
    Ok(names.into_iter().collect())
}

pub(crate) fn tracked_name(prefix: &str, name: &str) -> String {
    format!("{prefix}{}", &name[LORE_REF_PREFIX.len()..])
}

/// What to tell someone whose memory here is empty or behind: a remote's memory was fetched
/// (by `lore sync --setup` and a plain `git fetch`/`git pull`) but not merged, or this clone
/// has no memory yet while it has remotes that may hold some. None when neither holds. No
/// network.
pub fn unmerged_memory_hint(store: &Store) -> Result<Option<String>> {
    let repo = store.repo();
    let local = ref_target(repo, super::MEMORY_REF)?;
    let remotes = repo.remotes()?;
    let names: Vec<&str> = remotes.iter().flatten().flatten().collect();
    if names.is_empty() {
        return Ok(None);
    }
    for remote in &names {
        let fetched = tracked_name(&tracking_prefix(remote), super::MEMORY_REF);
        let Some(theirs) = ref_target(repo, &fetched)? else {
            continue;
        };
        let merged = match local {
            Some(l) => l == theirs || repo.graph_descendant_of(l, theirs)?,
            None => false,
        };
        if !merged {
            return Ok(Some(format!(
                "{remote} has memory this clone has not merged yet (fetched by git): run `lore sync {remote}`"
            )));
        }
    }
    Ok(local.is_none().then(|| {
        format!(
            "no memory in this clone yet; a plain `git clone`/`git pull` does not bring lore's refs: \
             run `lore sync` to fetch and merge what {} holds",
            names[0]
        )
    }))
}
