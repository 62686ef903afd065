//! Property: the index after any sequence of incremental catch-ups equals a fresh rebuild.

use lore::index::Index;
use lore::store::{Edit, Message};
use lore::{ListFilter, Lore, NewMemory, Patch, Status, Store, WriteContext};
use lore_testutils::TestRepo;
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Remember {
        ns: usize,
        keyed: bool,
        word: usize,
    },
    Update {
        target: usize,
        status: usize,
    },
    Tag {
        target: usize,
        word: usize,
    },
    Mark {
        target: usize,
        status: usize,
        cite: bool,
    },
    Forget {
        target: usize,
    },
    Supersede {
        target: usize,
    },
    Break {
        target: usize,
    },
    AddNamespace,
    Batch {
        n: usize,
    },
}

const NS: [&str; 3] = ["decisions", "learnings", "blockers"];
/// The file `Op::Mark` cites.
const CITED: &str = "src/cited.rs";
const WORDS: [&str; 5] = ["cache", "index", "retry", "schema", "token"];

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..3usize, any::<bool>(), 0..5usize).prop_map(|(ns, keyed, word)| Op::Remember { ns, keyed, word }),
        2 => (0..20usize, 0..4usize).prop_map(|(target, status)| Op::Update { target, status }),
        2 => (0..20usize, 0..4usize, any::<bool>()).prop_map(|(target, status, cite)| Op::Mark { target, status, cite }),
        1 => (0..20usize, 0..5usize).prop_map(|(target, word)| Op::Tag { target, word }),
        1 => (0..20usize).prop_map(|target| Op::Forget { target }),
        1 => (0..20usize).prop_map(|target| Op::Supersede { target }),
        1 => (0..20usize).prop_map(|target| Op::Break { target }),
        1 => Just(Op::AddNamespace),
        1 => (1..4usize).prop_map(|n| Op::Batch { n }),
    ]
}

fn ids(lore: &mut Lore) -> Vec<String> {
    let mut v: Vec<String> = lore
        .list(&ListFilter::default())
        .unwrap()
        .into_iter()
        .map(|m| m.id.to_string())
        .collect();
    v.sort();
    v
}

