//! The index's tables, its schema version, and the statements that write rows.

use git2::Oid;
use rusqlite::{CachedStatement, Connection, OptionalExtension, params};

use super::stored_memory::{is_record_json, record_json, tags_text};
use crate::error::{Error, Result};
use crate::model::Memory;
use crate::retry::Backoff;
use std::time::Duration;

/// Bumped whenever the tables change; an index of another version is rebuilt, except one of
/// version 8 to 11, which is brought to this one in place ([`migrate`]).
pub const SCHEMA_VERSION: i64 = 12;

/// The table of named values (the tip, counts, the postings' totals); the thoughts index keeps
/// one too, for its postings.
pub const META: &str = "CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);";

const CREATE: &str = r#"
CREATE TABLE memories (
    rowid     INTEGER PRIMARY KEY,
    path      TEXT NOT NULL UNIQUE,
    blob      TEXT NOT NULL,
    id        TEXT NOT NULL,
    namespace TEXT NOT NULL,
    key       TEXT,
    summary   TEXT NOT NULL,
    body      TEXT NOT NULL,
    tags      TEXT NOT NULL,
    status    TEXT NOT NULL,
    created   INTEGER NOT NULL,
    updated   INTEGER NOT NULL,
    record    TEXT NOT NULL,
    content   TEXT NOT NULL,
    session   TEXT
);
CREATE INDEX memories_content ON memories (namespace, content);
CREATE INDEX memories_id ON memories (id);
CREATE INDEX memories_key ON memories (key, namespace) WHERE key IS NOT NULL;
CREATE INDEX memories_updated ON memories (updated DESC, id);
CREATE INDEX memories_created ON memories (created DESC, id);
CREATE INDEX memories_session ON memories (session, created) WHERE session IS NOT NULL;
CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
    DELETE FROM chunks WHERE memory = old.rowid;
    DELETE FROM mentions WHERE memory = old.rowid;
END;
CREATE TABLE counts (
    namespace TEXT NOT NULL,
    status    TEXT NOT NULL,
    n         INTEGER NOT NULL,
    PRIMARY KEY (namespace, status)
) WITHOUT ROWID;
CREATE TRIGGER memories_count_ad AFTER DELETE ON memories BEGIN
    UPDATE counts SET n = n - 1 WHERE namespace = old.namespace AND status = old.status;
    DELETE FROM counts WHERE namespace = old.namespace AND status = old.status AND n <= 0;
END;
CREATE TABLE chunks (
    memory  INTEGER NOT NULL,
    ordinal INTEGER NOT NULL,
    vector  BLOB NOT NULL,
    PRIMARY KEY (memory, ordinal)
) WITHOUT ROWID;
CREATE TABLE stale (
    id      TEXT PRIMARY KEY,
    blob    TEXT NOT NULL,
    reason  TEXT NOT NULL,
    checked INTEGER NOT NULL
);
CREATE TABLE invalid (path TEXT PRIMARY KEY, blob TEXT NOT NULL, message TEXT NOT NULL);
CREATE TABLE namespaces (name TEXT PRIMARY KEY);
CREATE TABLE mentions (
    path   TEXT NOT NULL,
    memory INTEGER NOT NULL,
    PRIMARY KEY (path, memory)
) WITHOUT ROWID;
CREATE INDEX mentions_memory ON mentions (memory);
"#;

/// What [`prepare`] found in the database.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemaState {
    /// The tables of this lore's schema version, readable.
    Current,
    /// Tables of another schema version (an older or newer lore wrote them).
    Other(i64),
}

/// Statements a connection keeps compiled: more than a catch-up and a search use together
/// (rusqlite's default, 16, is fewer: the oldest were compiled again on every catch-up).
const STATEMENTS_CACHED: usize = 64;

