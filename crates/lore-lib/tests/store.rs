//! The store and index against real temporary repositories: races, faults, purge, history.

use std::sync::{Arc, Mutex};

use lore::store::Edit;
use lore::{Error, IndexNotice, ListFilter, Lore, NewMemory, Patch, Status, Store, WriteContext};
use lore_testutils::TestRepo;

fn open(repo: &TestRepo) -> Lore {
    Lore::new(Store::discover(&repo.path()).expect("discover"))
}

fn new(ns: &str, summary: &str) -> NewMemory {
    NewMemory {
        namespace: ns.into(),
        summary: summary.into(),
        body: format!("Body of {summary}.\n"),
        ..NewMemory::default()
    }
}

fn ctx() -> WriteContext {
    WriteContext {
        agent: Some("test-agent".into()),
        session: Some("s1".into()),
        ..WriteContext::default()
    }
}

fn all(lore: &mut Lore) -> Vec<lore::Memory> {
    lore.list(&ListFilter::default()).expect("list")
}

#[test]
fn writes_never_touch_the_users_branches_index_or_worktree() {
    let repo = TestRepo::new();
    repo.write("dirty.txt", "uncommitted\n");
    let head_before = repo.git(&["rev-parse", "HEAD"]);
    let status_before = repo.git(&["status", "--porcelain"]);
    let lore = open(&repo);
    lore.remember(&new("decisions", "Pick SQLite"), &ctx())
        .unwrap();
    assert_eq!(repo.git(&["rev-parse", "HEAD"]), head_before);
    assert_eq!(repo.git(&["status", "--porcelain"]), status_before);
    assert_eq!(repo.git(&["branch", "--list"]).trim(), "* main");
    let log = repo.git(&["log", "--format=%B", "refs/lore/memory", "-1"]);
    assert!(log.starts_with("remember decisions/"), "{log}");
    assert!(log.contains("Lore-Agent: test-agent"), "{log}");
    assert!(log.contains("Lore-Session: s1"), "{log}");
    repo.git(&["fsck", "--strict"]);
}

#[test]
fn a_ref_moved_by_another_writer_mid_write_loses_nothing() {
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    lore.remember(&new("learnings", "first"), &ctx()).unwrap();
    // Another process writes between our commit and our ref update, once.
    let other = Arc::new(Mutex::new(Some(Store::discover(&repo.path()).unwrap())));
    let other_hook = Arc::clone(&other);
    lore.store_mut()
        .set_before_ref_update(Some(Box::new(move || {
            if let Some(store) = other_hook.lock().unwrap().take() {
                Lore::new(store)
                    .remember(&new("learnings", "the interloper"), &ctx())
                    .unwrap();
            }
        })));
    lore.remember(&new("learnings", "second"), &ctx()).unwrap();
    lore.store_mut().set_before_ref_update(None);
    let mut summaries: Vec<String> = all(&mut lore).into_iter().map(|m| m.summary).collect();
    summaries.sort();
    assert_eq!(summaries, ["first", "second", "the interloper"]);
    repo.git(&["fsck", "--strict"]);
}

