//! Citations: pinning a cited file (and lines) to its blob, checking every citation against the
//! current files (`verify`), and reading cited or anchored files back (the `files` level).

use git2::{ErrorCode, Oid};
use serde::Serialize;

use super::Lore;
use crate::error::{Error, Result};
use crate::index::ListFilter;
use crate::model::{Citation, LineRange, Memory, check_relative_path};

/// A memory whose cited content changed.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct StaleMemory {
    /// The memory's id.
    pub id: String,
    /// Its summary.
    pub summary: String,
    /// What changed, per citation.
    pub reasons: Vec<String>,
}

/// What `verify` found.
#[derive(Clone, Debug, Default, Serialize, schemars::JsonSchema)]
pub struct VerifyReport {
    /// Memories with citations that were checked.
    pub checked: usize,
    /// Citations without a recorded blob (cannot be checked).
    pub unpinned: usize,
    /// Memories whose cited content changed.
    pub stale: Vec<StaleMemory>,
}

/// A cited or anchored file's content, for the `files` hydration level.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct FileContent {
    /// Path relative to the repository root.
    pub path: String,
    /// Where the content came from (`blob <id>`, `anchor <commit>`).
    pub source: String,
    /// The lines cited, if any.
    pub lines: Option<LineRange>,
    /// The text (possibly truncated), or none if unavailable.
    pub content: Option<String>,
    /// Whether `content` was cut to the size limit.
    pub truncated: bool,
    /// Why there is no content, if there is none.
    pub note: Option<String>,
}

/// Bounds for the `files` hydration level.
#[derive(Clone, Copy, Debug)]
pub struct FileLimits {
    /// At most this many files.
    pub max_files: usize,
    /// At most this many bytes per file.
    pub max_bytes: usize,
}

impl Default for FileLimits {
    fn default() -> Self {
        FileLimits {
            max_files: 10,
            max_bytes: 16 * 1024,
        }
    }
}

