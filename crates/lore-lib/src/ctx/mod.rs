//! The context controller: an agent's working context as a versioned workspace of context
//! branches, each a commit chain under `refs/lore/ctx/<branch>`.
//!
//! ```text
//! refs/lore/ctx/<branch> ─► commit ─► tree
//!   main.md            the roadmap: goals, milestones, to-do
//!   commit.md          one entry per commit: branch purpose, previous summary, contribution
//!   branch.yaml        name, purpose, parent, latest summary, counters, the latest entry
//!   metadata.yaml      addressable segments (file structure, env config, dependencies, …)
//!   log/NNNNNN.jsonl   the steps each commit (or merge) added, one JSON step per line
//! <git common dir>/lore/ctx/HEAD                 the current branch (per clone)
//! <git common dir>/lore/ctx/journal/<b>.jsonl    uncommitted steps (per clone, durable)
//! ```
//!
//! Every change is one git commit moved by compare-and-swap ([`Store::transact_ref`]); each
//! records the code HEAD of its moment (`Lore-Code-Head`). A merge is a two-parent commit.

pub mod gcc;
pub mod step;
pub mod view;

use std::path::PathBuf;

use git2::Oid;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::handle::WriteContext;
use crate::linefile::{Contents, LineFile};
use crate::model::to_millis;
use crate::secrets::{SecretPolicy, SecretReport};
use crate::store::{Edit, Message, RefWrite, Snapshot, Store, ref_target};

/// The uncommitted steps of one branch.
type Journal = LineFile<Step>;
use step::{NewStep, Step};

/// The prefix of context branch refs.
pub const CTX_REF_PREFIX: &str = "refs/lore/ctx/";
/// The roadmap file.
pub const ROADMAP_FILE: &str = "main.md";
/// The commit entries file.
pub const COMMIT_FILE: &str = "commit.md";
/// The branch record.
pub const BRANCH_FILE: &str = "branch.yaml";
/// The metadata file.
pub const METADATA_FILE: &str = "metadata.yaml";
/// The directory of committed log segments.
pub const LOG_DIR: &str = "log";
/// The longest progress summary composed without `--summary` (characters).
pub const SUMMARY_MAX_CHARS: usize = 600;
/// The branch `ctx init` creates.
pub const MAIN_BRANCH: &str = "main";

/// What made a context commit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    /// `ctx init`.
    Init,
    /// `ctx branch`.
    Branch,
    /// `ctx commit`.
    Commit,
    /// `ctx merge`.
    Merge,
    /// `ctx update` (the roadmap replaced).
    Update,
    /// `ctx metadata set`.
    Metadata,
    /// `ctx import`.
    Import,
}

impl EntryKind {
    /// The kind's name.
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::Init => "init",
            EntryKind::Branch => "branch",
            EntryKind::Commit => "commit",
            EntryKind::Merge => "merge",
            EntryKind::Update => "update",
            EntryKind::Metadata => "metadata",
            EntryKind::Import => "import",
        }
    }
}

/// The record of one context commit, kept in `branch.yaml` as `last` (older ones are in the
/// branch's history).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// What made it.
    pub kind: EntryKind,
    /// 1 for the branch's first commit, then counting.
    pub seq: u32,
    /// When.
    pub time: Timestamp,
    /// The code HEAD at that moment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_head: Option<String>,
    /// The branch's purpose.
    pub purpose: String,
    /// The summary before this commit.
    #[serde(default)]
    pub previous_summary: String,
    /// What this commit contributed.
    pub contribution: String,
    /// The summary after it.
    #[serde(default)]
    pub summary: String,
    /// How many steps it added to the log.
    #[serde(default)]
    pub steps: usize,
    /// The log segment it added, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment: Option<String>,
    /// The merged branch (merges only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<String>,
}

/// `branch.yaml`: a branch's identity and state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BranchMeta {
    /// The branch's name.
    pub name: String,
    /// Why it exists.
    pub purpose: String,
    /// The branch it was made from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// When it was made.
    pub created: Timestamp,
    /// The latest progress summary.
    #[serde(default)]
    pub summary: String,
    /// How many entries `commit.md` holds.
    #[serde(default)]
    pub commits: u32,
    /// How many log segments were written (names are numbered from 1).
    #[serde(default)]
    pub segments: u32,
    /// Branches merged into this one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged: Vec<String>,
    /// The latest commit's record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<Entry>,
}

/// Checks a context branch name: 1–64 of `A-Z a-z 0-9 . _ -`, starting with a letter or digit.
pub fn check_branch_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.as_bytes()[0].is_ascii_alphanumeric()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-')
        && !name.contains("..")
        && !name.ends_with(".lock")
        && !name.ends_with('.');
    if ok {
        Ok(())
    } else {
        Err(Error::Invalid {
            what: "context branch",
            value: name.to_string(),
            reason: "use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"
                .into(),
        })
    }
}

/// The ref of a context branch.
pub fn branch_ref(name: &str) -> String {
    format!("{CTX_REF_PREFIX}{name}")
}

fn yaml_error(context: &str) -> impl FnOnce(serde_norway::Error) -> Error + '_ {
    move |e| Error::Parse {
        context: context.to_string(),
        message: e.to_string(),
    }
}

