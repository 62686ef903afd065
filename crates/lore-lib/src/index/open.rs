//! Opening the index file, creating it, and rebuilding it without pulling files from under a
//! reader.
//!
//! Other lore processes may have the index open at any time, so lore never deletes `index.sqlite3`, `-wal` or `-shm`. A missing file
//! is created; an index of schema 8 to 11 is brought to this version in place (a column added,
//! triggers dropped, records rewritten, the key index replaced, the FTS5 table dropped, see
//! `schema::migrate`), and packed; an index of another schema version, a damaged one (`SQLITE_CORRUPT`) and a reset
//! (`reindex`, after a purge) are rebuilt *inside* the database: a fresh empty database of this
//! version is copied over it page by page with SQLite's backup API, in one write transaction, so
//! a reader sees the old index or the new empty one (which it then catches up), never a mix. A
//! file that is not a database at all (`SQLITE_NOTADB`: no process can be reading it) is replaced
//! under the `index.sqlite3.lock` file lock (see [`crate::localstate`]): a fresh database built
//! under a name of its own is renamed over it, after removing the `-wal`/`-shm` left beside it,
//! which belong to no readable database. Every other error opening or using the index (I/O,
//! busy, cannot open) is returned as it is: it says nothing about the index's content.
//!
//! Where the index cannot be written at all (a read-only `.git`, a repository of another user,
//! a read-only mount), reads still work: the index file, if there is one, is copied into memory
//! without taking a lock or creating `-wal`/`-shm`, caught up there, and dropped at exit; with no
//! file, the index is built in memory from the store. Nothing is written.

use std::cell::OnceCell;
use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::schema::{self, SchemaState};
use super::{Index, IndexNotice, vectors_cache_path};
use crate::error::{Error, Result};
use crate::localstate::FileLock;

/// How an index file is damaged, when it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Damage {
    /// A database whose pages or rows are not what this lore wrote: rebuilt in place.
    Corrupt,
    /// Not a database at all: replaced.
    NotADatabase,
}

fn damage(error: &Error) -> Option<Damage> {
    match error {
        Error::Index(rusqlite::Error::SqliteFailure(e, _)) => match e.code {
            rusqlite::ErrorCode::DatabaseCorrupt => Some(Damage::Corrupt),
            rusqlite::ErrorCode::NotADatabase => Some(Damage::NotADatabase),
            _ => None,
        },
        Error::Index(rusqlite::Error::InvalidColumnType(..))
        | Error::Index(rusqlite::Error::FromSqlConversionFailure(..)) => Some(Damage::Corrupt),
        _ => None,
    }
}

/// Opens a connection to the index file (creating an empty one). Errors are returned as they
/// are.
fn connect(path: &Path) -> Result<Connection> {
    Ok(Connection::open(path)?)
}

/// Replaces the whole database behind `conn` with an empty one of this schema version, in one
/// write transaction (SQLite's backup API copies every page and bumps the schema cookie, so other
/// connections re-read the schema). No file is removed or renamed.
fn rebuild_in_place(conn: &mut Connection) -> Result<()> {
    // A damaged file may claim more pages than it has, which SQLite refuses to start a write
    // transaction on unless the schema is writable; the copy replaces every page anyway.
    conn.pragma_update(None, "writable_schema", true)?;
    let copied = copy_empty_database_over(conn);
    let restored = conn.pragma_update(None, "writable_schema", false);
    copied?;
    Ok(restored?)
}

fn copy_empty_database_over(conn: &mut Connection) -> Result<()> {
    let page_size: i64 = conn.pragma_query_value(None, "page_size", |r| r.get(0))?;
    let fresh = Connection::open_in_memory()?;
    // A WAL database takes a copy of its own page size only.
    fresh.pragma_update(None, "page_size", page_size)?;
    schema::create(&fresh)?;
    let backup = rusqlite::backup::Backup::new(&fresh, conn)?;
    loop {
        match backup.step(-1)? {
            rusqlite::backup::StepResult::Done => return Ok(()),
            rusqlite::backup::StepResult::More => {}
            // The busy handler already waited its time out: the index is held by another
            // process.
            _ => {
                return Err(Error::Index(rusqlite::Error::SqliteFailure(
                    rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
                    Some("the index is locked by another process".into()),
                )));
            }
        }
    }
}

/// Brings an open index whose schema another lore changed since it was opened (an older lore
/// rebuilt it as its own version) to this lore's: migrated in place when it can be, else
/// rebuilt in place. Writing this version's rows into another version's tables would index a
/// memory's text twice or not at all.
pub(super) fn bring_to_this_schema(conn: &mut Connection) -> Result<()> {
    match schema::prepare(conn)? {
        SchemaState::Current => Ok(()),
        SchemaState::Other(_) => rebuild_in_place(conn),
    }
}

