//! The CONTEXT views of the workspace (overview, branch window, one commit, the log, metadata)
//! as data, and their markdown rendering.

use git2::Oid;
use jiff::Timestamp;
use schemars::JsonSchema;
use serde::Serialize;

use super::files::{parse_segment, read_meta, text_of};
use super::log_md::Step;
use super::{BranchMeta, Entry, EntryKind, METADATA_FILE, ROADMAP_FILE, TrajectoryStep, Workspace};
use crate::error::{Error, Result};

/// A branch in the overview.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct BranchLine {
    /// Name.
    pub name: String,
    /// Whether it is the current branch.
    pub current: bool,
    /// Purpose.
    pub purpose: String,
    /// Latest summary.
    pub summary: String,
    /// Entries in `commit.md`.
    pub commits: u32,
    /// Steps logged but not committed.
    pub uncommitted: usize,
    /// When it last changed.
    pub updated: Option<Timestamp>,
}

/// `ctx show`: the roadmap and every branch with its latest summary.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Overview {
    /// The current branch.
    pub current: String,
    /// The current branch's roadmap.
    pub roadmap: String,
    /// Every branch.
    pub branches: Vec<BranchLine>,
}

/// One entry of a branch's history, with its commit.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct CommitLine {
    /// The commit.
    pub commit: String,
    /// The entry.
    pub entry: Entry,
}

/// `ctx show --branch B`: a window of K entries, newest first, from `offset`.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct BranchView {
    /// The branch's record.
    pub meta: BranchMeta,
    /// The entries in the window.
    pub entries: Vec<CommitLine>,
    /// How many newer entries were skipped.
    pub offset: usize,
    /// The window size.
    pub window: usize,
    /// How many entries the branch has.
    pub total: usize,
}

/// `ctx show --commit H`: everything one commit recorded.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct CommitDetail {
    /// The commit.
    pub commit: String,
    /// Its parents (two for a merge).
    pub parents: Vec<String>,
    /// The branch it belongs to.
    pub branch: String,
    /// The entry.
    pub entry: Option<Entry>,
    /// The roadmap at that commit.
    pub roadmap: String,
    /// The steps it added.
    pub steps: Vec<Step>,
    /// The metadata at that commit.
    pub metadata: String,
}

/// `ctx show --log`: a window of steps, newest first, from `offset`.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct LogView {
    /// The branch.
    pub branch: String,
    /// The steps in the window with their position (1 = oldest).
    pub steps: Vec<(usize, TrajectoryStep)>,
    /// How many newer steps were skipped.
    pub offset: usize,
    /// The window size.
    pub window: usize,
    /// How many steps the branch has (committed and not).
    pub total: usize,
}

/// `ctx show --metadata SEGMENT`.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct MetadataView {
    /// The branch.
    pub branch: String,
    /// The segment (none: all of it).
    pub segment: Option<String>,
    /// The value, as YAML.
    pub yaml: String,
}

fn is_entry(kind: EntryKind) -> bool {
    matches!(
        kind,
        EntryKind::Init
            | EntryKind::Branch
            | EntryKind::Commit
            | EntryKind::Merge
            | EntryKind::Import
    )
}

/// What CONTEXT should show (the `ctx show` options; all empty: the overview).
#[derive(Clone, Debug, Default)]
pub struct ShowRequest {
    /// A branch (default: the current one).
    pub branch: Option<String>,
    /// One commit, by id or revision.
    pub commit: Option<String>,
    /// The log of steps instead of commit entries.
    pub log: bool,
    /// Metadata: `Some("")` for all segments, `Some("a.b")` for one.
    pub metadata: Option<String>,
    /// How many entries (commits, or steps with `log`) to show.
    pub window: Option<usize>,
    /// How many of the newest to skip.
    pub offset: usize,
}

/// One CONTEXT view.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum View {
    /// The roadmap and every branch.
    Overview(Overview),
    /// A window of a branch's commit entries.
    Branch(BranchView),
    /// One commit.
    Commit(CommitDetail),
    /// A window of the log.
    Log(LogView),
    /// Metadata segments.
    Metadata(MetadataView),
}

impl View {
    /// The view as markdown.
    pub fn render(&self) -> String {
        match self {
            View::Overview(v) => v.render(),
            View::Branch(v) => v.render(),
            View::Commit(v) => v.render(),
            View::Log(v) => v.render(),
            View::Metadata(v) => v.render(),
        }
    }
}

