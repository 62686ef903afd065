//! Making and choosing branches: `ctx init` (the `main` branch and its roadmap), `ctx branch`
//! and `ctx switch`.

use git2::Oid;

use super::files::{to_yaml, upsert};
use super::handle::required;
use super::summary::commit_md_entry;
use super::{
    BRANCH_FILE, BranchMeta, COMMIT_FILE, Entry, EntryKind, LOG_DIR, MAIN_BRANCH, METADATA_FILE,
    ROADMAP_FILE, Workspace, branch_ref, check_branch_name,
};
use crate::error::{Error, Result};
use crate::store::WriteContext;
use crate::store::{Edit, RefWrite};

impl Workspace<'_> {
    /// `ctx init`: creates the `main` branch with a roadmap and makes it current.
    pub fn init(&self, goal: &str, todo: &[String], ctx: &WriteContext) -> Result<Oid> {
        let goal = self.screened("goal", goal)?;
        let goal = required(&goal, "goal", "say what this work is for")?;
        let todo = todo
            .iter()
            .map(|t| self.screened("to-do", t))
            .collect::<Result<Vec<_>>>()?;
        let mut roadmap =
            format!("# Roadmap\n\n## Goals\n\n- {goal}\n\n## Milestones\n\n## To-do\n\n");
        for item in todo.iter().map(|t| t.trim()).filter(|t| !t.is_empty()) {
            roadmap.push_str(&format!("- [ ] {item}\n"));
        }
        let now = Self::now(ctx);
        let entry = Entry {
            kind: EntryKind::Init,
            seq: 1,
            time: now,
            code_head: self.code_head(),
            purpose: goal.to_string(),
            previous_summary: String::new(),
            contribution: format!("Started the context workspace: {goal}"),
            summary: String::new(),
            steps: 0,
            segment: None,
            merged: None,
        };
        let meta = BranchMeta {
            name: MAIN_BRANCH.into(),
            purpose: goal.to_string(),
            parent: None,
            created: now,
            summary: String::new(),
            commits: 1,
            segments: 0,
            merged: Vec::new(),
            last: Some(entry.clone()),
        };
        let (_, commit) = self.store.transact_ref(&branch_ref(MAIN_BRANCH), |snap| {
            if snap.commit().is_some() {
                return Err(Error::ContextConflict(
                    "the context workspace already exists (branch main); show it instead of starting it again"
                        .into(),
                ));
            }
            let edits = vec![
                upsert(ROADMAP_FILE, roadmap.clone().into_bytes()),
                upsert(
                    COMMIT_FILE,
                    commit_md_entry(MAIN_BRANCH, None, &entry).into_bytes(),
                ),
                upsert(METADATA_FILE, b"{}\n".to_vec()),
                upsert(BRANCH_FILE, to_yaml(&meta, BRANCH_FILE)?),
            ];
            let message = self.message(
                format!("ctx init: {goal}"),
                None,
                EntryKind::Init,
                MAIN_BRANCH,
                ctx,
            );
            Ok((RefWrite::on_tip(edits, message), ()))
        })?;
        self.set_current(MAIN_BRANCH)?;
        commit.ok_or_else(|| Error::ContextNotFound("init wrote nothing".into()))
    }

    /// `ctx branch`: a new branch from the current one (roadmap and metadata carried over, an
    /// empty log and a fresh `commit.md`), made current unless `switch` is false.
    pub fn branch(
        &self,
        name: &str,
        purpose: &str,
        from: Option<&str>,
        switch: bool,
        ctx: &WriteContext,
    ) -> Result<Oid> {
        check_branch_name(name)?;
        let purpose = self.screened("purpose", purpose)?;
        let purpose = required(
            &purpose,
            "purpose",
            "say what the branch is for (--purpose)",
        )?;
        let parent = self.resolve(from)?;
        let start = self
            .tip(&parent)?
            .ok_or_else(|| self.unknown_branch(&parent))?;
        let parent_meta = self.meta_at(start)?;
        let now = Self::now(ctx);
        let entry = Entry {
            kind: EntryKind::Branch,
            seq: 1,
            time: now,
            code_head: self.code_head(),
            purpose: purpose.to_string(),
            previous_summary: parent_meta.summary.clone(),
            contribution: format!("Branched from {parent}: {purpose}"),
            summary: parent_meta.summary.clone(),
            steps: 0,
            segment: None,
            merged: None,
        };
        let meta = BranchMeta {
            name: name.to_string(),
            purpose: purpose.to_string(),
            parent: Some(parent.clone()),
            created: now,
            summary: parent_meta.summary.clone(),
            commits: 1,
            segments: 0,
            merged: Vec::new(),
            last: Some(entry.clone()),
        };
        let (_, commit) = self.store.transact_ref(&branch_ref(name), |snap| {
            if snap.commit().is_some() {
                return Err(Error::ContextConflict(format!(
                    "context branch {name:?} already exists; switch to it to use it"
                )));
            }
            let edits = vec![
                Edit::Remove {
                    path: LOG_DIR.into(),
                },
                upsert(
                    COMMIT_FILE,
                    commit_md_entry(name, None, &entry).into_bytes(),
                ),
                upsert(BRANCH_FILE, to_yaml(&meta, BRANCH_FILE)?),
            ];
            let message = self.message(
                format!("ctx branch {name}: {purpose}"),
                None,
                EntryKind::Branch,
                name,
                ctx,
            );
            Ok((
                RefWrite {
                    start: Some(start),
                    ..RefWrite::on_tip(edits, message)
                },
                (),
            ))
        })?;
        if switch {
            self.set_current(name)?;
        }
        commit.ok_or_else(|| Error::ContextNotFound("branch wrote nothing".into()))
    }

    /// `ctx switch`: makes a branch current. Returns how many uncommitted steps the branch left
    /// behind has (they stay in its journal).
    pub fn switch(&self, name: &str) -> Result<usize> {
        let previous = self.current()?;
        self.resolve(Some(name))?;
        self.set_current(name)?;
        match previous {
            Some(p) if p != name => Ok(self.uncommitted(&p)?.items.len()),
            _ => Ok(0),
        }
    }
}