/// Sets connection options and creates the schema in an empty database. An error is SQLite's
/// (a damaged file shows as `SQLITE_CORRUPT` or `SQLITE_NOTADB`).
pub fn prepare(conn: &Connection) -> Result<SchemaState> {
    conn.busy_timeout(std::time::Duration::from_secs(30))?;
    // Switching a new database to WAL while another process creates it fails with "database is
    // locked" without waiting on the busy handler: wait here instead.
    let mut backoff = Backoff::new(
        Duration::from_millis(4),
        Duration::from_millis(100),
        Duration::from_secs(30),
    );
    while let Err(e) = conn.pragma_update(None, "journal_mode", "WAL") {
        if !is_busy(&e) || !backoff.wait() {
            return Err(e.into());
        }
    }
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    crate::sqlite_plans::keep_plans(conn)?;
    conn.set_prepared_statement_cache_capacity(STATEMENTS_CACHED);
    let found = version(conn)?;
    if found == SCHEMA_VERSION {
        // Cheap sanity check that the tables are readable.
        conn.query_row("SELECT count(*) FROM meta", [], |r| r.get::<_, i64>(0))?;
        return Ok(SchemaState::Current);
    }
    if (8..=11).contains(&found)
        && let Some(state) = bring_forward(conn)?
    {
        return Ok(state);
    }
    if found != 0 {
        return Ok(SchemaState::Other(found));
    }
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let result = (|| {
        let now = version(conn)?;
        if now == 0 {
            create(conn)?;
        }
        conn.execute_batch("COMMIT")
    })();
    if let Err(e) = result {
        // The transaction failed: rolling back cannot make it worse, and the first error is
        // the one to report.
        let _ = conn.execute_batch("ROLLBACK");
        return Err(e.into());
    }
    Ok(SchemaState::Current)
}

/// Whether SQLite refused for another connection holding a lock (busy or locked).
fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// Brings an index of schema 8 to 11 to this version ([`migrate`]) and packs it when this
/// process did; `None` leaves it to be rebuilt. An index another process is bringing forward
/// for longer than the busy timeout is an error, not a rebuild: the rebuild would empty the
/// index that process is about to hand over.
fn bring_forward(conn: &Connection) -> Result<Option<SchemaState>> {
    match migrate(conn) {
        Ok(migrated) => {
            if migrated {
                pack(conn)?;
            }
            Ok(Some(SchemaState::Current))
        }
        Err(e) if is_busy(&e) => match version(conn)? {
            SCHEMA_VERSION => Ok(Some(SchemaState::Current)),
            _ => Err(e.into()),
        },
        Err(_) => Ok(None),
    }
}

/// Brings an index of schema 8 to 11 to this version in place, far cheaper than the rebuild
/// (and re-embedding) any other version gets: 8 gains the `session` column, filled from each
/// record, and its index; 9 loses its triggers on inserting a memory, whose work
/// [`Writer::insert_memory`] now does itself (see the note there); up to 10 the `record`
/// column held the whole memory, and now holds only what no other column does
/// ([`compact_records`]), and keys were indexed after their namespace, for every row; up to 11
/// the index kept an FTS5 table beside the postings, which answer every BM25 query now
/// ([`super::postings`]). A failure (a read-only file, a busy writer, a record that does not
/// read) rolls back and leaves the rebuild to do it. Returns whether it brought the index
/// forward (false when another process did while this one waited for the lock).
fn migrate(conn: &Connection) -> rusqlite::Result<bool> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let result = (|| {
        let found = version(conn)?;
        if found == 8 {
            conn.execute_batch(
                "ALTER TABLE memories ADD COLUMN session TEXT;
                 UPDATE memories SET session = json_extract(record, '$.session')
                 WHERE json_extract(record, '$.session') IS NOT NULL;
                 CREATE INDEX memories_session ON memories (session, created)
                 WHERE session IS NOT NULL;",
            )?;
        }
        if found == 8 || found == 9 {
            conn.execute_batch(
                "DROP TRIGGER IF EXISTS memories_ai;
                 DROP TRIGGER IF EXISTS memories_count_ai;",
            )?;
        }
        if (8..=10).contains(&found) {
            // A key looked up without its namespace (`lore show index-engine`) scanned every
            // row: the index on (namespace, key) cannot serve it, and held every keyless row.
            conn.execute_batch(
                "DROP INDEX IF EXISTS memories_ns_key;
                 CREATE INDEX IF NOT EXISTS memories_key ON memories (key, namespace)
                 WHERE key IS NOT NULL;",
            )?;
            compact_records(conn)?;
        }
        if (8..=11).contains(&found) {
            // The postings score every query: the full-text table was a second copy of every
            // term (300 MB of 2.5 GB at a million memories) and a fifth of an import's time.
            conn.execute_batch(
                "DROP TRIGGER IF EXISTS memories_ad;
                 DROP TABLE IF EXISTS memories_fts;
                 CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
                     DELETE FROM chunks WHERE memory = old.rowid;
                     DELETE FROM mentions WHERE memory = old.rowid;
                 END;",
            )?;
            conn.pragma_update(None, "user_version", SCHEMA_VERSION)?;
        } else if found != SCHEMA_VERSION {
            return Err(rusqlite::Error::InvalidQuery);
        }
        conn.execute_batch("COMMIT")?;
        Ok(found != SCHEMA_VERSION)
    })();
    if result.is_err() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    result
}

