//! The per-branch journal of uncommitted steps: one JSON line per step in a local file under the
//! git directory, appended under an exclusive file lock and synced before the call returns.
//!
//! Durability and concurrency: an append takes the lock, starts a fresh line if a crash left a
//! torn one, writes the whole line with one `write`, and `fsync`s. Readers take a shared lock. A
//! torn or unreadable line is skipped and counted, never fatal. Committing takes the lock for the
//! whole commit, so a step appended meanwhile waits and lands in the emptied journal.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::ctx::step::Step;
use crate::error::{Error, Result};

/// The uncommitted steps of one branch.
pub struct Journal {
    path: PathBuf,
}

/// What reading a journal found.
#[derive(Clone, Debug, Default)]
pub struct JournalContents {
    /// The steps, in the order they were appended.
    pub steps: Vec<Step>,
    /// Lines that could not be read (a crash mid-append leaves at most one).
    pub damaged: usize,
}

fn io(context: String) -> impl FnOnce(std::io::Error) -> Error {
    move |source| Error::Io { context, source }
}

impl Journal {
    /// The journal of `branch` in `dir`.
    pub fn new(dir: &Path, branch: &str) -> Journal {
        Journal {
            path: dir.join(format!("{branch}.jsonl")),
        }
    }

    /// The journal's file.
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

    /// Appends a step; when this returns, the step is on disk.
    pub fn append(&self, step: &Step) -> Result<()> {
        let mut line = serde_json::to_string(step).map_err(|e| Error::Parse {
            context: "writing a step".into(),
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

    /// Reads the journal under a shared lock.
    pub fn read(&self) -> Result<JournalContents> {
        if !self.path.exists() {
            return Ok(JournalContents::default());
        }
        let mut file = self.open()?;
        let context = format!("reading {}", self.path.display());
        file.lock_shared().map_err(io(context.clone()))?;
        read_all(&mut file, &context)
    }

    /// Runs `commit` with the journal's steps under the exclusive lock; when it succeeds the
    /// journal is emptied. Appenders wait meanwhile, so no step is lost or committed twice.
    pub fn drain<T>(&self, commit: impl FnOnce(&JournalContents) -> Result<T>) -> Result<T> {
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

    /// Deletes the journal (its branch is gone).
    pub fn remove(&self) -> Result<()> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::io(format!("removing {}", self.path.display()), e)),
        }
    }
}

fn read_all(file: &mut File, context: &str) -> Result<JournalContents> {
    let mut text = Vec::new();
    file.seek(SeekFrom::Start(0))
        .map_err(io(context.to_string()))?;
    file.read_to_end(&mut text)
        .map_err(io(context.to_string()))?;
    let mut out = JournalContents::default();
    for line in text.split(|b| *b == b'\n') {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Step>(line) {
            Ok(step) => out.steps.push(step),
            Err(_) => out.damaged += 1,
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ctx::step::NewStep;

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
        let texts: Vec<_> = read.steps.iter().map(|s| s.text.clone().unwrap()).collect();
        assert_eq!(texts, ["one", "two"]);
        let n = journal.drain(|c| Ok(c.steps.len())).unwrap();
        assert_eq!(n, 2);
        assert!(journal.read().unwrap().steps.is_empty());
    }

    #[test]
    fn a_failed_commit_keeps_the_steps() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::new(dir.path(), "main");
        journal.append(&step("kept")).unwrap();
        let failed: Result<()> = journal.drain(|_| Err(Error::NotFound("x".into())));
        assert!(failed.is_err());
        assert_eq!(journal.read().unwrap().steps.len(), 1);
    }
}
