//! The derived SQLite index: BM25 postings over summary, body and tags, chunk vectors, and the
//! metadata filters and listings read.
//!
//! Git is the truth; this file is disposable. It records the memory tip it reflects and catches
//! up by diffing that tip's tree against the current one (only changed files are re-read).
//! Opening, creating and rebuilding the file is in `open.rs`: it never deletes the files another
//! process's reader holds. The catch-up itself is in `catch_up.rs`, hybrid search (BM25 and
//! vector candidates fused and collapsed) in `search.rs`.

mod best;
mod catch_up;
mod expand;
pub(crate) mod fts_terms;
pub mod mentions;
mod open;
pub(crate) mod postings;
mod postings_block;
pub(crate) mod postings_scores;
pub(crate) mod query;
pub(crate) mod query_stems;
pub mod rank;
#[cfg(test)]
mod recall_tests;
pub(crate) mod schema;
mod search;
mod sketch;
pub(crate) mod stored_memory;
mod tallies;
mod telling;
pub mod time_window;
mod upkeep;
pub mod vector_cache;
mod vector_changes;
mod vector_lists;
mod vector_load;
mod vector_search;
#[cfg(test)]
mod vector_tests;
pub mod vectors;

use std::path::{Path, PathBuf};

use std::cell::OnceCell;

use git2::Oid;
use rusqlite::{Connection, params};

use crate::embed::SharedEmbedder;
use crate::error::Result;
use crate::model::Memory;
use crate::progress::Silent;
use crate::store::Store;

pub(crate) use open::{copy_into_memory, is_write_refusal};
pub use open::{is_corruption, is_out_of_space, recorded_tip};
pub use query::{Hit, ListFilter, SortBy, is_stop_word, query_terms};
pub use rank::{Explain, Fusion, RankOptions};
use stored_memory::StoredMemory;
use vectors::VectorMatrix;

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
    /// `refs/lore/memory` is missing while the index was built from a commit of memories: that
    /// commit is kept under another ref (the index follows the missing ref, empty).
    MemoryRefMissing {
        /// The commit the index was last caught up to.
        commit: String,
        /// The ref that keeps it.
        kept_as: String,
    },
}

/// A memory file that could not be read as a memory.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
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
    /// Memories (re-)embedded because the embedder changed.
    pub reembedded: usize,
}

/// The open index.
pub struct Index {
    conn: Connection,
    path: PathBuf,
    embedder: Option<SharedEmbedder>,
    /// All chunk vectors, loaded on the first vector search and brought forward by each
    /// catch-up.
    vectors: OnceCell<VectorMatrix>,
    /// The vectors loaded from the table after a search found the cache file damaged.
    reloaded: OnceCell<VectorMatrix>,
    /// A matrix loaded before the latest catch-ups and the changes they made, applied (in one
    /// pass) by the next search: a write in a long-lived handle costs no pass over the matrix.
    held: std::cell::RefCell<Option<HeldMatrix>>,
    /// Held in memory because its file may not be written here: nothing is saved.
    read_only: bool,
    /// A cache grown to too many segments is left for [`Index::compact_vectors`] (run apart,
    /// so that no command waits for it) instead of being written again by the read that finds
    /// it; [`Index::take_wanted_upkeep`] then says so.
    defer_compaction: std::cell::Cell<bool>,
    /// A read found the cache grown to too many segments and left it (see `defer_compaction`).
    compaction_wanted: std::cell::Cell<bool>,
    /// The stamp of the vectors in `vectors`, or in `held` with its changes (see
    /// [`vector_cache`]).
    vectors_stamp: std::cell::Cell<u64>,
    /// This handle found the memory rows intact (or wrote them): later catch-ups skip the count.
    rows_verified: std::cell::Cell<bool>,
    /// Failures that lost nothing but should be heard (see [`Index::take_warnings`]).
    warnings: std::cell::RefCell<Vec<String>>,
    /// Chunks from which a search runs its vector side beside BM25 (see
    /// [`Index::set_side_by_side_from`]).
    side_by_side_from: std::cell::Cell<usize>,
}

/// A matrix and the catch-ups' changes not yet applied to it.
type HeldMatrix = (
    VectorMatrix,
    Vec<(vector_cache::Change, vector_cache::Added)>,
);

/// Where a store's index lives: under the shared git dir, never committed.
pub fn index_path(store: &Store) -> PathBuf {
    store.common_dir().join("lore").join("index.sqlite3")
}

impl Index {
    /// Sets the embedder whose vectors this index keeps (`None`: lexical only). The next
    /// catch-up re-embeds everything if the stored vectors came from another embedder.
    pub fn set_embedder(&mut self, embedder: Option<SharedEmbedder>) {
        self.embedder = embedder;
        self.vectors = OnceCell::new();
        self.reloaded = OnceCell::new();
        *self.held.get_mut() = None;
    }