fn to_yaml<T: Serialize>(value: &T, context: &str) -> Result<Vec<u8>> {
    Ok(serde_norway::to_string(value)
        .map_err(yaml_error(context))?
        .into_bytes())
}

fn text_of(snap: &Snapshot<'_>, path: &str) -> Result<String> {
    Ok(snap
        .read(path)?
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default())
}

/// Reads `branch.yaml` of a context commit.
pub fn read_meta(snap: &Snapshot<'_>) -> Result<Option<BranchMeta>> {
    match snap.read(BRANCH_FILE)? {
        Some(bytes) => Ok(Some(
            serde_norway::from_slice(&bytes).map_err(yaml_error(BRANCH_FILE))?,
        )),
        None => Ok(None),
    }
}

/// Reads a tree's log segments, in order.
pub fn read_segments(snap: &Snapshot<'_>) -> Result<Vec<Step>> {
    let mut steps = Vec::new();
    for (name, blob) in snap.files_in(LOG_DIR)? {
        steps.extend(parse_segment(&snap.blob(blob)?, &name)?);
    }
    Ok(steps)
}

fn parse_segment(bytes: &[u8], name: &str) -> Result<Vec<Step>> {
    let mut steps = Vec::new();
    for (n, line) in bytes.split(|b| *b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        steps.push(serde_json::from_slice(line).map_err(|e| Error::Parse {
            context: format!("{LOG_DIR}/{name} line {}", n + 1),
            message: e.to_string(),
        })?);
    }
    Ok(steps)
}

fn segment_bytes(steps: &[Step]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for step in steps {
        out.extend(serde_json::to_vec(step).map_err(|e| Error::Parse {
            context: "writing a log segment".into(),
            message: e.to_string(),
        })?);
        out.push(b'\n');
    }
    Ok(out)
}

fn segment_path(n: u32) -> String {
    format!("{LOG_DIR}/{n:06}.jsonl")
}

/// Splits text into sentences (at `.`, `!`, `?` followed by a space, and at line ends).
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut current = String::new();
        let chars: Vec<char> = line.chars().collect();
        for (i, c) in chars.iter().enumerate() {
            current.push(*c);
            let ends =
                matches!(c, '.' | '!' | '?') && chars.get(i + 1).is_none_or(|n| n.is_whitespace());
            if ends {
                let s = current.trim().to_string();
                if !s.is_empty() {
                    out.push(s);
                }
                current.clear();
            }
        }
        let s = current.trim().to_string();
        if !s.is_empty() {
            out.push(s);
        }
    }
    out
}

/// The progress summary after a commit when none is given: the newest sentences of the previous
/// summary followed by the contribution's, at most [`SUMMARY_MAX_CHARS`]; older sentences go
/// first, and a contribution longer than the bound is cut at a word.
pub fn compose_summary(previous: &str, contribution: &str) -> String {
    let mut kept: Vec<String> = Vec::new();
    let mut used = 0usize;
    let fits = |used: usize, s: &str| used + s.chars().count() < SUMMARY_MAX_CHARS;
    let contribution = sentences(contribution);
    let previous = sentences(previous);
    for s in contribution.iter().rev().chain(previous.iter().rev()) {
        if !fits(used, s) {
            if kept.is_empty() {
                // Even the newest sentence is too long: keep its beginning.
                let mut cut = String::new();
                for word in s.split_whitespace() {
                    if cut.chars().count() + word.chars().count() + 2 > SUMMARY_MAX_CHARS {
                        break;
                    }
                    if !cut.is_empty() {
                        cut.push(' ');
                    }
                    cut.push_str(word);
                }
                cut.push('…');
                kept.push(cut);
            }
            break;
        }
        used += s.chars().count() + 1;
        kept.push(s.clone());
    }
    kept.reverse();
    let last = kept.len().saturating_sub(1);
    for (i, s) in kept.iter_mut().enumerate() {
        // Sentences run together in the summary: end each one that lacks punctuation.
        if i < last && !s.ends_with(['.', '!', '?', '…', ':']) {
            s.push('.');
        }
    }
    kept.join(" ")
}

/// A step of a trajectory as retrieval sees it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TrajectoryStep {
    /// The step.
    pub step: Step,
    /// The branch it was read from.
    pub branch: String,
    /// Whether it is part of a commit yet.
    pub committed: bool,
}

/// The state `ctx status` reports.
#[derive(Clone, Debug, Serialize)]
pub struct Status {
    /// The branch.
    pub branch: String,
    /// Its record.
    pub meta: BranchMeta,
    /// Its tip.
    pub tip: String,
    /// Steps logged since the last commit.
    pub uncommitted: Vec<Step>,
    /// Journal lines that could not be read.
    pub damaged: usize,
    /// Committed steps.
    pub committed_steps: usize,
    /// The code HEAD now.
    pub code_head: Option<String>,
}

/// How to settle conflicting roadmap or metadata edits in a merge.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Resolution {
    /// Refuse the merge and report the conflicts.
    #[default]
    Refuse,
    /// Keep the current branch's side.
    Ours,
    /// Take the merged branch's side.
    Theirs,
    /// Use this roadmap (metadata conflicts still refuse).
    Roadmap(String),
}

