//! Per-clone local state under `<git common dir>/lore/` (never pushed): the context journal and
//! the capture review queue (JSON-lines files, [`linefile`]), capture's per-session state (JSON
//! documents, [`JsonFile`]) and the index (SQLite). All of them follow one rule.
//!
//! **The rule.** Every file `F` that more than one process may change has a companion lock file
//! `F.lock`, created on first use and never deleted. Whoever changes `F`, or reads it to decide
//! what to write, holds the exclusive lock on `F.lock` from that read until the write is on disk;
//! readers that only look hold the shared lock. The lock is never taken on `F` itself, because a
//! change may replace `F` with a new file: a lock on the old file would not stop a process that
//! opens the new one. A change that replaces the whole content writes it to a temporary file of a
//! name no other process uses (process id and random digits) in the same directory and renames it
//! over `F`, so a reader sees the old content or the new, never a mix, and a crash leaves at most
//! a stray temporary file. An append writes one whole line and syncs it before the lock is let go.
//!
//! The index is SQLite's: SQLite's own locks order its transactions, its files (`-wal`, `-shm`)
//! are never removed by lore while it may be open elsewhere, and `index.sqlite3.lock` is held only
//! while a file that is not a database is replaced (see [`crate::index`]).
//!
//! Lock failures are errors (the operation cannot go on safely); a damaged document is reported
//! to the caller, who decides whether to start afresh and warn.

pub mod linefile;

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::{Error, Result};

/// Where the lock of `file` is: the same path with `.lock` appended.
pub fn lock_path(file: &Path) -> PathBuf {
    let mut p = file.as_os_str().to_owned();
    p.push(".lock");
    PathBuf::from(p)
}

/// A held lock on a file's companion lock file; let go when dropped.
#[derive(Debug)]
pub struct FileLock {
    _file: File,
}

impl FileLock {
    fn open(file: &Path) -> Result<File> {
        let path = lock_path(file);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
        }
        OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| Error::io(format!("opening the lock {}", path.display()), e))
    }

    /// Waits for the exclusive lock on `file` (for a read that decides a write, and the write).
    pub fn exclusive(file: &Path) -> Result<FileLock> {
        let lock = Self::open(file)?;
        lock.lock()
            .map_err(|e| Error::io(format!("locking {}", lock_path(file).display()), e))?;
        Ok(FileLock { _file: lock })
    }

    /// The exclusive lock on `file` if no other process holds it, else `None` at once (for work
    /// that one process at a time does, and that another need not wait to repeat).
    pub fn try_exclusive(file: &Path) -> Result<Option<FileLock>> {
        let lock = Self::open(file)?;
        match lock.try_lock() {
            Ok(()) => Ok(Some(FileLock { _file: lock })),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => Err(Error::io(
                format!("locking {}", lock_path(file).display()),
                e,
            )),
        }
    }

    /// Waits for the shared lock on `file` (for a read that changes nothing).
    pub fn shared(file: &Path) -> Result<FileLock> {
        let lock = Self::open(file)?;
        lock.lock_shared()
            .map_err(|e| Error::io(format!("locking {}", lock_path(file).display()), e))?;
        Ok(FileLock { _file: lock })
    }
}

/// A temporary name next to `file` that no other process or call uses.
pub fn unique_temp_path(file: &Path) -> Result<PathBuf> {
    let mut random = [0u8; 8];
    getrandom::fill(&mut random).map_err(|e| Error::Io {
        context: "reading the system's random source".into(),
        source: std::io::Error::other(e.to_string()),
    })?;
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(file.with_file_name(format!(
        ".{name}.{}-{:016x}.tmp",
        std::process::id(),
        u64::from_le_bytes(random)
    )))
}

/// Replaces `file`'s content with `bytes`: written and synced under a unique temporary name,
/// then renamed over `file`. The caller holds `file`'s exclusive lock.
pub fn replace_contents(file: &Path, bytes: &[u8]) -> Result<()> {
    let written = write_beside(file, bytes)?;
    written.put_in_place()
}

/// A temporary file written (and synced) beside the file it is to replace, put in its place by
/// [`Written::put_in_place`]; removed if dropped before.
pub struct Written {
    tmp: PathBuf,
    file: PathBuf,
    placed: bool,
}

/// Writes `bytes` to a temporary file beside `file` (the slow part of a replacement, done before
/// any lock a rename needs).
pub fn write_beside(file: &Path, bytes: &[u8]) -> Result<Written> {
    write_temp(file, |f| f.write_all(bytes))
}

