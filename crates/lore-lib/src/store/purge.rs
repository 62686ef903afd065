//! History rewriting for purges: every commit of some refs is rewritten bottom-up by a rule
//! that says, per commit, which files to change and what message to keep. Commits the rule
//! leaves alone (and whose parents did not change) keep their ids, so rewriting clean history
//! is a no-op and two clones applying one rule to the same commits get the same new commits.
//! Moving the refs is by compare-and-swap, and their reflogs are deleted, so after
//! `git gc --prune=now` the old objects are gone from this clone.

use std::collections::HashMap;

use git2::{FileMode, Oid, Sort};

use super::{Edit, Store, is_race};
use crate::error::{Error, Result};

/// What a purge did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PurgeReport {
    /// How many commits were rewritten.
    pub commits_rewritten: usize,
    /// Which refs moved.
    pub refs_rewritten: Vec<String>,
}

/// A rule for rewriting one commit: the edits to its tree and the message to give it (none:
/// keep the message).
pub(crate) type CommitRule<'a> =
    dyn FnMut(&git2::Tree<'_>, &str) -> Result<(Vec<Edit>, Option<String>)> + 'a;

impl Store {
    /// Rewrites every commit reachable from `tips` by `rule`, returning each rewritten
    /// commit's replacement (commits left as they were are not in the map).
    pub(crate) fn rewrite_commits(
        &self,
        tips: &[Oid],
        rule: &mut CommitRule<'_>,
    ) -> Result<HashMap<Oid, Oid>> {
        let repo = self.repo();
        let mut mapped: HashMap<Oid, Oid> = HashMap::new();
        if tips.is_empty() {
            return Ok(mapped);
        }
        let mut walk = repo.revwalk()?;
        walk.set_sorting(Sort::TOPOLOGICAL | Sort::REVERSE)?;
        for tip in tips {
            walk.push(*tip)?;
        }
        for oid in walk {
            let oid = oid?;
            let commit = repo.find_commit(oid)?;
            let old_parents: Vec<Oid> = commit.parent_ids().collect();
            let parents: Vec<Oid> = old_parents
                .iter()
                .map(|p| *mapped.get(p).unwrap_or(p))
                .collect();
            let tree = commit.tree()?;
            let raw_message = String::from_utf8_lossy(commit.message_bytes()).into_owned();
            let (mut edits, message) = rule(&tree, &raw_message)?;
            // One edit per path (the last): libgit2 refuses an update naming a path twice.
            let mut seen = std::collections::HashSet::new();
            edits.reverse();
            edits.retain(|e| {
                let (Edit::Upsert { path, .. } | Edit::Remove { path }) = e;
                seen.insert(path.clone())
            });
            edits.reverse();
            let message = message.filter(|m| *m != raw_message);
            if edits.is_empty() && message.is_none() && parents == old_parents {
                continue;
            }
            let new_tree = if edits.is_empty() {
                tree
            } else {
                let mut builder = git2::build::TreeUpdateBuilder::new();
                for edit in &edits {
                    match edit {
                        Edit::Upsert { path, content } => {
                            // Only what the rule kept of texts this commit already held.
                            let blob = repo.blob(content)?;
                            builder.upsert(path.as_str(), blob, FileMode::Blob);
                        }
                        Edit::Remove { path } => {
                            builder.remove(path.as_str());
                        }
                    }
                }
                repo.find_tree(builder.create_updated(repo, &tree)?)?
            };
            let parent_commits = parents
                .iter()
                .map(|p| repo.find_commit(*p))
                .collect::<std::result::Result<Vec<_>, _>>()?;
            let parent_refs: Vec<&git2::Commit<'_>> = parent_commits.iter().collect();
            let new = repo.commit(
                None,
                &commit.author(),
                &commit.committer(),
                message.as_deref().unwrap_or(&raw_message),
                &new_tree,
                &parent_refs,
            )?;
            mapped.insert(oid, new);
        }
        Ok(mapped)
    }

    /// Rewrites `refs` (name and current tip) by `rule` and moves each that changed by
    /// compare-and-swap; every one's reflog is deleted (it would keep the old commits
    /// reachable).
    pub(crate) fn rewrite_refs(
        &self,
        refs: &[(String, Oid)],
        rule: &mut CommitRule<'_>,
    ) -> Result<PurgeReport> {
        let tips: Vec<Oid> = refs.iter().map(|(_, t)| *t).collect();
        let mapped = self.rewrite_commits(&tips, rule)?;
        let mut report = PurgeReport {
            commits_rewritten: mapped.len(),
            refs_rewritten: Vec::new(),
        };
        let repo = self.repo();
        for (name, target) in refs {
            if let Some(new) = mapped.get(target) {
                self.compare_and_swap(name, Some(*target), *new, "purge")
                    .map_err(|e| {
                        if is_race(&e) {
                            Error::Changed {
                                id: format!("{name} (moved during the purge; run it again)"),
                            }
                        } else {
                            e.into()
                        }
                    })?;
                report.refs_rewritten.push(name.clone());
            }
            if repo.reflog(name).is_ok_and(|log| !log.is_empty()) {
                repo.reflog_delete(name)?;
            }
        }
        Ok(report)
    }

    /// Whether the object database still holds an object (a purged blob before
    /// `git gc --prune=now`).
    pub fn holds_object(&self, oid: Oid) -> bool {
        self.repo().odb().is_ok_and(|odb| odb.exists(oid))
    }
}
