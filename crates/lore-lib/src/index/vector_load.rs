//! Loading the index's vector matrix for searches: from the cache file when it holds the
//! index's state (compacting it when it has grown too many segments), from the `chunks` table
//! otherwise or when the file turns out damaged; and checks of the cache for tests. The file's
//! format is [`super::vector_cache`]'s.

use super::Index;
use super::vector_cache::{compact_whole, read, read_stamp, wants_compaction, write_whole};
use super::vectors::VectorMatrix;
use crate::error::Result;

/// Loading the matrix for searches, and checks of the cache for tests.
impl Index {
    /// Keeps a cache write's failure for [`Index::take_warnings`]; what it returned, or the
    /// default (nothing written) when it failed.
    fn note<T: Default>(&self, written: std::result::Result<T, String>) -> T {
        written.unwrap_or_else(|warning| {
            self.warnings.borrow_mut().push(warning);
            T::default()
        })
    }

    /// What went wrong without stopping the operation (a cache that could not be saved),
    /// since the last call.
    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut *self.warnings.borrow_mut())
    }

    /// Every chunk vector, loaded once per process (queued catch-up changes applied first;
    /// read from the cache file, or the table when the file does not hold this state).
    pub(super) fn matrix(&self) -> Result<Option<&VectorMatrix>> {
        let Some(embedder) = &self.embedder else {
            return Ok(None);
        };
        if let Some(m) = self.reloaded.get() {
            return Ok(Some(m));
        }
        if self.vectors.get().is_none()
            && let Some((mut m, changes)) = self.held.borrow_mut().take()
        {
            m.apply_changes(&changes);
            let _ = self.vectors.set(m);
        }
        if self.vectors.get().is_none() {
            let dims = embedder.id().dims;
            // The stamp and the vectors are read in one transaction, so they agree.
            let tx = self.conn.unchecked_transaction()?;
            let stamp = read_stamp(&tx)?;
            let name = super::schema::read_meta(&tx, "embedder")?.unwrap_or_default();
            let cache = super::vectors_cache_path(&self.path);
            let m = match read(&cache, stamp, dims, &name, false) {
                Some(loaded) => {
                    if !self.read_only && wants_compaction(&loaded) {
                        if self.defer_compaction.get() {
                            self.compaction_wanted.set(true);
                        } else {
                            self.compact(&tx, &cache, (stamp, dims), &name)?;
                        }
                    }
                    loaded.matrix
                }
                None => {
                    let m = VectorMatrix::load(&tx, dims)?;
                    if !self.read_only {
                        self.note(write_whole(&cache, &m, stamp, &name));
                    }
                    m
                }
            };
            tx.finish()?;
            let _ = self.vectors.set(m);
            self.vectors_stamp.set(stamp);
        }
        Ok(self.vectors.get())
    }

    /// Writes the cache file again as one segment, from a whole read of it (of the table, if a
    /// part only a whole read reaches, such as a list no search probed yet, is damaged).
    fn compact(
        &self,
        tx: &rusqlite::Transaction<'_>,
        cache: &std::path::Path,
        (stamp, dims): (u64, usize),
        name: &str,
    ) -> Result<()> {
        let whole = match read(cache, stamp, dims, name, true) {
            Some(whole) => whole.matrix,
            None => VectorMatrix::load(tx, dims)?,
        };
        self.note(compact_whole(cache, &whole, stamp, name, &|| {
            hold_writers(tx)
        }));
        Ok(())
    }

    /// Leaves a cache grown to too many segments for [`Index::compact_vectors`] instead of
    /// writing it again in the read that finds it (a front end runs that apart, so that no
    /// command waits seconds for it at a million memories).
    pub fn defer_compaction(&self) {
        self.defer_compaction.set(true);
    }

    /// Whether a read left the vector cache for [`Index::compact_vectors`] since this was last
    /// asked.
    pub fn take_wanted_upkeep(&self) -> bool {
        self.compaction_wanted.replace(false)
    }

    /// Writes the vector cache again as one segment if it has grown too many; returns whether
    /// it did. A cache that does not read whole as of the index's vectors (absent, stale, of
    /// another embedder, damaged) is left for the next search to rebuild: this never loads the
    /// table.
    pub fn compact_vectors(&self) -> Result<bool> {
        let Some(embedder) = &self.embedder else {
            return Ok(false);
        };
        if self.read_only {
            return Ok(false);
        }
        let dims = embedder.id().dims;
        let tx = self.conn.unchecked_transaction()?;
        let stamp = read_stamp(&tx)?;
        let name = super::schema::read_meta(&tx, "embedder")?.unwrap_or_default();
        let cache = super::vectors_cache_path(&self.path);
        let wanted = read(&cache, stamp, dims, &name, false).is_some_and(|l| wants_compaction(&l));
        let whole = wanted
            .then(|| read(&cache, stamp, dims, &name, true))
            .flatten();
        let written = whole.as_ref().is_some_and(|whole| {
            let hold = || hold_writers(&tx);
            self.note(compact_whole(&cache, &whole.matrix, stamp, &name, &hold))
        });
        tx.finish()?;
        self.compaction_wanted.set(false);
        Ok(written)
    }

    /// After a search found a damaged chunk in the cache file: the vectors loaded from the
    /// table for the rest of this handle's life (until the next catch-up), and the file written
    /// again from them.
    pub(super) fn reload_matrix(&self) -> Result<Option<&VectorMatrix>> {
        let Some(embedder) = &self.embedder else {
            return Ok(None);
        };
        if self.reloaded.get().is_none() {
            let tx = self.conn.unchecked_transaction()?;
            let stamp = read_stamp(&tx)?;
            let name = super::schema::read_meta(&tx, "embedder")?.unwrap_or_default();
            let m = VectorMatrix::load(&tx, embedder.id().dims)?;
            if !self.read_only {
                let cache = super::vectors_cache_path(&self.path);
                self.note(write_whole(&cache, &m, stamp, &name));
            }
            tx.finish()?;
            let _ = self.reloaded.set(m);
        }
        Ok(self.reloaded.get())
    }

    /// Whether the vectors searches use (held in memory, or read from the cache file) are
    /// exactly the `chunks` table's, in order: for tests of the cache.
    #[doc(hidden)]
    pub fn vectors_agree_with_table(&self) -> Result<bool> {
        let Some(held) = self.matrix()? else {
            return Ok(true);
        };
        // Lists left in the file: every list read.
        let whole;
        let held = match held.is_listed() {
            true => {
                let name = super::schema::read_meta(&self.conn, "embedder")?.unwrap_or_default();
                let cache = super::vectors_cache_path(&self.path);
                let stamp = self.vectors_stamp.get();
                match read(&cache, stamp, held.dims(), &name, true) {
                    Some(loaded) => {
                        whole = loaded.matrix;
                        &whole
                    }
                    None => return Ok(false),
                }
            }
            false => held,
        };
        let fresh = VectorMatrix::load(&self.conn, held.dims())?;
        let (Ok(held_values), Ok(fresh_values)) = (held.resident_values(), fresh.resident_values())
        else {
            return Ok(false);
        };
        Ok(held.memory() == fresh.memory()
            && held.scales() == fresh.scales()
            && held_values == fresh_values)
    }

    /// How many segments the cache file holds up to the index's current vectors, or `None`
    /// when the file does not hold them whole (absent, stale, torn, a chunk damaged): for tests
    /// of the cache.
    #[doc(hidden)]
    pub fn vector_cache_segments(&self) -> Result<Option<usize>> {
        let Some(embedder) = &self.embedder else {
            return Ok(None);
        };
        let stamp = read_stamp(&self.conn)?;
        let name = super::schema::read_meta(&self.conn, "embedder")?.unwrap_or_default();
        Ok(read(
            &super::vectors_cache_path(&self.path),
            stamp,
            embedder.id().dims,
            &name,
            true,
        )
        .map(|loaded| loaded.segments))
    }
}