/// Replaces an index file that is not a database, under the index's lock file. Another process
/// may have replaced it while this one waited for the lock; it is checked again first.
fn replace_non_database(path: &Path) -> Result<Connection> {
    let _lock = FileLock::exclusive(path)?;
    let mut conn = connect(path)?;
    match schema::prepare(&conn) {
        Ok(SchemaState::Current) => return Ok(conn),
        Ok(SchemaState::Other(_)) => {
            rebuild_in_place(&mut conn)?;
            return Ok(conn);
        }
        Err(e) => match damage(&e) {
            Some(Damage::NotADatabase) => {}
            Some(Damage::Corrupt) => {
                rebuild_in_place(&mut conn)?;
                return Ok(conn);
            }
            None => return Err(e),
        },
    }
    drop(conn);
    let tmp = crate::localstate::unique_temp_path(path)?;
    let built = connect(&tmp).and_then(|fresh| Ok(schema::create(&fresh)?));
    if let Err(e) = built {
        // The temporary file is this process's alone.
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    // Files beside a file that is not a database belong to no database: a new one must not
    // replay them.
    for suffix in ["-wal", "-shm", "-journal"] {
        remove_if_present(&sibling(path, suffix))?;
    }
    std::fs::rename(&tmp, path)
        .map_err(|e| Error::io(format!("replacing {}", path.display()), e))?;
    let conn = connect(path)?;
    schema::prepare(&conn)?;
    Ok(conn)
}

pub(super) fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(suffix);
    PathBuf::from(p)
}

fn remove_if_present(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(format!("removing {}", path.display()), e)),
    }
}

impl Index {
    /// Opens the index at `path`, creating the file or rebuilding the index (see the module's
    /// documentation) if needed. The returned notice says whether that happened; the caller
    /// then catches up from the store.
    pub fn open(path: &Path) -> Result<(Index, Option<IndexNotice>)> {
        match Self::open_writable(path) {
            Err(e) if is_write_refusal(path, &e) => Ok((Self::open_in_memory(path)?, None)),
            other => other,
        }
    }

    fn open_writable(path: &Path) -> Result<(Index, Option<IndexNotice>)> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
        }
        let existed = path.exists();
        let mut conn = connect(path)?;
        let reason = match schema::prepare(&conn) {
            Ok(SchemaState::Current) => {
                let notice = (!existed).then_some(IndexNotice::Created);
                return Ok((Self::with_connection(conn, path), notice));
            }
            Ok(SchemaState::Other(version)) => format!(
                "its schema is version {version}; this lore uses version {}",
                schema::SCHEMA_VERSION
            ),
            Err(e) => match damage(&e) {
                Some(Damage::Corrupt) => format!("the index is damaged ({e})"),
                Some(Damage::NotADatabase) => {
                    drop(conn);
                    let conn = replace_non_database(path)?;
                    let reason = format!("it is not a database ({e})");
                    return Ok((
                        Self::with_connection(conn, path),
                        Some(IndexNotice::Rebuilt { reason }),
                    ));
                }
                None => return Err(e),
            },
        };
        rebuild_in_place(&mut conn)?;
        schema::prepare(&conn)?;
        Ok((
            Self::with_connection(conn, path),
            Some(IndexNotice::Rebuilt { reason }),
        ))
    }

    /// The index of a location this process may not write: a copy of the file in memory (or an
    /// empty index where the file is missing or unusable), caught up there like any index.
    pub(crate) fn open_in_memory(path: &Path) -> Result<Index> {
        let mut conn = copy_into_memory(path)?;
        if schema::prepare(&conn).ok() != Some(SchemaState::Current) {
            // Whatever the copy held is not this lore's index: start from nothing.
            conn = Connection::open_in_memory()?;
            schema::prepare(&conn)?;
        }
        let mut index = Self::with_connection(conn, path);
        index.read_only = true;
        Ok(index)
    }

    fn with_connection(conn: Connection, path: &Path) -> Index {
        Index {
            conn,
            path: path.to_path_buf(),
            embedder: None,
            vectors: OnceCell::new(),
            reloaded: OnceCell::new(),
            held: std::cell::RefCell::new(None),
            read_only: false,
            defer_compaction: std::cell::Cell::new(false),
            compaction_wanted: std::cell::Cell::new(false),
            vectors_stamp: std::cell::Cell::new(0),
            rows_verified: std::cell::Cell::new(false),
            warnings: std::cell::RefCell::new(Vec::new()),
            side_by_side_from: std::cell::Cell::new(super::search::SIDE_BY_SIDE_FROM),
        }
    }

    /// Empties the index (used after a purge and by `reindex`): rebuilt in place, so other
    /// processes reading it keep their files (see the module's documentation).
    pub fn reset(mut self) -> Result<Index> {
        match rebuild_in_place(&mut self.conn) {
            Ok(()) => {
                schema::prepare(&self.conn)?;
            }
            Err(e) if damage(&e) == Some(Damage::NotADatabase) => {
                let path = self.path.clone();
                let embedder = self.embedder.take();
                drop(self);
                let (mut fresh, _) = Index::open(&path)?;
                rebuild_in_place(&mut fresh.conn)?;
                schema::prepare(&fresh.conn)?;
                fresh.embedder = embedder;
                self = fresh;
            }
            Err(e) => return Err(e),
        }
        self.vectors = OnceCell::new();
        *self.held.get_mut() = None;
        self.rows_verified.set(false);
        // The cache is read whole and replaced by rename, so removing it takes nothing from a
        // reader.
        remove_if_present(&vectors_cache_path(&self.path))?;
        Ok(self)
    }
}

