//! Writes that land their objects as one pack (`Store::transact_packed`, an import's batches):
//! nothing written loose, everything readable by git itself, a lost race retried, and the
//! repository's own object database back in place afterwards, whether the write succeeded or
//! failed (a later ordinary write must reach the disk).

use std::sync::{Arc, Mutex};

use lore::store::{Edit, Message};
use lore::{Error, Lore, NewMemory, Store, WriteContext};
use lore_testutils::TestRepo;

fn upserts(prefix: &str, n: usize) -> Vec<Edit> {
    (0..n)
        .map(|i| Edit::Upsert {
            path: format!("learnings/{prefix}-{i}.md"),
            content: format!("---\nsummary: {prefix} {i}\n---\nbody {prefix} {i}\n").into_bytes(),
        })
        .collect()
}

fn message(subject: &str) -> Message {
    Message {
        subject: subject.into(),
        ..Message::default()
    }
}

/// How many loose objects and packs git counts.
fn loose_and_packs(repo: &TestRepo) -> (usize, usize) {
    let counted = repo.git(&["count-objects", "-v"]);
    let field = |name: &str| -> usize {
        counted
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {name} in {counted}"))
    };
    (field("count: "), field("packs: "))
}

/// The repository's pack index files.
fn packs_of(repo: &TestRepo) -> std::collections::BTreeSet<std::path::PathBuf> {
    let dir = repo.path().join(".git/objects/pack");
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "idx"))
        .collect()
}

/// How many objects a pack holds (git's own reading of it).
fn objects_in(repo: &TestRepo, idx: &std::path::Path) -> usize {
    let listed = repo.git(&["verify-pack", "-v", &idx.to_string_lossy()]);
    listed
        .lines()
        .filter(|l| l.len() > 40 && l[..40].bytes().all(|b| b.is_ascii_hexdigit()))
        .count()
}

/// Runs a packed write of `edits` and returns how many objects the one pack it added holds.
fn objects_in_the_pack_written(repo: &TestRepo, store: &Store, edits: Vec<Edit>) -> usize {
    let before = packs_of(repo);
    store
        .transact_packed(|_| Ok((edits.clone(), message("packed write"), ())))
        .unwrap();
    let new: Vec<_> = packs_of(repo).difference(&before).cloned().collect();
    assert_eq!(new.len(), 1, "{new:?}");
    objects_in(repo, &new[0])
}

fn blob_of(repo: &TestRepo, path: &str) -> String {
    repo.git(&["cat-file", "-p", &format!("refs/lore/memory:{path}")])
}

#[test]
fn a_packed_write_lands_one_pack_and_nothing_loose() {
    let repo = TestRepo::new();
    let store = Store::discover(&repo.path()).unwrap();
    store.init().unwrap();
    let (loose_before, packs_before) = loose_and_packs(&repo);
    let ((), commit) = store
        .transact_packed(|_| Ok((upserts("fact", 50), message("import 50"), ())))
        .unwrap();
    assert!(commit.is_some());
    let (loose, packs) = loose_and_packs(&repo);
    assert_eq!(loose, loose_before, "the packed write left loose objects");
    assert_eq!(packs, packs_before + 1);
    // git itself reads every object the write made, through the ref.
    assert_eq!(
        blob_of(&repo, "learnings/fact-49.md"),
        "---\nsummary: fact 49\n---\nbody fact 49\n"
    );
    repo.git(&["fsck", "--strict", "--no-dangling"]);

    // Five more files: their pack holds them, the trees above them and the commit, not the
    // files written before.
    assert_eq!(
        objects_in_the_pack_written(&repo, &store, upserts("more", 5)),
        5 + 2 + 1,
        "blobs, trees and commit"
    );
    assert_eq!(loose_and_packs(&repo), (loose, packs + 1));
}

