//! Upkeep after writes: the index settled and lore's loose objects packed after an import, a
//! pack when a write leaves more loose objects than git's own `gc.auto` threshold, the vector
//! cache written again as one segment apart from the command that found it grown; what the
//! store takes on disk, for `status`.

use std::path::{Path, PathBuf};

use super::{Lore, missing_index};
use crate::error::Result;

/// git's default `gc.auto`: about this many loose objects call for packing.
const GC_AUTO_DEFAULT: u64 = 6700;

impl Lore {
    /// Leaves upkeep a read finds due (the vector cache grown to too many segments, written
    /// again in seconds at a million memories) for [`Lore::upkeep`], which a front end runs
    /// apart from the command (as git runs `gc --auto` in the background); see
    /// [`Lore::take_wanted_upkeep`].
    pub fn defer_upkeep(&mut self) {
        self.defer_upkeep = true;
        if let Some(index) = &self.index {
            index.defer_compaction();
        }
    }

    /// The stores (their git directories) whose reads left upkeep for [`Lore::upkeep`] (with
    /// [`Lore::defer_upkeep`]) since this was last asked: this handle's own, and those of the
    /// other scopes' stores it read (a recall over `--scope all`).
    pub fn take_wanted_upkeep(&mut self) -> Vec<PathBuf> {
        let mut wanted = Vec::new();
        if self.index.as_ref().is_some_and(|i| i.take_wanted_upkeep()) {
            wanted.push(self.store.common_dir());
        }
        for other in self.stack.opened_mut() {
            wanted.extend(other.take_wanted_upkeep());
        }
        wanted
    }

    /// The upkeep reads leave (see [`Lore::defer_upkeep`]): the index caught up, then its vector
    /// cache written again as one segment if it has grown too many. Returns whether it wrote.
    /// One process at a time: while another runs it (the commands that found the cache grown
    /// before it was written again each start one), this returns at once.
    pub fn upkeep(&mut self) -> Result<bool> {
        let cache = crate::index::vectors_cache_path(&crate::index::index_path(&self.store));
        let mut running = cache.into_os_string();
        running.push(".upkeep");
        let Some(_running) = crate::localstate::FileLock::try_exclusive(Path::new(&running))?
        else {
            return Ok(false);
        };
        self.index()?;
        self.index
            .as_ref()
            .ok_or_else(missing_index)?
            .compact_vectors()
    }

    /// After an import: the index settled (see [`crate::index::Index::settle`]) and the loose
    /// objects packed (`git repack -d`: only reachable loose objects go into the pack, nothing
    /// unreferenced is deleted, so another writer's objects are left as they are).
    pub fn settle_after_import(&mut self) -> Result<()> {
        self.index()?;
        let index = self.index.as_ref().ok_or_else(missing_index)?;
        index.settle()?;
        self.store.pack_objects()?;
        Ok(())
    }

    /// Packs the loose objects when git's `gc.auto` threshold says so (estimated as git does,
    /// from one of the 256 fan-out directories); returns whether it packed. A threshold of 0
    /// (`git config gc.auto 0`) turns it off.
    pub fn pack_if_due(&self) -> Result<bool> {
        self.pack_if_over(0)
    }

    /// Packs the loose objects when there are more than `least` of them and more than git's
    /// `gc.auto` threshold (0 there turns packing off). An import between its batches passes a
    /// large `least`: each pack walks every reachable tree, so packing after every batch would
    /// cost more than the disk it saves while the store is small.
    pub fn pack_if_over(&self, least: u64) -> Result<bool> {
        let threshold = self
            .store
            .repo()
            .config()
            .and_then(|c| c.get_i64("gc.auto"))
            .map(|v| v.max(0) as u64)
            .unwrap_or(GC_AUTO_DEFAULT);
        if threshold == 0 || !too_many_loose(&self.store.common_dir(), threshold.max(least)) {
            return Ok(false);
        }
        self.store.pack_objects()
    }
}

/// Whether the object database holds more than about `threshold` loose objects: git's own
/// estimate, 256 times the objects in `objects/17`.
fn too_many_loose(git_dir: &Path, threshold: u64) -> bool {
    loose_estimate(git_dir) > threshold.div_ceil(256) * 256
}

/// Loose objects, estimated as git estimates them: 256 times those in `objects/17`.
fn loose_estimate(git_dir: &Path) -> u64 {
    std::fs::read_dir(git_dir.join("objects").join("17"))
        .map(|entries| entries.flatten().count() as u64 * 256)
        .unwrap_or(0)
}

/// What the store takes on disk, read from a few directories (no walk of the objects).
#[derive(Clone, Debug, Default, serde::Serialize, schemars::JsonSchema)]
pub struct DiskUse {
    /// lore's derived files (`<git dir>/lore`: the index, its vector cache, per-clone state),
    /// in bytes allocated.
    pub derived_bytes: u64,
    /// The repository's packs, in bytes (lore's objects and any others the repository keeps).
    pub packed_bytes: u64,
    /// Loose objects, estimated as git does from one of its 256 fan-out directories.
    pub loose_objects: u64,
}

/// Measures the store whose git directory is `git_dir`.
pub(super) fn disk_use(git_dir: &Path) -> DiskUse {
    DiskUse {
        derived_bytes: allocated(&git_dir.join("lore")),
        packed_bytes: crate::store::pack_sizes(git_dir).iter().sum(),
        loose_objects: loose_estimate(git_dir),
    }
}

/// Bytes allocated to the files under `dir`, recursively.
fn allocated(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt as _;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => allocated(&e.path()),
            Ok(_) => e.metadata().map(|m| m.blocks() * 512).unwrap_or(0),
            Err(_) => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loose_objects_are_estimated_from_one_fan_out_directory() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!too_many_loose(dir.path(), 6700), "no objects directory");
        let fan = dir.path().join("objects").join("17");
        std::fs::create_dir_all(&fan).unwrap();
        for i in 0..27 {
            std::fs::write(fan.join(format!("{i:038}")), b"x").unwrap();
        }
        assert!(
            !too_many_loose(dir.path(), 6700),
            "27 is the threshold's share"
        );
        std::fs::write(fan.join("extra"), b"x").unwrap();
        assert!(too_many_loose(dir.path(), 6700));
        assert_eq!(disk_use(dir.path()).loose_objects, 28 * 256);
    }

    #[test]
    fn disk_use_counts_packs_and_derived_files() {
        let dir = tempfile::tempdir().unwrap();
        let pack = dir.path().join("objects").join("pack");
        std::fs::create_dir_all(&pack).unwrap();
        std::fs::write(pack.join("pack-1.pack"), vec![0u8; 1000]).unwrap();
        std::fs::write(pack.join("pack-1.idx"), vec![0u8; 500]).unwrap();
        std::fs::create_dir_all(dir.path().join("lore").join("ctx")).unwrap();
        std::fs::write(
            dir.path().join("lore").join("ctx").join("t"),
            vec![1u8; 9000],
        )
        .unwrap();
        let used = disk_use(dir.path());
        assert_eq!(used.packed_bytes, 1000, "only .pack files");
        assert!(used.derived_bytes >= 9000, "{used:?}");
        assert_eq!(used.loose_objects, 0);
    }
}
