//! Catching the index up with the store: the files changed since the recorded tip applied in
//! one immediate transaction (memories, namespaces, new vectors, BM25 postings), the totals and
//! tip recorded, and the vector cache extended by the change before the transaction commits.

use std::cell::OnceCell;

use git2::Oid;
use rusqlite::{Connection, TransactionBehavior};

use super::stored_memory::{self, StoredMemory};
use super::vectors::{self, Pending};
use super::{CatchUp, HeldMatrix, Index, schema, vector_cache, vectors_cache_path};
use crate::embed::{Embedder, SharedEmbedder};
use crate::error::{Error, Result};
use crate::progress::{Progress, Throttle};
use crate::record;
use crate::store::layout::{self, PathKind};
use crate::store::{FileChange, Store};

/// What applying the changed files did to the rows.
struct Applied {
    /// Net change in the number of indexed memories.
    delta: i64,
    removed_rows: Vec<i64>,
    inserted_rows: Vec<i64>,
}

/// Whether the index's vectors came from the embedder named `wanted`.
fn embedder_matches(conn: &Connection, wanted: &str) -> Result<bool> {
    Ok(schema::read_meta(conn, "embedder")?.unwrap_or_default() == wanted)
}

/// Whether an index already at the tip needs nothing for a handle embedding with `wanted`: its
/// vectors are that embedder's, or the handle embeds nothing (lexical only, `wanted` empty). A
/// lexical handle reads no vectors, so another tier's are left for that tier: dropping them made
/// the next command of that tier embed the whole store again (a minute at a million memories)
/// after one `--embedder none` read. A lexical handle that writes, or that has to catch the
/// index up (the tip moved), still drops them (the rows it indexes would have none).
fn vectors_serve(conn: &Connection, wanted: &str) -> Result<bool> {
    Ok(wanted.is_empty() || embedder_matches(conn, wanted)?)
}

impl Index {
    /// [`Index::catch_up`], reporting progress (files applied, memories embedded) to
    /// `progress`.
    pub fn catch_up_with(&mut self, store: &Store, progress: &dyn Progress) -> Result<CatchUp> {
        let tip = store.tip()?;
        let wanted = self.embedder_name();
        // Another lore may have rewritten the tables as its own version since this handle
        // opened them (and caught them up to the same tip): this version's reads would not
        // decode its rows, so that too takes the path below, which brings them forward.
        if self.indexed_tip()? == tip
            && schema::version(&self.conn)? == schema::SCHEMA_VERSION
            && vectors_serve(&self.conn, &wanted)?
            && Index::rows_intact(&self.rows_verified, &self.conn)?
        {
            self.drop_matrix_of_another_stamp()?;
            return Ok(CatchUp::default());
        }
        let held = self.take_held_matrix();
        let held_stamp = self.vectors_stamp.get();
        let embedder = self.embedder.clone();
        let cache = (!self.read_only).then(|| vectors_cache_path(&self.path));
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let version = schema::version(&tx)?;
        if version != schema::SCHEMA_VERSION && !self.read_only {
            // Another lore rewrote the tables since this handle opened them (an older lore
            // rebuilt them as its own version): bring them to this version, then catch up as
            // if newly opened.
            drop(tx);
            super::open::bring_to_this_schema(&mut self.conn)?;
            self.rows_verified.set(false);
            let version = schema::version(&self.conn)?;
            if version != schema::SCHEMA_VERSION {
                return Err(Error::Invalid {
                    what: "index",
                    value: self.path.display().to_string(),
                    reason: format!(
                        "another lore keeps rewriting it as schema version {version}; this lore uses version {}",
                        schema::SCHEMA_VERSION
                    ),
                });
            }
            return self.catch_up_with(store, progress);
        }
        // Another process may have caught up while we waited for the write lock.
        let indexed = schema::read_tip(&tx)?;
        let tip = store.tip()?;
        let same_embedder = embedder_matches(&tx, &wanted)?;
        // Rows lost inside the file (the count kept beside them disagrees): rebuilt from git.
        let intact = Index::rows_intact(&self.rows_verified, &tx)?;
        if indexed == tip && (same_embedder || wanted.is_empty()) && intact {
            let current = vector_cache::read_stamp(&tx)? == held_stamp;
            drop(tx);
            *self.held.get_mut() = held.filter(|_| current);
            return Ok(CatchUp::default());
        }
        let (changes, full) = changes_since(&tx, store, indexed, tip, intact)?;
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
        let docs_before = if full {
            0
        } else {
            schema::read_doc_count(&tx)?
        };
        let inline = embedder.as_ref().filter(|_| !reembed);
        let applied = apply_changes(&tx, store, &changes, inline, progress, &mut report)?;
        if let (Some(e), true) = (&embedder, reembed) {
            report.reembedded = embed_all(&tx, e.as_ref(), progress)?;
        }
        schema::write_meta(&tx, "embedder", &wanted)?;
        schema::write_doc_count(&tx, docs_before + applied.delta)?;
        schema::write_tip(&tx, tip)?;
        let held = (held, held_stamp);
        let vectors = VectorsChanged {
            embedder: embedder.as_ref(),
            cache: cache.as_deref(),
            wanted: &wanted,
            reembed,
        };
        if let Some((matrix, stamp)) = commit_with_vectors(tx, &vectors, applied, held)? {
            self.vectors_stamp.set(stamp);
            *self.held.get_mut() = Some(matrix);
        }
        Ok(report)
    }

