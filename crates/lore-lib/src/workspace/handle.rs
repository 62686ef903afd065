//! The workspace handle: where a repository's context branches live, which one is current, and what
//! every operation shares (secret screening, warnings, commit messages, entries).

use std::cell::{OnceCell, RefCell};
use std::path::PathBuf;

use git2::Oid;
use jiff::Timestamp;

use super::files::read_meta;
use super::log_md::Step;
use super::{
    BranchMeta, CTX_REF_PREFIX, Entry, EntryKind, MAIN_BRANCH, branch_ref, check_branch_name,
};
use crate::error::{Error, Result};
use crate::linefile::LineFile;
use crate::model::to_millis;
use crate::secrets::{SecretPolicy, SecretReport};
use crate::store::WriteContext;
use crate::store::{Message, Store, ref_target};

/// The uncommitted steps of one branch.
pub(super) type Journal = LineFile<Step>;

/// The context workspace of one repository.
pub struct Workspace<'s> {
    pub(super) store: &'s Store,
    dir: PathBuf,
    secret_policy: OnceCell<SecretPolicy>,
    secret_reports: RefCell<Vec<SecretReport>>,
    warnings: RefCell<Vec<String>>,
}

impl<'s> Workspace<'s> {
    /// The workspace of a store.
    pub fn new(store: &'s Store) -> Workspace<'s> {
        Workspace {
            dir: store.common_dir().join("lore").join("ctx"),
            store,
            secret_policy: OnceCell::new(),
            secret_reports: RefCell::default(),
            warnings: RefCell::default(),
        }
    }

    /// Overrides the secret policy for this workspace's writes (else `git config lore.secrets`,
    /// else redact).
    pub fn with_secret_policy(mut self, policy: Option<SecretPolicy>) -> Self {
        if let Some(p) = policy {
            // Replaces a policy already read from the configuration by an earlier write.
            self.secret_policy = OnceCell::from(p);
        }
        self
    }

    /// What the secret scanner found and did in this workspace's writes so far (and forgets it).
    pub fn take_secret_reports(&self) -> Vec<SecretReport> {
        std::mem::take(&mut *self.secret_reports.borrow_mut())
    }

    /// What went wrong without stopping an operation since the last call (and forgets it): a
    /// current branch that no longer exists, journal lines that could not be read, a merge of
    /// branches that share no history, refs that are not context branches, imported files with
    /// invalid bytes. Front ends show them.
    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut *self.warnings.borrow_mut())
    }

    /// Records a warning (once: an operation that meets the same thing twice says it once).
    pub(super) fn warn(&self, message: String) {
        let mut warnings = self.warnings.borrow_mut();
        if !warnings.contains(&message) {
            warnings.push(message);
        }
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

    /// A step's names and labels (tool, subgoal, entities, files, agent, session), screened in
    /// place: a secret pasted as a tool name, an entity or a path-like word is still a secret. A
    /// file that held one is dropped (what is left of it names no file).
    pub(crate) fn screen_step_labels(
        &self,
        tool: &mut Option<String>,
        subgoal: &mut Option<String>,
        entities: &mut [String],
        files: &mut Vec<String>,
        agent: &mut Option<String>,
        session: &mut Option<String>,
    ) -> Result<()> {
        let mut kept = Vec::with_capacity(files.len());
        for file in files.drain(..) {
            let screened = self.screened("files", &file)?;
            if screened == file {
                kept.push(file);
            }
        }
        *files = kept;
        for (field, value) in [
            ("tool", tool),
            ("subgoal", subgoal),
            ("agent", agent),
            ("session", session),
        ] {
            if let Some(v) = value.as_mut() {
                *v = self.screened(field, v)?;
            }
        }
        for entity in entities {
            *entity = self.screened("entity", entity)?;
        }
        Ok(())
    }

    /// A YAML document (metadata, a branch's record) with every string in it screened; mapping
    /// keys and `name` fields (validated names) are left as they are.
    pub(crate) fn screened_value(
        &self,
        field: &str,
        value: serde_norway::Value,
    ) -> Result<serde_norway::Value> {
        use serde_norway::Value;
        Ok(match value {
            Value::String(s) => Value::String(self.screened(field, &s)?),
            Value::Sequence(items) => Value::Sequence(
                items
                    .into_iter()
                    .map(|v| self.screened_value(field, v))
                    .collect::<Result<_>>()?,
            ),
            Value::Mapping(map) => {
                let mut out = serde_norway::Mapping::new();
                for (k, v) in map {
                    let v = if k.as_str() == Some("name") {
                        v
                    } else {
                        self.screened_value(field, v)?
                    };
                    out.insert(k, v);
                }
                Value::Mapping(out)
            }
            Value::Tagged(tagged) => {
                let tagged = *tagged;
                Value::Tagged(Box::new(serde_norway::value::TaggedValue {
                    tag: tagged.tag,
                    value: self.screened_value(field, tagged.value)?,
                }))
            }
            other => other,
        })
    }

    /// `text` as the secret policy lets it be stored (redacted, or refused under `block`); the
    /// scanner's report is kept for [`Workspace::take_secret_reports`].
    pub(crate) fn screened(&self, field: &str, text: &str) -> Result<String> {
        // Read from the repository's configuration once per workspace (one command or tool).
        let policy = match self.secret_policy.get() {
            Some(p) => *p,
            None => {
                let p = self.store.secret_policy()?;
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

    pub(super) fn journal(&self, branch: &str) -> Journal {
        Journal::new(&self.dir.join("journal"), branch)
    }

    /// The derived, disposable file that keeps each branch's trajectory index between processes.
    pub(super) fn recall_index_path(&self) -> PathBuf {
        self.dir.join("trajectory.sqlite")
    }

    fn head_path(&self) -> PathBuf {
        self.dir.join("HEAD")
    }

    /// The current branch, if one is set and still exists (a set one that does not is a
    /// warning: operations fall back to `main`).
    pub fn current(&self) -> Result<Option<String>> {
        let name = match std::fs::read_to_string(self.head_path()) {
            Ok(text) => text.trim().to_string(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io("reading the current context branch", e)),
        };
        if check_branch_name(&name).is_err() {
            self.warn(format!(
                "{} names no valid context branch ({name:?}); ignored",
                self.head_path().display()
            ));
            return Ok(None);
        }
        if self.tip(&name)?.is_none() {
            self.warn(format!(
                "the current context branch {name:?} no longer exists; using main until another \
                 is switched to"
            ));
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
        Err(Error::NoContextWorkspace(String::new()))
    }

    pub(super) fn unknown_branch(&self, name: &str) -> Error {
        let known = match self.branches() {
            Ok(known) => known,
            Err(e) => {
                self.warn(format!("could not list the context branches: {e}"));
                Vec::new()
            }
        };
        if known.is_empty() {
            return Error::NoContextWorkspace(format!(" (so no branch {name:?})"));
        }
        Error::ContextNotFound(format!(
            "no context branch {name:?} (branches: {})",
            known.join(", ")
        ))
    }

    pub(super) fn set_current(&self, name: &str) -> Result<()> {
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
            let refname = String::from_utf8_lossy(r.name_bytes()).into_owned();
            match refname.strip_prefix(CTX_REF_PREFIX) {
                Some(name) if r.name().is_ok() && check_branch_name(name).is_ok() => {
                    out.push(name.to_string())
                }
                _ => self.warn(format!(
                    "{refname} is not a context branch (not a valid branch name); ignored"
                )),
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

    pub(super) fn meta_at(&self, commit: Oid) -> Result<BranchMeta> {
        let snap = self.store.snapshot(Some(commit))?;
        read_meta(&snap)?.ok_or_else(|| {
            Error::ContextNotFound(format!("commit {commit} is not a context commit"))
        })
    }

    pub(super) fn code_head(&self) -> Option<String> {
        self.store.head_commit().map(|h| h.to_string())
    }

    pub(super) fn message(
        &self,
        subject: String,
        body: Option<String>,
        kind: EntryKind,
        branch: &str,
        ctx: &WriteContext,
    ) -> Message {
        // Action first, then the branch and the code head, then who (less any secret).
        let mut trailers = ctx.trailers(&format!("ctx-{}", kind.as_str()), &[]);
        let mut at = 1;
        trailers.insert(at, ("Lore-Ctx-Branch".to_string(), branch.to_string()));
        if let Some(h) = self.code_head() {
            at += 1;
            trailers.insert(at, ("Lore-Code-Head".into(), h));
        }
        Message {
            subject,
            body,
            trailers,
        }
    }

    pub(super) fn now(ctx: &WriteContext) -> Timestamp {
        to_millis(ctx.now.unwrap_or_else(Timestamp::now))
    }

    /// The record of a commit on a branch whose record is `meta` (numbered `meta.commits`),
    /// taking the summary from `meta.summary` to `summary`; it adds no steps.
    pub(super) fn entry(
        &self,
        meta: &BranchMeta,
        kind: EntryKind,
        contribution: &str,
        summary: &str,
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
            summary: summary.to_string(),
            steps: 0,
            segment: None,
            merged: None,
        }
    }
}

/// Text a command cannot do without, trimmed; blank text is refused with `reason`.
pub(super) fn required<'a>(value: &'a str, what: &'static str, reason: &str) -> Result<&'a str> {
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