/// Files of every size land whole: an empty one, one whose size takes several bytes of the
/// pack's entry header (twice, under two names: one object in the pack), and one of random words
/// that compresses little, each read back by git byte for byte.
#[test]
fn a_packed_write_keeps_files_of_any_size_byte_for_byte() {
    let repo = TestRepo::new();
    let store = Store::discover(&repo.path()).unwrap();
    store.init().unwrap();
    let mut noise = fastrand::Rng::with_seed(7);
    let noisy: String = (0..300_000)
        .map(|i| match i % 7 {
            6 => ' ',
            _ => char::from(noise.u8(b'a'..=b'z')),
        })
        .collect();
    let files = [
        ("learnings/empty.md", String::new()),
        ("learnings/long.md", "a line of text\n".repeat(20_000)),
        ("learnings/long-copy.md", "a line of text\n".repeat(20_000)),
        ("learnings/noisy.md", noisy),
    ];
    let edits: Vec<Edit> = files
        .iter()
        .map(|(path, content)| Edit::Upsert {
            path: path.to_string(),
            content: content.clone().into_bytes(),
        })
        .collect();
    assert_eq!(
        objects_in_the_pack_written(&repo, &store, edits),
        3 + 2 + 1,
        "blobs, trees, commit"
    );
    repo.git(&["fsck", "--strict", "--no-dangling"]);
    for (path, content) in &files {
        assert!(blob_of(&repo, path) == *content, "{path} differs");
    }
}

#[test]
fn writes_after_a_packed_write_reach_the_disk_whether_it_succeeded_or_failed() {
    let repo = TestRepo::new();
    let store = Store::discover(&repo.path()).unwrap();
    store
        .transact_packed(|_| Ok((upserts("packed", 3), message("packed"), ())))
        .unwrap();
    let failed = store.transact_packed(|_| -> lore::Result<(Vec<Edit>, Message, ())> {
        Err(Error::Invalid {
            what: "test write",
            value: String::new(),
            reason: "refused on purpose".into(),
        })
    });
    assert!(failed.is_err());
    // Ordinary writes through the same handle: their objects are on disk, where another
    // process (git) finds them.
    store
        .transact(|_| Ok((upserts("loose", 2), message("loose"), ())))
        .unwrap();
    let lore = Lore::new(store);
    let written = lore
        .remember(
            &NewMemory {
                namespace: "decisions".into(),
                summary: "remembered after the packed write".into(),
                ..NewMemory::default()
            },
            &WriteContext::default(),
        )
        .unwrap();
    assert_eq!(
        blob_of(&repo, "learnings/loose-1.md"),
        "---\nsummary: loose 1\n---\nbody loose 1\n"
    );
    assert!(blob_of(&repo, &written.path).contains("remembered after the packed write"));
    repo.git(&["fsck", "--strict", "--no-dangling"]);
}

#[test]
fn a_packed_write_that_loses_the_race_tries_again_and_loses_nothing() {
    let repo = TestRepo::new();
    let mut store = Store::discover(&repo.path()).unwrap();
    store.init().unwrap();
    // Another writer moves the ref between the packed write's commit and its ref update, once.
    let other = Arc::new(Mutex::new(Some(Store::discover(&repo.path()).unwrap())));
    let hook = Arc::clone(&other);
    store.set_before_ref_update(Some(Box::new(move || {
        if let Some(other) = hook.lock().unwrap().take() {
            other
                .transact(|_| Ok((upserts("interloper", 1), message("interloper"), ())))
                .unwrap();
        }
    })));
    let mut attempts = 0;
    store
        .transact_packed(|_| {
            attempts += 1;
            Ok((upserts("batch", 20), message("batch"), ()))
        })
        .unwrap();
    assert_eq!(attempts, 2, "the lost race was not retried");
    assert!(blob_of(&repo, "learnings/interloper-0.md").contains("interloper 0"));
    assert!(blob_of(&repo, "learnings/batch-19.md").contains("batch 19"));
    let subjects = repo.git(&["log", "--format=%s", "refs/lore/memory"]);
    assert_eq!(
        subjects.lines().take(2).collect::<Vec<_>>(),
        ["batch", "interloper"]
    );
    repo.git(&["fsck", "--strict", "--no-dangling"]);
}
