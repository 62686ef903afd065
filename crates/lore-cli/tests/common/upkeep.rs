//! A vector cache grown to one segment past what a reader takes as it is, held locked so that a
//! rewrite cannot happen inline, and waiting for the background `lore upkeep` to write it again.

use std::fs::File;
use std::time::{Duration, Instant};

use lore_testutils::TestRepo;

use super::{json, ok};

/// The vector cache's identity: a rewrite replaces the file (a rename), an append keeps it.
pub fn cache_inode(repo: &TestRepo) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let cache = repo.path().join(".git/lore/index.sqlite3.vectors");
    std::fs::metadata(cache).unwrap().ino()
}

/// Writes memories, a catch-up after each appending one segment to the cache, until it holds
/// seventeen (one more than a reader takes as it is), none of them read by a search (the last
/// catch-up is `status`'s, which reads no vectors). Returns the cache's identity.
pub fn grow_cache(repo: &TestRepo) -> u64 {
    ok(
        repo,
        &["remember", "The parser caches every template it reads"],
    );
    ok(repo, &["recall", "parser"]);
    let first = cache_inode(repo);
    for i in 0..15 {
        ok(
            repo,
            &[
                "remember",
                &format!("Deploy number {i} went out on a Tuesday"),
            ],
        );
        let found = json(repo, &["recall", "deploy Tuesday"]);
        assert!(!found["hits"].as_array().unwrap().is_empty(), "{found}");
        assert_eq!(cache_inode(repo), first, "written again after {i} segments");
    }
    ok(
        repo,
        &["remember", "Deploy number 15 went out on a Tuesday"],
    );
    ok(repo, &["status"]);
    first
}

/// The cache's lock, held: a rewrite of the file waits until it is dropped.
pub fn hold_cache_lock(repo: &TestRepo) -> File {
    let lock = File::open(repo.path().join(".git/lore/index.sqlite3.vectors.lock")).unwrap();
    lock.lock().unwrap();
    lock
}

/// Waits (a minute at most) for the cache to be replaced, by the upkeep a command started.
pub fn wait_for_rewrite(repo: &TestRepo, first: u64) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while cache_inode(repo) == first {
        assert!(
            Instant::now() < deadline,
            "no background upkeep wrote the cache again"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