/// Takes the index's write lock inside `tx`, a read transaction, for the rest of it (no
/// catch-up can append to the vector cache meanwhile); false when a catch-up committed since
/// `tx` read its state (SQLite refuses to upgrade a stale read) or is under way; an error when
/// the index cannot be written at all (said as a warning: the cache stays as it is).
fn hold_writers(tx: &rusqlite::Transaction<'_>) -> std::result::Result<bool, String> {
    match tx.execute(
        "UPDATE meta SET value = value WHERE name = 'vectors_stamp'",
        [],
    ) {
        Ok(_) => Ok(true),
        Err(e) if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy) => Ok(false),
        Err(e) => Err(format!(
            "the vector cache was not written again as one segment: the index cannot be \
             written ({e})"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::hold_writers;

    fn connection(path: &std::path::Path) -> rusqlite::Connection {
        let conn = rusqlite::Connection::open(path).unwrap();
        conn.pragma_update(None, "journal_mode", "wal").unwrap();
        conn
    }

    fn read_stamp(tx: &rusqlite::Transaction<'_>) -> String {
        tx.query_row(
            "SELECT value FROM meta WHERE name = 'vectors_stamp'",
            [],
            |r| r.get(0),
        )
        .unwrap()
    }

    #[test]
    fn writers_are_held_only_from_the_latest_state() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.sqlite3");
        let compactor = connection(&path);
        compactor
            .execute_batch(
                "CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
                 INSERT INTO meta VALUES ('vectors_stamp', '1');",
            )
            .unwrap();
        let writer = connection(&path);
        writer.busy_timeout(std::time::Duration::ZERO).unwrap();
        let bump = |to: &str| {
            writer.execute(
                "UPDATE meta SET value = ?1 WHERE name = 'vectors_stamp'",
                [to],
            )
        };
        // The state read is the latest: the writers are held until the transaction ends.
        let tx = compactor.unchecked_transaction().unwrap();
        assert_eq!(read_stamp(&tx), "1");
        assert_eq!(hold_writers(&tx), Ok(true));
        assert!(bump("2").is_err(), "a catch-up waits for the compaction");
        tx.finish().unwrap();
        bump("2").unwrap();
        // A catch-up committed after the state was read: not the latest, nothing is held.
        let tx = compactor.unchecked_transaction().unwrap();
        assert_eq!(read_stamp(&tx), "2");
        bump("3").unwrap();
        assert_eq!(hold_writers(&tx), Ok(false));
        tx.finish().unwrap();
        bump("4").unwrap();
        // An index that cannot be written at all is an error, not a state gone stale.
        let read_only = rusqlite::Connection::open_with_flags(
            &path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .unwrap();
        let tx = read_only.unchecked_transaction().unwrap();
        assert!(hold_writers(&tx).is_err());
    }
}
