//! Logging steps and committing them: `ctx log` (the journal), `ctx status`, `ctx commit` (a log
//! segment and a `commit.md` entry), and the wholesale write of an imported branch.

use git2::Oid;

use super::files::{
    normalize_doc, parse_segment, read_meta, read_segments, segment_bytes, segment_path, text_of,
    to_yaml, upsert,
};
use super::handle::required;
use super::log_md::{NewStep, Step};
use super::summary::{commit_md_entry, compose_summary};
use super::{
    BRANCH_FILE, BranchMeta, COMMIT_FILE, CommitOutcome, Entry, EntryKind, LOG_DIR, METADATA_FILE,
    ROADMAP_FILE, Status, Workspace, branch_ref,
};
use crate::error::{Error, Result};
use crate::linefile::Contents;
use crate::store::WriteContext;
use crate::store::{Edit, RefWrite};

impl Workspace<'_> {
    /// `ctx log`: appends a step to the branch's journal; durable when this returns.
    pub fn log(&self, branch: Option<&str>, mut new: NewStep) -> Result<(String, Step)> {
        let branch = self.resolve(branch)?;
        self.screen_step(&mut new.text, &mut new.arguments, &mut new.result)?;
        self.screen_step_labels(
            &mut new.tool,
            &mut new.subgoal,
            &mut new.entities,
            &mut new.files,
            &mut new.agent,
            &mut new.session,
        )?;
        let step = new.into_step()?;
        self.journal(&branch)
            .append_checked(&step, |line| self.store().guard("the step", line))?;
        Ok((branch, step))
    }

    /// Uncommitted steps of a branch (lines that could not be read are counted, and a warning).
    pub fn uncommitted(&self, branch: &str) -> Result<Contents<Step>> {
        let contents = self.journal(branch).read()?;
        self.warn_damaged(branch, contents.damaged, "skipped");
        Ok(contents)
    }

    fn warn_damaged(&self, branch: &str, damaged: usize, what_happened: &str) {
        if damaged > 0 {
            self.warn(format!(
                "{damaged} line(s) of branch {branch}'s journal of uncommitted steps could not \
                 be read and were {what_happened}"
            ));
        }
    }

    /// `ctx status`.
    pub fn status(&self, branch: Option<&str>) -> Result<Status> {
        let branch = self.resolve(branch)?;
        let tip = self
            .tip(&branch)?
            .ok_or_else(|| self.unknown_branch(&branch))?;
        let snap = self.store.snapshot(Some(tip))?;
        let meta = read_meta(&snap)?
            .ok_or_else(|| Error::ContextNotFound(format!("{branch} has no {BRANCH_FILE}")))?;
        let committed_steps = read_segments(&snap)?.len();
        let journal = self.uncommitted(&branch)?;
        Ok(Status {
            branch,
            meta,
            tip: tip.to_string(),
            uncommitted: journal.items,
            damaged: journal.damaged,
            committed_steps,
            code_head: self.code_head(),
        })
    }

    /// `ctx commit`: the journal's steps become a log segment and `commit.md` gets the
    /// three-block entry. Without `summary`, one is composed ([`compose_summary`]).
    pub fn commit(
        &self,
        branch: Option<&str>,
        contribution: &str,
        summary: Option<&str>,
        roadmap: Option<&str>,
        ctx: &WriteContext,
    ) -> Result<CommitOutcome> {
        let contribution = self.screened("contribution", contribution)?;
        let contribution = required(
            &contribution,
            "contribution",
            "say what this commit contributes",
        )?;
        let summary = summary.map(|s| self.screened("summary", s)).transpose()?;
        let summary = summary.as_deref().map(str::trim).filter(|s| !s.is_empty());
        let roadmap = roadmap.map(|r| self.screened("roadmap", r)).transpose()?;
        let roadmap = roadmap.as_deref();
        let branch = self.resolve(branch)?;
        let now = Self::now(ctx);
        let refname = branch_ref(&branch);
        let (outcome, damaged) = self.journal(&branch).drain(|journal| {
            let (entry, commit) = self.store.transact_ref(&refname, |snap| {
                let mut meta = read_meta(snap)?.ok_or_else(|| self.unknown_branch(&branch))?;
                let steps = not_in_last_segment(snap, &meta, &journal.items)?;
                let mut edits = Vec::new();
                let segment = if steps.is_empty() {
                    None
                } else {
                    meta.segments += 1;
                    let path = segment_path(meta.segments);
                    edits.push(upsert(&path, segment_bytes(&steps)?));
                    Some(path)
                };
                meta.commits += 1;
                let new_summary = match summary {
                    Some(s) => s.to_string(),
                    None => compose_summary(&meta.summary, contribution),
                };
                let entry = Entry {
                    steps: steps.len(),
                    segment,
                    ..self.entry(&meta, EntryKind::Commit, contribution, &new_summary, now)
                };
                let mut commit_md = text_of(snap, COMMIT_FILE)?;
                commit_md.push_str(&commit_md_entry(&branch, Some(&commit_md), &entry));
                edits.push(upsert(COMMIT_FILE, commit_md.into_bytes()));
                if let Some(r) = roadmap {
                    edits.push(upsert(ROADMAP_FILE, normalize_doc(r).into_bytes()));
                }
                meta.summary = new_summary;
                meta.last = Some(entry.clone());
                edits.push(upsert(BRANCH_FILE, to_yaml(&meta, BRANCH_FILE)?));
                let message = self.message(
                    format!("ctx commit {branch}: {contribution}"),
                    Some(format!(
                        "{contribution}\n\nSteps: {}\nSummary: {}",
                        entry.steps, entry.summary
                    )),
                    EntryKind::Commit,
                    &branch,
                    ctx,
                );
                Ok((RefWrite::on_tip(edits, message), entry))
            })?;
            let outcome = CommitOutcome {
                branch: branch.clone(),
                commit: commit
                    .ok_or_else(|| Error::ContextNotFound("commit wrote nothing".into()))?
                    .to_string(),
                entry,
            };
            Ok((outcome, journal.damaged))
        })?;
        self.warn_damaged(&branch, damaged, "dropped by the commit");
        Ok(outcome)
    }

    /// Writes a branch wholesale (import): roadmap, commit entries, metadata, record and steps.
    pub(super) fn write_branch(
        &self,
        meta: &BranchMeta,
        files: BranchFiles,
        force: bool,
        ctx: &WriteContext,
    ) -> Result<Oid> {
        let name = meta.name.clone();
        let (_, commit) = self.store.transact_ref(&branch_ref(&name), |snap| {
            if snap.commit().is_some() && !force {
                return Err(Error::ContextConflict(format!(
                    "context branch {name:?} exists; import with --force to replace its content"
                )));
            }
            let mut meta = meta.clone();
            let mut edits = vec![Edit::Remove {
                path: LOG_DIR.into(),
            }];
            // All steps go into one segment, numbered as the record says (so the record stays
            // as exported and later commits continue the numbering).
            if !files.steps.is_empty() {
                meta.segments = meta.segments.max(1);
                edits.push(upsert(
                    &segment_path(meta.segments),
                    segment_bytes(&files.steps)?,
                ));
            }
            edits.push(upsert(ROADMAP_FILE, files.roadmap.clone().into_bytes()));
            edits.push(upsert(COMMIT_FILE, files.commit_md.clone().into_bytes()));
            edits.push(upsert(METADATA_FILE, files.metadata.clone().into_bytes()));
            edits.push(upsert(BRANCH_FILE, to_yaml(&meta, BRANCH_FILE)?));
            let message = self.message(
                format!("ctx import {name}"),
                None,
                EntryKind::Import,
                &name,
                ctx,
            );
            Ok((RefWrite::on_tip(edits, message), ()))
        })?;
        commit.ok_or_else(|| Error::ContextNotFound("import wrote nothing".into()))
    }
}

