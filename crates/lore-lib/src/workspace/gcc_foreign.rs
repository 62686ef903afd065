//! Reading a `.GCC/` branch written by another implementation of the layout (contexa's forms,
//! the GCC paper's blocks): `commit.md` entries (`## Commit `id``, **Timestamp:**, **Branch
//! Purpose:**, **Previous Progress Summary:**, **This Commit's Contribution:**, blocks ended by
//! `---`), `log.md` observation–thought–action records (`### Step N — TIME`, **Observation:**,
//! **Thought:**, **Action:**; a `## Merged from `B` (TIME)` header marks the records a merge
//! copied in) and `metadata.yaml` (name, purpose, created_from, created_at, status,
//! merged_into, merged_at). A separator line inside a field was written `\---`; it reads back
//! as `---`.

use jiff::Timestamp;

use super::log_md::{NewStep, Step, StepKind};
use super::summary::compose_summary;
use super::{BranchMeta, Entry, EntryKind};
use crate::error::Result;
use crate::steps::{MAX_TEXT_CHARS, cut};

/// One entry of a foreign `commit.md`.
#[derive(Clone, Debug, PartialEq)]
pub struct ForeignCommit {
    /// The text of its block, as written (with its `---` line).
    pub block: String,
    /// When it was made.
    pub time: Option<Timestamp>,
    /// The branch purpose it records.
    pub purpose: String,
    /// The previous progress summary it records.
    pub previous_summary: String,
    /// Its contribution.
    pub contribution: String,
    /// The branch it merged, when it is a merge.
    pub merged: Option<String>,
}

/// One observation–thought–action record of a foreign `log.md`.
#[derive(Clone, Debug, PartialEq)]
pub struct ForeignRecord {
    /// Its steps (observation, thought, action; empty parts left out), at its own time.
    pub steps: Vec<Step>,
    /// When the merge that copied it in happened (`None`: logged on this branch).
    pub merged_at: Option<Timestamp>,
}

/// A foreign branch as lore's history: one commit per `commit.md` entry, each with the
/// records logged up to it, then (when records came after the last entry) an import commit.
#[derive(Clone, Debug)]
pub struct ForeignHistory {
    /// The branch's record before its first commit.
    pub meta: BranchMeta,
    /// Each commit: its entry, its steps, the `commit.md` as it stood after it.
    pub commits: Vec<(Entry, Vec<Step>, String)>,
}