impl Workspace<'_> {
    /// The view a request asks for: a commit, the log, metadata, a branch window, or (nothing
    /// asked) the overview. A log window defaults to 20 steps, a branch window to 1 commit.
    pub fn show(&self, r: &ShowRequest) -> Result<View> {
        let branch = r.branch.as_deref();
        Ok(if let Some(commit) = &r.commit {
            View::Commit(self.commit_detail(commit)?)
        } else if r.log {
            View::Log(self.log_view(branch, r.window.unwrap_or(20), r.offset)?)
        } else if let Some(segment) = &r.metadata {
            let segment = Some(segment.as_str()).filter(|s| !s.is_empty());
            View::Metadata(self.metadata_view(branch, segment)?)
        } else if branch.is_some() || r.window.is_some() || r.offset > 0 {
            View::Branch(self.branch_view(branch, r.window.unwrap_or(1), r.offset)?)
        } else {
            View::Overview(self.overview()?)
        })
    }

    /// The overview (CONTEXT).
    pub fn overview(&self) -> Result<Overview> {
        let current = self.resolve(None)?;
        let roadmap = self.read_context(Some(&current))?;
        let mut branches = Vec::new();
        for name in self.branches()? {
            let meta = self.meta(&name)?;
            branches.push(BranchLine {
                current: name == current,
                uncommitted: self.uncommitted(&name)?.items.len(),
                updated: meta.last.as_ref().map(|l| l.time),
                purpose: meta.purpose,
                summary: meta.summary,
                commits: meta.commits,
                name,
            });
        }
        Ok(Overview {
            current,
            roadmap,
            branches,
        })
    }

    /// A window of a branch's entries.
    pub fn branch_view(
        &self,
        branch: Option<&str>,
        window: usize,
        offset: usize,
    ) -> Result<BranchView> {
        let branch = self.resolve(branch)?;
        let meta = self.meta(&branch)?;
        let mut entries: Vec<CommitLine> = Vec::new();
        for c in self.history(&branch)? {
            let snap = self.store.snapshot(Some(c))?;
            if let Some(entry) = read_meta(&snap)?.and_then(|m| m.last)
                && is_entry(entry.kind)
                // A sync merge carries one side's latest entry: show each entry once.
                && !entries.iter().any(|e| {
                    e.entry.time == entry.time && e.entry.contribution == entry.contribution
                })
            {
                entries.push(CommitLine {
                    commit: c.to_string(),
                    entry,
                });
            }
        }
        let total = entries.len();
        let entries = entries
            .into_iter()
            .skip(offset)
            .take(window.max(1))
            .collect();
        Ok(BranchView {
            meta,
            entries,
            offset,
            window: window.max(1),
            total,
        })
    }

    /// One commit in full.
    pub fn commit_detail(&self, rev: &str) -> Result<CommitDetail> {
        let oid: Oid = self.find_commit(rev)?;
        let snap = self.store.snapshot(Some(oid))?;
        let meta = read_meta(&snap)?
            .ok_or_else(|| Error::ContextNotFound(format!("{rev} is not a context commit")))?;
        let commit = self.store.repo().find_commit(oid)?;
        let entry = meta.last.clone();
        let steps = match entry.as_ref().and_then(|e| e.segment.clone()) {
            Some(seg) => match snap.read(&seg)? {
                Some(bytes) => parse_segment(&bytes, &seg)?,
                None => Vec::new(),
            },
            None => Vec::new(),
        };
        Ok(CommitDetail {
            commit: oid.to_string(),
            parents: commit.parent_ids().map(|p| p.to_string()).collect(),
            branch: meta.name,
            entry,
            roadmap: text_of(&snap, ROADMAP_FILE)?,
            steps,
            metadata: text_of(&snap, METADATA_FILE)?,
        })
    }

    /// A window of a branch's log, newest first.
    pub fn log_view(&self, branch: Option<&str>, window: usize, offset: usize) -> Result<LogView> {
        let branch = self.resolve(branch)?;
        let steps = self.steps(&branch, true)?;
        let total = steps.len();
        let window = window.max(1);
        let shown = steps
            .into_iter()
            .enumerate()
            .rev()
            .skip(offset)
            .take(window)
            .map(|(i, s)| (i + 1, s))
            .collect();
        Ok(LogView {
            branch,
            steps: shown,
            offset,
            window,
            total,
        })
    }

    /// One metadata segment (or all).
    pub fn metadata_view(
        &self,
        branch: Option<&str>,
        segment: Option<&str>,
    ) -> Result<MetadataView> {
        let branch = self.resolve(branch)?;
        let value = self.metadata_get(Some(&branch), segment)?;
        let yaml = serde_norway::to_string(&value).map_err(|e| Error::Parse {
            context: METADATA_FILE.into(),
            message: e.to_string(),
        })?;
        Ok(MetadataView {
            branch,
            segment: segment.map(String::from),
            yaml,
        })
    }
}

fn short(id: &str) -> &str {
    crate::agent_text::prefix(id, 12)
}

