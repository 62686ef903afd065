//! Packing the repository's objects: the reachable loose objects into a pack as lore writes
//! (one packer at a time), and refs and objects together for `gc`.

use std::path::Path;
use std::time::Duration;

use super::{Store, git_cli};
use crate::error::{Error, Result};

/// Packs beyond which a repack folds all of them into one (git's `gc.autoPackLimit`).
const MOST_PACKS: usize = 50;

/// A pack lock older than this was left by a process that died.
const STALE_LOCK: Duration = Duration::from_secs(3600);

impl Store {
    /// Packs lore's refs (and every loose ref with them) and the repository's loose objects, as
    /// `git pack-refs --all` and [`Store::pack_objects`] do. Returns true when done.
    pub fn pack(&self) -> Result<bool> {
        let git = git_cli::GitCli::new(&self.common_dir(), Duration::from_secs(600));
        git.maintain(&["pack-refs", "--all"])?;
        self.repack()?;
        Ok(true)
    }

    /// Packs the repository's loose objects that its refs reach (`git repack -d`); when more
    /// than 50 packs have built up (git's `gc.autoPackLimit`), all of them are packed into one
    /// (`git repack -A -d`: what no ref reaches is left loose, never deleted, so objects a
    /// concurrent writer has not yet referenced stay).
    ///
    /// One process packs at a time: while `lore/pack.lock` exists (and is younger than an
    /// hour, else it is left by a process that died) another packer skips, returning false.
    pub fn pack_objects(&self) -> Result<bool> {
        let lock = self.common_dir().join("lore").join("pack.lock");
        let stale = std::fs::metadata(&lock)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > STALE_LOCK);
        if stale {
            let _ = std::fs::remove_file(&lock);
        }
        if let Some(dir) = lock.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display().to_string(), e))?;
        }
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&lock)
        {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(false),
            Err(e) => return Err(Error::io(lock.display().to_string(), e)),
        }
        let packed = self.repack();
        let _ = std::fs::remove_file(&lock);
        packed.map(|()| true)
    }

    /// `git repack -d`, or `-A -d` once more than [`MOST_PACKS`] packs have built up.
    fn repack(&self) -> Result<()> {
        let packs = pack_sizes(&self.common_dir()).len();
        let git = git_cli::GitCli::new(&self.common_dir(), Duration::from_secs(3600));
        match packs > MOST_PACKS {
            true => git.maintain(&["repack", "-A", "-d", "-q"]),
            false => git.maintain(&["repack", "-d", "-q"]),
        }
    }
}

/// The size in bytes of each pack of the repository whose git directory is `git_dir`.
pub fn pack_sizes(git_dir: &Path) -> Vec<u64> {
    let Ok(entries) = std::fs::read_dir(git_dir.join("objects").join("pack")) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".pack"))
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .collect()
}
