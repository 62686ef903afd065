//! Moving memories in and out: import and export in JSONL, a markdown directory, or
//! git-notes-memory's notes layout. These name files on the machine that runs them, so they are
//! offered to people (CLI, web UI), not to remote agents.

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
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
    /// Records per commit (default [`IMPORT_BATCH`]): not offered to front ends.
    #[serde(skip)]
    pub batch: Option<usize>,
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

/// Records written per commit by an import: a large file is read, written and indexed this
/// many at a time, so memory stays bounded and the index is current when the import ends.
pub const IMPORT_BATCH: usize = 20_000;

/// Loose objects an import lets build up between its batches before it packs them: about
/// 800 MB on disk, about five batches' worth (each adds its blobs and the trees above them).
const IMPORT_LOOSE_MOST: u64 = 200_000;

impl Operation for Import {
    const NAME: &'static str = "import";
    const TITLE: &'static str = "Import memories";
    const DESCRIPTION: &'static str = "Import memories from JSONL, a markdown directory or \
        git-notes-memory notes, one commit per 20,000 records, the index kept current as it \
        goes. Re-importing the same data changes nothing; a memory whose id exists with other \
        content is reported and skipped unless replace.";
    const EFFECT: Effect = Effect::Write { idempotent: true };
    type Output = Imported;

    fn run(self, env: &mut Env<'_>) -> Result<Imported> {
        let now = crate::model::to_millis(env.write.now.unwrap_or_else(jiff::Timestamp::now));
        let format = format(&self.format)?;
        let mut out = Imported {
            read: 0,
            report: BatchReport::default(),
            warnings: Vec::new(),
            dry_run: self.dry_run,
        };
        env.progress.phase("reading", None);
        match format {
            Format::Notes => {
                let mut converted = interop::notes::import(env.lore.store(), now)?;
                same_as_stored_notes(env, &mut converted.memories)?;
                self.land(env, converted, &mut out)?;
            }
            Format::Markdown => {
                let dir = Path::new(need(&self.path, "directory")?);
                self.land(env, interop::markdown_dir::import(dir, now)?, &mut out)?;
            }
            Format::Jsonl => match (&self.data, &self.path) {
                (Some(data), None) => {
                    self.land_jsonl(env, &JsonlInput::Data(data), None, &mut out)?
                }
                (None, Some(p)) => {
                    let file = std::fs::File::open(p).map_err(|e| Error::io(p.clone(), e))?;
                    let len = file.metadata().ok().map(|m| m.len());
                    let input = JsonlInput::File { path: p, file };
                    self.land_jsonl(env, &input, len, &mut out)?
                }
                _ => {
                    return Err(Error::Invalid {
                        what: "path",
                        value: String::new(),
                        reason: "give the file to import, or the data, not both".into(),
                    });
                }
            },
        }
        if out.report.written + out.report.replaced > 0 {
            env.progress.phase("packing", None);
            env.lore.settle_after_import()?;
        }
        // They quote the records' values: never a secret in what is shown.
        out.warnings = out
            .warnings
            .iter()
            .map(|w| crate::secrets::scrubbed_message(w))
            .collect();
        Ok(out)
    }
}

