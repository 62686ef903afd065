//! Ref locks left behind by a process that died: told apart from a live writer's lock, reported,
//! and removed so the next writer does not wait on a holder that is gone.
//!
//! git (and libgit2) update a ref by creating `<ref>.lock` exclusively, writing the new value
//! and renaming the file over the ref, all within milliseconds, with the file held open until
//! just before the rename. A lock is **stale** when no process holds it open (read from
//! `/proc/*/fd`, where there is one) and it is older than [`OPEN_CHECK_AGE`], or, where open
//! files cannot be seen, when it is older than [`BLIND_AGE`]. Anything younger is contention,
//! and the writer retries as before.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::Store;
use crate::error::{Error, Result};

/// A lock no process holds open is stale once it is this old (a live writer renames its lock
/// microseconds after closing it).
pub const OPEN_CHECK_AGE: Duration = Duration::from_millis(200);
/// Where open files cannot be seen, a lock is stale once it is this old.
pub const BLIND_AGE: Duration = Duration::from_secs(30);

/// A lock file of one of lore's refs.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct StaleLock {
    /// The lock file.
    pub path: String,
    /// How long ago it was last written, in milliseconds.
    pub age_ms: u64,
}

/// What one lock file is.
enum LockState {
    /// There is none.
    Absent,
    /// A live writer's (or too young to tell).
    Held,
    /// Left by a process that is gone.
    Stale(StaleLock),
}

impl Store {
    /// The lock file git uses for `refname` (lore's refs live in the common directory).
    pub(crate) fn ref_lock_path(&self, refname: &str) -> PathBuf {
        self.common_dir().join(format!("{refname}.lock"))
    }

    /// Removes `refname`'s lock when its holder is gone, with a warning naming it. Returns
    /// whether it did (false: no lock, or a live writer's).
    pub(crate) fn heal_stale_lock(&self, refname: &str) -> Result<bool> {
        let path = self.ref_lock_path(refname);
        let LockState::Stale(stale) = lock_state(&path) else {
            return Ok(false);
        };
        // Moved aside first, so that of two healers only one removes it, and a fresh lock a
        // live writer made meanwhile (another inode) is put back rather than removed.
        let seen = inode(&path);
        let aside = path.with_extension(format!("lock.stale-{}", std::process::id()));
        if std::fs::rename(&path, &aside).is_err() {
            return Ok(false);
        }
        if inode(&aside) != seen {
            // Put back; should that fail, the live writer's update fails and it retries. Either
            // way the file aside is only a name for that lock, and goes.
            let _ = std::fs::hard_link(&aside, &path);
            let _ = std::fs::remove_file(&aside);
            return Ok(false);
        }
        std::fs::remove_file(&aside)
            .map_err(|e| Error::io(format!("removing {}", aside.display()), e))?;
        self.warn(format!(
            "removed a stale lock {} left {} ms before by a process that is gone",
            stale.path, stale.age_ms
        ));
        Ok(true)
    }

    /// The stale locks of lore's refs (for `status`), without removing them.
    pub fn stale_locks(&self) -> Vec<StaleLock> {
        let mut out = Vec::new();
        let root = self.common_dir();
        let mut dirs = vec![root.join("refs/lore")];
        while let Some(dir) = dirs.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "lock")
                    && let LockState::Stale(mut stale) = lock_state(&path)
                {
                    stale.path = path
                        .strip_prefix(&root)
                        .unwrap_or(&path)
                        .display()
                        .to_string();
                    out.push(stale);
                }
            }
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out
    }
}

fn lock_state(path: &Path) -> LockState {
    let Ok(meta) = std::fs::metadata(path) else {
        return LockState::Absent;
    };
    let age = meta
        .modified()
        .ok()
        .and_then(|m| SystemTime::now().duration_since(m).ok())
        .unwrap_or_default();
    // A young lock is contention whoever holds it; only an older one is worth a look at /proc.
    let stale = age >= OPEN_CHECK_AGE
        && match held_open(path) {
            Some(held) => !held,
            None => age >= BLIND_AGE,
        };
    if stale {
        LockState::Stale(StaleLock {
            path: path.display().to_string(),
            age_ms: u64::try_from(age.as_millis()).unwrap_or(u64::MAX),
        })
    } else {
        LockState::Held
    }
}

#[cfg(unix)]
fn inode(path: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| m.ino())
}

#[cfg(not(unix))]
fn inode(_path: &Path) -> Option<u64> {
    None
}

/// Whether any process holds `path` open: Some(answer) where `/proc/<pid>/fd` can be read,
/// None where it cannot be known (no `/proc`).
fn held_open(path: &Path) -> Option<bool> {
    let wanted = std::fs::canonicalize(path).ok()?;
    let procs = std::fs::read_dir("/proc").ok()?;
    for process in procs.flatten() {
        let name = process.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        // Another user's descriptors cannot be read; lore's refs are written by their owner.
        let Ok(fds) = std::fs::read_dir(process.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if std::fs::read_link(fd.path()).is_ok_and(|target| target == wanted) {
                return Some(true);
            }
        }
    }
    Some(false)
}
