//! Reading lore's tree over time: the file-level difference between two trees (recursing only
//! into subtrees whose ids differ) and the versions of files along the memory chain.

use std::cmp::Ordering;
use std::path::Path;

use git2::{ErrorCode, ObjectType, Oid, Repository, Tree, TreeEntry};

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

/// Diffs with at most this many changes are kept for the next [`Store::diff`] asking the same.
const KEPT_DIFF_MAX: usize = 4_096;

/// A diff kept: the two commits and the changes between them.
pub(super) struct KeptDiff {
    old: Option<Oid>,
    new: Option<Oid>,
    changes: Vec<FileChange>,
}

impl Store {
    /// The file-level differences between the trees of two commits (either may be absent).
    ///
    /// The last diff (of at most [`KEPT_DIFF_MAX`] changes) is kept and handed out again when
    /// the same two commits are asked: a checked write asks the index's tip against the store's
    /// twice (before the write, then on the tip it lands on), and the trees of a large store
    /// are read from its packs each time (libgit2 keeps no tree over 4 KiB in its cache).
    /// Commits do not change, so neither does the difference between two.
    pub fn diff(&self, old: Option<Oid>, new: Option<Oid>) -> Result<Vec<FileChange>> {
        if let Ok(last) = self.last_diff.lock()
            && let Some(k) = last.as_ref().filter(|k| k.old == old && k.new == new)
        {
            return Ok(k.changes.clone());
        }
        let old_tree = match old {
            Some(c) => Some(self.repo.find_commit(c)?.tree()?),
            None => None,
        };
        let new_tree = match new {
            Some(c) => Some(self.repo.find_commit(c)?.tree()?),
            None => None,
        };
        let mut changes = Vec::new();
        diff_trees(
            &self.repo,
            old_tree.as_ref(),
            new_tree.as_ref(),
            "",
            &mut changes,
        )?;
        if changes.len() <= KEPT_DIFF_MAX
            && let Ok(mut last) = self.last_diff.lock()
        {
            *last = Some(KeptDiff {
                old,
                new,
                changes: changes.clone(),
            });
        }
        Ok(changes)
    }

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

fn diff_trees(
    repo: &Repository,
    old: Option<&Tree<'_>>,
    new: Option<&Tree<'_>>,
    prefix: &str,
    out: &mut Vec<FileChange>,
) -> Result<()> {
    let (old_entries, new_entries) = (entries_in_git_order(old), entries_in_git_order(new));
    let (mut i, mut j) = (0, 0);
    loop {
        let (a, b) = (old_entries.get(i), new_entries.get(j));
        let pair = match (a, b) {
            (None, None) => break,
            (Some(_), None) => (a, None),
            (None, Some(_)) => (None, b),
            (Some(x), Some(y)) => match git_order(x, y) {
                Ordering::Less => (a, None),
                Ordering::Greater => (None, b),
                Ordering::Equal => (a, b),
            },
        };
        i += usize::from(pair.0.is_some());
        j += usize::from(pair.1.is_some());
        diff_entry(repo, pair, prefix, out)?;
    }
    Ok(())
}

/// A tree's entries in git's order (each name compared as if a tree's ended in `/`), which is
/// how git stores them: a tree stored out of order (damage, or another tool's) is sorted here.
fn entries_in_git_order<'t>(tree: Option<&'t Tree<'_>>) -> Vec<TreeEntry<'t>> {
    let mut list: Vec<TreeEntry<'t>> = tree.map(|t| t.iter().collect()).unwrap_or_default();
    if !list.is_sorted_by(|x, y| git_order(x, y) != Ordering::Greater) {
        list.sort_by(git_order);
    }
    list
}

/// Git's order of tree entries: by name, a tree's name compared as if it ended in `/`.
fn git_order(x: &TreeEntry<'_>, y: &TreeEntry<'_>) -> Ordering {
    let (a, b) = (x.name_bytes(), y.name_bytes());
    let n = a.len().min(b.len());
    let end = |name: &[u8], e: &TreeEntry<'_>| match name.get(n) {
        Some(&c) => c,
        None if e.kind() == Some(ObjectType::Tree) => b'/',
        None => 0,
    };
    a[..n].cmp(&b[..n]).then_with(|| end(a, x).cmp(&end(b, y)))
}