#[test]
fn concurrent_writers_in_threads_all_land() {
    let repo = TestRepo::new();
    let path = repo.path();
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let path = path.clone();
            std::thread::spawn(move || {
                let lore = Lore::new(Store::discover(&path).unwrap());
                for i in 0..25 {
                    lore.remember(&new("progress", &format!("t{t} step {i}")), &ctx())
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let mut lore = open(&repo);
    assert_eq!(all(&mut lore).len(), 100);
    let commits = repo.git(&["rev-list", "--count", "refs/lore/memory"]);
    assert_eq!(commits.trim(), "100");
}

#[test]
fn racing_first_writes_to_an_empty_store_all_land() {
    // Regression: creating refs/lore/memory must be a compare-and-swap against "absent" under
    // the ref's lock; an existence check before locking let two first writers both succeed.
    const WRITERS: usize = 8;
    let repo = TestRepo::new();
    let stores: Vec<_> = (0..WRITERS)
        .map(|_| Store::discover(&repo.path()).unwrap())
        .collect();
    let mut lores: Vec<Lore> = stores.into_iter().map(Lore::new).collect();
    for round in 0..150 {
        let barrier = Arc::new(std::sync::Barrier::new(WRITERS));
        std::thread::scope(|scope| {
            for (t, lore) in lores.iter_mut().enumerate() {
                let barrier = Arc::clone(&barrier);
                scope.spawn(move || {
                    barrier.wait();
                    lore.remember(
                        &new("progress", &format!("round {round} writer {t}")),
                        &ctx(),
                    )
                    .unwrap();
                });
            }
        });
        let commits = repo.git(&["rev-list", "--count", "refs/lore/memory"]);
        assert_eq!(commits.trim(), WRITERS.to_string(), "round {round}");
        repo.git(&["update-ref", "-d", "refs/lore/memory"]);
    }
}

#[test]
fn keys_are_unique_and_supersede_passes_them_on() {
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    let mut m = new("decisions", "Use Postgres");
    m.key = Some("database".into());
    let first = lore.remember(&m, &ctx()).unwrap();
    assert_eq!(first.path, "decisions/database.md");
    let err = lore.remember(&m, &ctx()).unwrap_err();
    assert!(matches!(err, Error::KeyExists { .. }), "{err}");
    let sup = lore
        .supersede("database", &new("", "Use SQLite instead"), &ctx())
        .unwrap();
    assert_eq!(sup.new.path, "decisions/database.md");
    assert_eq!(sup.old.memory.status, Status::Superseded);
    assert_eq!(
        sup.old.memory.superseded_by.as_ref(),
        Some(&sup.new.memory.id)
    );
    assert_eq!(sup.new.memory.supersedes.as_ref(), Some(&first.memory.id));
    assert_eq!(
        lore.get("decisions/database").unwrap().summary,
        "Use SQLite instead"
    );
    assert_eq!(
        lore.get(first.memory.id.as_str()).unwrap().status,
        Status::Superseded
    );
    let (_, versions) = lore.history(first.memory.id.as_str()).unwrap();
    assert_eq!(versions.len(), 2, "remember + supersede");
    assert!(versions[0].subject.starts_with("supersede"));
}

#[test]
fn update_applies_to_the_tip_and_history_lists_versions() {
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    let w = lore
        .remember(&new("blockers", "CI is red"), &ctx())
        .unwrap();
    let id = w.memory.id.to_string();
    let patch = Patch {
        status: Some(Status::Resolved),
        add_tags: vec!["ci".into()],
        ..Patch::default()
    };
    let u = lore.update(&id[..6], &patch, &ctx()).unwrap();
    assert_eq!(u.memory.status, Status::Resolved);
    assert_eq!(u.memory.tags, ["ci"]);
    assert!(u.memory.updated >= u.memory.created);
    let err = lore.update(&id, &Patch::default(), &ctx()).unwrap_err();
    assert!(matches!(err, Error::Invalid { .. }));
    lore.forget(&id, &ctx()).unwrap();
    assert!(matches!(lore.get(&id), Err(Error::NotFound(_))));
    let (m, versions) = lore.history(&id).unwrap();
    assert_eq!(m.summary, "CI is red");
    let subjects: Vec<&str> = versions
        .iter()
        .map(|v| v.subject.split(' ').next().unwrap())
        .collect();
    assert_eq!(subjects, ["forget", "update", "remember"]);
    assert!(versions[0].memory.is_none());
}

#[test]
fn unknown_namespaces_are_refused_until_registered() {
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    let err = lore.remember(&new("decsions", "typo"), &ctx()).unwrap_err();
    assert!(
        err.to_string().contains("did you mean \"decisions\""),
        "{err}"
    );
    let err = lore.remember(&new("../x", "escape"), &ctx()).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Invalid {
                what: "namespace",
                ..
            }
        ),
        "{err}"
    );
    assert!(
        lore.add_namespace("runbooks", "operational notes", &ctx())
            .unwrap()
    );
    assert!(!lore.add_namespace("runbooks", "", &ctx()).unwrap());
    lore.remember(&new("runbooks", "Restart the worker"), &ctx())
        .unwrap();
    let names: Vec<String> = lore
        .namespaces()
        .unwrap()
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert!(names.contains(&"runbooks".to_string()));
}

#[test]
fn a_hand_broken_memory_file_is_reported_and_the_rest_still_load() {
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    let good = lore
        .remember(&new("learnings", "still fine"), &ctx())
        .unwrap();
    let bad = lore
        .remember(&new("learnings", "to be broken"), &ctx())
        .unwrap();
    let bad_path = bad.path.clone();
    lore.store()
        .transact(|_| {
            Ok((
                vec![Edit::Upsert {
                    path: bad_path.clone(),
                    content: b"---\nid: [unclosed\n---\nbody\n".to_vec(),
                }],
                lore::store::Message {
                    subject: "hand edit".into(),
                    ..Default::default()
                },
                (),
            ))
        })
        .unwrap();
    let memories = all(&mut lore);
    assert_eq!(memories.len(), 1);
    assert_eq!(memories[0].id, good.memory.id);
    let status = lore.status().unwrap();
    assert_eq!(status.invalid.len(), 1);
    assert_eq!(status.invalid[0].name, bad.memory.id.as_str());
    assert_eq!(status.invalid[0].path, bad.path);
}

#[test]
fn a_deleted_or_truncated_index_is_rebuilt_with_a_notice() {
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    for i in 0..30 {
        lore.remember(
            &new("learnings", &format!("lesson number {i} about caching")),
            &ctx(),
        )
        .unwrap();
    }
    assert_eq!(
        lore.recall("caching", &ListFilter::default())
            .unwrap()
            .len(),
        10
    );
    let index_path = lore::index::index_path(lore.store());
    drop(lore);

    std::fs::remove_file(&index_path).unwrap();
    let mut lore = open(&repo);
    assert_eq!(all(&mut lore).len(), 30);
    assert_eq!(lore.take_notices(), vec![IndexNotice::Created]);
    drop(lore);

    // Truncate the file to a fraction of its size: not a database any more, or a damaged one.
    let len = std::fs::metadata(&index_path).unwrap().len();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&index_path)
        .unwrap();
    file.set_len(len / 3).unwrap();
    drop(file);
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", index_path.display()));
    }
    let mut lore = open(&repo);
    assert_eq!(all(&mut lore).len(), 30);
    assert_eq!(
        lore.recall("lesson 7", &ListFilter::default())
            .unwrap()
            .len(),
        10
    );

    // Garbage in place of the index.
    drop(lore);
    std::fs::write(&index_path, b"this is not sqlite").unwrap();
    let mut lore = open(&repo);
    assert_eq!(all(&mut lore).len(), 30);
    assert!(matches!(
        lore.take_notices()[..],
        [IndexNotice::Rebuilt { .. }]
    ));
}