fn apply(lore: &mut Lore, op: &Op, step: usize) {
    let ctx = WriteContext::default();
    let existing = ids(lore);
    let pick = |t: usize| existing.get(t % existing.len().max(1)).cloned();
    match op {
        Op::Remember { ns, keyed, word } => {
            let m = NewMemory {
                namespace: NS[*ns].into(),
                key: keyed.then(|| format!("topic-{word}")),
                summary: format!("{} note {step}", WORDS[*word]),
                body: format!("About {} at step {step}.\n", WORDS[*word]),
                tags: vec![WORDS[(*word + 1) % 5].into()],
                ..NewMemory::default()
            };
            // A taken key is a legitimate refusal; any other failure is a failure.
            match lore.remember(&m, &ctx) {
                Ok(_) | Err(lore::Error::KeyExists { .. }) => {}
                Err(e) => panic!("remember failed: {e}"),
            }
        }
        Op::Update { target, status } => {
            if let Some(id) = pick(*target) {
                let patch = Patch {
                    status: Some(Status::ALL[*status]),
                    body: Some(format!("updated at {step}\n")),
                    ..Patch::default()
                };
                lore.update(&id, &patch, &ctx).unwrap();
            }
        }
        // The text stays: the index rewrites the row where it is.
        Op::Mark {
            target,
            status,
            cite,
        } => {
            if let Some(id) = pick(*target) {
                let patch = Patch {
                    status: Some(Status::ALL[*status]),
                    confidence: Some(0.5),
                    add_citations: cite
                        .then(|| lore::Citation {
                            path: CITED.into(),
                            lines: None,
                            blob: None,
                        })
                        .into_iter()
                        .collect(),
                    ..Patch::default()
                };
                lore.update(&id, &patch, &ctx).unwrap();
            }
        }
        // Only the tags change: the text does, so the memory is indexed afresh.
        Op::Tag { target, word } => {
            if let Some(id) = pick(*target) {
                let patch = Patch {
                    add_tags: vec![WORDS[*word].into()],
                    ..Patch::default()
                };
                lore.update(&id, &patch, &ctx).unwrap();
            }
        }
        Op::Forget { target } => {
            if let Some(id) = pick(*target) {
                lore.forget(&id, &ctx).unwrap();
            }
        }
        Op::Supersede { target } => {
            if let Some(id) = pick(*target) {
                let m = NewMemory {
                    summary: format!("replacement {step}"),
                    ..NewMemory::default()
                };
                // Superseding a superseded memory is refused; that is fine here, nothing else.
                if let Err(e) = lore.supersede(&id, &m, &ctx) {
                    // (A later update may have changed its status; its successor stays.)
                    let superseded = lore.get(&id).map(|m| m.superseded_by.is_some());
                    assert!(matches!(superseded, Ok(true)), "supersede failed: {e}");
                }
            }
        }
        Op::Break { target } => {
            if let Some(id) = pick(*target) {
                let (path, _) = lore.resolve(&id).unwrap();
                lore.store()
                    .transact(|_| {
                        Ok((
                            vec![Edit::Upsert {
                                path: path.clone(),
                                content: b"---\nnot: [valid\n---\n".to_vec(),
                            }],
                            Message {
                                subject: "break".into(),
                                ..Message::default()
                            },
                            (),
                        ))
                    })
                    .unwrap();
            }
        }
        Op::AddNamespace => {
            lore.add_namespace(&format!("custom{}", step % 3), "", &ctx)
                .unwrap();
        }
        Op::Batch { n } => {
            let batch: Vec<_> = (0..*n)
                .map(|i| {
                    lore.prepare(
                        &NewMemory {
                            namespace: "learnings".into(),
                            summary: format!("batch {step}.{i}"),
                            ..NewMemory::default()
                        },
                        &ctx,
                    )
                    .unwrap()
                })
                .collect();
            lore.write_batch(&batch, &lore::BatchWrite::import("batch"), &ctx)
                .unwrap();
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: lore_testutils::proptest_cases(64), rng_seed: proptest::test_runner::RngSeed::Fixed(0x10e), ..ProptestConfig::default() })]

    #[test]
    fn incremental_index_equals_a_fresh_rebuild(ops in proptest::collection::vec(op(), 1..25)) {
        let repo = TestRepo::new();
        let mut lore = Lore::new(Store::discover(&repo.path()).unwrap());
        let fresh_dir = tempfile::tempdir().unwrap();
        for (step, op) in ops.iter().enumerate() {
            apply(&mut lore, op, step);
            // Catch up incrementally (every read does), then compare with a rebuild.
            let incremental = lore.index().unwrap().fingerprint().unwrap();
            let (mut fresh, _) = Index::open(&fresh_dir.path().join(format!("{step}.sqlite3"))).unwrap();
            fresh.catch_up(lore.store()).unwrap();
            prop_assert_eq!(&incremental, &fresh.fingerprint().unwrap(), "after step {} ({:?})", step, op);
            prop_assert_eq!(lore.index().unwrap().doc_count().unwrap(), fresh.doc_count().unwrap());
            // The counts per namespace and status, and the memories citing a file, follow too.
            prop_assert_eq!(lore.index().unwrap().counts().unwrap(), fresh.counts().unwrap());
            let citing = |index: &Index| -> Vec<String> {
                let mut ids: Vec<String> = index.mentioning(CITED, 1000).unwrap().into_iter().map(|m| m.id.to_string()).collect();
                ids.sort();
                ids
            };
            prop_assert_eq!(citing(lore.index().unwrap()), citing(&fresh));
            // lore's own BM25 postings (blocks and tail) hold the same entries as a rebuild's.
            prop_assert_eq!(
                lore.index().unwrap().postings_fingerprint().unwrap(),
                fresh.postings_fingerprint().unwrap(),
                "postings after step {} ({:?})", step, op
            );
            // Recall agrees too (the FTS table is maintained by triggers). A limit above the
            // store's size, so that ties at the cut cannot differ by insertion order.
            let all = ListFilter { limit: Some(1000), ..ListFilter::default() };
            for w in WORDS {
                let a: Vec<String> = lore.index().unwrap().recall(w, &all).unwrap().into_iter().map(|h| h.memory.id.to_string()).collect();
                let b: Vec<String> = fresh.recall(w, &all).unwrap().into_iter().map(|h| h.memory.id.to_string()).collect();
                prop_assert_eq!(a, b);
            }
        }
    }
}
