//! Property: for random interleavings of thought writes, re-scores, outcomes, finishes and
//! syncs of one reasoning session across three clones of one bare remote, after a final round
//! of syncs every clone has the same thoughts, the same current scores, outcomes and best, and
//! nothing is parked.

use std::path::{Path, PathBuf};

use git2::Oid;
use lore::Store;
use lore::sync::{SyncOptions, sync};
use lore::thoughts::index::ThoughtIndex;
use lore::thoughts::write::{self, NewThought};
use lore::thoughts::{Outcome, Scores};
use lore::{Lore, WriteContext};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Think {
        clone: usize,
        pick: usize,
    },
    Rescore {
        clone: usize,
        pick: usize,
        score: u8,
    },
    Mark {
        clone: usize,
        pick: usize,
        success: bool,
    },
    Finish {
        clone: usize,
        pick: usize,
    },
    Sync {
        clone: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let clone = 0usize..3;
    prop_oneof![
        4 => (clone.clone(), any::<usize>()).prop_map(|(clone, pick)| Op::Think { clone, pick }),
        2 => (clone.clone(), any::<usize>(), 0u8..=10)
            .prop_map(|(clone, pick, score)| Op::Rescore { clone, pick, score }),
        2 => (clone.clone(), any::<usize>(), any::<bool>())
            .prop_map(|(clone, pick, success)| Op::Mark { clone, pick, success }),
        1 => (clone.clone(), any::<usize>()).prop_map(|(clone, pick)| Op::Finish { clone, pick }),
        3 => clone.prop_map(|clone| Op::Sync { clone }),
    ]
}

fn clones(dir: &Path, home: &Path) -> Vec<PathBuf> {
    lore_testutils::git_in(dir, home, &["init", "-q", "--bare", "central.git"]);
    (0..3)
        .map(|c| {
            let name = format!("c{c}");
            lore_testutils::git_in(dir, home, &["clone", "-q", "central.git", &name]);
            let path = dir.join(&name);
            lore_testutils::git_in(&path, home, &["config", "user.name", &name]);
            lore_testutils::git_in(&path, home, &["config", "user.email", "t@example.com"]);
            path
        })
        .collect()
}

/// The session's thoughts on a clone, as the index shows them: (id, score, outcome, best).
fn tree(store: &Store) -> Vec<(String, String, Option<String>, bool)> {
    let index = ThoughtIndex::open(store).unwrap();
    let mut out: Vec<_> = index
        .session_thoughts("s1")
        .unwrap()
        .into_iter()
        .map(|t| (t.id, format!("{:.4}", t.score), t.outcome, t.best))
        .collect();
    out.sort();
    out
}

fn known(store: &Store) -> Vec<Oid> {
    tree(store)
        .into_iter()
        .map(|t| Oid::from_str(&t.0).unwrap())
        .collect()
}

fn apply(lores: &mut [Lore], op: &Op, counter: usize) {
    let ctx = WriteContext::default();
    match *op {
        Op::Think { clone, pick } => {
            let ids = known(lores[clone].store());
            let parent = (!ids.is_empty() && pick % 3 != 0).then(|| ids[pick % ids.len()]);
            let new = NewThought {
                session: "s1".into(),
                parent,
                text: format!("thought {counter} on clone {clone}"),
                scores: Scores::new(Default::default(), Some(0.5)).unwrap(),
                ..NewThought::default()
            };
            write::add_thought(lores[clone].store(), &new, &ctx).unwrap();
        }
        Op::Rescore { clone, pick, score } => {
            let ids = known(lores[clone].store());
            if let Some(id) = (!ids.is_empty()).then(|| ids[pick % ids.len()]) {
                let scores = Scores::new(Default::default(), Some(f64::from(score) / 10.0));
                write::rescore(lores[clone].store(), id, &scores.unwrap(), &ctx).unwrap();
            }
        }
        Op::Mark {
            clone,
            pick,
            success,
        } => {
            let ids = known(lores[clone].store());
            if let Some(id) = (!ids.is_empty()).then(|| ids[pick % ids.len()]) {
                let outcome = if success {
                    Outcome::Success
                } else {
                    Outcome::Failed
                };
                write::mark_outcome(lores[clone].store(), id, outcome).unwrap();
            }
        }
        Op::Finish { clone, pick } => {
            let ids = known(lores[clone].store());
            if let Some(id) = (!ids.is_empty()).then(|| ids[pick % ids.len()]) {
                write::finish(&mut lores[clone], "s1", id, None, None, &ctx).unwrap();
            }
        }
        Op::Sync { clone } => {
            let report = sync(lores[clone].store(), &SyncOptions::default()).unwrap();
            for r in &report.refs {
                assert_ne!(r.action, lore::sync::RefAction::Parked, "{}", r.name);
            }
        }
    }
}

fn run(ops: &[Op]) {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let paths = clones(dir.path(), &home);
    let mut lores: Vec<Lore> = paths
        .iter()
        .map(|p| Lore::new(Store::discover(p).unwrap()))
        .collect();
    // One shared project identity, as `lore sync` gives clones of one remote.
    lores[0].store().init().unwrap();
    sync(lores[0].store(), &SyncOptions::default()).unwrap();
    for (counter, op) in ops.iter().enumerate() {
        apply(&mut lores, op, counter);
    }
    for _ in 0..2 {
        for lore in &lores {
            sync(lore.store(), &SyncOptions::default()).unwrap();
        }
    }
    let first = tree(lores[0].store());
    for (c, lore) in lores.iter().enumerate().skip(1) {
        assert_eq!(tree(lore.store()), first, "clone {c} differs from clone 0");
    }
    let written = ops.iter().filter(|o| matches!(o, Op::Think { .. })).count();
    assert_eq!(
        first.len(),
        written,
        "every thought written is on every clone"
    );
    for lore in &lores {
        let parked = lore.store().repo().references_glob("refs/lore-parked/*");
        assert_eq!(parked.unwrap().count(), 0);
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: lore_testutils::proptest_cases(12),
        rng_seed: proptest::test_runner::RngSeed::Fixed(27),
        ..ProptestConfig::default()
    })]

    #[test]
    fn every_clone_ends_with_one_tree(ops in proptest::collection::vec(op(), 1..24)) {
        run(&ops);
    }
}
