//! Export and import of the workspace in the Git-Context-Controller `.GCC/` layout:
//! `main.md` and `branches/<name>/{commit.md, log.md, metadata.yaml}`. lore adds
//! `branches/<name>/branch.yaml` (purpose, summary, counters) and the branch's own `main.md`, so
//! a round trip loses nothing;
//! a directory written by another implementation imports without it.

use std::path::Path;

use jiff::Timestamp;
use schemars::JsonSchema;
use serde::Serialize;

use super::commit::BranchFiles;
use super::files::{read_meta, read_segments, text_of, to_yaml, to_yaml_text, yaml_error};
use super::gcc_compat;
use super::gcc_foreign::ForeignHistory;
use super::log_md::{parse_log, render_log};
use super::metadata::parse_metadata;
use super::{
    BRANCH_FILE, BranchMeta, COMMIT_FILE, METADATA_FILE, ROADMAP_FILE, Workspace, check_branch_name,
};
use crate::error::{Error, Result};
use crate::model::to_millis;
use crate::store::WriteContext;

/// What an export or import covered.
#[derive(Clone, Debug, Default, Serialize, JsonSchema)]
pub struct GccReport {
    /// Branches written.
    pub branches: Vec<String>,
    /// Steps written.
    pub steps: usize,
}

fn write(path: &Path, content: &[u8]) -> Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| Error::io(format!("creating {}", parent.display()), e))?;
    }
    std::fs::write(path, content).map_err(|e| Error::io(format!("writing {}", path.display()), e))
}

/// The purpose and the latest contribution found in a `commit.md` without lore's record.
fn from_commit_md(text: &str) -> (Option<String>, Option<String>) {
    let mut purpose = None;
    let mut contribution = None;
    let mut section: Option<&str> = None;
    let mut buffer = String::new();
    let mut flush = |section: Option<&str>, buffer: &mut String| {
        let value = buffer.trim().to_string();
        buffer.clear();
        if value.is_empty() {
            return;
        }
        match section {
            Some("purpose") if purpose.is_none() => purpose = Some(value),
            Some("contribution") => contribution = Some(value),
            _ => {}
        }
    };
    for line in text.lines() {
        let lower = line.trim_start_matches('#').trim().to_ascii_lowercase();
        if line.starts_with('#') {
            flush(section, &mut buffer);
            section = if lower.contains("purpose") {
                Some("purpose")
            } else if lower.contains("contribution") {
                Some("contribution")
            } else {
                None
            };
            continue;
        }
        buffer.push_str(line);
        buffer.push('\n');
    }
    flush(section, &mut buffer);
    (purpose, contribution)
}

/// `branch.yaml` of a branch lore exported, checked against the directory's name.
fn own_meta(bdir: &Path, name: &str, text: &str) -> Result<BranchMeta> {
    let meta: BranchMeta = serde_norway::from_str(text).map_err(|e| Error::Parse {
        context: bdir.join(BRANCH_FILE).display().to_string(),
        message: e.to_string(),
    })?;
    if meta.name != *name {
        return Err(Error::Parse {
            context: bdir.join(BRANCH_FILE).display().to_string(),
            message: format!("names branch {:?}, not {name:?}", meta.name),
        });
    }
    Ok(meta)
}

/// A branch record for a `commit.md` in no form lore knows: the purpose and latest contribution
/// its headed sections name.
fn meta_from_commit_md(name: &str, commit_md: &str, now: Timestamp) -> BranchMeta {
    let (purpose, contribution) = from_commit_md(commit_md);
    BranchMeta {
        name: name.to_string(),
        purpose: purpose.unwrap_or_else(|| format!("imported branch {name}")),
        parent: None,
        created: now,
        summary: contribution.unwrap_or_default(),
        commits: commit_md
            .lines()
            .filter(|l| l.starts_with("## "))
            .count()
            .try_into()
            .unwrap_or(u32::MAX),
        segments: 0,
        merged: Vec::new(),
        last: None,
    }
}

