//! Reading lore's tree over time: the file-level difference between two trees (recursing only
//! into subtrees whose ids differ) and the versions of files along the memory chain.

use std::path::Path;

use git2::{ErrorCode, ObjectType, Oid, Repository, Tree};

use super::{FileChange, Store};
use crate::error::Result;

/// One version of a file in the memory chain's history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileVersion {
    /// The commit that made this version.
    pub commit: Oid,
    /// Commit time (seconds since the epoch).
    pub time: i64,
    /// The commit's subject line.
    pub subject: String,
    /// The committer (`Name <email>`).
    pub committer: String,
    /// The path the file had.
    pub path: String,
    /// The blob (none: the commit deleted the file).
    pub blob: Option<Oid>,
}

impl Store {
    /// The versions of the files at `paths` along the memory chain, newest first. A version is
    /// recorded where a commit's blob at a path differs from its first parent's and, for a
    /// merge, from every other parent's too (a merge that took one side's version is not one).
    pub fn history(&self, paths: &[String]) -> Result<Vec<FileVersion>> {
        let Some(tip) = self.tip()? else {
            return Ok(Vec::new());
        };
        let mut walk = self.repo.revwalk()?;
        walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::TIME)?;
        walk.push(tip)?;
        let mut out = Vec::new();
        for oid in walk {
            let commit = self.repo.find_commit(oid?)?;
            let tree = commit.tree()?;
            let parent_trees = commit
                .parents()
                .map(|p| p.tree())
                .collect::<std::result::Result<Vec<_>, _>>()?;
            for path in paths {
                let here = blob_at(&tree, path)?;
                let before = match parent_trees.first() {
                    Some(t) => blob_at(t, path)?,
                    None => None,
                };
                // A merge that took one side's version made no version of its own: that side's
                // commit is the version (a sync merge is listed only when it changed the file).
                let mut from_a_parent = false;
                for t in parent_trees.iter().skip(1) {
                    from_a_parent |= blob_at(t, path)? == here;
                }
                if here != before && !from_a_parent {
                    out.push(FileVersion {
                        commit: commit.id(),
                        time: commit.time().seconds(),
                        subject: commit.summary().ok().flatten().unwrap_or("").to_string(),
                        committer: format!(
                            "{} <{}>",
                            commit.committer().name().unwrap_or(""),
                            commit.committer().email().unwrap_or("")
                        ),
                        path: path.clone(),
                        blob: here,
                    });
                }
            }
        }
        Ok(out)
    }
}

pub(crate) fn blob_at(tree: &Tree<'_>, path: &str) -> Result<Option<Oid>> {
    match tree.get_path(Path::new(path)) {
        Ok(entry) if entry.kind() == Some(ObjectType::Blob) => Ok(Some(entry.id())),
        Ok(_) => Ok(None),
        Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

pub(super) fn diff_trees(
    repo: &Repository,
    old: Option<&Tree<'_>>,
    new: Option<&Tree<'_>>,
    prefix: &str,
    out: &mut Vec<FileChange>,
) -> Result<()> {
    use std::collections::BTreeMap;
    type Entries = BTreeMap<String, (Oid, Option<ObjectType>)>;
    fn entries(tree: Option<&Tree<'_>>) -> Entries {
        let mut map = BTreeMap::new();
        if let Some(tree) = tree {
            for e in tree.iter() {
                if let Ok(name) = e.name() {
                    map.insert(name.to_string(), (e.id(), e.kind()));
                }
            }
        }
        map
    }
    let old_entries = entries(old);
    let new_entries = entries(new);
    let mut names: Vec<&String> = old_entries.keys().chain(new_entries.keys()).collect();
    names.sort();
    names.dedup();
    for name in names {
        let a = old_entries.get(name);
        let b = new_entries.get(name);
        if let (Some(a), Some(b)) = (a, b)
            && a == b
        {
            continue;
        }
        let path = format!("{prefix}{name}");
        let sub = |entry: Option<&(Oid, Option<ObjectType>)>| -> Result<Option<Tree<'_>>> {
            match entry {
                Some((oid, Some(ObjectType::Tree))) => Ok(Some(repo.find_tree(*oid)?)),
                _ => Ok(None),
            }
        };
        let blob = |entry: Option<&(Oid, Option<ObjectType>)>| match entry {
            Some((oid, Some(ObjectType::Blob))) => Some(*oid),
            _ => None,
        };
        let (old_sub, new_sub) = (sub(a)?, sub(b)?);
        if old_sub.is_some() || new_sub.is_some() {
            diff_trees(
                repo,
                old_sub.as_ref(),
                new_sub.as_ref(),
                &format!("{path}/"),
                out,
            )?;
        }
        let (old_blob, new_blob) = (blob(a), blob(b));
        if old_blob != new_blob {
            out.push(FileChange {
                path,
                old: old_blob,
                new: new_blob,
            });
        }
    }
    Ok(())
}