#[test]
fn purge_makes_every_version_unreachable() {
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    let keep = lore
        .remember(&new("learnings", "harmless"), &ctx())
        .unwrap();
    let mut leak = new("learnings", "token is sk-live-0123456789abcdef");
    leak.body = "the secret sk-live-0123456789abcdef\n".into();
    let leak = lore.remember(&leak, &ctx()).unwrap();
    let id = leak.memory.id.to_string();
    lore.update(
        &id,
        &Patch {
            add_tags: vec!["oops".into()],
            ..Patch::default()
        },
        &ctx(),
    )
    .unwrap();
    lore.remember(&new("learnings", "after the leak"), &ctx())
        .unwrap();
    let (_, versions) = lore.history(&id).unwrap();
    let blobs: Vec<String> = versions
        .iter()
        .map(|v| {
            repo.git(&["rev-parse", &format!("{}:{}", v.commit, v.path)])
                .trim()
                .to_string()
        })
        .collect();
    assert_eq!(blobs.len(), 2);

    let (_, report, removed) = lore.purge(&id, &WriteContext::default()).unwrap();
    assert_eq!(removed, 2);
    assert!(report.commits_rewritten >= 3);
    let reachable = repo.git(&["rev-list", "--objects", "--all"]);
    for b in &blobs {
        assert!(!reachable.contains(b.as_str()), "blob {b} still reachable");
    }
    let messages = repo.git(&["log", "--format=%B", "refs/lore/memory"]);
    assert!(!messages.contains("sk-live"), "{messages}");
    assert!(matches!(lore.get(&id), Err(Error::NotFound(_))));
    assert_eq!(
        lore.get(keep.memory.id.as_str()).unwrap().summary,
        "harmless"
    );
    assert_eq!(all(&mut lore).len(), 2);
    assert!(
        lore.recall("sk-live", &ListFilter::default())
            .unwrap()
            .is_empty()
    );
    repo.git(&["reflog", "expire", "--expire=now", "--all"]);
    repo.git(&["gc", "-q", "--prune=now"]);
    for b in &blobs {
        assert!(
            !repo
                .git_command(&["cat-file", "-e", b])
                .status()
                .unwrap()
                .success()
        );
    }
    repo.git(&["fsck", "--strict"]);
}

#[test]
fn outside_a_repository_discover_says_so_and_a_personal_store_works() {
    let dir = tempfile::tempdir().unwrap();
    let err = Store::discover(dir.path()).err().expect("not a repository");
    assert!(matches!(err, Error::NotARepository(_)));
    let store = Store::open_personal(&dir.path().join("personal.git")).unwrap();
    let mut lore = Lore::new(store);
    lore.remember(&new("learnings", "personal lesson"), &ctx())
        .unwrap();
    assert_eq!(all(&mut lore).len(), 1);
    assert_eq!(lore.status().unwrap().kind, lore::StoreKind::Personal);
}