impl Workspace<'_> {
    /// Writes an imported branch as the history it records: one commit per entry (each with
    /// its steps as a log segment and `commit.md` as it stood then), the roadmap and metadata
    /// from the first. The first commit replaces an existing branch only with `force`.
    pub(super) fn write_history(
        &self,
        history: &super::gcc_foreign::ForeignHistory,
        files: &BranchFiles,
        force: bool,
        ctx: &WriteContext,
    ) -> Result<()> {
        let mut meta = history.meta.clone();
        let name = meta.name.clone();
        for (n, (entry, steps, commit_md)) in history.commits.iter().enumerate() {
            let mut entry = entry.clone();
            let mut edits = Vec::new();
            if n == 0 {
                edits.push(Edit::Remove {
                    path: LOG_DIR.into(),
                });
                edits.push(upsert(ROADMAP_FILE, files.roadmap.clone().into_bytes()));
                edits.push(upsert(METADATA_FILE, files.metadata.clone().into_bytes()));
            }
            if !steps.is_empty() {
                meta.segments += 1;
                let path = segment_path(meta.segments);
                edits.push(upsert(&path, segment_bytes(steps)?));
                entry.segment = Some(path);
            }
            edits.push(upsert(COMMIT_FILE, commit_md.clone().into_bytes()));
            if entry.kind != EntryKind::Import {
                meta.commits = entry.seq;
            }
            if let Some(m) = entry.merged.as_ref().filter(|m| !meta.merged.contains(m)) {
                meta.merged.push(m.clone());
            }
            meta.summary.clone_from(&entry.summary);
            meta.last = Some(entry.clone());
            edits.push(upsert(BRANCH_FILE, to_yaml(&meta, BRANCH_FILE)?));
            let subject = format!(
                "ctx import {name}: {}",
                entry.contribution.lines().next().unwrap_or("")
            );
            let message = self.message(subject, None, EntryKind::Import, &name, ctx);
            self.store.transact_ref(&branch_ref(&name), |snap| {
                if n == 0 && snap.commit().is_some() && !force {
                    return Err(Error::ContextConflict(format!(
                        "context branch {name:?} exists; import with --force to replace its content"
                    )));
                }
                Ok((RefWrite::on_tip(edits.clone(), message.clone()), ()))
            })?;
        }
        Ok(())
    }
}

/// A branch's files, as imported.
pub(crate) struct BranchFiles {
    pub(crate) roadmap: String,
    pub(crate) commit_md: String,
    pub(crate) metadata: String,
    pub(crate) steps: Vec<Step>,
}

/// The journal's steps less those already in the branch's last segment: a crash between a
/// commit and the journal's truncation leaves steps that are committed already, and they are
/// not committed twice.
fn not_in_last_segment(
    snap: &crate::store::Snapshot<'_>,
    meta: &BranchMeta,
    journal: &[Step],
) -> Result<Vec<Step>> {
    let already: Vec<String> = match meta.last.as_ref().and_then(|l| l.segment.clone()) {
        Some(seg) => match snap.read(&seg)? {
            Some(b) => parse_segment(&b, &seg)?.into_iter().map(|s| s.id).collect(),
            None => Vec::new(),
        },
        None => Vec::new(),
    };
    Ok(journal
        .iter()
        .filter(|s| !already.contains(&s.id))
        .cloned()
        .collect())
}