/// What a merge did.
#[derive(Clone, Debug, Serialize)]
pub struct MergeOutcome {
    /// The branch merged into.
    pub into: String,
    /// The branch merged.
    pub from: String,
    /// The merge commit (none: nothing to merge).
    pub commit: Option<String>,
    /// Steps brought over.
    pub steps: usize,
    /// Conflicts settled by the resolution given.
    pub resolved: Vec<String>,
    /// The summary after the merge.
    pub summary: String,
    /// Uncommitted steps left on the merged branch (not merged).
    pub uncommitted_left: usize,
}

/// What a commit did.
#[derive(Clone, Debug, Serialize)]
pub struct CommitOutcome {
    /// The branch.
    pub branch: String,
    /// The new commit.
    pub commit: String,
    /// The entry written.
    pub entry: Entry,
}

/// One version of the roadmap (the blog's context document).
#[derive(Clone, Debug, Serialize)]
pub struct ContextVersion {
    /// 1 for the oldest.
    pub version: usize,
    /// The commit.
    pub commit: String,
    /// When.
    pub time: Timestamp,
    /// The commit's subject.
    pub message: String,
}

/// The context workspace of one repository.
pub struct Workspace<'s> {
    store: &'s Store,
    dir: PathBuf,
    secret_policy: std::cell::OnceCell<SecretPolicy>,
    secret_reports: std::cell::RefCell<Vec<SecretReport>>,
}

impl<'s> Workspace<'s> {
    /// The workspace of a store.
    pub fn new(store: &'s Store) -> Workspace<'s> {
        Workspace {
            dir: store.common_dir().join("lore").join("ctx"),
            store,
            secret_policy: std::cell::OnceCell::new(),
            secret_reports: Default::default(),
        }
    }

    /// Overrides the secret policy for this workspace's writes (else `git config lore.secrets`,
    /// else redact).
    pub fn with_secret_policy(self, policy: Option<SecretPolicy>) -> Self {
        if let Some(p) = policy {
            let _ = self.secret_policy.set(p);
        }
        self
    }

    /// What the secret scanner found and did in this workspace's writes so far (and forgets it).
    pub fn take_secret_reports(&self) -> Vec<SecretReport> {
        std::mem::take(&mut *self.secret_reports.borrow_mut())
    }

    /// A step's free-text fields (its text, the tool's arguments and result), screened in place.
    pub(crate) fn screen_step(
        &self,
        text: &mut Option<String>,
        arguments: &mut Option<String>,
        result: &mut Option<String>,
    ) -> Result<()> {
        for (field, value) in [("text", text), ("arguments", arguments), ("result", result)] {
            if let Some(v) = value.as_mut() {
                *v = self.screened(field, v)?;
            }
        }
        Ok(())
    }

    /// `text` as the secret policy lets it be stored (redacted, or refused under `block`); the
    /// scanner's report is kept for [`Workspace::take_secret_reports`].
    pub(crate) fn screened(&self, field: &str, text: &str) -> Result<String> {
        // Read from the repository's configuration once per workspace (one command or tool).
        let policy = match self.secret_policy.get() {
            Some(p) => *p,
            None => {
                let p = crate::secrets::configured_policy(self.store)?;
                *self.secret_policy.get_or_init(|| p)
            }
        };
        let mut text = text.to_string();
        if let Some(report) = crate::secrets::screen(&mut [(field, &mut text)], policy)? {
            self.secret_reports.borrow_mut().push(report);
        }
        Ok(text)
    }

    /// The store.
    pub fn store(&self) -> &Store {
        self.store
    }

    fn journal(&self, branch: &str) -> Journal {
        Journal::new(&self.dir.join("journal"), branch)
    }

    fn head_path(&self) -> PathBuf {
        self.dir.join("HEAD")
    }

    /// The current branch, if one is set and still exists.
    pub fn current(&self) -> Result<Option<String>> {
        let name = match std::fs::read_to_string(self.head_path()) {
            Ok(text) => text.trim().to_string(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io("reading the current context branch", e)),
        };
        if check_branch_name(&name).is_err() || self.tip(&name)?.is_none() {
            return Ok(None);
        }
        Ok(Some(name))
    }

    /// The branch to act on: the one named, else the current one, else `main` if it exists.
    pub fn resolve(&self, branch: Option<&str>) -> Result<String> {
        if let Some(b) = branch {
            check_branch_name(b)?;
            if self.tip(b)?.is_none() {
                return Err(self.unknown_branch(b));
            }
            return Ok(b.to_string());
        }
        if let Some(c) = self.current()? {
            return Ok(c);
        }
        if self.tip(MAIN_BRANCH)?.is_some() {
            return Ok(MAIN_BRANCH.to_string());
        }
        Err(Error::ContextNotFound(
            "no context workspace here; start one with `lore ctx init --goal \"…\"`".into(),
        ))
    }

    fn unknown_branch(&self, name: &str) -> Error {
        let known = self.branches().unwrap_or_default();
        Error::ContextNotFound(if known.is_empty() {
            format!(
                "no context branch {name:?}: there is no context workspace yet; run `lore ctx init`"
            )
        } else {
            format!(
                "no context branch {name:?} (branches: {})",
                known.join(", ")
            )
        })
    }

    fn set_current(&self, name: &str) -> Result<()> {
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| Error::io(format!("creating {}", self.dir.display()), e))?;
        let tmp = self.dir.join(format!("HEAD.{}.tmp", std::process::id()));
        std::fs::write(&tmp, format!("{name}\n"))
            .and_then(|()| std::fs::rename(&tmp, self.head_path()))
            .map_err(|e| Error::io("writing the current context branch", e))
    }