/// Writes the index's file again, packed (`VACUUM`): after [`migrate`], whose records rewritten
/// shorter leave their pages part empty (about 18 s for a million memories, against the 11 s of
/// the rewrite and the minutes of re-embedding a rebuild costs), and by `lore gc`. Row ids are
/// kept (every table that others point into names its row id), so the vector cache stays
/// valid. It runs on a connection of its own, so that `conn`'s temporary tables survive (a
/// change of `temp_store` drops them), and copies through a temporary file rather than memory
/// (the copy is as large as the index; where the temporary directory is a tmpfs, that is
/// memory all the same). An index in memory or opened read-only is left alone. The index is
/// whole without packing, so a failure (another process busy in it, no room for the copy)
/// leaves it as it is; returns whether it was packed.
pub(crate) fn pack(conn: &Connection) -> Result<bool> {
    let path = match conn.path() {
        Some(path) if !path.is_empty() => path,
        _ => return Ok(false),
    };
    if conn.is_readonly(rusqlite::MAIN_DB)? {
        return Ok(false);
    }
    let packer = Connection::open(path)?;
    packer.busy_timeout(Duration::from_secs(30))?;
    packer.pragma_update(None, "temp_store", "FILE")?;
    let packed = packer.execute_batch("VACUUM").is_ok();
    // VACUUM writes the whole file through the write-ahead log: hand it back (a reader may
    // keep the log from being emptied now; the next checkpoint does it then).
    let _ = packer.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);");
    Ok(packed)
}

/// Rewrites each `record` written before schema 11 (the whole memory as JSON but its body) as
/// [`record_json`] writes it now, a batch of rows at a time (none is updated under a pending
/// read of its table). A record already in the new form is left as it is.
fn compact_records(conn: &Connection) -> rusqlite::Result<()> {
    const BATCH: i64 = 4_096;
    let mut read = conn.prepare(
        "SELECT rowid, path, record FROM memories WHERE rowid > ?1 ORDER BY rowid LIMIT ?2",
    )?;
    let mut write = conn.prepare("UPDATE memories SET record = ?2 WHERE rowid = ?1")?;
    let unreadable = |e: Box<dyn std::error::Error + Send + Sync>| {
        rusqlite::Error::FromSqlConversionFailure(2, rusqlite::types::Type::Text, e)
    };
    let mut after = 0;
    loop {
        let batch = read
            .query_map(params![after, BATCH], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let Some(last) = batch.last() else {
            return Ok(());
        };
        after = last.0;
        for (rowid, path, record) in batch {
            let memory = match serde_json::from_str::<Memory>(&record) {
                Ok(memory) => memory,
                Err(_) if is_record_json(&record) => continue,
                Err(e) => return Err(unreadable(e.into())),
            };
            let rest = record_json(&path, &memory).map_err(|e| unreadable(e.into()))?;
            write.execute(params![rowid, rest])?;
        }
    }
}

/// The schema version the database's header records.
pub fn version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.pragma_query_value(None, "user_version", |r| r.get(0))
}