    /// The embedder in use.
    pub fn embedder(&self) -> Option<&SharedEmbedder> {
        self.embedder.as_ref()
    }

    fn embedder_name(&self) -> String {
        self.embedder
            .as_ref()
            .map(|e| e.id().to_string())
            .unwrap_or_default()
    }

    /// Where the index file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The memory tip this index reflects.
    pub fn indexed_tip(&self) -> Result<Option<Oid>> {
        schema::read_tip(&self.conn)
    }

    /// Whether the index, as it is, may answer for its recorded tip without a catch-up: its
    /// vectors came from this embedder and its rows are intact.
    pub fn answers_for_its_tip(&self) -> Result<bool> {
        Ok(
            schema::read_meta(&self.conn, "embedder")?.unwrap_or_default() == self.embedder_name()
                && Index::rows_intact(&self.rows_verified, &self.conn)?,
        )
    }

    /// Brings the index up to the store's current tip.
    pub fn catch_up(&mut self, store: &Store) -> Result<CatchUp> {
        self.catch_up_with(store, &Silent)
    }

    /// Whether the memory rows are intact (see [`schema::rows_intact`]), counted once per handle:
    /// rows lost inside the file are noticed when it is opened, not paid for on every write.
    fn rows_intact(verified: &std::cell::Cell<bool>, conn: &Connection) -> Result<bool> {
        if verified.get() {
            return Ok(true);
        }
        let intact = schema::rows_intact(conn)?;
        verified.set(intact);
        Ok(intact)
    }