    /// A branch's tip.
    pub fn tip(&self, name: &str) -> Result<Option<Oid>> {
        ref_target(self.store.repo(), &branch_ref(name))
    }

    /// Every context branch, sorted.
    pub fn branches(&self) -> Result<Vec<String>> {
        let mut out = Vec::new();
        for r in self
            .store
            .repo()
            .references_glob(&format!("{CTX_REF_PREFIX}*"))?
        {
            let r = r?;
            if let Some(name) = r.name().ok().and_then(|n| n.strip_prefix(CTX_REF_PREFIX))
                && check_branch_name(name).is_ok()
            {
                out.push(name.to_string());
            }
        }
        out.sort();
        Ok(out)
    }

    /// A branch's record at its tip.
    pub fn meta(&self, name: &str) -> Result<BranchMeta> {
        let tip = self.tip(name)?.ok_or_else(|| self.unknown_branch(name))?;
        self.meta_at(tip)
    }

    fn meta_at(&self, commit: Oid) -> Result<BranchMeta> {
        let snap = self.store.snapshot(Some(commit))?;
        read_meta(&snap)?.ok_or_else(|| {
            Error::ContextNotFound(format!("commit {commit} is not a context commit"))
        })
    }

    fn code_head(&self) -> Option<String> {
        self.store.head_commit().map(|h| h.to_string())
    }

    fn message(
        &self,
        subject: String,
        body: Option<String>,
        kind: EntryKind,
        branch: &str,
        ctx: &WriteContext,
    ) -> Message {
        let mut trailers = vec![
            ("Lore-Action".to_string(), format!("ctx-{}", kind.as_str())),
            ("Lore-Ctx-Branch".to_string(), branch.to_string()),
        ];
        if let Some(h) = self.code_head() {
            trailers.push(("Lore-Code-Head".into(), h));
        }
        if let Some(a) = &ctx.agent {
            trailers.push(("Lore-Agent".into(), a.clone()));
        }
        if let Some(s) = &ctx.session {
            trailers.push(("Lore-Session".into(), s.clone()));
        }
        Message {
            subject,
            body,
            trailers,
        }
    }

    fn now(ctx: &WriteContext) -> Timestamp {
        to_millis(ctx.now.unwrap_or_else(Timestamp::now))
    }

