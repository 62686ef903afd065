//! A vector cache grown to one segment past what a reader takes as it is, held locked so that a
//! rewrite cannot happen inline, and waiting for the background `lore upkeep` to write it again.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use lore_testutils::TestRepo;
use serde_json::Value;

use super::json;

/// The vector cache's identity: a rewrite replaces the file (a rename), an append keeps it.
pub fn cache_inode(repo: &TestRepo) -> u64 {
    inode(&repo_cache(repo))
}

/// A project's vector cache.
pub fn repo_cache(repo: &TestRepo) -> PathBuf {
    repo.path().join(".git/lore/index.sqlite3.vectors")
}

/// A file's identity.
pub fn inode(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).unwrap().ino()
}

/// Writes memories, a catch-up after each appending one segment to the cache, until it holds
/// seventeen (one more than a reader takes as it is), none of them read by a search (the last
/// catch-up is `status`'s, which reads no vectors). Returns the cache's identity.
pub fn grow_cache(repo: &TestRepo) -> u64 {
    grow_cache_with(&|args| json(repo, args), &repo_cache(repo))
}

/// [`grow_cache`] for the store `lore` reaches with `run` (which runs lore with `--json` and
/// these arguments) whose cache is `cache`.
pub fn grow_cache_with(run: &dyn Fn(&[&str]) -> Value, cache: &Path) -> u64 {
    run(&["remember", "The parser caches every template it reads"]);
    run(&["recall", "parser"]);
    let first = inode(cache);
    for i in 0..15 {
        run(&[
            "remember",
            &format!("Deploy number {i} went out on a Tuesday"),
        ]);
        let found = run(&["recall", "deploy Tuesday"]);
        assert!(!found["hits"].as_array().unwrap().is_empty(), "{found}");
        assert_eq!(inode(cache), first, "written again after {i} segments");
    }
    run(&["remember", "Deploy number 15 went out on a Tuesday"]);
    run(&["status"]);
    first
}

/// The cache's lock, held: a rewrite of the file waits until it is dropped.
pub fn hold_cache_lock(repo: &TestRepo) -> File {
    hold_lock_of(&repo_cache(repo))
}

/// The lock of the cache `cache`, held.
pub fn hold_lock_of(cache: &Path) -> File {
    let mut lock = cache.as_os_str().to_owned();
    lock.push(".lock");
    let lock = File::open(lock).unwrap();
    lock.lock().unwrap();
    lock
}

/// Waits (a minute at most) for the cache to be replaced, by the upkeep a command started.
pub fn wait_for_rewrite(repo: &TestRepo, first: u64) {
    wait_for_replaced(&repo_cache(repo), first);
}

/// Waits (a minute at most) for the file `cache` to be replaced.
pub fn wait_for_replaced(cache: &Path, first: u64) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while inode(cache) == first {
        assert!(
            Instant::now() < deadline,
            "no background upkeep wrote the cache again"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
