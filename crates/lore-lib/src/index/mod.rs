//! The derived SQLite index: FTS5/BM25 over summary, body and tags, plus metadata for filters.
//!
//! Git is the truth; this file is disposable. It records the memory tip it reflects and catches
//! up by diffing that tip's tree against the current one (only changed files are re-read). A
//! missing, outdated (schema) or corrupt index is deleted and rebuilt from the refs.

mod query;
mod schema;

use std::path::{Path, PathBuf};

use git2::Oid;
use rusqlite::{Connection, TransactionBehavior};

use crate::error::{Error, Result};
use crate::model::Memory;
use crate::record;
use crate::store::layout::{self, PathKind};
use crate::store::{FileChange, Store};

pub use query::{Hit, ListFilter, SortBy, query_terms};

/// Why the index was (re)built from scratch when it was opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IndexNotice {
    /// No index file existed.
    Created,
    /// The index existed but could not be used; it was deleted and rebuilt.
    Rebuilt {
        /// Why (schema change, corruption, …).
        reason: String,
    },
}

/// A memory file that could not be read as a memory.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct InvalidFile {
    /// Path in the memory tree.
    pub path: String,
    /// The id or key the path suggests.
    pub name: String,
    /// What is wrong.
    pub message: String,
}

/// What a catch-up did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CatchUp {
    /// Files added or changed.
    pub upserted: usize,
    /// Files removed.
    pub removed: usize,
    /// Whether it rebuilt everything (the recorded tip was unknown).
    pub full: bool,
    /// Whether the store had moved since the index was last caught up.
    pub moved: bool,
}

/// The open index.
pub struct Index {
    conn: Connection,
    path: PathBuf,
}

/// Where a store's index lives: under the shared git dir, never committed.
pub fn index_path(store: &Store) -> PathBuf {
    store.common_dir().join("lore").join("index.sqlite3")
}

