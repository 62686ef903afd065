//! Ref locks left behind by a process that died: told apart from a live writer's lock, reported,
//! and removed so the next writer does not wait on a holder that is gone.
//!
//! git (and libgit2) update a ref by creating `<ref>.lock` exclusively, writing the new value
//! and renaming the file over the ref, within milliseconds (libgit2 holds the file open until
//! just before the rename; git closes it earlier). A lock is **stale** when no process this one
//! can see holds it open (read from `/proc/*/fd`, where there is one) and it is older than
//! [`OPEN_CHECK_AGE`], or, where open files cannot be seen, when it is older than
//! [`BLIND_AGE`]. Anything younger is contention, and the writer retries as before.
//!
//! One healer at a time (a lock of its own, `lore/heal.lock`): while it holds that, the stale
//! file cannot be replaced by another (a writer's exclusive create fails while it exists), so
//! the file it moves aside is the one it judged; it checks the inode all the same.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::Store;
use crate::error::{Error, Result};

/// A lock no visible process holds open is stale once it is this old (a live writer renames its
/// lock within milliseconds of closing it; a writer in another process namespace or of another
/// user is not visible, hence the margin).
pub const OPEN_CHECK_AGE: Duration = Duration::from_millis(500);
/// Where open files cannot be seen, a lock is stale once it is this old.
pub const BLIND_AGE: Duration = Duration::from_secs(30);

/// A lock file of one of lore's refs.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct StaleLock {
    /// The lock file.
    pub path: String,
    /// How long ago it was last written, in milliseconds.
    pub age_ms: u64,
    /// The file judged stale (its inode), so that no other file is removed in its place.
    #[serde(skip)]
    #[schemars(skip)]
    inode: Option<u64>,
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
        // A quick look before taking the healer's lock: most contention is a live writer's.
        if !matches!(lock_state(&path), LockState::Stale(_)) {
            return Ok(false);
        }
        let healing = self.common_dir().join("lore").join("heal");
        let _one_healer = crate::localstate::FileLock::exclusive(&healing)?;
        let LockState::Stale(stale) = lock_state(&path) else {
            return Ok(false);
        };
        // Moved out of refs/ (never a ref name, should this process die before removing it),
        // then checked to be the file judged stale.
        let aside = self
            .common_dir()
            .join("lore")
            .join(format!("stale-ref-lock-{}", std::process::id()));
        if std::fs::rename(&path, &aside).is_err() {
            return Ok(false);
        }
        if inode(&aside) != stale.inode {
            // Only a lock made after the judgement could differ, and none can be made while the
            // judged one exists: put it back all the same rather than remove what is not ours.
            std::fs::rename(&aside, &path)
                .map_err(|e| Error::io(format!("putting back {}", path.display()), e))?;
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

    /// Removes every stale lock of lore's refs and remote-tracking refs (a fetch killed with
    /// its lore leaves one in `refs/lore-remotes/`, and every later fetch would fail on it).
    pub(crate) fn heal_stale_locks(&self) -> Result<usize> {
        let mut healed = 0;
        for lock in self.stale_locks() {
            if let Some(refname) = lock.path.strip_suffix(".lock")
                && self.heal_stale_lock(refname)?
            {
                healed += 1;
            }
        }
        Ok(healed)
    }

    /// The stale locks of lore's refs and remote-tracking refs (for `status`), without removing
    /// them.
    pub fn stale_locks(&self) -> Vec<StaleLock> {
        let mut out = Vec::new();
        let root = self.common_dir();
        let mut dirs = vec![root.join("refs/lore"), root.join("refs/lore-remotes")];
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
            inode: inode_of(&meta),
        })
    } else {
        LockState::Held
    }
}

fn inode(path: &Path) -> Option<u64> {
    inode_of(&std::fs::metadata(path).ok()?)
}

#[cfg(unix)]
fn inode_of(meta: &std::fs::Metadata) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    Some(meta.ino())
}

#[cfg(not(unix))]
fn inode_of(_meta: &std::fs::Metadata) -> Option<u64> {
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