/// The changes under one name: the old and new entries (either absent), recursing into trees.
/// Names that are not UTF-8 are not lore's and are skipped.
fn diff_entry(
    repo: &Repository,
    (a, b): (Option<&TreeEntry<'_>>, Option<&TreeEntry<'_>>),
    prefix: &str,
    out: &mut Vec<FileChange>,
) -> Result<()> {
    let kind_and_id = |e: Option<&TreeEntry<'_>>| e.map(|e| (e.id(), e.kind()));
    if kind_and_id(a) == kind_and_id(b) {
        return Ok(());
    }
    let Some(Ok(name)) = a.or(b).map(|e| std::str::from_utf8(e.name_bytes())) else {
        return Ok(());
    };
    let path = format!("{prefix}{name}");
    let sub = |e: Option<&TreeEntry<'_>>| -> Result<Option<Tree<'_>>> {
        match e {
            Some(e) if e.kind() == Some(ObjectType::Tree) => Ok(Some(repo.find_tree(e.id())?)),
            _ => Ok(None),
        }
    };
    let blob = |e: Option<&TreeEntry<'_>>| {
        e.filter(|e| e.kind() == Some(ObjectType::Blob))
            .map(|e| e.id())
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
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use git2::{Oid, Repository};

    use super::diff_trees;

    /// A tree of `files` (path → content), nested by `/`.
    fn tree_of(repo: &Repository, files: &[(&str, &str)]) -> Oid {
        let mut builder = git2::build::TreeUpdateBuilder::new();
        for (path, content) in files {
            builder.upsert(
                *path,
                repo.blob(content.as_bytes()).unwrap(),
                git2::FileMode::Blob,
            );
        }
        let empty = repo.treebuilder(None).unwrap().write().unwrap();
        let empty = repo.find_tree(empty).unwrap();
        builder.create_updated(repo, &empty).unwrap()
    }

    #[test]
    fn the_walk_finds_what_git_diff_tree_finds_where_names_sort_apart() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        // `a` is a file, then a directory: in git's order a tree's name sorts as if it ended
        // in `/`, after `a-b` and `a.md`, so the two walks meet it at different places.
        let old = tree_of(
            &repo,
            &[
                ("a", "file"),
                ("a.md", "1"),
                ("a-b/x", "same"),
                ("b/c/d", "1"),
                ("c", "gone"),
            ],
        );
        let new = tree_of(
            &repo,
            &[
                ("a/x", "now a dir"),
                ("a.md", "2"),
                ("a-b/x", "same"),
                ("b/c/d", "2"),
                ("d", "new"),
            ],
        );
        let (old_tree, new_tree) = (repo.find_tree(old).unwrap(), repo.find_tree(new).unwrap());
        let mut ours = Vec::new();
        diff_trees(&repo, Some(&old_tree), Some(&new_tree), "", &mut ours).unwrap();
        let ours: BTreeSet<(String, Option<Oid>, Option<Oid>)> =
            (ours.into_iter()).map(|c| (c.path, c.old, c.new)).collect();
        let out = std::process::Command::new("git")
            .args(["diff-tree", "-r", "--no-renames", "--no-abbrev"])
            .args([old.to_string(), new.to_string()])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success());
        let side = |id: &str| Some(Oid::from_str(id).unwrap()).filter(|id| !id.is_zero());
        let git: BTreeSet<(String, Option<Oid>, Option<Oid>)> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|line| {
                let (meta, path) = line.split_once('\t').unwrap();
                let fields: Vec<&str> = meta.split(' ').collect();
                (path.to_string(), side(fields[2]), side(fields[3]))
            })
            .collect();
        assert_eq!(ours, git);
        assert_eq!(ours.len(), 6, "{ours:?}");
    }
}
