//! The derived SQLite index: FTS5/BM25 over summary, body and tags, plus metadata for filters.
//!
//! Git is the truth; this file is disposable. It records the memory tip it reflects and catches
//! up by diffing that tip's tree against the current one (only changed files are re-read).
//! Opening, creating and rebuilding the file is in `open.rs`: it never deletes the files another
//! process's reader holds.

pub mod mentions;
mod open;
mod postings;
mod query;
pub mod rank;
#[cfg(test)]
mod recall_tests;
mod schema;
mod sketch;
mod telling;
pub mod time_window;
mod upkeep;
pub mod vector_cache;
#[cfg(test)]
mod vector_tests;
pub mod vectors;

use std::path::{Path, PathBuf};

use std::cell::OnceCell;

use git2::Oid;
use rusqlite::{Connection, TransactionBehavior, params};

use crate::embed::{Embedder, SharedEmbedder};
use crate::error::{Error, Result};
use crate::model::Memory;
use crate::progress::{Progress, Silent, Throttle};
use crate::record;
use crate::store::layout::{self, PathKind};
use crate::store::{FileChange, Store};

pub(crate) use open::{copy_into_memory, is_write_refusal};
pub use open::{is_corruption, is_out_of_space, recorded_tip};
pub use query::{Hit, ListFilter, SortBy, is_stop_word, query_terms};
pub use rank::{Explain, Fusion, RankOptions};
use vectors::{Pending, VectorMatrix};

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
    /// The stamp of the vectors in `vectors`, or in `held` with its changes (see
    /// [`vector_cache`]).
    vectors_stamp: std::cell::Cell<u64>,
    /// This handle found the memory rows intact (or wrote them): later catch-ups skip the count.
    rows_verified: std::cell::Cell<bool>,
    /// Failures that lost nothing but should be heard (see [`Index::take_warnings`]).
    warnings: std::cell::RefCell<Vec<String>>,
}

/// A hybrid search's request.
struct Query<'a> {
    text: &'a str,
    filter: &'a ListFilter,
    options: &'a RankOptions,
    explain: bool,
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