impl Workspace<'_> {
    /// Screens steps read from a file (their text and labels) under the secret policy.
    fn screen_steps(&self, steps: &mut [super::log_md::Step]) -> Result<()> {
        for step in steps {
            self.screen_step(&mut step.text, &mut step.arguments, &mut step.result)?;
            self.screen_step_labels(
                &mut step.tool,
                &mut step.subgoal,
                &mut step.entities,
                &mut step.files,
                &mut step.agent,
                &mut step.session,
            )?;
        }
        Ok(())
    }

    /// A file of a directory being imported (`None` when absent). Bytes that are not UTF-8 are
    /// replaced, with a warning: a foreign file still imports, and the loss is said.
    fn read_imported(&self, path: &Path) -> Result<Option<String>> {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(format!("reading {}", path.display()), e)),
        };
        Ok(Some(match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => {
                self.warn(format!(
                    "{} is not UTF-8 text; its invalid bytes were replaced",
                    path.display()
                ));
                String::from_utf8_lossy(e.as_bytes()).into_owned()
            }
        }))
    }

    /// The branch directories under `branches/`, sorted. A name that is not UTF-8 cannot name a
    /// branch: it is skipped with a warning.
    fn imported_branch_names(&self, branches_dir: &Path) -> Result<Vec<String>> {
        let reading = || format!("reading {}", branches_dir.display());
        let entries = match std::fs::read_dir(branches_dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(Error::io(reading(), e)),
        };
        let mut names = Vec::new();
        for entry in entries {
            let path = entry.map_err(|e| Error::io(reading(), e))?.path();
            let is_dir = std::fs::metadata(&path)
                .map_err(|e| Error::io(format!("reading {}", path.display()), e))?
                .is_dir();
            if !is_dir {
                continue;
            }
            match path.file_name().and_then(|n| n.to_str()) {
                Some(name) => names.push(name.to_string()),
                None => self.warn(format!(
                    "skipped {}: a branch name must be UTF-8",
                    path.display()
                )),
            }
        }
        names.sort();
        Ok(names)
    }

    /// Writes every branch's committed state to `dir` in the `.GCC/` layout. `main.md` at the
    /// top is the current branch's roadmap.
    pub fn export_gcc(&self, dir: &Path) -> Result<GccReport> {
        let current = self.resolve(None)?;
        let mut report = GccReport::default();
        for name in self.branches()? {
            let tip = self.tip(&name)?.ok_or_else(|| self.unknown_branch(&name))?;
            let snap = self.store.snapshot(Some(tip))?;
            let meta = read_meta(&snap)?
                .ok_or_else(|| Error::ContextNotFound(format!("{name} has no {BRANCH_FILE}")))?;
            let steps = read_segments(&snap)?;
            let bdir = dir.join("branches").join(&name);
            // commit.md and metadata.yaml carry, after a marker, what GCC readers need.
            let commit_md = gcc_compat::export_commit_md(&text_of(&snap, COMMIT_FILE)?);
            write(&bdir.join(COMMIT_FILE), commit_md.as_bytes())?;
            write(&bdir.join("log.md"), render_log(&name, &steps)?.as_bytes())?;
            let metadata = text_of(&snap, METADATA_FILE)?;
            let metadata =
                gcc_compat::export_metadata(&metadata, &parse_metadata(&metadata)?, &meta);
            write(&bdir.join(METADATA_FILE), metadata.as_bytes())?;
            write(&bdir.join(BRANCH_FILE), &to_yaml(&meta, BRANCH_FILE)?)?;
            // The top-level main.md is the current branch's roadmap (what GCC readers expect);
            // each branch also keeps its own beside its files.
            let roadmap = text_of(&snap, ROADMAP_FILE)?;
            if name == current {
                write(&dir.join(ROADMAP_FILE), roadmap.as_bytes())?;
            }
            write(&bdir.join(ROADMAP_FILE), roadmap.as_bytes())?;
            report.steps += steps.len();
            report.branches.push(name);
        }
        Ok(report)
    }

    /// Reads a `.GCC/` directory into context branches (one commit each). An existing branch is
    /// refused unless `force`. The current branch becomes `main` if none was set. Every branch is
    /// read, parsed and screened before the first is written, so a bad file anywhere writes
    /// nothing.
    pub fn import_gcc(&self, dir: &Path, force: bool, ctx: &WriteContext) -> Result<GccReport> {
        let roadmap = self
            .read_imported(&dir.join(ROADMAP_FILE))?
            .unwrap_or_default();
        let roadmap = self.screened("roadmap", &roadmap)?;
        let branches_dir = dir.join("branches");
        let names = self.imported_branch_names(&branches_dir)?;
        if names.is_empty() {
            return Err(Error::Invalid {
                what: "GCC directory",
                value: dir.display().to_string(),
                reason: "expected branches/<name>/ with commit.md, log.md, metadata.yaml".into(),
            });
        }
        for name in &names {
            check_branch_name(name)?;
            if !force && self.tip(name)?.is_some() {
                return Err(Error::ContextConflict(format!(
                    "context branch {name:?} exists; import with --force to replace its content"
                )));
            }
        }
        let now = to_millis(ctx.now.unwrap_or_else(Timestamp::now));
        let mut report = GccReport::default();
        let mut prepared = Vec::with_capacity(names.len());
        for name in &names {
            let branch = self.prepared_branch(&branches_dir.join(name), name, &roadmap, now)?;
            report.steps += branch.1.steps.len();
            prepared.push(branch);
        }
        for (meta, files, history) in prepared {
            match history {
                Some(h) => self.write_history(&h, &files, force, ctx)?,
                None => {
                    self.write_branch(&meta, files, force, ctx)?;
                }
            }
            report.branches.push(meta.name);
        }
        if self.current()?.is_none() {
            let first = if names.iter().any(|n| n == super::MAIN_BRANCH) {
                super::MAIN_BRANCH.to_string()
            } else {
                names[0].clone()
            };
            self.set_current(&first)?;
        }
        Ok(report)
    }

    /// One branch of a `.GCC/` directory read, parsed and screened: its record, its files, and
    /// (without lore's own record) the history its foreign forms describe. A branch without
    /// its own roadmap takes the directory's.
    fn prepared_branch(
        &self,
        bdir: &Path,
        name: &str,
        roadmap: &str,
        now: Timestamp,
    ) -> Result<(BranchMeta, BranchFiles, Option<ForeignHistory>)> {
        let commit_md = self
            .read_imported(&bdir.join(COMMIT_FILE))?
            .unwrap_or_default();
        let own = self.read_imported(&bdir.join(BRANCH_FILE))?;
        // lore's own export: the GCC forms it added for other readers are cut off.
        let commit_md = match own {
            Some(_) => gcc_compat::import_commit_md(&commit_md),
            None => commit_md,
        };
        let commit_md = self.screened("commit.md", &commit_md)?;
        let log = self
            .read_imported(&bdir.join("log.md"))?
            .unwrap_or_default();
        let mut steps = parse_log(&log, now)?;
        self.screen_steps(&mut steps)?;
        let metadata = self
            .read_imported(&bdir.join(METADATA_FILE))?
            .unwrap_or_else(|| "{}\n".into());
        let metadata = match own {
            Some(_) => gcc_compat::import_metadata(&metadata),
            None => metadata,
        };
        let parsed = parse_metadata(&metadata)?;
        // Re-written only when it holds a secret: otherwise its text is kept as it came.
        let metadata = if crate::secrets::scan(&metadata).is_empty() {
            metadata
        } else {
            to_yaml_text(
                &self.screened_value("metadata", parsed.clone())?,
                METADATA_FILE,
            )?
        };
        // Without lore's record, the foreign forms are read for the history they record.
        let mut history = match own {
            Some(_) => None,
            None => super::gcc_foreign::history(name, &commit_md, &log, &parsed, now)?,
        };
        if let Some(h) = history.as_mut() {
            for (_, steps, _) in &mut h.commits {
                self.screen_steps(steps)?;
            }
            steps = h.commits.iter().flat_map(|c| c.1.clone()).collect();
        }
        let meta = match (own, &history) {
            (Some(text), _) => own_meta(bdir, name, &text)?,
            (None, Some(h)) => h.meta.clone(),
            (None, None) => meta_from_commit_md(name, &commit_md, now),
        };
        let meta: BranchMeta = {
            let value = serde_norway::to_value(&meta).map_err(yaml_error(BRANCH_FILE))?;
            serde_norway::from_value(self.screened_value("branch", value)?)
                .map_err(yaml_error(BRANCH_FILE))?
        };
        let own_roadmap = self
            .read_imported(&bdir.join(ROADMAP_FILE))?
            .map(|r| self.screened("roadmap", &r))
            .transpose()?;
        if let Some(h) = history.as_mut() {
            h.meta = meta.clone();
        }
        let files = BranchFiles {
            roadmap: own_roadmap.unwrap_or_else(|| roadmap.to_string()),
            commit_md,
            metadata,
            steps,
        };
        Ok((meta, files, history))
    }
}
