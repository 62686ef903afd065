//! Moving memories in and out: import and export in JSONL, a markdown directory, or
//! git-notes-memory's notes layout. These name files on the machine that runs them, so they are
//! offered to people (CLI, web UI), not to remote agents.

use std::io::BufReader;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::memory::Filter;
use super::{Effect, Env, Operation, one_of};
use crate::error::{Error, Result};
use crate::index::SortBy;
use crate::interop;
use crate::memory::BatchReport;

/// The formats memories move in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Jsonl,
    Markdown,
    Notes,
}

fn format(value: &str) -> Result<Format> {
    one_of(
        "format",
        value,
        &[
            ("jsonl", Format::Jsonl),
            ("markdown", Format::Markdown),
            ("notes", Format::Notes),
        ],
    )
}

fn need<'a>(path: &'a Option<String>, what: &str) -> Result<&'a str> {
    path.as_deref()
        .filter(|p| !p.is_empty())
        .ok_or_else(|| Error::Invalid {
            what: "path",
            value: String::new(),
            reason: format!("give the {what}"),
        })
}

/// Import memories.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Import {
    /// jsonl, markdown (a directory of files with YAML front matter) or notes
    /// (git-notes-memory's refs/notes/mem/<namespace> in this repository).
    pub format: String,
    /// The file (jsonl) or directory (markdown); not used for notes.
    #[serde(default)]
    pub path: Option<String>,
    /// JSON lines given inline instead of a file (jsonl only).
    #[serde(default)]
    pub data: Option<String>,
    /// Overwrite memories whose id exists with other content (else they are skipped).
    #[serde(default)]
    pub replace: bool,
    /// Check and report without writing.
    #[serde(default)]
    pub dry_run: bool,
}

/// What an import did.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Imported {
    /// Records read.
    pub read: usize,
    /// What the write did.
    #[serde(flatten)]
    pub report: BatchReport,
    /// What was mapped or dropped on the way in.
    pub warnings: Vec<String>,
    /// Nothing was written.
    pub dry_run: bool,
}

impl Operation for Import {
    const NAME: &'static str = "import";
    const TITLE: &'static str = "Import memories";
    const DESCRIPTION: &'static str = "Import memories from JSONL, a markdown directory or \
        git-notes-memory notes, as one commit. Re-importing the same data changes nothing; a \
        memory whose id exists with other content is reported and skipped unless replace.";
    const EFFECT: Effect = Effect::Write { idempotent: true };
    type Output = Imported;

    fn run(self, env: &mut Env<'_>) -> Result<Imported> {
        let now = crate::model::to_millis(env.write.now.unwrap_or_else(jiff::Timestamp::now));
        let format = format(&self.format)?;
        env.progress.phase("reading", None);
        let mut converted = self.read(format, env, now)?;
        let read = converted.memories.len();
        if format == Format::Notes {
            same_as_stored_notes(env, &mut converted.memories)?;
        }
        // Records imported before (their id made from their content exists) are not written
        // again: one line says how many.
        let mut already = 0;
        if !converted.derived_ids.is_empty() && env.lore.store().tip()?.is_some() {
            let mut kept = Vec::with_capacity(converted.memories.len());
            for m in std::mem::take(&mut converted.memories) {
                let before = match converted.derived_ids.contains(&m.id) {
                    false => false,
                    true => match env.lore.get(m.id.as_str()) {
                        Ok(found) => found.id == m.id,
                        // Imported before and forgotten since: forgetting it was meant.
                        Err(Error::NotFound(_)) => env.lore.was_forgotten(&m.id)?,
                        Err(e) => return Err(e),
                    },
                };
                if before {
                    already += 1;
                } else {
                    kept.push(m);
                }
            }
            converted.memories = kept;
        }
        if already > 0 {
            converted.warnings.push(format!(
                "{already} record(s) without an id were imported before (same content): skipped"
            ));
        }
        // A purged memory does not come back by import, under its id or another.
        let store = env.lore.store();
        let records = crate::store::purged::purge_records(&store.snapshot(store.tip()?)?)?;
        let before = converted.memories.len();
        converted
            .memories
            .retain(|m| crate::store::purged::purged_match(&records, m).is_none());
        let refused = before - converted.memories.len();
        if refused > 0 {
            converted.warnings.push(format!(
                "{refused} record(s) are memories purged from this store (by id or the same text): skipped"
            ));
        }
        let mut report = if self.dry_run || converted.memories.is_empty() {
            BatchReport::default()
        } else {
            env.progress.phase("writing memories", Some(read as u64));
            let subject = format!("import {}", self.format);
            let write = env.write.clone();
            let report =
                env.lore
                    .write_batch(&converted.memories, &subject, self.replace, &write)?;
            env.progress.advance(read as u64);
            report
        };
        report.unchanged += already;
        Ok(Imported {
            read,
            report,
            // They quote the records' values: never a secret in what is shown.
            warnings: converted
                .warnings
                .iter()
                .map(|w| crate::secrets::scrubbed_message(w))
                .collect(),
            dry_run: self.dry_run,
        })
    }
}