    /// Sets `stale` on hits whose memory `lore verify` found out of date.
    pub fn mark_stale(&self, hits: &mut [Hit]) -> Result<()> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT reason FROM stale WHERE id = ?1")?;
        for hit in hits {
            hit.stale = rusqlite::OptionalExtension::optional(
                stmt.query_row([hit.memory.id.as_str()], |r| r.get::<_, String>(0)),
            )?;
        }
        Ok(())
    }

    /// Records the outcome of checking a memory's citations (`None`: up to date).
    pub fn set_stale(&self, id: &str, blob: &str, reason: Option<&str>) -> Result<()> {
        match reason {
            Some(reason) => self.conn.execute(
                "INSERT OR REPLACE INTO stale (id, blob, reason, checked)
                 VALUES (?1, ?2, ?3, ?4)",
                params![id, blob, reason, jiff::Timestamp::now().as_millisecond()],
            )?,
            None => self
                .conn
                .execute("DELETE FROM stale WHERE id = ?1", params![id])?,
        };
        Ok(())
    }

    /// Memories in `namespace` whose text hashes like this one (the exact novelty check).
    pub fn same_content(&self, namespace: &str, summary: &str, body: &str) -> Result<Vec<Memory>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {} FROM memories m WHERE namespace = ?1 AND content = ?2",
            stored_memory::COLUMNS
        ))?;
        let hash = schema::content_hash(summary, body);
        let rows = stmt.query_map(params![namespace, hash], |r| StoredMemory::read(r, 0))?;
        let mut out = Vec::new();
        for r in rows {
            out.push(r?.decode()?);
        }
        Ok(out)
    }

    /// The memories in `namespace` most similar to `text` by vector (best chunk), best first,
    /// among those that share most of the text's telling words (see [`telling`]: `limit`, and
    /// every one tied for the best): a near-duplicate repeats its original's rare words, and
    /// reading only capped posting lists keeps the check cheap at any store size (no full
    /// vector scan, no common word scored). A text whose words do not tell its repeat apart
    /// (none held by few memories, or too many memories sharing the best) is compared with the
    /// `limit` best BM25 matches for its eight longest words instead.
    pub fn similar(&self, namespace: &str, text: &str, limit: usize) -> Result<Vec<(Memory, f32)>> {
        let Some(embedder) = &self.embedder else {
            return Ok(Vec::new());
        };
        let filter = ListFilter {
            namespace: Some(namespace.to_string()),
            limit: Some(limit),
            ..ListFilter::default()
        };
        let candidates = match telling::sharing_telling_words(&self.conn, text, &filter, limit)? {
            Ok(found) => found,
            Err(common) => {
                let longest: Vec<&str> = common.iter().take(8).map(String::as_str).collect();
                query::recall(&self.conn, &longest.join(" "), &filter)?
                    .into_iter()
                    .map(|hit| (hit.rowid, hit.memory))
                    .collect()
            }
        };
        if candidates.is_empty() {
            return Ok(Vec::new());
        }
        let q = embedder.embed(&[text])?.pop().expect("one vector per text");
        let probe = vectors::Probe::new(&q);
        let dims = embedder.id().dims;
        let mut stmt = self
            .conn
            .prepare_cached("SELECT vector FROM chunks WHERE memory = ?1")?;
        let mut out = Vec::with_capacity(candidates.len());
        for (rowid, memory) in candidates {
            let vectors = stmt.query_map([rowid], |r| r.get::<_, Vec<u8>>(0))?;
            let mut best = None::<f32>;
            for bytes in vectors {
                if let Some(cos) = vectors::stored_cosine(&bytes?, dims, &probe) {
                    best = Some(best.map_or(cos, |b: f32| b.max(cos)));
                }
            }
            if let Some(cos) = best {
                out.push((memory, cos));
            }
        }
        out.sort_by(|a, b| b.1.total_cmp(&a.1));
        Ok(out)
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

    /// Writes the index's file again without the room removed and rewritten rows left in it
    /// (see [`schema::pack`]): its size before and after, in bytes, or `None` when it could
    /// not be packed now (another process busy in it, no room for the copy).
    pub fn pack(&self) -> Result<Option<(u64, u64)>> {
        // The file and its write-ahead log (which holds what a checkpoint has not yet moved
        // into the file, and, until one does, the packed copy).
        let size = || {
            let len = |path: &Path| std::fs::metadata(path).map_or(0, |m| m.len());
            len(&self.path) + len(&open::sibling(&self.path, "-wal"))
        };
        let _ = self.conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);");
        let before = size();
        Ok(schema::pack(&self.conn)?.then(|| (before, size())))
    }

    /// Active memories that cite the file at `path` or name it in their text (exactly that
    /// path, as the repository names it), newest first, at most `limit`.
    pub fn mentioning(&self, path: &str, limit: usize) -> Result<Vec<Memory>> {
        let rows: Vec<StoredMemory> = self
            .conn
            .prepare_cached(&format!(
                "SELECT {} FROM mentions x JOIN memories m ON m.rowid = x.memory \
                 WHERE x.path = ?1 AND m.status = 'active' ORDER BY m.updated DESC LIMIT ?2",
                stored_memory::COLUMNS
            ))?
            .query_map(
                rusqlite::params![mentions::normalize(path), limit as i64],
                |r| StoredMemory::read(r, 0),
            )?
            .collect::<std::result::Result<_, _>>()?;
        rows.into_iter().map(StoredMemory::decode).collect()
    }

    /// Counts per namespace and status.
    pub fn counts(&self) -> Result<Vec<(String, String, u64)>> {
        tallies::counts(&self.conn)
    }

    /// Registered (non-built-in) namespaces.
    pub fn registered_namespaces(&self) -> Result<Vec<String>> {
        tallies::registered_namespaces(&self.conn)
    }

    /// Memory files that could not be read.
    pub fn invalid_files(&self) -> Result<Vec<InvalidFile>> {
        tallies::invalid_files(&self.conn)
    }

    /// How many memories are indexed.
    pub fn doc_count(&self) -> Result<i64> {
        schema::read_doc_count(&self.conn)
    }

    /// Every BM25 posting by memory path, sorted, and the postings' totals: for comparing two
    /// indexes.
    #[doc(hidden)]
    pub fn postings_fingerprint(&self) -> Result<(Vec<postings::Posting>, (i64, i64))> {
        postings::dump(&self.conn)
    }

    /// Every indexed row as `(path, blob, its other columns joined by NULs)`, sorted: for
    /// comparing two indexes.
    pub fn fingerprint(&self) -> Result<Vec<(String, String, String)>> {
        tallies::fingerprint(&self.conn)
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

/// Where the vector matrix of the index at `index` is cached for the next process (derived from
/// the index, stamped with the indexed tip and embedder; rewritten when they change).
pub fn vectors_cache_path(index: &Path) -> PathBuf {
    let mut p = index.as_os_str().to_owned();
    p.push(".vectors");
    PathBuf::from(p)
}

/// Writes `memories` (each with its path) into `index` directly, in one transaction, with the
/// postings and the count kept: the index's own tests' quick way to a large index.
#[cfg(test)]
fn insert_for_test(index: &mut Index, memories: impl IntoIterator<Item = (String, Memory)>) {
    let tx = index.conn.transaction().unwrap();
    let before = schema::read_doc_count(&tx).unwrap();
    let mut writer = schema::Writer::new(&tx).unwrap();
    for (path, m) in memories {
        writer.insert_memory(&path, Oid::ZERO_SHA1, &m).unwrap();
    }
    writer.finish().unwrap();
    let delta = writer.delta;
    drop(writer);
    schema::write_doc_count(&tx, before + delta).unwrap();
    tx.commit().unwrap();
}