impl Index {
    /// Opens the index at `path`, creating or rebuilding the file if needed. The returned
    /// notice says whether that happened; the caller then catches up from the store.
    pub fn open(path: &Path) -> Result<(Index, Option<IndexNotice>)> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
        }
        let existed = path.exists();
        match Self::try_open(path) {
            Ok(index) => Ok((index, (!existed).then_some(IndexNotice::Created))),
            Err(reason) => {
                remove_index_files(path)?;
                let index = Self::try_open(path).map_err(|r| Error::Parse {
                    context: format!("creating the index at {}", path.display()),
                    message: r,
                })?;
                Ok((index, Some(IndexNotice::Rebuilt { reason })))
            }
        }
    }

    fn try_open(path: &Path) -> std::result::Result<Index, String> {
        let conn = Connection::open(path).map_err(|e| e.to_string())?;
        schema::prepare(&conn)?;
        Ok(Index {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// Where the index file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Deletes the file and starts an empty index (used after a purge and by `reindex`).
    pub fn reset(self) -> Result<Index> {
        let path = self.path.clone();
        drop(self);
        remove_index_files(&path)?;
        Self::try_open(&path).map_err(|r| Error::Parse {
            context: format!("creating the index at {}", path.display()),
            message: r,
        })
    }

    /// The memory tip this index reflects.
    pub fn indexed_tip(&self) -> Result<Option<Oid>> {
        schema::read_tip(&self.conn)
    }

    /// Brings the index up to the store's current tip.
    pub fn catch_up(&mut self, store: &Store) -> Result<CatchUp> {
        let tip = store.tip()?;
        if self.indexed_tip()? == tip {
            return Ok(CatchUp::default());
        }
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        // Another process may have caught up while we waited for the write lock.
        let indexed = schema::read_tip(&tx)?;
        let tip = store.tip()?;
        if indexed == tip {
            return Ok(CatchUp::default());
        }
        let (changes, full) = match indexed {
            Some(old) if store.has_commit(old) => (store.diff(Some(old), tip)?, false),
            _ => {
                schema::clear(&tx)?;
                let files = store.files(tip)?;
                let changes = files
                    .into_iter()
                    .map(|f| FileChange {
                        path: f.path,
                        old: None,
                        new: Some(f.blob),
                    })
                    .collect();
                (changes, true)
            }
        };
        let mut report = CatchUp {
            full,
            moved: true,
            ..CatchUp::default()
        };
        let docs_before = if full {
            0
        } else {
            schema::read_doc_count(&tx)?
        };
        let delta = {
            let mut writer = schema::Writer::new(&tx)?;
            for change in &changes {
                match layout::classify(&change.path) {
                    PathKind::Memory => {
                        if change.old.is_some() {
                            writer.remove_memory(&change.path)?;
                        }
                        match change.new {
                            Some(blob) => {
                                let bytes = store.read_blob(blob)?;
                                let parsed = std::str::from_utf8(&bytes)
                                    .map_err(|e| Error::Record {
                                        path: change.path.clone(),
                                        message: format!("not UTF-8: {e}"),
                                    })
                                    .and_then(|text| record::parse(text, &change.path));
                                match parsed {
                                    Ok(memory) => {
                                        writer.insert_memory(&change.path, blob, &memory)?
                                    }
                                    Err(e) => writer.insert_invalid(&change.path, blob, &e)?,
                                }
                                report.upserted += 1;
                            }
                            None => report.removed += 1,
                        }
                    }
                    PathKind::NamespaceMarker(ns) => {
                        writer.set_namespace(&ns, change.new.is_some())?;
                    }
                    PathKind::StoreFile | PathKind::Other => {}
                }
            }
            writer.delta
        };
        schema::write_doc_count(&tx, docs_before + delta)?;
        schema::write_tip(&tx, tip)?;
        tx.commit()?;
        Ok(report)
    }

    /// Memories whose id starts with `prefix`, with their paths.
    pub fn find_by_id_prefix(&self, prefix: &str) -> Result<Vec<(String, Memory)>> {
        query::find_by_id_prefix(&self.conn, prefix)
    }

    /// Memories with this key (in any namespace, or the given one), with their paths.
    pub fn find_by_key(&self, namespace: Option<&str>, key: &str) -> Result<Vec<(String, Memory)>> {
        query::find_by_key(&self.conn, namespace, key)
    }

    /// Memories matching a filter.
    pub fn list(&self, filter: &ListFilter) -> Result<Vec<Memory>> {
        query::list(&self.conn, filter)
    }

    /// BM25-ranked memories for a free-text query.
    pub fn recall(&self, text: &str, filter: &ListFilter) -> Result<Vec<Hit>> {
        query::recall(&self.conn, text, filter)
    }

    /// Counts per namespace and status.
    pub fn counts(&self) -> Result<Vec<(String, String, u64)>> {
        query::counts(&self.conn)
    }

    /// Registered (non-built-in) namespaces.
    pub fn registered_namespaces(&self) -> Result<Vec<String>> {
        query::registered_namespaces(&self.conn)
    }

    /// Memory files that could not be read.
    pub fn invalid_files(&self) -> Result<Vec<InvalidFile>> {
        query::invalid_files(&self.conn)
    }

    /// How many memories are indexed.
    pub fn doc_count(&self) -> Result<i64> {
        schema::read_doc_count(&self.conn)
    }

    /// BM25 recall without the exact pruning shortcut (for tests that check the shortcut).
    #[doc(hidden)]
    pub fn recall_exhaustive(&self, text: &str, filter: &ListFilter) -> Result<Vec<Hit>> {
        query::recall_exhaustive(&self.conn, text, filter)
    }

    /// Every indexed row as `(path, blob, record JSON)`, sorted: for comparing two indexes.
    pub fn fingerprint(&self) -> Result<Vec<(String, String, String)>> {
        query::fingerprint(&self.conn)
    }

    /// Where each of these ids is indexed, as `(id, path)` (one indexed lookup per id).
    pub fn paths_of(&self, ids: &[&str]) -> Result<Vec<(String, String)>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT path FROM memories WHERE id = ?1")?;
        let mut out = Vec::new();
        for id in ids {
            let paths = stmt.query_map([id], |r| r.get::<_, String>(0))?;
            for path in paths {
                out.push((id.to_string(), path?));
            }
        }
        Ok(out)
    }
}

/// Whether an error means the index file is damaged (and should be rebuilt).
pub fn is_corruption(error: &Error) -> bool {
    match error {
        Error::Index(rusqlite::Error::SqliteFailure(e, _)) => matches!(
            e.code,
            rusqlite::ErrorCode::DatabaseCorrupt
                | rusqlite::ErrorCode::NotADatabase
                | rusqlite::ErrorCode::SystemIoFailure
                | rusqlite::ErrorCode::CannotOpen
        ),
        Error::Index(rusqlite::Error::InvalidColumnType(..))
        | Error::Index(rusqlite::Error::FromSqlConversionFailure(..)) => true,
        _ => false,
    }
}

fn remove_index_files(path: &Path) -> Result<()> {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(Error::io(
                    format!("removing {}", PathBuf::from(p).display()),
                    e,
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{MemoryId, Namespace, Status};

    /// A seeded generator (xorshift) so the test is reproducible.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        /// Zipf–Mandelbrot draw in 0..n (offset 20, as `lore bench`'s corpus): low indices are common, with a long tail.
        fn skewed(&mut self, n: usize) -> usize {
            let u = (self.next() % 1_000_000) as f64 / 1_000_000.0;
            let q = 20.0;
            (q * ((n as f64 + q) / q).powf(u) - q)
                .floor()
                .clamp(0.0, n as f64 - 1.0) as usize
        }
    }

    fn word(i: usize) -> String {
        const SYL: [&str; 8] = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo"];
        // Five syllables: 32,768 distinct words, enough for the 20,000-word vocabulary.
        (0..5).map(|k| SYL[(i >> (3 * k)) % 8]).collect()
    }

    #[test]
    fn pruned_recall_ranks_exactly_like_scoring_every_match() {
        let dir = tempfile::tempdir().unwrap();
        let (mut index, _) = Index::open(&dir.path().join("i.sqlite3")).unwrap();
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let now = jiff::Timestamp::from_second(1_800_000_000).unwrap();
        {
            let tx = index.conn.transaction().unwrap();
            let mut writer = schema::Writer::new(&tx).unwrap();
            for i in 0..3000 {
                let words: Vec<String> = (0..40).map(|_| word(rng.skewed(20_000))).collect();
                let m = Memory {
                    id: MemoryId::generate().unwrap(),
                    namespace: Namespace::parse("learnings").unwrap(),
                    key: None,
                    summary: words[..5].join(" "),
                    body: words[5..].join(" "),
                    tags: vec![word(rng.skewed(50))],
                    status: Status::Active,
                    created: now,
                    updated: jiff::Timestamp::from_second(1_800_000_000 + i % 7).unwrap(),
                    author: None,
                    agent: None,
                    session: None,
                    confidence: None,
                    anchor: None,
                    citations: Vec::new(),
                    relates_to: Vec::new(),
                    supersedes: None,
                    superseded_by: None,
                };
                writer
                    .insert_memory(&format!("learnings/{i}.md"), Oid::ZERO_SHA1, &m)
                    .unwrap();
            }
            let delta = writer.delta;
            drop(writer);
            schema::write_doc_count(&tx, delta).unwrap();
            tx.commit().unwrap();
        }
        assert_eq!(index.doc_count().unwrap(), 3000);
        let mut pruned_taken = 0;
        for _ in 0..300 {
            let n = 2 + (rng.next() % 3) as usize;
            let q: Vec<String> = (0..n).map(|_| word(rng.skewed(20_000))).collect();
            let q = q.join(" ");
            let filter = ListFilter::default();
            let fast = query::recall_tuned(&index.conn, &q, &filter, 0).unwrap();
            let slow = index.recall_exhaustive(&q, &filter).unwrap();
            assert_eq!(fast.len(), slow.len(), "{q}");
            for (a, b) in fast.iter().zip(&slow) {
                assert!(
                    (a.score - b.score).abs() < 1e-9,
                    "{q}: {} vs {}",
                    a.score,
                    b.score
                );
            }
            let ids = |h: &[Hit]| {
                h.iter()
                    .map(|h| (h.memory.id.to_string(), (h.score * 1e6).round() as i64))
                    .collect::<std::collections::BTreeSet<_>>()
            };
            // Same memories at the same scores (ties at equal scores may come in either order).
            let cut = slow.last().map(|h| h.score).unwrap_or(0.0);
            let strict = |h: &[Hit]| {
                ids(&h
                    .iter()
                    .filter(|x| x.score > cut + 1e-9)
                    .cloned()
                    .collect::<Vec<_>>())
            };
            assert_eq!(strict(&fast), strict(&slow), "{q}");
            if query::recall_pruned_applies(&index.conn, &q, 10).unwrap() {
                pruned_taken += 1;
            }
        }
        assert!(
            pruned_taken > 50,
            "the pruned path ran for only {pruned_taken} of 300 queries"
        );
    }
}
