//! A branch's history and the blog's four tools over its roadmap: `read_context`,
//! `update_context`, `get_context_history` and `get_snapshot`.

use git2::Oid;
use jiff::Timestamp;

use super::files::{normalize_doc, read_meta, text_of, to_yaml, upsert};
use super::handle::required;
use super::{BRANCH_FILE, ContextVersion, EntryKind, ROADMAP_FILE, Workspace, branch_ref};
use crate::error::{Error, Result};
use crate::store::RefWrite;
use crate::store::WriteContext;

impl Workspace<'_> {
    /// The blog's `read_context`: the branch's roadmap document.
    pub fn read_context(&self, branch: Option<&str>) -> Result<String> {
        let branch = self.resolve(branch)?;
        let tip = self
            .tip(&branch)?
            .ok_or_else(|| self.unknown_branch(&branch))?;
        text_of(&self.store.snapshot(Some(tip))?, ROADMAP_FILE)
    }

    /// The blog's `update_context(new, message)`: replaces the roadmap document, one commit.
    pub fn update_context(
        &self,
        branch: Option<&str>,
        new: &str,
        message: &str,
        ctx: &WriteContext,
    ) -> Result<Option<Oid>> {
        let message = self.screened("message", message)?;
        let message = required(&message, "message", "say what changed")?;
        let branch = self.resolve(branch)?;
        let new = normalize_doc(&self.screened("context", new)?);
        let now = Self::now(ctx);
        let (changed, commit) = self.store.transact_ref(&branch_ref(&branch), |snap| {
            let mut meta = read_meta(snap)?.ok_or_else(|| self.unknown_branch(&branch))?;
            if text_of(snap, ROADMAP_FILE)? == new {
                return Ok((RefWrite::default(), false));
            }
            meta.last = Some(self.entry(&meta, EntryKind::Update, message, &meta.summary, now));
            let edits = vec![
                upsert(ROADMAP_FILE, new.clone().into_bytes()),
                upsert(BRANCH_FILE, to_yaml(&meta, BRANCH_FILE)?),
            ];
            let msg = self.message(
                format!("ctx update {branch}: {message}"),
                None,
                EntryKind::Update,
                &branch,
                ctx,
            );
            Ok((RefWrite::on_tip(edits, msg), true))
        })?;
        Ok(commit.filter(|_| changed))
    }

    /// The branch's history, newest first: its own commits, including those a sync merged in
    /// from another clone's copy of the branch (commits of other branches, such as the branch
    /// it was made from or branches merged into it, are left out).
    pub fn history(&self, branch: &str) -> Result<Vec<Oid>> {
        let tip = self
            .tip(branch)?
            .ok_or_else(|| self.unknown_branch(branch))?;
        let repo = self.store.repo();
        let mut out = Vec::new();
        let mut queue = std::collections::VecDeque::from([tip]);
        let mut seen = std::collections::HashSet::from([tip]);
        while let Some(c) = queue.pop_front() {
            let snap = self.store.snapshot(Some(c))?;
            if read_meta(&snap)?.is_none_or(|m| m.name != branch) {
                continue;
            }
            out.push(c);
            for p in repo.find_commit(c)?.parent_ids() {
                if seen.insert(p) {
                    queue.push_back(p);
                }
            }
        }
        // Newest first by commit time, ties in walk order.
        let mut timed: Vec<(i64, usize, Oid)> = out
            .iter()
            .enumerate()
            .map(|(i, c)| Ok((repo.find_commit(*c)?.time().seconds(), i, *c)))
            .collect::<Result<_>>()?;
        timed.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        Ok(timed.into_iter().map(|(_, _, c)| c).collect())
    }

    /// The blog's `get_context_history`: every version of the roadmap, oldest first.
    pub fn context_history(&self, branch: Option<&str>) -> Result<Vec<ContextVersion>> {
        let branch = self.resolve(branch)?;
        let repo = self.store.repo();
        let mut versions = Vec::new();
        let mut history = self.history(&branch)?;
        history.reverse();
        let mut last_blob = None;
        for c in history {
            let snap = self.store.snapshot(Some(c))?;
            let blob = snap.blob_id(ROADMAP_FILE)?;
            if blob != last_blob {
                let commit = repo.find_commit(c)?;
                versions.push(ContextVersion {
                    version: versions.len() + 1,
                    commit: c.to_string(),
                    time: Timestamp::from_second(commit.time().seconds()).map_err(|e| {
                        Error::Parse {
                            context: format!("the time of context commit {c}"),
                            message: e.to_string(),
                        }
                    })?,
                    message: commit.summary()?.unwrap_or_default().to_string(),
                });
                last_blob = blob;
            }
        }
        Ok(versions)
    }

    /// The blog's `get_snapshot(version)`: the roadmap at a version number (from
    /// [`Workspace::context_history`]) or a commit id (prefix).
    pub fn context_snapshot(
        &self,
        branch: Option<&str>,
        version: &str,
    ) -> Result<(ContextVersion, String)> {
        let history = self.context_history(branch)?;
        let found = match version.trim().parse::<usize>() {
            Ok(n) if version.trim().len() < 7 => history.iter().find(|v| v.version == n),
            _ => {
                let v = version.trim().to_ascii_lowercase();
                let matches: Vec<&ContextVersion> = history
                    .iter()
                    .filter(|h| !v.is_empty() && h.commit.starts_with(&v))
                    .collect();
                if matches.len() > 1 {
                    return Err(Error::Ambiguous {
                        query: version.to_string(),
                        candidates: matches.iter().map(|m| m.commit.clone()).collect(),
                    });
                }
                matches.first().copied()
            }
        };
        let found = found.cloned().ok_or_else(|| {
            let n = history.len();
            Error::ContextNotFound(format!(
                "no version {version:?} of the context: it has {n} version{}, numbered 1 to {n}, \
                 or give a commit id from its history",
                if n == 1 { "" } else { "s" }
            ))
        })?;
        let oid = Oid::from_str(&found.commit)?;
        let text = text_of(&self.store.snapshot(Some(oid))?, ROADMAP_FILE)?;
        Ok((found, text))
    }

    /// Resolves a commit id (or prefix) to a context commit.
    pub fn find_commit(&self, rev: &str) -> Result<Oid> {
        let rev = rev.trim();
        let obj = self
            .store
            .repo()
            .revparse_single(rev)
            .map_err(|_| Error::ContextNotFound(format!("no commit {rev:?}")))?;
        let commit = obj
            .peel_to_commit()
            .map_err(|_| Error::ContextNotFound(format!("{rev:?} is not a commit")))?;
        self.meta_at(commit.id())?;
        Ok(commit.id())
    }
}