/// Column `i` of a result row as a blob, borrowed (a conversion error naming the column
/// otherwise).
pub(super) fn blob_at<'r>(row: &'r rusqlite::Row<'_>, i: usize) -> rusqlite::Result<&'r [u8]> {
    row.get_ref(i)?.as_blob().map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Blob, Box::new(e))
    })
}

/// Column `i` of a result row as text, borrowed (a conversion error naming the column
/// otherwise).
pub(super) fn text_at<'r>(row: &'r rusqlite::Row<'_>, i: usize) -> rusqlite::Result<&'r str> {
    row.get_ref(i)?.as_str().map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e))
    })
}

/// Creates this version's tables in an empty database and stamps the version.
pub fn create(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(META)?;
    conn.execute_batch(CREATE)?;
    conn.execute_batch(super::postings::TABLES)?;
    conn.pragma_update(None, "user_version", SCHEMA_VERSION)
}

/// The memory tip recorded in the index.
pub fn read_tip(conn: &Connection) -> Result<Option<Oid>> {
    let value: Option<String> = conn
        .prepare_cached("SELECT value FROM meta WHERE name = 'tip'")?
        .query_row([], |r| r.get(0))
        .optional()?;
    match value {
        None => Ok(None),
        Some(v) if v.is_empty() => Ok(None),
        Some(v) => Oid::from_str(&v).map(Some).map_err(Error::from),
    }
}

/// Records the memory tip the index now reflects.
pub fn write_tip(conn: &Connection, tip: Option<Oid>) -> Result<()> {
    let value = tip.map(|t| t.to_string()).unwrap_or_default();
    conn.prepare_cached(
        "INSERT INTO meta (name, value) VALUES ('tip', ?1)
         ON CONFLICT (name) DO UPDATE SET value = excluded.value",
    )?
    .execute(params![value])?;
    Ok(())
}

/// How many memories are indexed (kept in `meta` so ranking needs no table scan).
pub fn read_doc_count(conn: &Connection) -> Result<i64> {
    let value: Option<String> = conn
        .prepare_cached("SELECT value FROM meta WHERE name = 'docs'")?
        .query_row([], |r| r.get(0))
        .optional()?;
    match value.and_then(|v| v.parse().ok()) {
        Some(n) => Ok(n),
        None => Ok(conn.query_row("SELECT count(*) FROM memories", [], |r| r.get(0))?),
    }
}

/// Whether the memory rows are all there: their number, as the `counts` table keeps it (lore's
/// inserts count themselves; a trigger follows every delete, whoever makes it), matches the count lore's
/// catch-ups keep in `meta`, and so does the number the BM25 postings hold (they answer every
/// lexical query). Rows deleted inside the file by hand make it false; rows lost to
/// damaged pages without a `DELETE` do not (SQLite reports those as corruption when read).
/// Reading the few rows of `counts` costs the same at any size, where counting the rows cost
/// 9 ms a process at a million memories.
pub fn rows_intact(conn: &Connection) -> Result<bool> {
    let kept: Option<String> = conn
        .query_row("SELECT value FROM meta WHERE name = 'docs'", [], |r| {
            r.get(0)
        })
        .optional()?;
    let Some(kept) = kept.and_then(|v| v.parse::<i64>().ok()) else {
        return Ok(true);
    };
    let rows: i64 = conn.query_row("SELECT coalesce(sum(n), 0) FROM counts", [], |r| r.get(0))?;
    Ok(rows == kept && super::postings::totals(conn)?.0 == kept)
}

