//! Local files of JSON lines under the git directory (the context journal of uncommitted steps,
//! the capture review queue), kept by the rule of [`crate::localstate`].
//!
//! Every operation holds the lock of the companion `<name>.jsonl.lock` file, never a lock on the
//! data file: appends, drains and rewrites hold it exclusively, reads shared. An append starts a
//! fresh line if a crash left a torn one, writes the whole line with one `write`, and `fsync`s
//! before the lock is let go. A drain empties the file in place; a rewrite writes the new content
//! to a temporary file of its own and renames it over the old one. A torn or unreadable line is
//! skipped and counted, never fatal.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{FileLock, replace_contents};
use crate::error::{Error, Result};

/// A file of JSON lines, one `T` per line.
pub struct LineFile<T> {
    path: PathBuf,
    _item: std::marker::PhantomData<fn() -> T>,
}

/// What reading a line file found.
#[derive(Clone, Debug)]
pub struct Contents<T> {
    /// The items, in the order they were appended.
    pub items: Vec<T>,
    /// Lines that could not be read (a crash mid-append leaves at most one).
    pub damaged: usize,
}

impl<T> Default for Contents<T> {
    fn default() -> Self {
        Contents {
            items: Vec::new(),
            damaged: 0,
        }
    }
}

fn io(context: String) -> impl FnOnce(std::io::Error) -> Error {
    move |source| Error::Io { context, source }
}

impl<T: Serialize + DeserializeOwned> LineFile<T> {
    /// The file `name`.jsonl in `dir`.
    pub fn new(dir: &Path, name: &str) -> LineFile<T> {
        LineFile {
            path: dir.join(format!("{name}.jsonl")),
            _item: std::marker::PhantomData,
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens the data file for appending and reading (creating it). The caller holds the lock.
    fn open(&self) -> Result<File> {
        if let Some(parent) = self.path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(io(format!("creating {}", parent.display())))?;
        }
        OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&self.path)
            .map_err(io(format!("opening {}", self.path.display())))
    }

