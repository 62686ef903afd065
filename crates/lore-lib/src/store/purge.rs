//! Purge: rewrite lore's refs so that given blobs (a leaked secret's versions) are unreachable.
//!
//! Every commit reachable from `refs/lore/*` is rewritten bottom-up; commits whose trees held one
//! of the blobs at one of the paths lose that file, and the texts given as `scrub` are removed from
//! every commit message. Refs move by compare-and-swap, and lore's reflogs are deleted, so after
//! `git gc --prune=now` the objects are gone from this clone.

use std::collections::{HashMap, HashSet};

use git2::{Oid, Sort};

use super::{Store, blob_at, is_race};
use crate::error::{Error, Result};

/// What a purge did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PurgeReport {
    /// How many commits were rewritten.
    pub commits_rewritten: usize,
    /// Which refs moved.
    pub refs_rewritten: Vec<String>,
}

impl Store {
    /// Removes `blobs` at `paths` from every commit of lore's refs and replaces each text of
    /// `scrub` in commit messages by `[purged]`.
    pub fn purge(
        &self,
        paths: &[String],
        blobs: &HashSet<Oid>,
        scrub: &[String],
    ) -> Result<PurgeReport> {
        let repo = self.repo();
        let mut refs: Vec<(String, Oid)> = Vec::new();
        for r in repo.references_glob(&format!("{}*", super::LORE_REF_PREFIX))? {
            let r = r?;
            if let (Ok(name), Some(target)) = (r.name(), r.target()) {
                refs.push((name.to_string(), target));
            }
        }
        let mut walk = repo.revwalk()?;
        walk.set_sorting(Sort::TOPOLOGICAL | Sort::REVERSE)?;
        for (_, target) in &refs {
            walk.push(*target)?;
        }
        let mut mapped: HashMap<Oid, Oid> = HashMap::new();
        let mut report = PurgeReport::default();
        for oid in walk {
            let oid = oid?;
            let commit = repo.find_commit(oid)?;
            let parents: Vec<Oid> = commit
                .parent_ids()
                .map(|p| *mapped.get(&p).unwrap_or(&p))
                .collect();
            let tree = commit.tree()?;
            let mut builder = git2::build::TreeUpdateBuilder::new();
            let mut removed = false;
            for path in paths {
                if let Some(b) = blob_at(&tree, path)?
                    && blobs.contains(&b)
                {
                    builder.remove(path.as_str());
                    removed = true;
                }
            }
            let raw_message = String::from_utf8_lossy(commit.message_bytes()).into_owned();
            let mut message = raw_message.clone();
            for text in scrub.iter().filter(|t| !t.is_empty()) {
                message = message.replace(text.as_str(), "[purged]");
            }
            let parents_changed = parents
                .iter()
                .ne(commit.parent_ids().collect::<Vec<_>>().iter());
            if !removed && !parents_changed && message == raw_message {
                continue;
            }
            let new_tree = if removed {
                repo.find_tree(builder.create_updated(repo, &tree)?)?
            } else {
                tree
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
                &message,
                &new_tree,
                &parent_refs,
            )?;
            mapped.insert(oid, new);
            report.commits_rewritten += 1;
        }
        for (name, target) in &refs {
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
            // Reflogs would keep the old commits reachable.
            if repo.reflog(name).is_ok_and(|log| !log.is_empty()) {
                repo.reflog_delete(name)?;
            }
        }
        Ok(report)
    }
}