impl Import {
    /// Reads JSON lines a batch at a time and lands each batch. Input of more than one batch
    /// is read twice: first every record is checked as the write would check it, so bad data
    /// refuses the whole import before anything is written, and each record's line and place
    /// in the memory tree are noted; then the records are written grouped by place
    /// ([`Import::land_by_place`]).
    fn land_jsonl(
        &self,
        env: &mut Env<'_>,
        input: &JsonlInput<'_>,
        len: Option<u64>,
        out: &mut Imported,
    ) -> Result<()> {
        let now = crate::model::to_millis(env.write.now.unwrap_or_else(jiff::Timestamp::now));
        let batch = self.batch.unwrap_or(IMPORT_BATCH).max(1);
        let source = input.name();
        let mut stream = input.open()?;
        let mut reader = interop::jsonl::Reader::new(&mut *stream, source);
        let first = reader.next_batch(now, batch)?;
        let more = first.is_some() && reader.next_batch(now, batch)?.is_some();
        if more && !self.dry_run {
            env.progress.phase("checking (bytes read)", len);
            let mut stream = input.open()?;
            let mut reader = interop::jsonl::Reader::new(&mut *stream, source);
            let mut places = Vec::new();
            let mut check_warnings = Vec::new();
            // Grouping keeps input order only within a batch: an input that names an id or a
            // path twice is written in input order, so which record wins stays as it was.
            let (mut ids, mut paths) = (HashSet::new(), HashSet::new());
            let mut distinct = true;
            while let Some(converted) = reader.next_batch(now, batch)? {
                env.lore.check_batch(&converted.memories)?;
                let lines = reader.lines_of(&converted);
                for (m, line) in converted.memories.iter().zip(lines) {
                    let path = crate::store::layout::path_of(m);
                    distinct = distinct
                        && ids.insert(hash_of(m.id.as_str()))
                        && paths.insert(hash_of(&path));
                    if distinct {
                        let dir = path.rsplit_once('/').map_or("", |(dir, _)| dir);
                        places.push(Place {
                            dir: hash_of(dir),
                            line,
                        });
                    }
                }
                check_warnings.extend(converted.warnings);
                env.progress.advance(reader.bytes_read());
            }
            if distinct {
                // Said once, here: the write converts the same lines again.
                out.warnings.append(&mut check_warnings);
                return self.land_by_place(env, input, places, batch, now, out);
            }
        }
        env.progress.phase("importing (bytes read)", len);
        let mut stream = input.open()?;
        let mut reader = interop::jsonl::Reader::new(&mut *stream, source);
        while let Some(converted) = reader.next_batch(now, batch)? {
            self.land(env, converted, out)?;
            self.pack_between_batches(env, out);
            env.progress.advance(reader.bytes_read());
        }
        Ok(())
    }

    /// Writes the records at `places` a batch at a time, grouped by the directory of the
    /// memory tree they land in (in input order within a batch). Each commit rewrites the tree
    /// of every directory it adds to: in input order, every batch of a large import adds to
    /// nearly every fan-out directory, so a million memories in 50 batches wrote each
    /// directory's tree 50 times (1.3 GB of trees in the packs, against 0.36 GB of memories);
    /// grouped, most directories are written once.
    fn land_by_place(
        &self,
        env: &mut Env<'_>,
        input: &JsonlInput<'_>,
        mut places: Vec<Place>,
        batch: usize,
        now: jiff::Timestamp,
        out: &mut Imported,
    ) -> Result<()> {
        places.sort_by_key(|p| (p.dir, p.line.offset));
        env.progress
            .phase("importing (records)", Some(places.len() as u64));
        let mut done = 0;
        for group in places.chunks_mut(batch) {
            group.sort_by_key(|p| p.line.offset);
            let lines = (group.iter())
                .map(|p| Ok((p.line.line, input.line(&p.line)?)))
                .collect::<Result<Vec<_>>>()?;
            let mut converted = interop::jsonl::convert_lines(&lines, input.name(), now);
            if converted.memories.len() != group.len() {
                // Lines that converted when checked no longer do: the file was rewritten.
                return Err(Error::Invalid {
                    what: "import input",
                    value: input.name().to_string(),
                    reason: "records checked before no longer read the same: the input changed during the import".into(),
                });
            }
            converted.warnings.clear();
            self.land(env, converted, out)?;
            self.pack_between_batches(env, out);
            done += group.len() as u64;
            env.progress.advance(done);
        }
        Ok(())
    }

    /// Packs loose objects between batches once there are more than [`IMPORT_LOOSE_MOST`]
    /// (batches of fewer than 1,000 memories leave theirs loose), so an import never holds them
    /// all loose; a failure is a warning.
    fn pack_between_batches(&self, env: &mut Env<'_>, out: &mut Imported) {
        if !self.dry_run
            && let Err(e) = env.lore.pack_if_over(IMPORT_LOOSE_MOST)
        {
            out.warnings
                .push(format!("packing loose objects failed: {e}"));
        }
    }