fn or_none(text: &str) -> &str {
    if text.trim().is_empty() {
        "(none yet)"
    } else {
        text
    }
}

fn render_entry(out: &mut String, commit: &str, e: &Entry) {
    out.push_str(&format!(
        "### {} {} · {} · {}",
        e.kind.as_str(),
        e.seq,
        short(commit),
        e.time
    ));
    if let Some(h) = &e.code_head {
        out.push_str(&format!(" · code {}", short(h)));
    }
    out.push_str("\n\n");
    out.push_str(&format!(
        "**Branch purpose:** {}\n\n**Previous progress summary:** {}\n\n**This commit's contribution:** {}\n\n",
        e.purpose,
        or_none(&e.previous_summary),
        e.contribution
    ));
    if e.steps > 0 {
        out.push_str(&format!("Steps added: {}\n\n", e.steps));
    }
}

impl Overview {
    /// Markdown.
    pub fn render(&self) -> String {
        let mut out = format!("# Context (current branch: {})\n\n", self.current);
        out.push_str(self.roadmap.trim_end());
        out.push_str("\n\n## Branches\n\n");
        for b in &self.branches {
            out.push_str(&format!(
                "- **{}**{} — {} ({} commits{})\n  {}\n",
                b.name,
                if b.current { " (current)" } else { "" },
                b.purpose,
                b.commits,
                if b.uncommitted > 0 {
                    format!(", {} uncommitted steps", b.uncommitted)
                } else {
                    String::new()
                },
                or_none(&b.summary)
            ));
        }
        out
    }
}

impl BranchView {
    /// Markdown.
    pub fn render(&self) -> String {
        let m = &self.meta;
        let mut out = format!("# Branch {}\n\nPurpose: {}\n", m.name, m.purpose);
        if let Some(p) = &m.parent {
            out.push_str(&format!("Branched from: {p}\n"));
        }
        if !m.merged.is_empty() {
            out.push_str(&format!("Merged: {}\n", m.merged.join(", ")));
        }
        out.push_str(&format!("\nLatest summary: {}\n\n", or_none(&m.summary)));
        let end = self.offset + self.entries.len();
        out.push_str(&format!(
            "## Commits {}–{} of {} (newest first)\n\n",
            if self.entries.is_empty() {
                0
            } else {
                self.offset + 1
            },
            end,
            self.total
        ));
        for line in &self.entries {
            render_entry(&mut out, &line.commit, &line.entry);
        }
        if end < self.total {
            out.push_str(&format!("… {} older (--offset {end})\n", self.total - end));
        }
        out
    }
}

impl CommitDetail {
    /// Markdown.
    pub fn render(&self) -> String {
        let mut out = format!("# Commit {} on {}\n\n", self.commit, self.branch);
        if self.parents.len() > 1 {
            out.push_str(&format!(
                "Merge of: {}\n\n",
                self.parents
                    .iter()
                    .map(|p| short(p))
                    .collect::<Vec<_>>()
                    .join(" + ")
            ));
        }
        if let Some(e) = &self.entry {
            render_entry(&mut out, &self.commit, e);
            out.push_str(&format!("**Summary after:** {}\n\n", or_none(&e.summary)));
        }
        out.push_str("## Roadmap\n\n");
        out.push_str(self.roadmap.trim_end());
        out.push_str("\n\n");
        if !self.steps.is_empty() {
            out.push_str(&format!("## Steps added ({})\n\n", self.steps.len()));
            for s in &self.steps {
                out.push_str(&format!("- {}\n", s.compact()));
            }
            out.push('\n');
        }
        let meta = self.metadata.trim();
        if !meta.is_empty() && meta != "{}" {
            out.push_str("## Metadata\n\n```yaml\n");
            out.push_str(meta);
            out.push_str("\n```\n");
        }
        out
    }
}

impl LogView {
    /// Markdown.
    pub fn render(&self) -> String {
        let mut out = format!(
            "# Log of {} — {} of {} steps (newest first)\n\n",
            self.branch,
            self.steps.len(),
            self.total
        );
        for (n, s) in &self.steps {
            out.push_str(&format!(
                "{n}. {}{}\n",
                if s.committed { "" } else { "(uncommitted) " },
                s.step.compact()
            ));
        }
        let end = self.offset + self.steps.len();
        if end < self.total {
            out.push_str(&format!("… {} older (--offset {end})\n", self.total - end));
        }
        out
    }
}

impl MetadataView {
    /// Markdown.
    pub fn render(&self) -> String {
        format!(
            "# Metadata of {}{}\n\n```yaml\n{}\n```\n",
            self.branch,
            self.segment
                .as_ref()
                .map(|s| format!(" — {s}"))
                .unwrap_or_default(),
            self.yaml.trim_end()
        )
    }
}