    /// Reads the data file, empty when there is none. The caller holds the lock.
    fn read_locked(&self) -> Result<Contents<T>> {
        let context = format!("reading {}", self.path.display());
        match File::open(&self.path) {
            Ok(mut file) => read_all(&mut file, &context),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Contents::default()),
            Err(e) => Err(Error::io(context, e)),
        }
    }

    /// Appends one line to the data file and syncs it, once `check` accepts the line (the
    /// store's secret guard; nothing is written otherwise). The caller holds the exclusive lock.
    fn append_locked(&self, item: &T, check: impl FnOnce(&[u8]) -> Result<()>) -> Result<()> {
        let mut line = serde_json::to_string(item).map_err(|e| Error::Parse {
            context: format!("writing to {}", self.path.display()),
            message: e.to_string(),
        })?;
        check(line.as_bytes())?;
        line.push('\n');
        let mut file = self.open()?;
        let context = format!("appending to {}", self.path.display());
        let len = file.metadata().map_err(io(context.clone()))?.len();
        if len > 0 {
            let mut last = [0u8; 1];
            file.seek(SeekFrom::Start(len - 1))
                .map_err(io(context.clone()))?;
            file.read_exact(&mut last).map_err(io(context.clone()))?;
            if last[0] != b'\n' {
                line.insert(0, '\n');
            }
        }
        file.write_all(line.as_bytes())
            .map_err(io(context.clone()))?;
        file.sync_data().map_err(io(context))
    }

    /// Appends an item; when this returns, it is on disk.
    pub fn append(&self, item: &T) -> Result<()> {
        self.append_checked(item, |_| Ok(()))
    }

    /// Appends an item once `check` accepts its line as it will be written.
    pub fn append_checked(&self, item: &T, check: impl FnOnce(&[u8]) -> Result<()>) -> Result<()> {
        let _lock = FileLock::exclusive(&self.path)?;
        self.append_locked(item, check)
    }

    /// Appends an item unless an item already in the file matches `exists`, once `check`
    /// accepts its line; says whether it appended. The look and the append happen under one
    /// lock, so two processes appending the same item at once append it once.
    pub fn append_unless(
        &self,
        item: &T,
        exists: impl Fn(&T) -> bool,
        check: impl FnOnce(&[u8]) -> Result<()>,
    ) -> Result<bool> {
        let _lock = FileLock::exclusive(&self.path)?;
        if self.read_locked()?.items.iter().any(exists) {
            return Ok(false);
        }
        self.append_locked(item, check)?;
        Ok(true)
    }

    /// Reads the file under the shared lock.
    pub fn read(&self) -> Result<Contents<T>> {
        if !self.path.exists() {
            return Ok(Contents::default());
        }
        let _lock = FileLock::shared(&self.path)?;
        self.read_locked()
    }

    /// Runs `commit` with the items under the exclusive lock; when it succeeds the file is
    /// emptied. Appenders wait meanwhile, so no item is lost or taken twice.
    pub fn drain<R>(&self, commit: impl FnOnce(&Contents<T>) -> Result<R>) -> Result<R> {
        let _lock = FileLock::exclusive(&self.path)?;
        let contents = self.read_locked()?;
        let value = commit(&contents)?;
        let context = format!("committing {}", self.path.display());
        match OpenOptions::new().write(true).open(&self.path) {
            Ok(file) => {
                if file.metadata().map_err(io(context.clone()))?.len() > 0 {
                    file.set_len(0).map_err(io(context.clone()))?;
                    file.sync_all().map_err(io(context))?;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(context, e)),
        }
        Ok(value)
    }

    /// Lets `edit` change the items under the exclusive lock, then writes them back (through a
    /// temporary file renamed over the old one, so a crash leaves either version whole).
    pub fn rewrite<R>(&self, edit: impl FnOnce(&mut Vec<T>) -> Result<R>) -> Result<R> {
        let _lock = FileLock::exclusive(&self.path)?;
        let mut contents = self.read_locked()?;
        let value = edit(&mut contents.items)?;
        let mut text = String::new();
        for item in &contents.items {
            text.push_str(&serde_json::to_string(item).map_err(|e| Error::Parse {
                context: format!("rewriting {}", self.path.display()),
                message: e.to_string(),
            })?);
            text.push('\n');
        }
        replace_contents(&self.path, text.as_bytes())?;
        Ok(value)
    }

    /// Deletes the file (its lock file stays: another process may be waiting on it).
    pub fn remove(&self) -> Result<()> {
        let _lock = FileLock::exclusive(&self.path)?;
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::io(format!("removing {}", self.path.display()), e)),
        }
    }
}

fn read_all<T: DeserializeOwned>(file: &mut File, context: &str) -> Result<Contents<T>> {
    let mut text = Vec::new();
    file.seek(SeekFrom::Start(0))
        .map_err(io(context.to_string()))?;
    file.read_to_end(&mut text)
        .map_err(io(context.to_string()))?;
    let mut out = Contents::default();
    for line in text.split(|b| *b == b'\n') {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<T>(line) {
            Ok(item) => out.items.push(item),
            Err(_) => out.damaged += 1,
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::log_md::{NewStep, Step};

    type Journal = LineFile<Step>;

    fn step(text: &str) -> Step {
        NewStep {
            text: Some(text.into()),
            ..NewStep::default()
        }
        .into_step()
        .unwrap()
    }

    #[test]
    fn a_torn_line_is_skipped_and_the_next_append_starts_fresh() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::new(dir.path(), "main");
        journal.append(&step("one")).unwrap();
        // A crash in the middle of a write leaves half a line.
        let mut f = OpenOptions::new()
            .append(true)
            .open(journal.path())
            .unwrap();
        f.write_all(b"{\"id\":\"abc").unwrap();
        journal.append(&step("two")).unwrap();
        let read = journal.read().unwrap();
        assert_eq!(read.damaged, 1);
        let texts: Vec<_> = read.items.iter().map(|s| s.text.clone().unwrap()).collect();
        assert_eq!(texts, ["one", "two"]);
        let n = journal.drain(|c| Ok(c.items.len())).unwrap();
        assert_eq!(n, 2);
        assert!(journal.read().unwrap().items.is_empty());
    }

    #[test]
    fn a_failed_commit_keeps_the_steps() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::new(dir.path(), "main");
        journal.append(&step("kept")).unwrap();
        let failed: Result<()> = journal.drain(|_| Err(Error::NotFound("x".into())));
        assert!(failed.is_err());
        assert_eq!(journal.read().unwrap().items.len(), 1);
    }
}