    /// Another handle may have caught the shared file up since this one's matrix was loaded: a
    /// matrix of another stamp is dropped (loaded again when searched).
    fn drop_matrix_of_another_stamp(&mut self) -> Result<()> {
        if (self.vectors.get().is_some() || self.held.get_mut().is_some())
            && vector_cache::read_stamp(&self.conn)? != self.vectors_stamp.get()
        {
            self.vectors = OnceCell::new();
            self.reloaded = OnceCell::new();
            *self.held.get_mut() = None;
        }
        Ok(())
    }

    /// The matrix in memory, to be brought forward with the change instead of loaded again (one
    /// whose components stay in the cache file is read again: only its small part is read).
    fn take_held_matrix(&mut self) -> Option<HeldMatrix> {
        self.reloaded = OnceCell::new();
        match self.vectors.take() {
            Some(m) if m.is_resident() => Some((m, Vec::new())),
            Some(_) => None,
            None => self.held.get_mut().take(),
        }
    }
}

/// What a catch-up's vectors are: of which embedder, cached where (`None`: not written here),
/// and whether every memory was embedded afresh.
struct VectorsChanged<'a> {
    embedder: Option<&'a SharedEmbedder>,
    cache: Option<&'a std::path::Path>,
    wanted: &'a str,
    reembed: bool,
}

/// Commits the catch-up: the vectors changed, so a new stamp, and the cache extended by what
/// changed (inside the transaction, so no other catch-up appends meanwhile). Returns the matrix
/// `held` in memory (with the stamp it was loaded at) brought forward, with its new stamp, when
/// it was current.
fn commit_with_vectors(
    tx: rusqlite::Transaction<'_>,
    vectors: &VectorsChanged<'_>,
    applied: Applied,
    (held, held_stamp): (Option<HeldMatrix>, u64),
) -> Result<Option<(HeldMatrix, u64)>> {
    let change = vector_cache::Change {
        parent: if vectors.reembed {
            0
        } else {
            vector_cache::read_stamp(&tx)?
        },
        stamp: vector_cache::new_stamp(&tx)?,
        removed: applied.removed_rows,
        added: applied.inserted_rows,
    };
    let held = held.filter(|_| change.parent != 0 && held_stamp == change.parent);
    let Some(e) = vectors.embedder.filter(|_| change.parent != 0) else {
        tx.commit()?;
        return Ok(None);
    };
    let dims = e.id().dims;
    let added = vector_cache::Added::read(&tx, &change.added, dims)?;
    if let Some(cache) = vectors.cache {
        vector_cache::append(cache, &change, &added, dims, vectors.wanted)?;
    }
    tx.commit()?;
    Ok(held.map(|(m, mut changes)| {
        let stamp = change.stamp;
        changes.push((change, added));
        ((m, changes), stamp)
    }))
}