/// Splits at separator lines (`---`), keeping each block's text with its separator.
fn blocks(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in text.split_inclusive('\n') {
        current.push_str(line);
        if line.trim_end() == "---" {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.trim().is_empty() {
        out.push(current);
    }
    out
}

/// The labelled fields of a block (`**Label:** value`, continued on the lines that follow).
fn fields(block: &str, labels: &[&str]) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    for line in block.lines() {
        if line.trim_end() == "---" || line.starts_with('#') {
            continue;
        }
        let labelled = labels.iter().enumerate().find_map(|(i, l)| {
            line.strip_prefix(&format!("**{l}:**"))
                .map(|rest| (i, rest.trim().to_string()))
        });
        match (labelled, out.last_mut()) {
            (Some(field), _) => out.push(field),
            (None, Some((_, value))) if !line.trim().is_empty() => {
                value.push('\n');
                value.push_str(line.trim());
            }
            _ => {}
        }
    }
    for (_, value) in &mut out {
        *value = value.replace("\n\\---\n", "\n---\n").trim().to_string();
    }
    out
}

fn field(found: &[(usize, String)], index: usize) -> String {
    found
        .iter()
        .find(|(i, _)| *i == index)
        .map(|(_, v)| v.clone())
        .unwrap_or_default()
}

fn backticked(text: &str) -> Option<String> {
    let start = text.find('`')? + 1;
    let len = text[start..].find('`')?;
    Some(text[start..start + len].to_string())
}

/// The entries of a foreign `commit.md`, in order; `None` when it holds none in this form.
pub fn commit_entries(text: &str) -> Option<Vec<ForeignCommit>> {
    const LABELS: [&str; 4] = [
        "Timestamp",
        "Branch Purpose",
        "Previous Progress Summary",
        "This Commit's Contribution",
    ];
    let mut out = Vec::new();
    for block in blocks(text) {
        if !block.lines().any(|l| l.starts_with("## Commit")) {
            continue;
        }
        let found = fields(&block, &LABELS);
        if found.is_empty() {
            // Headed sections, not labelled fields: another form.
            continue;
        }
        let contribution = field(&found, 3);
        let merged = contribution
            .strip_prefix("Merged branch ")
            .and_then(backticked);
        out.push(ForeignCommit {
            time: field(&found, 0).parse().ok(),
            purpose: field(&found, 1),
            previous_summary: field(&found, 2),
            contribution,
            merged,
            block,
        });
    }
    (!out.is_empty()).then_some(out)
}

/// The records of a foreign `log.md`; `None` when it holds none in this form. A record's time
/// that cannot be read is `now`.
pub fn ota_records(text: &str, now: Timestamp) -> Result<Option<Vec<ForeignRecord>>> {
    const LABELS: [&str; 3] = ["Observation", "Thought", "Action"];
    const KINDS: [StepKind; 3] = [StepKind::Observation, StepKind::Thought, StepKind::Action];
    let mut out = Vec::new();
    let mut merged_at = None;
    let mut origin: Option<String> = None;
    for block in blocks(text) {
        // A merge header ahead of the block's record: the records from here on were merged.
        for line in block.lines() {
            if let Some(rest) = line.strip_prefix("## Merged from ") {
                let time = rest
                    .rsplit_once('(')
                    .map(|(_, t)| t.trim_end_matches(')').trim());
                merged_at = Some(time.and_then(|t| t.parse().ok()).unwrap_or(now));
                origin = backticked(rest);
            }
        }
        let Some(header) = block.lines().find_map(|l| l.strip_prefix("### Step")) else {
            continue;
        };
        let time = header
            .split_once(" — ")
            .or_else(|| header.split_once('-'))
            .and_then(|(_, t)| t.trim().parse().ok())
            .unwrap_or(now);
        let found = fields(&block, &LABELS);
        let mut steps = Vec::new();
        for (i, kind) in KINDS.iter().enumerate() {
            let text = field(&found, i);
            if text.is_empty() {
                continue;
            }
            let mut step = NewStep {
                kind: Some(*kind),
                text: Some(cut(&text, MAX_TEXT_CHARS)),
                now: Some(now),
                ..NewStep::default()
            }
            .into_step()?;
            step.time = time;
            step.origin.clone_from(&origin);
            steps.push(step);
        }
        if !steps.is_empty() {
            out.push(ForeignRecord { steps, merged_at });
        }
    }
    Ok((!out.is_empty()).then_some(out))
}

/// The steps of each entry (the records made up to it), and after the last one those made later.
fn assign(records: Vec<ForeignRecord>, entries: &[ForeignCommit]) -> Vec<Vec<Step>> {
    let mut buckets: Vec<Vec<Step>> = vec![Vec::new(); entries.len() + 1];
    for record in records {
        let anchor = record.merged_at.unwrap_or(record.steps[0].time);
        let at = entries
            .iter()
            .position(|e| e.time.is_none_or(|t| t >= anchor))
            .unwrap_or(entries.len());
        buckets[at].extend(record.steps);
    }
    buckets
}

/// Lays a foreign branch out as lore's history (see [`ForeignHistory`]); `None` when its
/// `commit.md` and `log.md` hold nothing in the foreign forms. A record goes to the first
/// entry made at or after it (a merged record: after its merge).
pub fn history(
    name: &str,
    commit_md: &str,
    log: &str,
    metadata: &serde_norway::Value,
    now: Timestamp,
) -> Result<Option<ForeignHistory>> {
    let entries = commit_entries(commit_md).unwrap_or_default();
    let records = ota_records(log, now)?.unwrap_or_default();
    if entries.is_empty() && records.is_empty() {
        return Ok(None);
    }
    let fm = meta_fields(metadata);
    let purpose = fm
        .purpose
        .clone()
        .or_else(|| {
            entries
                .iter()
                .map(|e| e.purpose.clone())
                .find(|p| !p.is_empty())
        })
        .unwrap_or_else(|| format!("imported branch {name}"));
    let meta = BranchMeta {
        name: name.to_string(),
        purpose: purpose.clone(),
        parent: fm.created_from.filter(|p| p != name),
        created: fm.created_at.unwrap_or(now),
        summary: String::new(),
        commits: 0,
        segments: 0,
        merged: Vec::new(),
        last: None,
    };
    let buckets = assign(records, &entries);
    let commits = foreign_commits(&entries, buckets, &purpose, now, commit_md);
    Ok(Some(ForeignHistory { meta, commits }))
}

/// The commits a foreign history describes, each with its steps and the `commit.md` as it
/// stood after it: one per `commit.md` entry (its steps by time), then one more for steps
/// logged after the last entry. The last holds the file exactly as it came.
fn foreign_commits(
    entries: &[ForeignCommit],
    mut buckets: Vec<Vec<Step>>,
    purpose: &str,
    now: Timestamp,
    commit_md: &str,
) -> Vec<(Entry, Vec<Step>, String)> {
    // The first block carries the file's heading.
    let mut running = String::new();
    let mut summary = String::new();
    let mut commits = Vec::new();
    let trailing = buckets.pop().unwrap_or_default();
    let kinds = entries.iter().map(|e| (e.merged.is_some(), e));
    for (seq, ((merge, e), steps)) in (1u32..).zip(kinds.zip(buckets)) {
        running.push_str(&e.block);
        let new_summary = compose_summary(&summary, &e.contribution);
        let entry = Entry {
            kind: if merge {
                EntryKind::Merge
            } else {
                EntryKind::Commit
            },
            seq,
            time: e.time.unwrap_or(now),
            code_head: None,
            purpose: if e.purpose.is_empty() {
                purpose.to_string()
            } else {
                e.purpose.clone()
            },
            previous_summary: e.previous_summary.clone(),
            contribution: e.contribution.clone(),
            summary: new_summary.clone(),
            steps: steps.len(),
            segment: None,
            merged: e.merged.clone(),
        };
        summary = new_summary;
        commits.push((entry, steps, running.clone()));
    }
    if !trailing.is_empty() {
        let seq = u32::try_from(commits.len())
            .unwrap_or(u32::MAX)
            .saturating_add(1);
        let entry = Entry {
            kind: EntryKind::Import,
            seq,
            time: now,
            code_head: None,
            purpose: purpose.to_string(),
            previous_summary: summary.clone(),
            contribution: "Steps logged after the last commit".into(),
            summary: summary.clone(),
            steps: trailing.len(),
            segment: None,
            merged: None,
        };
        commits.push((entry, trailing, running.clone()));
    }
    // The last commit holds the file exactly as it came.
    if let Some(last) = commits.last_mut() {
        last.2 = commit_md.to_string();
    }
    commits
}

/// The fields of a foreign `metadata.yaml` lore keeps in a branch's record.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ForeignMeta {
    /// `purpose`.
    pub purpose: Option<String>,
    /// `created_from`.
    pub created_from: Option<String>,
    /// `created_at`.
    pub created_at: Option<Timestamp>,
    /// `merged_into`.
    pub merged_into: Option<String>,
}

