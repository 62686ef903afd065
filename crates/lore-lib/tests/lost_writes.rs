//! Finding the memory commits a lost `refs/lore/memory` no longer reaches: one pass over the
//! object database (git's own packs and loose objects), and the chain past the index's tip
//! found whole, at two sizes. (Its cost is a benchmark's business, not a test's.)

use std::io::Write;
use std::process::Stdio;

use lore::{ListFilter, Lore, NewMemory, Store, WriteContext};
use lore_testutils::TestRepo;

const ID_ALPHABET: &[u8] = b"0123456789abcdefghjkmnpqrstvwxyz";

/// A memory id made from a number (its base-32 digits, least significant first).
fn id(i: usize) -> String {
    (0..12)
        .map(|k| ID_ALPHABET[(i >> (5 * k)) % 32] as char)
        .collect()
}

/// Feeds a fast-import stream to git in the repository.
fn fast_import(repo: &TestRepo, stream: &str) {
    let mut child = repo
        .git_command(&["fast-import", "--quiet"])
        .stdin(Stdio::piped())
        .spawn()
        .expect("git fast-import");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stream.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
}

/// A store whose index knows one memory, with `n` commits of project history and `n` memory
/// commits written past the index's tip, then the memory ref deleted. Returns the handle and
/// the last memory commit.
fn lost_store(n: usize) -> (TestRepo, Lore, String) {
    let repo = TestRepo::new();
    let mut lore = Lore::new(Store::discover(&repo.path()).unwrap());
    let first = NewMemory {
        namespace: "learnings".into(),
        summary: "the one the index knows".into(),
        ..NewMemory::default()
    };
    lore.remember(&first, &WriteContext::default()).unwrap();
    assert_eq!(lore.list(&ListFilter::default()).unwrap().len(), 1);
    let known = repo
        .git(&["rev-parse", "refs/lore/memory"])
        .trim()
        .to_string();
    let mut stream = String::new();
    for i in 0..n {
        let text = format!("project file {i}\n");
        stream.push_str(&format!(
            "commit refs/heads/history\ncommitter A <a@example.com> {} +0000\ndata 8\nproject\n\
             M 100644 inline src/f{i}.txt\ndata {}\n{text}\n",
            1_700_000_000 + i,
            text.len()
        ));
    }
    for i in 0..n {
        let id = id(i);
        let path = format!("learnings/{}/{}/{id}.md", &id[..1], &id[1..2]);
        let text = format!("---\nid: {id}\nsummary: written past the index {i}\n---\n");
        let message = format!("remember {id}\n\nLore-Action: remember\nLore-Memory: {id}\n");
        let from = if i == 0 {
            format!("from {known}\n")
        } else {
            String::new()
        };
        stream.push_str(&format!(
            "commit refs/lore-scratch/memory\ncommitter A <a@example.com> {} +0000\ndata {}\n{message}{from}\
             M 100644 inline {path}\ndata {}\n{text}\n",
            1_800_000_000 + i,
            message.len(),
            text.len()
        ));
    }
    fast_import(&repo, &stream);
    let last = repo
        .git(&["rev-parse", "refs/lore-scratch/memory"])
        .trim()
        .to_string();
    repo.git(&["update-ref", "-d", "refs/lore-scratch/memory"]);
    repo.git(&["update-ref", "-d", "refs/lore/memory"]);
    (repo, lore, last)
}

#[test]
fn the_search_finds_the_chain_past_the_index_in_small_and_large_object_databases() {
    let n = 400;
    let (_small_repo, small, small_last) = lost_store(n);
    let (_large_repo, large, large_last) = lost_store(8 * n);
    for (lore, last, count) in [(&small, &small_last, n), (&large, &large_last, 8 * n)] {
        let found = lore.diagnose_memory_ref().unwrap();
        let first = &found.restore_points[0];
        assert_eq!(first.commit, *last);
        assert_eq!(first.source, "object database");
        assert_eq!(first.memories, count + 1);
        assert!(found.other_heads.is_empty());
    }
}
