//! Property: for random interleavings of writes (keyed and unkeyed), updates, forgets, purges
//! and syncs across three clones of one bare remote, after a final round of syncs every clone
//! has the same lore refs, every acknowledged write is live, tombstoned, purged or kept in an
//! open conflict record — never lost — and after `git gc --prune=now` no object in any clone or
//! the remote holds a purged memory's text.

use std::path::{Path, PathBuf};

use lore::merge::open_conflicts;
use lore::store::layout;
use lore::sync::{SyncOptions, sync};
use lore::{Lore, MemoryId, NewMemory, Patch, Store, WriteContext};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Write { clone: usize, key: Option<u8> },
    Update { clone: usize, pick: usize },
    Forget { clone: usize, pick: usize },
    Purge { clone: usize, pick: usize },
    Sync { clone: usize },
}

fn op() -> impl Strategy<Value = Op> {
    let clone = 0usize..3;
    prop_oneof![
        4 => (clone.clone(), proptest::option::weighted(0.3, 0u8..3))
            .prop_map(|(clone, key)| Op::Write { clone, key }),
        1 => (clone.clone(), any::<usize>()).prop_map(|(clone, pick)| Op::Update { clone, pick }),
        1 => (clone.clone(), any::<usize>()).prop_map(|(clone, pick)| Op::Forget { clone, pick }),
        1 => (clone.clone(), any::<usize>()).prop_map(|(clone, pick)| Op::Purge { clone, pick }),
        3 => clone.prop_map(|clone| Op::Sync { clone }),
    ]
}

fn git(dir: &Path, home: &Path, args: &[&str]) {
    lore_testutils::git_in(dir, home, args);
}

fn run(ops: &[Op]) {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    git(
        dir.path(),
        &home,
        &["init", "-q", "--bare", "-b", "main", "central.git"],
    );
    let clones: Vec<PathBuf> = (0..3)
        .map(|c| {
            let name = format!("c{c}");
            git(dir.path(), &home, &["clone", "-q", "central.git", &name]);
            let path = dir.path().join(&name);
            git(&path, &home, &["config", "user.name", &name]);
            git(&path, &home, &["config", "user.email", "t@example.com"]);
            path
        })
        .collect();
    let mut lores: Vec<Lore> = clones
        .iter()
        .map(|p| Lore::new(Store::discover(p).unwrap()))
        .collect();
    let ctx = WriteContext::default();
    let mut acknowledged: Vec<MemoryId> = Vec::new();
    let mut purged: Vec<MemoryId> = Vec::new();
    // Every text each memory was given (unique per write: a counter in marks), by id.
    let mut texts: std::collections::HashMap<MemoryId, Vec<String>> = Default::default();
    let mut counter = 0;
    for op in ops {
        match op {
            Op::Write { clone, key } => {
                counter += 1;
                let new = NewMemory {
                    namespace: "decisions".into(),
                    key: key.map(|k| format!("topic-{k}")),
                    summary: format!("clone {clone} wrote fact <{counter}>"),
                    ..NewMemory::default()
                };
                // A key taken on this clone is refused: not acknowledged, nothing to keep. Any
                // other failure fails the property.
                match lores[*clone].remember(&new, &ctx) {
                    Ok(w) => {
                        texts
                            .entry(w.memory.id.clone())
                            .or_default()
                            .push(new.summary.clone());
                        acknowledged.push(w.memory.id);
                    }
                    Err(lore::Error::KeyExists { .. }) => {}
                    Err(e) => panic!("remember on clone {clone} failed: {e}"),
                }
            }
            Op::Update { clone, pick } | Op::Forget { clone, pick } | Op::Purge { clone, pick } => {
                let live = lores[*clone].list(&Default::default()).unwrap();
                if live.is_empty() {
                    continue;
                }
                let id = live[pick % live.len()].id.to_string();
                match op {
                    Op::Update { .. } => {
                        counter += 1;
                        let body = format!("edited <{counter}> on clone {clone}");
                        let patch = Patch {
                            body: Some(body.clone()),
                            ..Patch::default()
                        };
                        let w = lores[*clone].update(&id, &patch, &ctx).unwrap();
                        texts.entry(w.memory.id).or_default().push(body);
                    }
                    Op::Forget { .. } => {
                        lores[*clone].forget(&id, &ctx).unwrap();
                    }
                    _ => {
                        let (m, _, _) = lores[*clone].purge(&id, &ctx).unwrap();
                        purged.push(m.id);
                    }
                }
            }
            Op::Sync { clone } => {
                sync(lores[*clone].store(), &SyncOptions::default()).unwrap();
            }
        }
    }
    for _ in 0..2 {
        for lore in &lores {
            sync(lore.store(), &SyncOptions::default()).unwrap();
        }
    }
    let tip = lores[0].store().tip().unwrap();
    for lore in lores.iter_mut() {
        assert_eq!(lore.store().tip().unwrap(), tip, "every clone converged");
        let live: Vec<MemoryId> = lore
            .list(&lore::ListFilter {
                statuses: lore::Status::ALL.to_vec(),
                ..Default::default()
            })
            .unwrap()
            .into_iter()
            .map(|m| m.id)
            .collect();
        let snap = lore.store().snapshot(tip).unwrap();
        let parked: Vec<MemoryId> = open_conflicts(&snap)
            .unwrap()
            .iter()
            .flat_map(|c| c.sides.iter().map(|s| s.id.clone()))
            .collect();
        for id in &acknowledged {
            let tombstoned = snap.blob_id(&layout::tombstone_path(id)).unwrap().is_some();
            let purge_recorded = snap.blob_id(&layout::purge_path(id)).unwrap().is_some();
            assert_eq!(purge_recorded, purged.contains(id), "{id} (ops: {ops:?})");
            assert!(
                live.contains(id) || tombstoned || parked.contains(id) || purge_recorded,
                "memory {id} was lost (ops: {ops:?})"
            );
            if purge_recorded {
                assert!(
                    !live.contains(id) && !parked.contains(id),
                    "{id} came back (ops: {ops:?})"
                );
            }
        }
    }
    // Every text a purged memory ever had (its summary, its edits) is in no object anywhere.
    let purged_texts: Vec<&String> = purged
        .iter()
        .flat_map(|id| texts.get(id).into_iter().flatten())
        .collect();
    assert_eq!(purged_texts.is_empty(), purged.is_empty());
    for repo in clones.iter().chain([&dir.path().join("central.git")]) {
        git(repo, &home, &["gc", "-q", "--prune=now"]);
        let objects =
            lore_testutils::git_in(repo, &home, &["cat-file", "--batch-all-objects", "--batch"]);
        // After the final syncs every repository holds the writes: an empty read is an error.
        assert!(
            acknowledged.is_empty() || objects.contains(" commit "),
            "no objects read in {}",
            repo.display()
        );
        for text in &purged_texts {
            assert!(
                !objects.contains(text.as_str()),
                "{text:?} survives in {} (ops: {ops:?})",
                repo.display()
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: lore_testutils::proptest_cases(32), max_shrink_iters: 20, rng_seed: proptest::test_runner::RngSeed::Fixed(0x10e), ..ProptestConfig::default() })]

    #[test]
    fn every_acknowledged_write_survives_any_interleaving(ops in proptest::collection::vec(op(), 1..24)) {
        run(&ops);
    }
}