/// A value from `meta`.
pub fn read_meta(conn: &Connection, name: &str) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached("SELECT value FROM meta WHERE name = ?1")?
        .query_row([name], |r| r.get(0))
        .optional()?)
}

/// Sets a value in `meta`.
pub fn write_meta(conn: &Connection, name: &str, value: &str) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO meta (name, value) VALUES (?1, ?2)
         ON CONFLICT (name) DO UPDATE SET value = excluded.value",
    )?
    .execute(params![name, value])?;
    Ok(())
}

/// Records the number of indexed memories.
pub fn write_doc_count(conn: &Connection, docs: i64) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO meta (name, value) VALUES ('docs', ?1)
         ON CONFLICT (name) DO UPDATE SET value = excluded.value",
    )?
    .execute(params![docs.to_string()])?;
    Ok(())
}

/// Empties every table (before a full rebuild inside a transaction).
pub fn clear(conn: &Connection) -> Result<()> {
    conn.execute_batch(
        "DELETE FROM memories; DELETE FROM invalid; DELETE FROM namespaces; DELETE FROM chunks;
         DELETE FROM mentions; DELETE FROM postings; DELETE FROM postings_tail;
         DELETE FROM meta WHERE name IN ('postings_docs', 'postings_tokens', 'postings_tail');",
    )?;
    Ok(())
}

/// A hash of a memory's text, insensitive to case and whitespace: equal hashes in one namespace
/// mean the same content (the exact half of the novelty check).
pub fn content_hash(summary: &str, body: &str) -> String {
    let mut h = crate::hash::Fnv1a::new();
    for word in summary
        .split_whitespace()
        .chain(["\u{1}"])
        .chain(body.split_whitespace())
    {
        for c in word.chars().flat_map(char::to_lowercase) {
            h.write(c.encode_utf8(&mut [0u8; 4]).as_bytes());
        }
        h.write_u64(0x20);
    }
    let h = h.finish();
    format!("{h:016x}")
}

/// Prepared statements for applying file changes.
pub struct Writer<'c> {
    insert: CachedStatement<'c>,
    remove: CachedStatement<'c>,
    find: CachedStatement<'c>,
    update: CachedStatement<'c>,
    uncount: CachedStatement<'c>,
    remove_invalid: CachedStatement<'c>,
    insert_invalid: CachedStatement<'c>,
    insert_mention: CachedStatement<'c>,
    count: CachedStatement<'c>,
    conn: &'c Connection,
    /// Net change in the number of indexed memories.
    pub delta: i64,
    /// Row ids removed, in order.
    pub removed_rows: Vec<i64>,
    /// Row ids inserted, in order.
    pub inserted_rows: Vec<i64>,
    /// The BM25 postings' changes, applied by [`Writer::finish`].
    postings: super::postings::PendingPostings,
}

