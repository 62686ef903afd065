//! The steps branches hold, as trajectory retrieval reads them, and trajectory recall over them.

use super::files::read_segments;
use super::{TrajectoryStep, Workspace};
use crate::error::Result;

impl Workspace<'_> {
    /// The steps a branch holds: committed ones, then (if asked) its journal's.
    pub fn steps(&self, branch: &str, uncommitted: bool) -> Result<Vec<TrajectoryStep>> {
        let tip = self
            .tip(branch)?
            .ok_or_else(|| self.unknown_branch(branch))?;
        let snap = self.store.snapshot(Some(tip))?;
        let mut out: Vec<TrajectoryStep> = read_segments(&snap)?
            .into_iter()
            .map(|step| TrajectoryStep {
                step,
                branch: branch.to_string(),
                committed: true,
            })
            .collect();
        if uncommitted {
            let seen: std::collections::HashSet<String> =
                out.iter().map(|s| s.step.id.clone()).collect();
            for step in self.uncommitted(branch)?.items {
                if !seen.contains(&step.id) {
                    out.push(TrajectoryStep {
                        step,
                        branch: branch.to_string(),
                        committed: false,
                    });
                }
            }
        }
        Ok(out)
    }

    /// The trajectory index of a branch's steps, committed and uncommitted, as a fresh build of
    /// [`Workspace::steps`] makes it: the committed part read back from the kept file
    /// (`recall_index.rs`), the journal's steps added.
    pub fn branch_index(
        &self,
        branch: &str,
        embedder: Option<crate::embed::SharedEmbedder>,
    ) -> Result<crate::trajectory::TrajectoryIndex> {
        self.branch_index_from(branch, embedder, true)
    }

    /// [`Workspace::branch_index`], the committed part read from the kept file only when
    /// `use_kept`.
    fn branch_index_from(
        &self,
        branch: &str,
        embedder: Option<crate::embed::SharedEmbedder>,
        use_kept: bool,
    ) -> Result<crate::trajectory::TrajectoryIndex> {
        let tip = self
            .tip(branch)?
            .ok_or_else(|| self.unknown_branch(branch))?;
        let mut index = self.committed_index(branch, tip, embedder, use_kept)?;
        let mut journal: Vec<TrajectoryStep> = Vec::new();
        for step in self.uncommitted(branch)?.items {
            if !index.contains(&step.id)? {
                journal.push(TrajectoryStep {
                    step,
                    branch: branch.to_string(),
                    committed: false,
                });
            }
        }
        index.extend(journal)?;
        Ok(index)
    }

    /// Trajectory recall over a branch's steps (committed and uncommitted), or every branch's
    /// with `all_branches`: returns what was packed and how many steps were searched.
    pub fn recall(
        &self,
        query: &str,
        budget: usize,
        strategy: crate::trajectory::Strategy,
        branch: Option<&str>,
        all_branches: bool,
        embedder: Option<crate::embed::SharedEmbedder>,
    ) -> Result<(crate::trajectory::Recalled, usize)> {
        if all_branches {
            let mut index = crate::trajectory::TrajectoryIndex::new(
                embedder,
                crate::trajectory::Params::default(),
            );
            index.extend(self.all_steps()?)?;
            let got = index.recall(query, budget, strategy)?;
            return Ok((got, index.len()));
        }
        let branch = self.resolve(branch)?;
        let from_kept = self
            .branch_index_from(&branch, embedder.clone(), true)
            .and_then(|index| Ok((index.recall(query, budget, strategy)?, index.len())));
        match from_kept {
            Ok(got) => Ok(got),
            // Parts of the kept file are read while the query runs: one that does not read back
            // (damaged, or the file failing) costs the build in memory, as when it is opened.
            Err(e) if crate::trajectory::is_kept_file_failure(&e) => {
                self.store.warn(format!(
                    "trajectory recall over the kept index of branch {branch} failed ({e}); \
                     built in memory"
                ));
                let index = self.branch_index_from(&branch, embedder, false)?;
                Ok((index.recall(query, budget, strategy)?, index.len()))
            }
            Err(e) => Err(e),
        }
    }

    /// The steps of every branch, each step once (the first branch holding it, in name order,
    /// with the current branch first), ordered by time.
    pub fn all_steps(&self) -> Result<Vec<TrajectoryStep>> {
        let mut branches = self.branches()?;
        if let Some(c) = self.current()? {
            branches.retain(|b| *b != c);
            branches.insert(0, c);
        }
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        for b in branches {
            for s in self.steps(&b, true)? {
                if seen.insert(s.step.id.clone()) {
                    out.push(s);
                }
            }
        }
        out.sort_by_key(|s| s.step.time);
        Ok(out)
    }
}