    /// The record of a commit that changes neither the log nor the summary (metadata, update).
    fn side_entry(
        &self,
        meta: &BranchMeta,
        kind: EntryKind,
        contribution: &str,
        now: Timestamp,
    ) -> Entry {
        Entry {
            kind,
            seq: meta.commits,
            time: now,
            code_head: self.code_head(),
            purpose: meta.purpose.clone(),
            previous_summary: meta.summary.clone(),
            contribution: contribution.to_string(),
            summary: meta.summary.clone(),
            steps: 0,
            segment: None,
            merged: None,
        }
    }

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
                    "the context workspace already exists (branch main); see `lore ctx show`"
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
                    "context branch {name:?} already exists; `lore ctx switch {name}` to use it"
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
            Some(p) if p != name => Ok(self.journal(&p).read()?.items.len()),
            _ => Ok(0),
        }
    }

    /// `ctx log`: appends a step to the branch's journal; durable when this returns.
    pub fn log(&self, branch: Option<&str>, mut new: NewStep) -> Result<(String, Step)> {
        let branch = self.resolve(branch)?;
        self.screen_step(&mut new.text, &mut new.arguments, &mut new.result)?;
        let step = new.into_step()?;
        self.journal(&branch).append(&step)?;
        Ok((branch, step))
    }

    /// Uncommitted steps of a branch.
    pub fn uncommitted(&self, branch: &str) -> Result<Contents<Step>> {
        self.journal(branch).read()
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
        self.journal(&branch).drain(|journal| {
            let (entry, commit) = self.store.transact_ref(&refname, |snap| {
                let mut meta = read_meta(snap)?.ok_or_else(|| self.unknown_branch(&branch))?;
                // A crash between a commit and the journal's truncation leaves steps that are
                // already in the last segment; they are not committed twice.
                let already: Vec<String> = match meta.last.as_ref().and_then(|l| l.segment.clone())
                {
                    Some(seg) => match snap.read(&seg)? {
                        Some(b) => parse_segment(&b, &seg)?.into_iter().map(|s| s.id).collect(),
                        None => Vec::new(),
                    },
                    None => Vec::new(),
                };
                let steps: Vec<Step> = journal
                    .items
                    .iter()
                    .filter(|s| !already.contains(&s.id))
                    .cloned()
                    .collect();
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
                    kind: EntryKind::Commit,
                    seq: meta.commits,
                    time: now,
                    code_head: self.code_head(),
                    purpose: meta.purpose.clone(),
                    previous_summary: meta.summary.clone(),
                    contribution: contribution.to_string(),
                    summary: new_summary.clone(),
                    steps: steps.len(),
                    segment,
                    merged: None,
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
            Ok(CommitOutcome {
                branch: branch.clone(),
                commit: commit.map(|c| c.to_string()).unwrap_or_default(),
                entry,
            })
        })
    }

    /// `ctx merge`: merges `source` into the current (or given) branch as a two-parent commit.
    /// The roadmap and metadata are merged three-way; conflicting edits refuse the merge (with
    /// every conflict listed) unless a resolution is given. The source's log steps not yet in
    /// the target come over with their origin, and the summaries are combined.
    pub fn merge(
        &self,
        source: &str,
        into: Option<&str>,
        resolution: &Resolution,
        ctx: &WriteContext,
    ) -> Result<MergeOutcome> {
        let screened;
        let resolution = match resolution {
            Resolution::Roadmap(r) => {
                screened = Resolution::Roadmap(self.screened("roadmap", r)?);
                &screened
            }
            other => other,
        };
        let target = self.resolve(into)?;
        let source = self.resolve(Some(source))?;
        if source == target {
            return Err(Error::Invalid {
                what: "merge",
                value: source,
                reason: "a branch cannot be merged into itself".into(),
            });
        }
        let source_tip = self
            .tip(&source)?
            .ok_or_else(|| self.unknown_branch(&source))?;
        let source_snap = self.store.snapshot(Some(source_tip))?;
        let source_meta = read_meta(&source_snap)?
            .ok_or_else(|| Error::ContextNotFound(format!("{source} has no {BRANCH_FILE}")))?;
        let source_steps = read_segments(&source_snap)?;
        let source_roadmap = text_of(&source_snap, ROADMAP_FILE)?;
        let source_metadata = text_of(&source_snap, METADATA_FILE)?;
        let uncommitted_left = self.uncommitted(&source)?.items.len();
        let now = Self::now(ctx);
        let repo = self.store.repo();
        let ((summary, steps, resolved), commit) =
            self.store.transact_ref(&branch_ref(&target), |snap| {
                let tip = snap.commit().ok_or_else(|| self.unknown_branch(&target))?;
                if tip == source_tip || repo.graph_descendant_of(tip, source_tip)? {
                    return Ok((RefWrite::default(), (None, 0, Vec::new())));
                }
                let base = repo.merge_base(tip, source_tip).ok();
                let base_snap = self.store.snapshot(base)?;
                let mut meta = read_meta(snap)?.ok_or_else(|| self.unknown_branch(&target))?;
                let mut conflicts = Vec::new();
                let mut resolved = Vec::new();
                let roadmap = merge_roadmap(
                    &text_of(&base_snap, ROADMAP_FILE)?,
                    &text_of(snap, ROADMAP_FILE)?,
                    &source_roadmap,
                    resolution,
                    &mut conflicts,
                    &mut resolved,
                )?;
                let metadata = merge_metadata(
                    &text_of(&base_snap, METADATA_FILE)?,
                    &text_of(snap, METADATA_FILE)?,
                    &source_metadata,
                    resolution,
                    &mut conflicts,
                    &mut resolved,
                )?;
                if !conflicts.is_empty() {
                    return Err(Error::MergeConflict {
                        into: target.clone(),
                        from: source.clone(),
                        conflicts: conflicts.clone(),
                    });
                }
                let have: std::collections::HashSet<String> =
                    read_segments(snap)?.into_iter().map(|s| s.id).collect();
                let incoming: Vec<Step> = source_steps
                    .iter()
                    .filter(|s| !have.contains(&s.id))
                    .map(|s| {
                        let mut s = s.clone();
                        if s.origin.is_none() {
                            s.origin = Some(source.clone());
                        }
                        s
                    })
                    .collect();
                let mut edits = vec![
                    upsert(ROADMAP_FILE, roadmap.into_bytes()),
                    upsert(METADATA_FILE, metadata.into_bytes()),
                ];
                let segment = if incoming.is_empty() {
                    None
                } else {
                    meta.segments += 1;
                    let path = segment_path(meta.segments);
                    edits.push(upsert(&path, segment_bytes(&incoming)?));
                    Some(path)
                };
                let contribution = if source_meta.summary.is_empty() {
                    format!("Merged branch {source} ({}).", source_meta.purpose)
                } else {
                    format!(
                        "Merged branch {source} ({}): {}",
                        source_meta.purpose, source_meta.summary
                    )
                };
                meta.commits += 1;
                let new_summary = compose_summary(&meta.summary, &contribution);
                let entry = Entry {
                    kind: EntryKind::Merge,
                    seq: meta.commits,
                    time: now,
                    code_head: self.code_head(),
                    purpose: meta.purpose.clone(),
                    previous_summary: meta.summary.clone(),
                    contribution: contribution.clone(),
                    summary: new_summary.clone(),
                    steps: incoming.len(),
                    segment,
                    merged: Some(source.clone()),
                };
                let mut commit_md = text_of(snap, COMMIT_FILE)?;
                commit_md.push_str(&commit_md_entry(&target, Some(&commit_md), &entry));
                edits.push(upsert(COMMIT_FILE, commit_md.into_bytes()));
                meta.summary = new_summary.clone();
                if !meta.merged.contains(&source) {
                    meta.merged.push(source.clone());
                }
                meta.last = Some(entry);
                edits.push(upsert(BRANCH_FILE, to_yaml(&meta, BRANCH_FILE)?));
                let mut body = contribution.clone();
                if !resolved.is_empty() {
                    body.push_str("\n\nResolved conflicts:\n");
                    for r in &resolved {
                        body.push_str(&format!("- {r}\n"));
                    }
                }
                let message = self.message(
                    format!("ctx merge {source} into {target}"),
                    Some(body),
                    EntryKind::Merge,
                    &target,
                    ctx,
                );
                Ok((
                    RefWrite {
                        merge_parent: Some(source_tip),
                        ..RefWrite::on_tip(edits, message)
                    },
                    (Some(new_summary), incoming.len(), resolved.clone()),
                ))
            })?;
        let wrote = summary.is_some();
        let summary = match summary {
            Some(s) => s,
            None => self.meta(&target)?.summary,
        };
        Ok(MergeOutcome {
            into: target,
            from: source,
            commit: commit.filter(|_| wrote).map(|c| c.to_string()),
            steps,
            resolved,
            summary,
            uncommitted_left,
        })
    }

    /// The metadata of a branch, whole or one segment (`a.b` reaches into nested mappings).
    pub fn metadata_get(
        &self,
        branch: Option<&str>,
        segment: Option<&str>,
    ) -> Result<serde_norway::Value> {
        let branch = self.resolve(branch)?;
        let tip = self
            .tip(&branch)?
            .ok_or_else(|| self.unknown_branch(&branch))?;
        let value = parse_metadata(&text_of(&self.store.snapshot(Some(tip))?, METADATA_FILE)?)?;
        let Some(segment) = segment else {
            return Ok(value);
        };
        let mut current = &value;
        for part in segment.split('.') {
            current = current.get(part).ok_or_else(|| {
                let known: Vec<String> = value
                    .as_mapping()
                    .map(|m| {
                        m.keys()
                            .filter_map(|k| k.as_str().map(String::from))
                            .collect()
                    })
                    .unwrap_or_default();
                Error::ContextNotFound(format!(
                    "no metadata segment {segment:?} on {branch} (segments: {})",
                    if known.is_empty() {
                        "none yet".to_string()
                    } else {
                        known.join(", ")
                    }
                ))
            })?;
        }
        Ok(current.clone())
    }

    /// Sets (or with `None`, removes) a top-level metadata segment, as one commit.
    pub fn metadata_set(
        &self,
        branch: Option<&str>,
        segment: &str,
        value: Option<serde_norway::Value>,
        ctx: &WriteContext,
    ) -> Result<Oid> {
        let ok = !segment.is_empty()
            && segment.len() <= 64
            && segment
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !ok {
            return Err(Error::Invalid {
                what: "metadata segment",
                value: segment.to_string(),
                reason: "use 1-64 letters, digits, '_' or '-'".into(),
            });
        }
        let branch = self.resolve(branch)?;
        let now = Self::now(ctx);
        let (_, commit) = self.store.transact_ref(&branch_ref(&branch), |snap| {
            let mut meta = read_meta(snap)?.ok_or_else(|| self.unknown_branch(&branch))?;
            let mut doc = parse_metadata(&text_of(snap, METADATA_FILE)?)?;
            let map = doc.as_mapping_mut().ok_or_else(|| Error::Parse {
                context: METADATA_FILE.into(),
                message: "not a mapping".into(),
            })?;
            let key = serde_norway::Value::String(segment.to_string());
            let contribution = match &value {
                Some(v) => {
                    map.insert(key, v.clone());
                    format!("Set metadata segment {segment}.")
                }
                None => {
                    if map.remove(&key).is_none() {
                        return Err(Error::ContextNotFound(format!(
                            "no metadata segment {segment:?} on {branch}"
                        )));
                    }
                    format!("Removed metadata segment {segment}.")
                }
            };
            meta.last = Some(self.side_entry(&meta, EntryKind::Metadata, &contribution, now));
            let edits = vec![
                upsert(METADATA_FILE, to_yaml(&doc, METADATA_FILE)?),
                upsert(BRANCH_FILE, to_yaml(&meta, BRANCH_FILE)?),
            ];
            let message = self.message(
                format!("ctx metadata {branch}: {contribution}"),
                None,
                EntryKind::Metadata,
                &branch,
                ctx,
            );
            Ok((RefWrite::on_tip(edits, message), ()))
        })?;
        commit.ok_or_else(|| Error::ContextNotFound("metadata set wrote nothing".into()))
    }

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
            meta.last = Some(self.side_entry(&meta, EntryKind::Update, message, now));
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

    /// The branch's first-parent history, newest first.
    pub fn history(&self, branch: &str) -> Result<Vec<Oid>> {
        let tip = self
            .tip(branch)?
            .ok_or_else(|| self.unknown_branch(branch))?;
        let repo = self.store.repo();
        let mut out = Vec::new();
        let mut current = Some(tip);
        while let Some(c) = current {
            out.push(c);
            let commit = repo.find_commit(c)?;
            current = commit.parent_ids().next();
            // The first-parent chain of a branch reaches into the branch it was made from;
            // stop at this branch's first commit.
            let snap = self.store.snapshot(Some(c))?;
            if read_meta(&snap)?.is_none_or(|m| m.name != branch) {
                out.pop();
                break;
            }
        }
        Ok(out)
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
                    time: Timestamp::from_second(commit.time().seconds())
                        .unwrap_or(Timestamp::UNIX_EPOCH),
                    message: commit
                        .summary()
                        .ok()
                        .flatten()
                        .unwrap_or_default()
                        .to_string(),
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
            Error::ContextNotFound(format!(
                "no version {version:?} of the context ({} versions; `lore ctx history` lists them)",
                history.len()
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
        let steps = if all_branches {
            self.all_steps()?
        } else {
            let branch = self.resolve(branch)?;
            self.steps(&branch, true)?
        };
        let mut index =
            crate::trajectory::TrajectoryIndex::new(embedder, crate::trajectory::Params::default());
        index.extend(steps)?;
        let got = index.recall(query, budget, strategy)?;
        Ok((got, index.len()))
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

    /// Writes a branch wholesale (import): roadmap, commit entries, metadata, record and steps.
    fn write_branch(
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

/// A branch's files, as imported.
pub(crate) struct BranchFiles {
    pub(crate) roadmap: String,
    pub(crate) commit_md: String,
    pub(crate) metadata: String,
    pub(crate) steps: Vec<Step>,
}

/// Text a command cannot do without, trimmed; blank text is refused with `reason`.
fn required<'a>(value: &'a str, what: &'static str, reason: &str) -> Result<&'a str> {
    let value = value.trim();
    if value.is_empty() {
        return Err(Error::Invalid {
            what,
            value: String::new(),
            reason: reason.to_string(),
        });
    }
    Ok(value)
}

fn upsert(path: &str, content: Vec<u8>) -> Edit {
    Edit::Upsert {
        path: path.to_string(),
        content,
    }
}

fn normalize_doc(text: &str) -> String {
    let mut t = text.replace("\r\n", "\n");
    if !t.ends_with('\n') {
        t.push('\n');
    }
    t
}

/// A metadata value as given by a user: YAML, or (with `as_text`) a plain string.
pub fn metadata_value(raw: &str, as_text: bool) -> Result<serde_norway::Value> {
    if as_text {
        return Ok(serde_norway::Value::String(raw.to_string()));
    }
    serde_norway::from_str(raw).map_err(|e| Error::Parse {
        context: "the metadata value is not YAML (pass --text to store it as text)".into(),
        message: e.to_string(),
    })
}

fn parse_metadata(text: &str) -> Result<serde_norway::Value> {
    if text.trim().is_empty() {
        return Ok(serde_norway::Value::Mapping(serde_norway::Mapping::new()));
    }
    let value: serde_norway::Value =
        serde_norway::from_str(text).map_err(yaml_error(METADATA_FILE))?;
    match value {
        serde_norway::Value::Mapping(_) => Ok(value),
        serde_norway::Value::Null => Ok(serde_norway::Value::Mapping(serde_norway::Mapping::new())),
        _ => Err(Error::Parse {
            context: METADATA_FILE.into(),
            message: "metadata must be a mapping of segments".into(),
        }),
    }
}

/// One `commit.md` entry: the paper's three blocks under a heading.
pub fn commit_md_entry(branch: &str, existing: Option<&str>, entry: &Entry) -> String {
    let mut out = String::new();
    if existing.is_none_or(|e| e.trim().is_empty()) {
        out.push_str(&format!("# Commits — branch {branch}\n\n"));
    }
    let code = entry
        .code_head
        .as_deref()
        .map(|h| format!(" · code {}", &h[..h.len().min(12)]))
        .unwrap_or_default();
    out.push_str(&format!(
        "## {} {} · {}{code}\n\n### Branch purpose\n\n{}\n\n### Previous progress summary\n\n{}\n\n### This commit's contribution\n\n{}\n\n",
        entry.kind.as_str(),
        entry.seq,
        entry.time,
        entry.purpose,
        if entry.previous_summary.is_empty() {
            "(none yet)"
        } else {
            &entry.previous_summary
        },
        entry.contribution
    ));
    out
}

/// The merge when only one side changed (or both alike).
fn trivial_merge(base: &str, ours: &str, theirs: &str) -> Option<String> {
    if ours == theirs || base == theirs {
        Some(ours.to_string())
    } else if base == ours {
        Some(theirs.to_string())
    } else {
        None
    }
}

fn merge_roadmap(
    base: &str,
    ours: &str,
    theirs: &str,
    resolution: &Resolution,
    conflicts: &mut Vec<String>,
    resolved: &mut Vec<String>,
) -> Result<String> {
    if let Some(merged) = trivial_merge(base, ours, theirs) {
        return Ok(merged);
    }
    let mut b = git2::MergeFileInput::new();
    b.content(base.as_bytes()).path(ROADMAP_FILE);
    let mut o = git2::MergeFileInput::new();
    o.content(ours.as_bytes()).path(ROADMAP_FILE);
    let mut t = git2::MergeFileInput::new();
    t.content(theirs.as_bytes()).path(ROADMAP_FILE);
    let mut opts = git2::MergeFileOptions::new();
    opts.our_label("current").their_label("merged");
    let merged = git2::merge_file(&b, &o, &t, Some(&mut opts))?;
    let text = String::from_utf8_lossy(merged.content()).into_owned();
    if merged.is_automergeable() {
        return Ok(text);
    }
    match resolution {
        Resolution::Refuse => {
            for hunk in conflict_hunks(&text) {
                conflicts.push(format!("{ROADMAP_FILE}:\n{hunk}"));
            }
            Ok(text)
        }
        Resolution::Roadmap(r) => {
            resolved.push(format!("{ROADMAP_FILE}: replaced by the roadmap given"));
            Ok(normalize_doc(r))
        }
        Resolution::Ours | Resolution::Theirs => {
            let favor = if *resolution == Resolution::Ours {
                git2::FileFavor::Ours
            } else {
                git2::FileFavor::Theirs
            };
            opts.favor(favor);
            let merged = git2::merge_file(&b, &o, &t, Some(&mut opts))?;
            resolved.push(format!(
                "{ROADMAP_FILE}: conflicting lines taken from {}",
                if *resolution == Resolution::Ours {
                    "the current branch"
                } else {
                    "the merged branch"
                }
            ));
            Ok(String::from_utf8_lossy(merged.content()).into_owned())
        }
    }
}

/// The conflict regions of a merged file, markers included.
fn conflict_hunks(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if line.starts_with("<<<<<<<") {
            current = Some(String::new());
        }
        if let Some(c) = current.as_mut() {
            c.push_str(line);
            c.push('\n');
        }
        if line.starts_with(">>>>>>>")
            && let Some(c) = current.take()
        {
            out.push(c);
        }
    }
    out
}

fn merge_metadata(
    base: &str,
    ours: &str,
    theirs: &str,
    resolution: &Resolution,
    conflicts: &mut Vec<String>,
    resolved: &mut Vec<String>,
) -> Result<String> {
    if let Some(merged) = trivial_merge(base, ours, theirs) {
        return Ok(merged);
    }
    let base = parse_metadata(base)?;
    let ours_v = parse_metadata(ours)?;
    let theirs_v = parse_metadata(theirs)?;
    let empty = serde_norway::Mapping::new();
    let bm = base.as_mapping().unwrap_or(&empty);
    let om = ours_v.as_mapping().unwrap_or(&empty);
    let tm = theirs_v.as_mapping().unwrap_or(&empty);
    let mut out = om.clone();
    let mut keys: Vec<&serde_norway::Value> = om.keys().collect();
    keys.extend(tm.keys().filter(|k| !om.contains_key(*k)));
    keys.extend(
        bm.keys()
            .filter(|k| !om.contains_key(*k) && !tm.contains_key(*k)),
    );
    for key in keys {
        let (b, o, t) = (bm.get(key), om.get(key), tm.get(key));
        if o == t || b == t {
            continue;
        }
        if b == o {
            match t {
                Some(t) => {
                    out.insert(key.clone(), t.clone());
                }
                None => {
                    out.remove(key);
                }
            }
            continue;
        }
        let name = key.as_str().unwrap_or("?").to_string();
        match resolution {
            Resolution::Theirs => {
                match t {
                    Some(t) => {
                        out.insert(key.clone(), t.clone());
                    }
                    None => {
                        out.remove(key);
                    }
                }
                resolved.push(format!(
                    "{METADATA_FILE} segment {name}: taken from the merged branch"
                ));
            }
            Resolution::Ours => {
                resolved.push(format!(
                    "{METADATA_FILE} segment {name}: kept the current branch's"
                ));
            }
            _ => {
                let show = |v: Option<&serde_norway::Value>| match v {
                    Some(v) => serde_norway::to_string(v)
                        .unwrap_or_default()
                        .trim()
                        .to_string(),
                    None => "(removed)".into(),
                };
                conflicts.push(format!(
                    "{METADATA_FILE} segment {name}: current has {}, merged has {}",
                    show(o),
                    show(t)
                ));
            }
        }
    }
    to_yaml(&serde_norway::Value::Mapping(out), METADATA_FILE)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn composed_summaries_are_bounded_and_keep_the_newest_sentences() {
        let mut summary = String::new();
        for i in 0..100 {
            summary = compose_summary(&summary, &format!("Did thing number {i}. It worked."));
            assert!(summary.chars().count() <= SUMMARY_MAX_CHARS, "{summary}");
        }
        assert!(summary.ends_with("Did thing number 99. It worked."));
        assert!(!summary.contains("number 1."));
        let long = compose_summary("old.", &"word ".repeat(400));
        assert!(long.chars().count() <= SUMMARY_MAX_CHARS);
        assert!(long.ends_with('…'));
        assert_eq!(compose_summary("", "First."), "First.");
    }

    #[test]
    fn branch_names_are_checked() {
        for ok in ["main", "fix-db", "v1.2_x"] {
            check_branch_name(ok).unwrap();
        }
        for bad in ["", "-x", "a/b", "a..b", "x.lock", "a b", &"x".repeat(65)] {
            assert!(check_branch_name(bad).is_err(), "{bad}");
        }
    }
}