#[test]
fn a_lock_left_by_a_dead_writer_is_removed_with_a_warning_and_a_held_one_is_not() {
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    lore.remember(&new("learnings", "first"), &ctx()).unwrap();
    let lock = repo.path().join(".git/refs/lore/memory.lock");

    // Held open by a live process (this one): contention, not stale, whatever its age.
    let held = std::fs::File::create(&lock).unwrap();
    std::thread::sleep(lore::store::locks::OPEN_CHECK_AGE * 2);
    assert!(lore.store().stale_locks().is_empty());
    drop(held);

    // Closed and old enough: its writer is gone. `status` names it; the next write removes it.
    let stale = lore.store().stale_locks();
    assert_eq!(stale.len(), 1, "{stale:?}");
    assert_eq!(stale[0].path, "refs/lore/memory.lock");
    let shown: Vec<String> = lore
        .status()
        .unwrap()
        .stale_locks
        .into_iter()
        .map(|l| l.path)
        .collect();
    assert_eq!(shown, vec!["refs/lore/memory.lock".to_string()]);
    lore.remember(&new("learnings", "second"), &ctx()).unwrap();
    assert!(!lock.exists());
    let warnings = lore.store().take_warnings();
    assert!(
        warnings.iter().any(|w| w.contains("removed a stale lock")),
        "{warnings:?}"
    );
    assert_eq!(all(&mut lore).len(), 2);
    assert!(lore.status().unwrap().stale_locks.is_empty());
}

#[test]
fn a_diff_asked_again_is_the_same_and_another_pair_gets_its_own() {
    let repo = TestRepo::new();
    let lore = open(&repo);
    let store = Store::discover(&repo.path()).unwrap();
    let tip = |s: &Store| s.tip().unwrap();
    lore.remember(&new("decisions", "Pick SQLite"), &ctx())
        .unwrap();
    let a = tip(&store);
    lore.remember(&new("learnings", "WAL needs a checkpoint"), &ctx())
        .unwrap();
    let b = tip(&store);
    lore.remember(&new("decisions", "Pick git refs"), &ctx())
        .unwrap();
    let c = tip(&store);
    let paths = |changes: Vec<lore::store::FileChange>| -> Vec<String> {
        changes.into_iter().map(|c| c.path).collect()
    };
    let ab = paths(store.diff(a, b).unwrap());
    assert_eq!(ab.len(), 1, "{ab:?}");
    assert!(ab[0].starts_with("learnings/"), "{ab:?}");
    assert_eq!(paths(store.diff(a, b).unwrap()), ab);
    // Another pair after it: its own changes, not the kept ones.
    let ac = paths(store.diff(a, c).unwrap());
    assert_eq!(ac.len(), 2, "{ac:?}");
    let bc = paths(store.diff(b, c).unwrap());
    assert_eq!(bc.len(), 1);
    assert!(bc[0].starts_with("decisions/"), "{bc:?}");
    assert_eq!(paths(store.diff(a, b).unwrap()), ab);
    // The pair the other way round: the file removed, not added.
    let ba = store.diff(b, a).unwrap();
    assert_eq!(ba.len(), 1);
    assert!(ba[0].old.is_some() && ba[0].new.is_none(), "{ba:?}");
}

#[test]
fn a_diff_asked_again_is_served_without_reading_its_trees() {
    let repo = TestRepo::new();
    let store = Store::discover(&repo.path()).unwrap();
    let write = |files: std::ops::Range<usize>| {
        let edits: Vec<Edit> = files
            .map(|i| Edit::Upsert {
                path: format!("learnings/a/b/file-{i:04}-with-a-longer-name.md"),
                content: format!("file {i}\n").into_bytes(),
            })
            .collect();
        let message = lore::store::Message {
            subject: "fill".into(),
            ..Default::default()
        };
        store
            .transact(|_| Ok((edits.clone(), message.clone(), ())))
            .unwrap()
            .1
    };
    // One directory of 200 files: its tree (about 10 KiB) is over the 4 KiB up to which
    // libgit2 keeps trees in its own cache, so reading it again means reading the object.
    let old = write(0..200);
    let new = write(200..201);
    let changes = store.diff(old, new).unwrap();
    assert_eq!(changes.len(), 1);
    let big = repo.git(&["rev-parse", &format!("{}:learnings/a/b", new.unwrap())]);
    let big = big.trim();
    std::fs::remove_file(
        repo.path()
            .join(".git/objects")
            .join(&big[..2])
            .join(&big[2..]),
    )
    .expect("the new tree is a loose object");
    assert_eq!(store.diff(old, new).unwrap(), changes, "the kept diff");
    let fresh = Store::discover(&repo.path()).unwrap();
    assert!(
        fresh.diff(old, new).is_err(),
        "a handle that kept nothing must read the tree that is gone"
    );
}