/// Whether `error`, met opening the database at `path`, means this process may not write there
/// (permissions, a read-only file system): the error says so, and so does the file system. An
/// error that only looks like it (a `-wal` that cannot be opened for another reason) is not one:
/// it is reported, not worked around.
pub(crate) fn is_write_refusal(path: &Path, error: &Error) -> bool {
    let refused = match error {
        Error::Io { source, .. } => matches!(
            source.kind(),
            std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
        ),
        Error::Index(e) => matches!(
            e.sqlite_error_code(),
            Some(
                rusqlite::ErrorCode::CannotOpen
                    | rusqlite::ErrorCode::ReadOnly
                    | rusqlite::ErrorCode::PermissionDenied
            )
        ),
        _ => false,
    };
    refused && may_not_write(path)
}

/// Whether the file system refuses this process a write to `path` or beside it. Nothing is
/// changed: the file is opened for writing without truncating, and a probe file beside it is
/// created and removed at once.
fn may_not_write(path: &Path) -> bool {
    let refusal = |e: std::io::Error| {
        matches!(
            e.kind(),
            std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
        )
    };
    if path.exists()
        && let Err(e) = std::fs::OpenOptions::new().write(true).open(path)
    {
        return refusal(e);
    }
    let Some(dir) = path.parent() else {
        return false;
    };
    if !dir.exists() {
        return dir
            .parent()
            .is_some_and(|p| may_not_write(&p.join(".lore-probe")));
    }
    let probe = dir.join(format!(".write-probe-{}", std::process::id()));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            false
        }
        Err(e) => refusal(e),
    }
}

/// The memory tip the index at `path` was last caught up to, read without changing anything
/// (none: no index, or none recorded). For finding what can restore a lost memory ref.
pub fn recorded_tip(path: &Path) -> Result<Option<git2::Oid>> {
    if !path.exists() {
        return Ok(None);
    }
    let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    schema::read_tip(&conn)
}

/// An in-memory copy of the database file at `path` for a process that may not write there: an
/// empty database when the file is missing or unreadable. The file is read as immutable, so no
/// lock is taken and no `-wal`/`-shm` is created.
pub(crate) fn copy_into_memory(path: &Path) -> Result<Connection> {
    let mut conn = Connection::open_in_memory()?;
    if copy_file_into(path, &mut conn).is_err() {
        conn = Connection::open_in_memory()?;
    }
    Ok(conn)
}

fn copy_file_into(path: &Path, conn: &mut Connection) -> Result<()> {
    if !path.exists() {
        return Ok(());
    }
    use rusqlite::OpenFlags;
    let mut uri = String::from("file:");
    for c in path.to_string_lossy().chars() {
        match c {
            '%' | '?' | '#' => uri.push_str(&format!("%{:02X}", c as u32)),
            c => uri.push(c),
        }
    }
    uri.push_str("?immutable=1");
    let source = Connection::open_with_flags(
        uri,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI,
    )?;
    let backup = rusqlite::backup::Backup::new(&source, conn)?;
    while backup.step(-1)? != rusqlite::backup::StepResult::Done {}
    Ok(())
}

/// Whether `error`, met writing the index at `path`, came from a disk with no room left (or a
/// file-size limit): SQLite says the disk is full, or an I/O error it reports is one because a
/// write of 64 KiB beside the file fails for that reason.
pub fn is_out_of_space(path: &Path, error: &Error) -> bool {
    let Error::Index(e) = error else {
        return false;
    };
    match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::DiskFull) => true,
        Some(rusqlite::ErrorCode::SystemIoFailure) => no_room_beside(path),
        _ => false,
    }
}

fn no_room_beside(path: &Path) -> bool {
    let Some(dir) = path.parent() else {
        return false;
    };
    let probe = dir.join(format!(".space-probe-{}", std::process::id()));
    let written = std::fs::write(&probe, vec![0u8; 64 << 10]);
    let _ = std::fs::remove_file(&probe);
    matches!(
        written.map_err(|e| e.kind()),
        Err(std::io::ErrorKind::StorageFull | std::io::ErrorKind::FileTooLarge)
    )
}

/// Whether an error means the index's content is damaged (`SQLITE_CORRUPT`, `SQLITE_NOTADB`, or
/// rows that do not decode), so it should be rebuilt. I/O, busy and open errors are not: they say
/// nothing about the content, and rebuilding would not help.
pub fn is_corruption(error: &Error) -> bool {
    damage(error).is_some()
}
