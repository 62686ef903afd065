//! Purge records: what stays of a purged memory (its id, where it lived, digests of its
//! versions — never its text), so a purge travels with `lore sync` and no write brings it back.
//!
//! A record sits at `.purged/<c0>/<c1>/<id>.yaml` on `refs/lore/memory`. Every memory write on
//! that ref passes [`refused_by_purge`]: a memory whose id was purged, or whose summary and body
//! are a purged version's, is refused ([`Error::Purged`]) whichever path it came by (remember,
//! import, an accepted suggestion, an unbundled lesson).

use git2::{ObjectType, Oid};
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::layout::{self, PathKind};
use super::{Edit, Snapshot};
use crate::error::{Error, Result};
use crate::model::{Memory, MemoryId};
use crate::record;

/// What stays of a purged memory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PurgeRecord {
    /// The purged memory's id.
    pub id: MemoryId,
    /// Every path a version of it lived at (its id path and, for a keyed memory, its key path).
    pub paths: Vec<String>,
    /// The git blob ids of the versions removed (digests of the files).
    #[serde(default)]
    pub blobs: Vec<String>,
    /// Digests of each version's summary and body ([`text_digest`]), so the same text written
    /// again under another id is refused too.
    #[serde(default)]
    pub texts: Vec<String>,
    /// When it was purged.
    pub purged: Timestamp,
    /// Who purged it (`Name <email>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
}

impl PurgeRecord {
    /// Parses a record file.
    pub fn parse(bytes: &[u8], path: &str) -> Result<PurgeRecord> {
        serde_norway::from_slice(bytes).map_err(|e| Error::Record {
            path: path.to_string(),
            message: e.to_string(),
        })
    }

    /// Renders the record as YAML.
    pub fn render(&self) -> Result<Vec<u8>> {
        serde_norway::to_string(self)
            .map(String::into_bytes)
            .map_err(|e| Error::Parse {
                context: format!("writing {}", layout::purge_path(&self.id)),
                message: e.to_string(),
            })
    }

    /// Whether a blob id is one of the versions this record removed.
    pub fn holds_blob(&self, blob: Oid) -> bool {
        let text = blob.to_string();
        self.blobs.contains(&text)
    }
}

/// The digest of a memory's text as a purge record keeps it: git's blob id of its trimmed
/// summary and body, so it names the text without holding it.
pub fn text_digest(memory: &Memory) -> String {
    let text = format!("{}\n\n{}", memory.summary.trim(), memory.body.trim());
    Oid::hash_object(ObjectType::Blob, text.as_bytes())
        .map(|o| o.to_string())
        .unwrap_or_default()
}

/// The purge record that refuses a memory (its id, or its text as a purged version had it).
pub fn purged_match<'a>(records: &'a [PurgeRecord], memory: &Memory) -> Option<&'a PurgeRecord> {
    if records.is_empty() {
        return None;
    }
    let digest = text_digest(memory);
    records
        .iter()
        .find(|r| r.id == memory.id || r.texts.contains(&digest))
}

/// Every purge record of a memory tree, sorted by id.
pub fn purge_records(snap: &Snapshot<'_>) -> Result<Vec<PurgeRecord>> {
    let mut out = Vec::new();
    for (c0, _) in snap.dirs_in(layout::PURGE_DIR)? {
        let dir0 = format!("{}/{c0}", layout::PURGE_DIR);
        for (c1, _) in snap.dirs_in(&dir0)? {
            let dir1 = format!("{dir0}/{c1}");
            for (name, blob) in snap.files_in(&dir1)? {
                let path = format!("{dir1}/{name}");
                if layout::classify(&path) == PathKind::Purge {
                    out.push(PurgeRecord::parse(&snap.blob(blob)?, &path)?);
                }
            }
        }
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(out)
}

/// Refuses edits that would bring a purged memory back: a memory file whose id has a purge
/// record on this tree, or whose text is a purged version's. Costs one tree lookup when the
/// store has no purge records.
pub(crate) fn refused_by_purge(snap: &Snapshot<'_>, edits: &[Edit]) -> Result<()> {
    let mut records: Option<Vec<PurgeRecord>> = None;
    for edit in edits {
        let Edit::Upsert { path, content } = edit else {
            continue;
        };
        if layout::classify(path) != PathKind::Memory {
            continue;
        }
        let records = match &records {
            Some(r) => r,
            None => {
                if snap.dirs_in(layout::PURGE_DIR)?.is_empty() {
                    return Ok(());
                }
                records.insert(purge_records(snap)?)
            }
        };
        let Some(memory) = std::str::from_utf8(content)
            .ok()
            .and_then(|t| record::parse(t, path).ok())
        else {
            continue;
        };
        if let Some(r) = purged_match(records, &memory) {
            return Err(Error::Purged {
                id: memory.id.to_string(),
                purged_id: r.id.to_string(),
            });
        }
    }
    Ok(())
}