/// Like [`write_beside`], the content written by `write` as it goes (buffered), so a large file
/// is never whole in memory.
pub fn write_beside_with(
    file: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<Written> {
    write_temp(file, |f| {
        let mut out = std::io::BufWriter::with_capacity(1 << 20, f);
        write(&mut out)?;
        out.flush()
    })
}

/// Writes a temporary file beside `file` through `write`, then syncs it.
fn write_temp(
    file: &Path,
    write: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> Result<Written> {
    let context = || format!("writing {}", file.display());
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
    }
    let written = Written {
        tmp: unique_temp_path(file)?,
        file: file.to_path_buf(),
        placed: false,
    };
    File::create(&written.tmp)
        .and_then(|mut f| {
            write(&mut f)?;
            f.sync_all()
        })
        .map_err(|e| Error::io(context(), e))?;
    Ok(written)
}

impl Written {
    /// Renames the temporary file over the file it replaces.
    pub fn put_in_place(mut self) -> Result<()> {
        std::fs::rename(&self.tmp, &self.file)
            .map_err(|e| Error::io(format!("writing {}", self.file.display()), e))?;
        self.placed = true;
        Ok(())
    }
}

impl Drop for Written {
    fn drop(&mut self) {
        // The temporary file is ours alone; it is removed so no stray copy is left.
        if !self.placed {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// A JSON document kept in one local file (capture's per-session state), changed only under its
/// lock and replaced whole.
pub struct JsonFile<T> {
    path: PathBuf,
    _item: std::marker::PhantomData<fn() -> T>,
}

/// A document read under its exclusive lock: change `value`, then [`Locked::save`]. The lock is
/// held until this is dropped, so no other process changes the document in between.
pub struct Locked<T> {
    /// The document (the default when there was none, or when it was damaged).
    pub value: T,
    /// Why the stored document could not be read, when it could not (it is then replaced by
    /// `value` on the next save).
    pub damaged: Option<String>,
    path: PathBuf,
    _lock: FileLock,
}

impl<T: Serialize> Locked<T> {
    /// Writes `value` back (the lock is still held).
    pub fn save(&self) -> Result<()> {
        let bytes = serde_json::to_vec(&self.value).map_err(|e| Error::Parse {
            context: format!("writing {}", self.path.display()),
            message: e.to_string(),
        })?;
        replace_contents(&self.path, &bytes)
    }
}

impl<T: Serialize + DeserializeOwned + Default> JsonFile<T> {
    /// The document at `path`.
    pub fn new(path: PathBuf) -> JsonFile<T> {
        JsonFile {
            path,
            _item: std::marker::PhantomData,
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the document (`None` when there is none). No lock is needed: the file is only ever
    /// replaced whole. A document that does not parse is an error.
    pub fn read(&self) -> Result<Option<T>> {
        let bytes = match std::fs::read(&self.path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(format!("reading {}", self.path.display()), e)),
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| Error::Parse {
                context: format!("reading {}", self.path.display()),
                message: e.to_string(),
            })
    }

    /// Takes the exclusive lock and reads the document, to change it.
    pub fn lock(&self) -> Result<Locked<T>> {
        let lock = FileLock::exclusive(&self.path)?;
        let (value, damaged) = match self.read() {
            Ok(v) => (v.unwrap_or_default(), None),
            Err(Error::Parse { context, message }) => {
                (T::default(), Some(format!("{context}: {message}")))
            }
            Err(e) => return Err(e),
        };
        Ok(Locked {
            value,
            damaged,
            path: self.path.clone(),
            _lock: lock,
        })
    }

    /// Replaces the document, under its lock.
    pub fn write(&self, value: T) -> Result<()> {
        let mut locked = self.lock()?;
        locked.value = value;
        locked.save()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_names_differ_and_stay_beside_the_file() {
        let file = Path::new("/x/y/state.json");
        let a = unique_temp_path(file).unwrap();
        let b = unique_temp_path(file).unwrap();
        assert_ne!(a, b);
        assert_eq!(a.parent(), file.parent());
        assert!(
            a.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(".state.json.")
        );
    }

    #[test]
    fn a_damaged_document_is_reported_and_replaced_on_save() {
        let dir = tempfile::tempdir().unwrap();
        let doc: JsonFile<Vec<u32>> = JsonFile::new(dir.path().join("d.json"));
        assert_eq!(doc.read().unwrap(), None);
        std::fs::write(doc.path(), b"{not json").unwrap();
        assert!(matches!(doc.read(), Err(Error::Parse { .. })));
        let mut locked = doc.lock().unwrap();
        assert!(locked.damaged.is_some());
        locked.value.push(7);
        locked.save().unwrap();
        drop(locked);
        assert_eq!(doc.read().unwrap(), Some(vec![7]));
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
    }
}