/// A catch-up that indexed at least this many memories merges the full-text index's segments.
const MERGE_SEGMENTS_AFTER: usize = 1000;

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

    /// [`Index::catch_up`], reporting progress (files applied, memories embedded) to
    /// `progress`.
    pub fn catch_up_with(&mut self, store: &Store, progress: &dyn Progress) -> Result<CatchUp> {
        let tip = store.tip()?;
        let wanted = self.embedder_name();
        let embedder_matches = |conn: &Connection| -> Result<bool> {
            Ok(schema::read_meta(conn, "embedder")?.unwrap_or_default() == wanted)
        };
        if self.indexed_tip()? == tip
            && embedder_matches(&self.conn)?
            && Index::rows_intact(&self.rows_verified, &self.conn)?
        {
            // Another handle may have caught the shared file up since this one's matrix was
            // loaded: a matrix of another stamp is dropped (loaded again when searched).
            if (self.vectors.get().is_some() || self.held.get_mut().is_some())
                && vector_cache::read_stamp(&self.conn)? != self.vectors_stamp.get()
            {
                self.vectors = OnceCell::new();
                self.reloaded = OnceCell::new();
                *self.held.get_mut() = None;
            }
            return Ok(CatchUp::default());
        }
        // A matrix in memory is brought forward with the change instead of loaded again (one
        // whose components stay in the cache file is read again: only its small part is read).
        self.reloaded = OnceCell::new();
        let held: Option<HeldMatrix> = match self.vectors.take() {
            Some(m) if m.is_resident() => Some((m, Vec::new())),
            Some(_) => None,
            None => self.held.get_mut().take(),
        };
        let held_stamp = self.vectors_stamp.get();
        let embedder = self.embedder.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        // Another process may have caught up while we waited for the write lock.
        let indexed = schema::read_tip(&tx)?;
        let tip = store.tip()?;
        let same_embedder = embedder_matches(&tx)?;
        // Rows lost inside the file (the count kept beside them disagrees): rebuilt from git.
        let intact = Index::rows_intact(&self.rows_verified, &tx)?;
        if indexed == tip && same_embedder && intact {
            let current = vector_cache::read_stamp(&tx)? == held_stamp;
            drop(tx);
            *self.held.get_mut() = held.filter(|_| current);
            return Ok(CatchUp::default());
        }
        let (changes, full) = match indexed {
            _ if intact && indexed == tip => (Vec::new(), false),
            Some(old) if intact && store.has_commit(old) => (store.diff(Some(old), tip)?, false),
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
            moved: indexed != tip || !intact,
            ..CatchUp::default()
        };
        // Vectors of another embedder (or none) are dropped; all memories are embedded afresh
        // after the file changes are applied, so only new rows are embedded inline otherwise.
        let reembed = !same_embedder || full;
        if reembed {
            tx.execute("DELETE FROM chunks", [])?;
        }
        let mut pending = Pending::default();
        let docs_before = if full {
            0
        } else {
            schema::read_doc_count(&tx)?
        };
        let (delta, removed_rows, inserted_rows) = {
            let mut writer = schema::Writer::new(&tx)?;
            let mut shown =
                Throttle::new(progress, "indexing memory files", changes.len() as u64, 100);
            for (done, change) in changes.iter().enumerate() {
                shown.advance(done as u64 + 1);
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
                                        let rowid =
                                            writer.insert_memory(&change.path, blob, &memory)?;
                                        if let (Some(e), false) = (&embedder, reembed) {
                                            let text = vectors::embedding_text(&memory);
                                            pending.push(&tx, e.as_ref(), rowid, &text)?;
                                        }
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
                    PathKind::StoreFile
                    | PathKind::Tombstone
                    | PathKind::Conflict
                    | PathKind::Purge
                    | PathKind::Other => {}
                }
            }
            writer.finish()?;
            (writer.delta, writer.removed_rows, writer.inserted_rows)
        };
        if report.upserted >= MERGE_SEGMENTS_AFTER && report.upserted as i64 * 4 >= docs_before {
            // One large catch-up leaves the full-text index in many segments, and every later
            // query (and every new process) pays a seek per segment: merge them now. Only when
            // the change is large beside the index, so a run of batches (an import) merges a
            // bounded number of times; the import settles the index once at its end.
            tx.execute(
                "INSERT INTO memories_fts (memories_fts) VALUES ('optimize')",
                [],
            )?;
        }
        if let Some(e) = &embedder {
            pending.flush(&tx, e.as_ref())?;
            if reembed {
                report.reembedded = embed_all(&tx, e.as_ref(), progress)?;
            }
        }
        schema::write_meta(&tx, "embedder", &wanted)?;
        schema::write_doc_count(&tx, docs_before + delta)?;
        schema::write_tip(&tx, tip)?;
        // The vectors changed: a new stamp, and the cache extended by what changed (inside this
        // transaction, so no other catch-up appends meanwhile).
        let change = vector_cache::Change {
            parent: if reembed {
                0
            } else {
                vector_cache::read_stamp(&tx)?
            },
            stamp: vector_cache::new_stamp(&tx)?,
            removed: removed_rows,
            added: inserted_rows,
        };
        let held = held.filter(|_| change.parent != 0 && held_stamp == change.parent);
        if let Some(e) = &embedder
            && change.parent != 0
        {
            let dims = e.id().dims;
            let added = vector_cache::Added::read(&tx, &change.added, dims)?;
            if !self.read_only {
                vector_cache::append(
                    &vectors_cache_path(&self.path),
                    &change,
                    &added,
                    dims,
                    &wanted,
                )?;
            }
            tx.commit()?;
            if let Some((m, mut changes)) = held {
                self.vectors_stamp.set(change.stamp);
                changes.push((change, added));
                *self.held.get_mut() = Some((m, changes));
            }
            return Ok(report);
        }
        tx.commit()?;
        Ok(report)
    }

    /// Hybrid recall: BM25 and vector candidates fused, weighted, flagged and collapsed (see
    /// [`rank`]). Without an embedder it ranks by BM25 with the same weights.
    pub fn search(
        &self,
        text: &str,
        filter: &ListFilter,
        options: &RankOptions,
        explain: bool,
    ) -> Result<Vec<Hit>> {
        let query = Query {
            text,
            filter,
            options,
            explain,
        };
        match self.search_in(self.matrix()?, &query)? {
            Ok(hits) => Ok(hits),
            // A chunk of the cache file failed its check: search the table's vectors instead.
            Err(vectors::Damaged) => {
                self.search_in(self.reload_matrix()?, &query)?
                    .map_err(|_| Error::Io {
                        context: "reading vectors loaded from the index".into(),
                        source: std::io::Error::other("vectors in memory reported damage"),
                    })
            }
        }
    }

    /// [`Index::search`] over the vectors of `matrix`.
    fn search_in(
        &self,
        matrix: Option<&VectorMatrix>,
        query: &Query,
    ) -> Result<std::result::Result<Vec<Hit>, vectors::Damaged>> {
        let Query {
            text,
            filter,
            options,
            explain,
        } = *query;
        let limit = filter.limit.unwrap_or(10).max(1);
        let within = options
            .time_window
            .as_ref()
            .filter(|w| w.usage == time_window::WindowUse::Filter);
        // A window filters candidates after they are found: look further for them.
        let widen = if within.is_some() { 4 } else { 1 };
        let pool = options.candidates.max(limit * 3) * widen;
        let lexical_filter = ListFilter {
            limit: Some(pool),
            ..filter.clone()
        };
        let lexical = query::recall(&self.conn, text, &lexical_filter)?;
        let mut candidates: Vec<rank::Candidate> = Vec::with_capacity(pool * 2);
        let mut slot: std::collections::HashMap<i64, usize> = std::collections::HashMap::new();
        for (i, hit) in lexical.into_iter().enumerate() {
            slot.insert(hit.rowid, candidates.len());
            candidates.push(rank::Candidate {
                rowid: hit.rowid,
                memory: hit.memory,
                lexical: Some((hit.score, i + 1)),
                cosine: None,
            });
        }
        let mut query_vector = None;
        if let (Some(embedder), Some(matrix)) = (&self.embedder, matrix)
            && !matrix.is_empty()
            && !text.trim().is_empty()
        {
            let q = embedder
                .embed_queries(&[text])?
                .pop()
                .expect("one vector per text");
            let probe = vectors::Probe::new(&q);
            let found = match self.vector_candidates(matrix, &probe, filter, pool)? {
                Ok(found) => found,
                Err(damaged) => return Ok(Err(damaged)),
            };
            let floor = embedder.relevance_floor();
            for (i, (rowid, cosine)) in found.into_iter().enumerate() {
                match slot.get(&rowid) {
                    Some(&at) => candidates[at].cosine = Some((cosine, Some(i + 1))),
                    None if cosine < floor => {}
                    None => {
                        if let Some(memory) = query::memory_at(&self.conn, rowid, filter)? {
                            slot.insert(rowid, candidates.len());
                            candidates.push(rank::Candidate {
                                rowid,
                                memory,
                                lexical: None,
                                cosine: Some((cosine, Some(i + 1))),
                            });
                        }
                    }
                }
            }
            for c in candidates.iter_mut().filter(|c| c.cosine.is_none()) {
                match matrix.best(c.rowid, &probe) {
                    Ok(best) => c.cosine = best.map(|s| (s, None)),
                    Err(damaged) => return Ok(Err(damaged)),
                }
            }
            query_vector = Some(q);
        }
        if let Some(w) = within {
            candidates.retain(|c| w.contains(c.memory.created) || w.contains(c.memory.updated));
        }
        let ranked = rank::fuse(candidates, options);
        let threshold = self.embedder.as_ref().map(|e| e.near_duplicate());
        // Head vectors are computed only for the pairs collapse compares.
        let matrix = if options.collapse { matrix } else { None };
        let heads: Vec<OnceCell<Option<Vec<f32>>>> = vec![OnceCell::new(); ranked.len()];
        let damaged = std::cell::Cell::new(false);
        let head = |i: usize| {
            heads[i]
                .get_or_init(|| {
                    let m = matrix?;
                    m.head(ranked[i].0.rowid).unwrap_or_else(|_| {
                        damaged.set(true);
                        None
                    })
                })
                .as_ref()
        };
        let text = |i: usize| {
            format!(
                "{}\n{}",
                ranked[i].0.memory.summary, ranked[i].0.memory.body
            )
        };
        let groups = rank::collapse(ranked.len(), limit, |a, b| {
            match (threshold, head(a), head(b)) {
                (Some(t), Some(x), Some(y)) => {
                    crate::embed::dot(x, y) >= t.max(0.9)
                        && crate::novelty::same_specifics(&text(a), &text(b))
                }
                _ => false,
            }
        });
        drop(heads);
        if damaged.get() {
            return Ok(Err(vectors::Damaged));
        }
        let mut ranked: Vec<Option<(rank::Candidate, f64, Explain)>> =
            ranked.into_iter().map(Some).collect();
        let mut hits = Vec::with_capacity(groups.len());
        for (kept, folded) in groups {
            // The group keeps the place and score of its best-ranked member.
            let Some(group_score) = ranked[kept].as_ref().map(|r| r.1) else {
                continue;
            };
            let (kept, folded) = rank::in_force_first(kept, folded, |i| {
                ranked[i].as_ref().map(|(c, ..)| c.memory.status)
            });
            let Some((c, own_score, why)) = ranked[kept].take() else {
                continue;
            };
            let score = own_score.max(group_score);
            let mut hit = Hit::new(c.rowid, c.memory, score);
            hit.near_duplicate = match (threshold, why.cosine, &query_vector) {
                (Some(t), Some(cos), Some(_)) => cos >= t,
                _ => false,
            };
            hit.duplicates = folded
                .iter()
                .filter_map(|&i| ranked[i].as_ref().map(|(c, ..)| c.memory.id.to_string()))
                .collect();
            if explain {
                hit.explain = Some(why);
            }
            hits.push(hit);
        }
        self.mark_stale(&mut hits)?;
        Ok(Ok(hits))
    }

    /// The `pool` memories passing `filter` whose best chunk is most similar to the probe. With a
    /// filter, the unfiltered top `8 × pool` is checked row by row first (exact whenever `pool`
    /// of them pass); only a selective filter pays for listing every row it allows.
    fn vector_candidates(
        &self,
        matrix: &VectorMatrix,
        probe: &vectors::Probe,
        filter: &ListFilter,
        pool: usize,
    ) -> Result<std::result::Result<Vec<(i64, f32)>, vectors::Damaged>> {
        if !query::restricts(filter) {
            return Ok(matrix.search(probe, pool, |_| true));
        }
        let wide_limit = pool * 8;
        let wide = match matrix.search(probe, wide_limit, |_| true) {
            Ok(wide) => wide,
            Err(damaged) => return Ok(Err(damaged)),
        };
        let scanned_all = wide.len() < wide_limit;
        let mut kept = Vec::with_capacity(pool);
        for (row, cosine) in wide {
            if query::passes(&self.conn, row, filter)? {
                kept.push((row, cosine));
                if kept.len() == pool {
                    return Ok(Ok(kept));
                }
            }
        }
        if scanned_all {
            return Ok(Ok(kept));
        }
        let allowed = query::allowed_rows(&self.conn, filter)?;
        Ok(matrix.search(probe, pool, |row| {
            allowed.as_ref().is_none_or(|a| a.contains(&row))
        }))
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
        let mut stmt = self
            .conn
            .prepare_cached("SELECT record FROM memories WHERE namespace = ?1 AND content = ?2")?;
        let hash = schema::content_hash(summary, body);
        let rows = stmt.query_map(params![namespace, hash], |r| r.get::<_, String>(0))?;
        let mut out = Vec::new();
        for r in rows {
            out.push(query::decode_record(&r?)?);
        }
        Ok(out)
    }

    /// The memories in `namespace` most similar to `text` by vector (best chunk), best first,
    /// among the `limit` that share most of the text's telling words (see [`telling`]): a
    /// near-duplicate repeats its original's rare words, and reading only short posting lists
    /// keeps the check cheap at any store size (no full vector scan, no common word scored).
    /// A text with no telling word (only words many memories hold) is compared with the
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

    /// Active memories that cite the file at `path` or name it in their text (exactly that
    /// path, as the repository names it), newest first, at most `limit`.
    pub fn mentioning(&self, path: &str, limit: usize) -> Result<Vec<Memory>> {
        let rows: Vec<String> = self
            .conn
            .prepare_cached(
                "SELECT m.record FROM mentions x JOIN memories m ON m.rowid = x.memory \
                 WHERE x.path = ?1 AND m.status = 'active' ORDER BY m.updated DESC LIMIT ?2",
            )?
            .query_map(
                rusqlite::params![mentions::normalize(path), limit as i64],
                |r| r.get(0),
            )?
            .collect::<std::result::Result<_, _>>()?;
        rows.iter().map(|r| query::decode_record(r)).collect()
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

/// Embeds every indexed memory (after an embedder change or a full rebuild).
fn embed_all(conn: &Connection, embedder: &dyn Embedder, progress: &dyn Progress) -> Result<usize> {
    let rows: Vec<(i64, String)> = conn
        .prepare("SELECT rowid, record FROM memories ORDER BY rowid")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<std::result::Result<_, _>>()?;
    let mut pending = Pending::default();
    let mut shown = Throttle::new(progress, "embedding memories", rows.len() as u64, 100);
    for (done, (rowid, record)) in rows.iter().enumerate() {
        shown.advance(done as u64 + 1);
        let memory = query::decode_record(record)?;
        pending.push(conn, embedder, *rowid, &vectors::embedding_text(&memory))?;
    }
    pending.flush(conn, embedder)?;
    Ok(rows.len())
}

/// Where the vector matrix of the index at `index` is cached for the next process (derived from
/// the index, stamped with the indexed tip and embedder; rewritten when they change).
pub fn vectors_cache_path(index: &Path) -> PathBuf {
    let mut p = index.as_os_str().to_owned();
    p.push(".vectors");
    PathBuf::from(p)
}