impl<'c> Writer<'c> {
    pub fn new(conn: &'c Connection) -> Result<Self> {
        Ok(Self {
            insert: conn.prepare_cached(
                "INSERT INTO memories (path, blob, id, namespace, key, summary, body, tags,
                                       status, created, updated, record, content, session)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            )?,
            remove: conn.prepare_cached(
                "DELETE FROM memories WHERE path = ?1 RETURNING rowid, summary, body, tags",
            )?,
            find: conn.prepare_cached(
                "SELECT rowid, summary, body, tags, namespace, status FROM memories WHERE path = ?1",
            )?,
            update: conn.prepare_cached(
                "UPDATE memories SET blob = ?2, id = ?3, namespace = ?4, key = ?5, status = ?6,
                     created = ?7, updated = ?8, record = ?9, session = ?10
                 WHERE rowid = ?1",
            )?,
            uncount: conn.prepare_cached(
                "UPDATE counts SET n = n - 1 WHERE namespace = ?1 AND status = ?2",
            )?,
            remove_invalid: conn.prepare_cached("DELETE FROM invalid WHERE path = ?1")?,
            insert_invalid: conn.prepare_cached(
                "INSERT OR REPLACE INTO invalid (path, blob, message) VALUES (?1, ?2, ?3)",
            )?,
            insert_mention: conn
                .prepare_cached("INSERT OR IGNORE INTO mentions (path, memory) VALUES (?1, ?2)")?,
            count: conn.prepare_cached(
                "INSERT INTO counts (namespace, status, n) VALUES (?1, ?2, 1)
                 ON CONFLICT (namespace, status) DO UPDATE SET n = n + 1",
            )?,
            conn,
            delta: 0,
            removed_rows: Vec::new(),
            inserted_rows: Vec::new(),
            postings: Default::default(),
        })
    }

    /// Applies what is queued for the BM25 postings: call once every change is written.
    pub fn finish(&mut self) -> Result<()> {
        self.postings.apply(self.conn)
    }

    /// Indexes a memory; returns its row id.
    ///
    /// Its count is written here, not by a trigger on `memories` (a statement that fires a
    /// trigger runs in a statement transaction of its own); its terms are queued for the
    /// postings. A removal still fires the delete triggers (kept so that `counts` follows rows
    /// deleted by hand, see [`rows_intact`]).
    pub fn insert_memory(&mut self, path: &str, blob: Oid, m: &Memory) -> Result<i64> {
        let record = record_json(path, m)?;
        let tags = tags_text(m);
        self.insert.execute(params![
            path,
            blob.to_string(),
            m.id.as_str(),
            m.namespace.as_str(),
            m.key.as_ref().map(|k| k.as_str()),
            m.summary,
            m.body,
            tags,
            m.status.as_str(),
            m.created.as_millisecond(),
            m.updated.as_millisecond(),
            record,
            content_hash(&m.summary, &m.body),
            m.session,
        ])?;
        self.delta += 1;
        let rowid = self.conn.last_insert_rowid();
        self.count
            .execute(params![m.namespace.as_str(), m.status.as_str()])?;
        self.postings.add(rowid, &m.summary, &m.body, &tags);
        for path in crate::index::mentions::paths_of(m) {
            self.insert_mention.execute(params![path, rowid])?;
        }
        self.inserted_rows.push(rowid);
        Ok(rowid)
    }

    /// Re-indexes a memory whose file changed but whose indexed text (summary, body, tags) did
    /// not (a status change, a supersession, a relation or confidence set) by rewriting its row
    /// where it is: its postings and vectors hold only that text, so they stay, where a remove
    /// and insert would take the memory out of every block of its terms and embed it again.
    /// Only its count (when the status moved) and its cited paths follow. Returns false, having
    /// written nothing, when the text changed or the path has no row (the caller removes and
    /// inserts).
    pub fn update_in_place(&mut self, path: &str, blob: Oid, m: &Memory) -> Result<bool> {
        let tags = tags_text(m);
        let found = self
            .find
            .query_row(params![path], |r| {
                let same = text_at(r, 1)? == m.summary
                    && text_at(r, 2)? == m.body
                    && text_at(r, 3)? == tags;
                Ok((
                    r.get::<_, i64>(0)?,
                    same,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                ))
            })
            .optional()?;
        let Some((rowid, true, namespace, status)) = found else {
            return Ok(false);
        };
        self.update.execute(params![
            rowid,
            blob.to_string(),
            m.id.as_str(),
            m.namespace.as_str(),
            m.key.as_ref().map(|k| k.as_str()),
            m.status.as_str(),
            m.created.as_millisecond(),
            m.updated.as_millisecond(),
            record_json(path, m)?,
            m.session,
        ])?;
        if (namespace.as_str(), status.as_str()) != (m.namespace.as_str(), m.status.as_str()) {
            self.uncount.execute(params![namespace, status])?;
            self.conn
                .prepare_cached(
                    "DELETE FROM counts WHERE namespace = ?1 AND status = ?2 AND n <= 0",
                )?
                .execute(params![namespace, status])?;
            self.count
                .execute(params![m.namespace.as_str(), m.status.as_str()])?;
        }
        self.conn
            .prepare_cached("DELETE FROM mentions WHERE memory = ?1")?
            .execute(params![rowid])?;
        for path in crate::index::mentions::paths_of(m) {
            self.insert_mention.execute(params![path, rowid])?;
        }
        self.remove_invalid.execute(params![path])?;
        Ok(true)
    }

    pub fn insert_invalid(&mut self, path: &str, blob: Oid, error: &Error) -> Result<()> {
        let message = match error {
            Error::Record { message, .. } => message.clone(),
            other => other.to_string(),
        };
        self.insert_invalid
            .execute(params![path, blob.to_string(), message])?;
        Ok(())
    }

    pub fn remove_memory(&mut self, path: &str) -> Result<()> {
        let rows: Vec<(i64, String, String, String)> = self
            .remove
            .query_map(params![path], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })?
            .collect::<std::result::Result<_, _>>()?;
        self.delta -= rows.len() as i64;
        for (rowid, summary, body, tags) in rows {
            self.postings.remove(rowid, summary, body, tags);
            self.removed_rows.push(rowid);
        }
        self.remove_invalid.execute(params![path])?;
        Ok(())
    }

    pub fn set_namespace(&mut self, name: &str, present: bool) -> Result<()> {
        if present {
            self.conn.execute(
                "INSERT OR IGNORE INTO namespaces (name) VALUES (?1)",
                params![name],
            )?;
        } else {
            self.conn
                .execute("DELETE FROM namespaces WHERE name = ?1", params![name])?;
        }
        Ok(())
    }
}
#[cfg(test)]
mod tests {
    /// Packing runs on a connection of its own: the caller's temporary tables (the query
    /// vocabulary a search makes on first use) survive it, and the file shrinks.
    #[test]
    fn packing_keeps_the_callers_temporary_tables_and_shrinks_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.sqlite3");
        let conn = rusqlite::Connection::open(&path).unwrap();
        super::prepare(&conn).unwrap();
        conn.execute_batch(
            "CREATE TEMP TABLE kept (x); INSERT INTO kept VALUES (1);
             CREATE TABLE filler (x); INSERT INTO filler
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)
             SELECT randomblob(200) FROM n;
             DELETE FROM filler; PRAGMA wal_checkpoint(TRUNCATE);",
        )
        .unwrap();
        let size = || std::fs::metadata(&path).unwrap().len();
        let before = size();
        assert!(super::pack(&conn).unwrap());
        assert!(size() < before / 4, "{before} -> {}", size());
        let kept: i64 = conn
            .query_row("SELECT x FROM kept", [], |r| r.get(0))
            .unwrap();
        assert_eq!(kept, 1);
        // An index in memory is not packed.
        let memory = rusqlite::Connection::open_in_memory().unwrap();
        assert!(!super::pack(&memory).unwrap());
    }

    /// A migration says whether it brought the index forward: false for one already current
    /// (another process brought it forward while this one waited for the lock), which the
    /// caller then does not pack again.
    #[test]
    fn a_migration_reports_whether_it_brought_the_index_forward() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        super::create(&conn).unwrap();
        assert!(!super::migrate(&conn).unwrap());
        conn.pragma_update(None, "user_version", 10).unwrap();
        assert!(super::migrate(&conn).unwrap());
        assert_eq!(super::version(&conn).unwrap(), super::SCHEMA_VERSION);
        assert!(!super::migrate(&conn).unwrap());
    }

    #[test]
    fn content_hashes_ignore_case_and_spacing_and_are_stable() {
        let h = super::content_hash("Port  8080 Open", "Body ünï\ntext");
        assert_eq!(h, "04dbebce056950b7");
        assert_eq!(super::content_hash("port 8080 open", "body ÜNÏ text"), h);
        assert_ne!(super::content_hash("port 8080", "open body ünï text"), h);
    }
}