/// The files changed between the indexed tip and `tip`, and whether they are every file (the
/// indexed tip is unknown or the rows are not intact: the index is cleared and rebuilt).
fn changes_since(
    conn: &Connection,
    store: &Store,
    indexed: Option<Oid>,
    tip: Option<Oid>,
    intact: bool,
) -> Result<(Vec<FileChange>, bool)> {
    Ok(match indexed {
        _ if intact && indexed == tip => (Vec::new(), false),
        Some(old) if intact && store.has_commit(old) => (store.diff(Some(old), tip)?, false),
        _ => {
            schema::clear(conn)?;
            let changes = store
                .files(tip)?
                .into_iter()
                .map(|f| FileChange {
                    path: f.path,
                    old: None,
                    new: Some(f.blob),
                })
                .collect();
            (changes, true)
        }
    })
}

/// Applies the changed files to the rows (and their postings); a new memory's vectors are
/// made inline when `embedder` is given.
fn apply_changes(
    conn: &Connection,
    store: &Store,
    changes: &[FileChange],
    embedder: Option<&SharedEmbedder>,
    progress: &dyn Progress,
    report: &mut CatchUp,
) -> Result<Applied> {
    let mut pending = Pending::default();
    let mut writer = schema::Writer::new(conn)?;
    let mut shown = Throttle::new(progress, "indexing memory files", changes.len() as u64, 100);
    for (done, change) in changes.iter().enumerate() {
        shown.advance(done as u64 + 1);
        match layout::classify(&change.path) {
            PathKind::Memory => {
                let Some(blob) = change.new else {
                    writer.remove_memory(&change.path)?;
                    report.removed += 1;
                    continue;
                };
                let bytes = store.read_blob(blob)?;
                let parsed = std::str::from_utf8(&bytes)
                    .map_err(|e| Error::Record {
                        path: change.path.clone(),
                        message: format!("not UTF-8: {e}"),
                    })
                    .and_then(|text| record::parse(text, &change.path));
                report.upserted += 1;
                if let Ok(memory) = &parsed
                    && change.old.is_some()
                    && writer.update_in_place(&change.path, blob, memory)?
                {
                    continue;
                }
                if change.old.is_some() {
                    writer.remove_memory(&change.path)?;
                }
                match parsed {
                    Ok(memory) => {
                        let rowid = writer.insert_memory(&change.path, blob, &memory)?;
                        if let Some(e) = embedder {
                            let text = vectors::embedding_text(&memory);
                            pending.push(conn, e.as_ref(), rowid, &text)?;
                        }
                    }
                    Err(e) => writer.insert_invalid(&change.path, blob, &e)?,
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
    if let Some(e) = embedder {
        pending.flush(conn, e.as_ref())?;
    }
    Ok(Applied {
        delta: writer.delta,
        removed_rows: writer.removed_rows,
        inserted_rows: writer.inserted_rows,
    })
}

/// Embeds every indexed memory (after an embedder change or a full rebuild), reading the rows
/// as it goes (a million records are never held at once).
fn embed_all(conn: &Connection, embedder: &dyn Embedder, progress: &dyn Progress) -> Result<usize> {
    let total: i64 = conn.query_row("SELECT count(*) FROM memories", [], |r| r.get(0))?;
    let mut pending = Pending::default();
    let mut shown = Throttle::new(progress, "embedding memories", total as u64, 100);
    let mut stmt = conn.prepare(&format!(
        "SELECT m.rowid, {} FROM memories m ORDER BY m.rowid",
        stored_memory::COLUMNS
    ))?;
    let mut rows = stmt.query([])?;
    let mut done = 0;
    while let Some(row) = rows.next()? {
        done += 1;
        shown.advance(done as u64);
        let memory = StoredMemory::read(row, 1)?.decode()?;
        pending.push(
            conn,
            embedder,
            row.get(0)?,
            &vectors::embedding_text(&memory),
        )?;
    }
    pending.flush(conn, embedder)?;
    Ok(done)
}