impl Lore {
    /// Makes a citation of a file in the work tree (path relative to the repository root),
    /// pinned to its current content's blob (written to the object store if it is new). A line
    /// range must lie within the file.
    pub fn cite(&self, path: &str, lines: Option<LineRange>) -> Result<Citation> {
        let path = check_relative_path(path)?;
        let repo = self.store.repo();
        let Some(workdir) = repo.workdir() else {
            return Err(Error::Invalid {
                what: "citation",
                value: path,
                reason: "this store has no work tree to cite files from".into(),
            });
        };
        let full = workdir.join(&path);
        let bytes = match std::fs::read(&full) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::Invalid {
                    what: "citation",
                    value: path,
                    reason: "no such file in the work tree".into(),
                });
            }
            Err(e) => return Err(Error::io(format!("reading {}", full.display()), e)),
        };
        if let Some(range) = lines {
            let count = String::from_utf8_lossy(&bytes).lines().count();
            if range.end as usize > count {
                return Err(Error::Invalid {
                    what: "citation",
                    value: format!("{path}:{range}"),
                    reason: format!(
                        "{path} has {count} line{}; cite lines within it",
                        if count == 1 { "" } else { "s" }
                    ),
                });
            }
        }
        let blob = repo.blob(&bytes)?;
        Ok(Citation {
            path,
            lines,
            blob: Some(blob.to_string()),
        })
    }

    /// Checks every memory's citations against the current files (the work tree, else `HEAD`):
    /// a memory whose cited lines no longer appear in the file, or whose cited file changed or
    /// is gone, is marked stale in the index (recall and context show it); one that matches
    /// again is cleared.
    pub fn verify(&mut self) -> Result<VerifyReport> {
        let all = self.list(&ListFilter::default())?;
        let mut report = VerifyReport::default();
        for m in all.iter().filter(|m| !m.citations.is_empty()) {
            report.checked += 1;
            let mut reasons = Vec::new();
            for c in &m.citations {
                let place = match &c.lines {
                    Some(l) => format!("{}:{l}", c.path),
                    None => c.path.clone(),
                };
                let Some(recorded) = c.blob.as_deref() else {
                    report.unpinned += 1;
                    continue;
                };
                let Ok(pinned) = Oid::from_str(recorded) else {
                    reasons.push(format!(
                        "{place}: the recorded blob {recorded:?} is no git id"
                    ));
                    continue;
                };
                let Some(current) = self.current_file(&c.path)? else {
                    reasons.push(format!("{} no longer exists", c.path));
                    continue;
                };
                let now = Oid::hash_object(git2::ObjectType::Blob, &current)?;
                if now == pinned {
                    continue;
                }
                let Some(lines) = &c.lines else {
                    reasons.push(format!("{place} changed"));
                    continue;
                };
                let old = match self.store.repo().find_blob(pinned) {
                    Ok(old) => String::from_utf8_lossy(old.content()).into_owned(),
                    // The cited version was pruned: it can no longer be compared.
                    Err(e) if e.code() == ErrorCode::NotFound => {
                        reasons.push(format!("{place} changed"));
                        continue;
                    }
                    Err(e) => return Err(e.into()),
                };
                let cited: Vec<&str> = old
                    .lines()
                    .skip(lines.start.saturating_sub(1) as usize)
                    .take((lines.end + 1 - lines.start) as usize)
                    .collect();
                let new = String::from_utf8_lossy(&current).into_owned();
                let new_lines: Vec<&str> = new.lines().collect();
                let still_there = !cited.is_empty()
                    && new_lines
                        .windows(cited.len())
                        .any(|w| w == cited.as_slice());
                if !still_there {
                    reasons.push(format!("{place} changed"));
                }
            }
            let index = self.index()?;
            if reasons.is_empty() {
                index.set_stale(m.id.as_str(), "", None)?;
            } else {
                index.set_stale(m.id.as_str(), "", Some(&reasons.join("; ")))?;
                report.stale.push(StaleMemory {
                    id: m.id.to_string(),
                    summary: m.summary.clone(),
                    reasons,
                });
            }
        }
        Ok(report)
    }

    /// A file's current content: from the work tree, else from `HEAD` (`None`: absent, or no
    /// `HEAD` yet).
    fn current_file(&self, path: &str) -> Result<Option<Vec<u8>>> {
        let repo = self.store.repo();
        if let Some(workdir) = repo.workdir() {
            return match std::fs::read(workdir.join(path)) {
                Ok(bytes) => Ok(Some(bytes)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(Error::io(format!("reading {path}"), e)),
            };
        }
        let head = match repo.head() {
            Ok(head) => head.peel_to_tree()?,
            Err(e) if matches!(e.code(), ErrorCode::UnbornBranch | ErrorCode::NotFound) => {
                return Ok(None);
            }
            Err(e) => return Err(e.into()),
        };
        match head.get_path(std::path::Path::new(path)) {
            Ok(entry) => Ok(Some(repo.find_blob(entry.id())?.content().to_vec())),
            Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The `files` hydration level: cited files at their blobs, else the files the anchor
    /// commit changed, bounded in count and size.
    pub fn hydrate_files(&self, memory: &Memory, limits: FileLimits) -> Result<Vec<FileContent>> {
        if !memory.citations.is_empty() {
            return memory
                .citations
                .iter()
                .take(limits.max_files)
                .map(|c| self.cited_file(c, limits))
                .collect();
        }
        match memory.anchor.as_deref() {
            Some(anchor) => self.anchored_files(anchor, limits),
            None => Ok(Vec::new()),
        }
    }

    fn cited_file(&self, c: &Citation, limits: FileLimits) -> Result<FileContent> {
        let mut fc = FileContent {
            path: c.path.clone(),
            source: c
                .blob
                .as_ref()
                .map(|b| format!("blob {b}"))
                .unwrap_or_else(|| "no blob recorded".into()),
            lines: c.lines,
            content: None,
            truncated: false,
            note: None,
        };
        let Some(recorded) = c.blob.as_deref() else {
            fc.note = Some("the citation records no blob".into());
            return Ok(fc);
        };
        let Ok(oid) = Oid::from_str(recorded) else {
            fc.note = Some(format!("the recorded blob {recorded:?} is no git id"));
            return Ok(fc);
        };
        let blob = match self.store.repo().find_blob(oid) {
            Ok(blob) => blob,
            Err(e) if e.code() == ErrorCode::NotFound => {
                fc.note =
                    Some("the cited content is no longer in the object store (pruned?)".into());
                return Ok(fc);
            }
            Err(e) => return Err(e.into()),
        };
        let text = String::from_utf8_lossy(blob.content());
        let text = match c.lines {
            Some(r) => text
                .lines()
                .skip(r.start as usize - 1)
                .take((r.end - r.start + 1) as usize)
                .collect::<Vec<_>>()
                .join("\n"),
            None => text.into_owned(),
        };
        let (text, cut) = bounded(text, limits.max_bytes);
        fc.content = Some(text);
        fc.truncated = cut;
        Ok(fc)
    }

    fn anchored_files(&self, anchor: &str, limits: FileLimits) -> Result<Vec<FileContent>> {
        let repo = self.store.repo();
        let unavailable = |note: &str| FileContent {
            path: String::new(),
            source: format!("anchor {anchor}"),
            lines: None,
            content: None,
            truncated: false,
            note: Some(note.to_string()),
        };
        let Ok(oid) = Oid::from_str(anchor) else {
            return Ok(vec![unavailable("the anchor is no commit id")]);
        };
        let commit = match repo.find_commit(oid) {
            Ok(commit) => commit,
            Err(e) if e.code() == ErrorCode::NotFound => {
                return Ok(vec![unavailable(
                    "the anchor commit is not in this repository",
                )]);
            }
            Err(e) => return Err(e.into()),
        };
        let tree = commit.tree()?;
        let parent_tree = match commit.parent_count() {
            0 => None,
            _ => Some(commit.parent(0)?.tree()?),
        };
        let diff = repo.diff_tree_to_tree(parent_tree.as_ref(), Some(&tree), None)?;
        let mut out = Vec::new();
        for delta in diff.deltas().take(limits.max_files) {
            let file = delta.new_file();
            let path = file
                .path()
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default();
            let (content, truncated, note) = if !file.exists() {
                (None, false, Some("deleted by the anchor commit".into()))
            } else {
                match repo.find_blob(file.id()) {
                    Ok(b) if !b.is_binary() => {
                        let (t, cut) = bounded(
                            String::from_utf8_lossy(b.content()).into_owned(),
                            limits.max_bytes,
                        );
                        (Some(t), cut, None)
                    }
                    Ok(_) => (None, false, Some("binary file".into())),
                    Err(e) if e.code() == ErrorCode::NotFound => {
                        (None, false, Some("blob missing".into()))
                    }
                    Err(e) => return Err(e.into()),
                }
            };
            out.push(FileContent {
                path,
                source: format!("anchor {anchor}"),
                lines: None,
                content,
                truncated,
                note,
            });
        }
        Ok(out)
    }
}

/// Cuts text to at most `max` bytes on a character boundary; says whether it cut.
fn bounded(text: String, max: usize) -> (String, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    (text[..cut].to_string(), true)
}