    /// Writes one batch of converted records as one commit (those imported before, purged
    /// ones, left out) and brings the index up to it; adds what happened to `out`.
    fn land(
        &self,
        env: &mut Env<'_>,
        mut converted: interop::Converted,
        out: &mut Imported,
    ) -> Result<()> {
        let read = converted.memories.len();
        // Records imported before (their id made from their content exists) are not written
        // again: one line says how many.
        let mut already = 0;
        if !converted.derived_ids.is_empty() && env.lore.store().tip()?.is_some() {
            // One indexed lookup per record and one snapshot for the batch.
            let derived: Vec<String> = (converted.memories.iter())
                .filter(|m| converted.derived_ids.contains(&m.id))
                .map(|m| m.id.to_string())
                .collect();
            let derived: Vec<&str> = derived.iter().map(String::as_str).collect();
            let mut skip: HashSet<String> = (env.lore.index()?.paths_of(&derived)?.into_iter())
                .map(|(id, _)| id)
                .collect();
            let absent: Vec<&str> = derived
                .iter()
                .copied()
                .filter(|id| !skip.contains(*id))
                .collect();
            // Imported before and forgotten since: forgetting it was meant.
            let forgotten = env.lore.forgotten_among(&absent)?;
            skip.extend(forgotten.into_iter().map(str::to_string));
            let before = converted.memories.len();
            converted.memories.retain(|m| !skip.contains(m.id.as_str()));
            already = before - converted.memories.len();
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
        if !self.dry_run && !converted.memories.is_empty() {
            let subject = format!("import {}", self.format);
            let write = env.write.clone();
            let how = crate::BatchWrite {
                collisions: if self.replace {
                    crate::Collisions::Replace
                } else {
                    crate::Collisions::Report
                },
                ..crate::BatchWrite::import(&subject)
            };
            let report = env.lore.write_batch(&converted.memories, &how, &write)?;
            // Indexed as it goes: the command after the import finds the index current.
            env.lore.index()?;
            out.report.absorb(report);
        }
        out.read += read;
        out.report.unchanged += already;
        out.warnings.append(&mut converted.warnings);
        Ok(())
    }
}

/// The JSON lines an import reads, read from the start or a line at a time by its place.
enum JsonlInput<'a> {
    /// Given inline.
    Data(&'a str),
    /// A file.
    File { path: &'a str, file: std::fs::File },
}

impl JsonlInput<'_> {
    /// What messages call it.
    fn name(&self) -> &str {
        match self {
            JsonlInput::Data(_) => "the data given",
            JsonlInput::File { path, .. } => path,
        }
    }

    /// The whole input from its start.
    fn open(&self) -> Result<Box<dyn BufRead + '_>> {
        match self {
            JsonlInput::Data(data) => Ok(Box::new(data.as_bytes())),
            // The file opened once: every pass reads the same file, even if another is
            // renamed into its place meanwhile.
            JsonlInput::File { path, file } => {
                let mut file = file;
                std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(0))
                    .map_err(|e| Error::io(path.to_string(), e))?;
                Ok(Box::new(BufReader::new(file)))
            }
        }
    }

    /// One line, by where an earlier read found it.
    fn line(&self, at: &interop::jsonl::LineSpan) -> Result<Vec<u8>> {
        let changed = || Error::Invalid {
            what: "import input",
            value: self.name().to_string(),
            reason: format!(
                "line {} is no longer where it was read: the input changed during the import",
                at.line
            ),
        };
        let len = usize::try_from(at.len).map_err(|_| changed())?;
        match self {
            JsonlInput::Data(data) => usize::try_from(at.offset)
                .ok()
                .and_then(|start| data.as_bytes().get(start..start.checked_add(len)?))
                .map(<[u8]>::to_vec)
                .ok_or_else(changed),
            JsonlInput::File { file, .. } => {
                let mut bytes = vec![0u8; len];
                std::os::unix::fs::FileExt::read_exact_at(file, &mut bytes, at.offset)
                    .map_err(|_| changed())?;
                Ok(bytes)
            }
        }
    }
}

/// Where a record of an import is: the directory of the memory tree it lands in (hashed) and
/// its line in the input.
struct Place {
    dir: u64,
    line: interop::jsonl::LineSpan,
}

/// A 64-bit key for a text (an id, a path, a directory): equal texts, equal keys (a rare
/// collision only groups two directories together, or writes an import in input order).
fn hash_of(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
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