impl Import {
    /// The records of the source, converted to memories.
    fn read(
        &self,
        format: Format,
        env: &mut Env<'_>,
        now: jiff::Timestamp,
    ) -> Result<interop::Converted> {
        Ok(match format {
            Format::Notes => interop::notes::import(env.lore.store(), now)?,
            Format::Markdown => {
                interop::markdown_dir::import(Path::new(need(&self.path, "directory")?), now)?
            }
            Format::Jsonl => match (&self.data, &self.path) {
                (Some(data), None) => {
                    interop::jsonl::import(&mut data.as_bytes(), "the data given", now)?
                }
                (None, Some(p)) => {
                    let file = std::fs::File::open(p).map_err(|e| Error::io(p.clone(), e))?;
                    interop::jsonl::import(&mut BufReader::new(file), p, now)?
                }
                _ => {
                    return Err(Error::Invalid {
                        what: "path",
                        value: String::new(),
                        reason: "give the file to import, or the data, not both".into(),
                    });
                }
            },
        })
    }
}

/// A note carries less than a memory file (its body framed as git-notes-memory frames it): a
/// memory read from a note that reads back exactly as the stored memory's own note is that
/// memory, unchanged, and is replaced here by the stored one (so the write sees no change).
fn same_as_stored_notes(env: &mut Env<'_>, memories: &mut [crate::Memory]) -> Result<()> {
    if env.lore.store().tip()?.is_none() {
        return Ok(());
    }
    for m in memories {
        match env.lore.get(m.id.as_str()) {
            Ok(stored) if stored.id == m.id && stored != *m => {
                if interop::notes::as_read_back(&stored)? == *m {
                    *m = stored;
                }
            }
            Ok(_) | Err(Error::NotFound(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Export memories.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Export {
    /// jsonl, markdown or notes.
    pub format: String,
    /// The file (jsonl; without one the data is returned) or directory (markdown); not used
    /// for notes.
    #[serde(default)]
    pub path: Option<String>,
    /// Which memories (default all).
    #[serde(default, flatten)]
    pub filter: Filter,
}

/// What an export did.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Exported {
    /// Memories exported.
    pub exported: usize,
    /// Where they went (a file, a directory, notes refs; none: returned as `data`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Keys that could not be exported, and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
    /// The JSON lines, when no file was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
}

impl Operation for Export {
    const NAME: &'static str = "export";
    const TITLE: &'static str = "Export memories";
    const DESCRIPTION: &'static str = "Export memories (all, or those matching the filters) \
        as JSONL, a markdown directory, or git-notes-memory notes.";
    const EFFECT: Effect = Effect::Write { idempotent: true };
    type Output = Exported;

    fn run(self, env: &mut Env<'_>) -> Result<Exported> {
        let format = format(&self.format)?;
        let filter = crate::index::ListFilter {
            sort: SortBy::CreatedAsc,
            ..self.filter.to_list_filter(env.lore)?
        };
        env.progress.phase("reading memories", None);
        let memories = env.lore.list(&filter)?;
        env.progress.phase("writing", Some(memories.len() as u64));
        let out = match format {
            Format::Jsonl => match self.path.as_deref().filter(|p| !p.is_empty()) {
                None => {
                    let mut data = Vec::new();
                    interop::jsonl::export(&memories, &mut data)?;
                    Exported {
                        exported: memories.len(),
                        target: None,
                        skipped: Vec::new(),
                        data: Some(String::from_utf8_lossy(&data).into_owned()),
                    }
                }
                Some(p) => {
                    let mut file = std::fs::File::create(p).map_err(|e| Error::io(p, e))?;
                    interop::jsonl::export(&memories, &mut file)?;
                    Exported {
                        exported: memories.len(),
                        target: Some(p.to_string()),
                        skipped: Vec::new(),
                        data: None,
                    }
                }
            },
            Format::Markdown => {
                let dir = need(&self.path, "directory to export to")?;
                let n = interop::markdown_dir::export(&memories, Path::new(dir))?;
                Exported {
                    exported: n,
                    target: Some(dir.to_string()),
                    skipped: Vec::new(),
                    data: None,
                }
            }
            Format::Notes => {
                let report = interop::notes::export(env.lore.store(), &memories)?;
                Exported {
                    exported: report.exported,
                    target: Some(report.refs.join(", ")),
                    skipped: report.skipped,
                    data: None,
                }
            }
        };
        env.progress.advance(memories.len() as u64);
        Ok(out)
    }
}