/// Reads those fields (absent or empty ones are `None`).
pub fn meta_fields(metadata: &serde_norway::Value) -> ForeignMeta {
    let text = |key: &str| {
        metadata
            .get(key)
            .and_then(|v| v.as_str())
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
    };
    ForeignMeta {
        purpose: text("purpose"),
        created_from: text("created_from"),
        created_at: text("created_at").and_then(|t| t.parse().ok()),
        merged_into: text("merged_into"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_and_records_read_as_written() {
        let commit_md = "# Commit History — branch `main`\n\n## Commit `ab12`\n**Timestamp:** 2026-01-02T03:04:05.123456+00:00\n\n**Branch Purpose:** Ship it\n\n**Previous Progress Summary:** Initial state — no prior commits.\n\n**This Commit's Contribution:** Line one\nline two\n\\---\nafter\n\n---\n## Commit `cd34`\n**Timestamp:** 2026-01-02T04:00:00+00:00\n\n**Branch Purpose:** Ship it\n\n**Previous Progress Summary:** Merging branch `b` with purpose: p\n\n**This Commit's Contribution:** Merged branch `b` (1 commits). Contributions: x\n\n---\n";
        let entries = commit_entries(commit_md).unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].contribution, "Line one\nline two\n---\nafter");
        assert_eq!(entries[0].purpose, "Ship it");
        assert_eq!(
            entries[0].time.unwrap().to_string(),
            "2026-01-02T03:04:05.123456Z"
        );
        assert_eq!(entries[1].merged.as_deref(), Some("b"));
        assert_eq!(
            entries.iter().map(|e| e.block.as_str()).collect::<String>(),
            commit_md
        );
        assert!(commit_entries("# Commits\n\n## commit 1 · 2026\n").is_none());
        let headed =
            "## Commit 1\n### Branch Purpose\nBuild it\n### This Commit's Contribution\nx\n";
        assert!(commit_entries(headed).is_none());

        let now = Timestamp::now();
        let log = "# OTA Log — branch `main`\n\n### Step 1 — 2026-01-02T03:00:00+00:00\n**Observation:** slow\n\n**Thought:** N+1\n\n**Action:** batch\n\n---\n\n## Merged from `b` (2026-01-02T03:30:00+00:00)\n\n### Step 1 — 2026-01-02T03:10:00+00:00\n**Observation:** fast\n\n**Thought:** \n\n**Action:** keep\n\n---\n";
        let records = ota_records(log, now).unwrap().unwrap();
        assert_eq!(records.len(), 2);
        assert_eq!(records[0].steps.len(), 3);
        assert_eq!(records[0].steps[0].kind, Some(StepKind::Observation));
        assert_eq!(records[0].steps[2].text.as_deref(), Some("batch"));
        assert_eq!(records[0].steps[1].time.to_string(), "2026-01-02T03:00:00Z");
        assert_eq!(records[0].merged_at, None);
        assert_eq!(records[1].steps.len(), 2, "an empty thought is left out");
        assert_eq!(
            records[1].merged_at.unwrap().to_string(),
            "2026-01-02T03:30:00Z"
        );
        assert!(
            ota_records("# Log\n\n## a step\ntext\n", now)
                .unwrap()
                .is_none()
        );
    }
}
