//! Local append-only files of JSON lines under the git directory (the context journal of
//! uncommitted steps, the capture review queue), appended under an exclusive file lock and synced
//! before the call returns.
//!
//! Durability and concurrency: an append takes the lock, starts a fresh line if a crash left a
//! torn one, writes the whole line with one `write`, and `fsync`s. Readers take a shared lock. A
//! torn or unreadable line is skipped and counted, never fatal. Draining or rewriting holds the
//! lock throughout, so an item appended meanwhile waits and is never lost.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

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

    /// Appends an item; when this returns, it is on disk.
    pub fn append(&self, item: &T) -> Result<()> {
        let mut line = serde_json::to_string(item).map_err(|e| Error::Parse {
            context: format!("writing to {}", self.path.display()),
            message: e.to_string(),
        })?;
        line.push('\n');
        let mut file = self.open()?;
        let context = format!("appending to {}", self.path.display());
        file.lock().map_err(io(context.clone()))?;
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
        file.sync_data().map_err(io(context))?;
        Ok(())
    }

    /// Reads the file under a shared lock.
    pub fn read(&self) -> Result<Contents<T>> {
        if !self.path.exists() {
            return Ok(Contents::default());
        }
        let mut file = self.open()?;
        let context = format!("reading {}", self.path.display());
        file.lock_shared().map_err(io(context.clone()))?;
        read_all(&mut file, &context)
    }

    /// Runs `commit` with the items under the exclusive lock; when it succeeds the file is
    /// emptied. Appenders wait meanwhile, so no item is lost or taken twice.
    pub fn drain<R>(&self, commit: impl FnOnce(&Contents<T>) -> Result<R>) -> Result<R> {
        let mut file = self.open()?;
        let context = format!("committing {}", self.path.display());
        file.lock().map_err(io(context.clone()))?;
        let contents = read_all(&mut file, &context)?;
        let value = commit(&contents)?;
        if file.metadata().map_err(io(context.clone()))?.len() > 0 {
            file.set_len(0).map_err(io(context.clone()))?;
            file.sync_all().map_err(io(context))?;
        }
        Ok(value)
    }

    /// Lets `edit` change the items under the exclusive lock, then writes them back (through a
    /// temporary file renamed over the old one, so a crash leaves either version whole).
    pub fn rewrite<R>(&self, edit: impl FnOnce(&mut Vec<T>) -> Result<R>) -> Result<R> {
        let mut file = self.open()?;
        let context = format!("rewriting {}", self.path.display());
        file.lock().map_err(io(context.clone()))?;
        let mut contents = read_all(&mut file, &context)?;
        let value = edit(&mut contents.items)?;
        let mut text = String::new();
        for item in &contents.items {
            text.push_str(&serde_json::to_string(item).map_err(|e| Error::Parse {
                context: context.clone(),
                message: e.to_string(),
            })?);
            text.push('\n');
        }
        let tmp = self.path.with_extension("jsonl.tmp");
        std::fs::write(&tmp, text).map_err(io(context.clone()))?;
        File::open(&tmp)
            .and_then(|f| f.sync_all())
            .map_err(io(context.clone()))?;
        std::fs::rename(&tmp, &self.path).map_err(io(context))?;
        Ok(value)
    }

    /// Deletes the file.
    pub fn remove(&self) -> Result<()> {
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
    use crate::ctx::step::{NewStep, Step};

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
