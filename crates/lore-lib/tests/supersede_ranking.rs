//! Property: after `supersede`, the old memory never ranks above its replacement, for any query
//! that finds both, with the built-in embedder and without one, with memories written in agent
//! sessions (whose neighbours recall lifts) and outside any; and an active memory is never
//! folded under a resolved or archived near-copy of itself.

use std::sync::Arc;

use lore::embed::StaticEmbedder;
use lore::index::RankOptions;
use lore::{Hit, ListFilter, Lore, NewMemory, Patch, Status, Store, WriteContext};
use lore_testutils::{TestRepo, proptest_cases};
use proptest::prelude::*;

const WORDS: [&str; 12] = [
    "sqlite", "wal", "mode", "index", "engine", "postgres", "cache", "retry", "schema", "token",
    "journal", "lock",
];

/// A memory's text: some words of the pool, repeated to vary their weight.
fn text(words: &[usize]) -> String {
    words
        .iter()
        .map(|&w| WORDS[w % WORDS.len()])
        .collect::<Vec<_>>()
        .join(" ")
}

/// Where each id appears in the ranking: its hit's place; a memory folded into a hit sits right
/// after it (half a place later).
fn places(hits: &[Hit]) -> std::collections::HashMap<String, f64> {
    let mut at = std::collections::HashMap::new();
    for (i, h) in hits.iter().enumerate() {
        at.insert(h.memory.id.to_string(), i as f64);
        for d in &h.duplicates {
            at.insert(d.clone(), i as f64 + 0.5);
        }
    }
    at
}

/// A handle on a fresh repository, with the embedder lore ships.
fn with_builtin_embedder() -> (TestRepo, Lore) {
    let repo = TestRepo::new();
    let mut lore = Lore::new(Store::discover(&repo.path()).unwrap());
    lore.set_embedder(Some(Arc::new(StaticEmbedder::builtin().unwrap())));
    (repo, lore)
}

/// Writes a memory; returns its id.
fn remember(lore: &Lore, namespace: &str, key: Option<&str>, summary: &str) -> String {
    let new = NewMemory {
        namespace: namespace.into(),
        key: key.map(Into::into),
        summary: summary.into(),
        ..NewMemory::default()
    };
    let written = lore.remember(&new, &WriteContext::default()).unwrap();
    written.memory.id.to_string()
}

#[derive(Clone, Debug)]
struct Case {
    memories: Vec<Vec<usize>>,
    supersessions: Vec<(usize, Vec<usize>)>,
    queries: Vec<Vec<usize>>,
    embedded: bool,
    /// Written in two agent sessions, so recall also lifts the neighbours of strong hits.
    in_sessions: bool,
}

fn case() -> impl Strategy<Value = Case> {
    let words = || prop::collection::vec(0..WORDS.len(), 1..6);
    (
        prop::collection::vec(words(), 2..8),
        prop::collection::vec((0..8usize, words()), 1..4),
        prop::collection::vec(prop::collection::vec(0..WORDS.len(), 1..4), 1..6),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(memories, supersessions, queries, embedded, in_sessions)| Case {
                memories,
                supersessions,
                queries,
                embedded,
                in_sessions,
            },
        )
}

fn check(case: &Case) -> Result<(), TestCaseError> {
    let (_repo, mut lore) = with_builtin_embedder();
    if !case.embedded {
        lore.set_embedder(None);
    }
    let ctx_of = |n: usize| WriteContext {
        session: case.in_sessions.then(|| format!("s{}", n % 2)),
        ..WriteContext::default()
    };
    let mut ids = Vec::new();
    for (i, words) in case.memories.iter().enumerate() {
        let m = NewMemory {
            namespace: "decisions".into(),
            summary: format!("{} ({i})", text(words)),
            body: format!("{}\n", text(words)),
            ..NewMemory::default()
        };
        ids.push(lore.remember(&m, &ctx_of(i)).unwrap().memory.id.to_string());
    }
    // (old, new) pairs; a memory already superseded is skipped (supersede refuses it).
    let mut pairs = Vec::new();
    for (n, (target, words)) in case.supersessions.iter().enumerate() {
        let old = ids[target % ids.len()].clone();
        if pairs.iter().any(|(o, _): &(String, String)| *o == old) {
            continue;
        }
        let new = NewMemory {
            namespace: "decisions".into(),
            summary: format!("{} (replacement {n})", text(words)),
            body: format!("{}\n", text(words)),
            ..NewMemory::default()
        };
        let done = lore.supersede(&old, &new, &ctx_of(n)).unwrap();
        let new_id = done.new.memory.id.to_string();
        ids.push(new_id.clone());
        pairs.push((old, new_id));
    }
    let filter = ListFilter {
        limit: Some(50),
        ..ListFilter::default()
    };
    for q in &case.queries {
        let query = text(q);
        let hits = lore
            .search(&query, &filter, &RankOptions::default(), true)
            .unwrap();
        let at = places(&hits);
        for (old, new) in &pairs {
            if let (Some(o), Some(n)) = (at.get(old), at.get(new)) {
                prop_assert!(
                    n < o,
                    "query {query:?}: {old} (superseded) at {o} above {new} at {n}: {hits:#?}"
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: proptest_cases(48),
        rng_seed: proptest::test_runner::RngSeed::Fixed(29),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn a_superseded_memory_never_ranks_above_its_replacement(case in case()) {
        check(&case)?;
    }
}

/// The example a new user meets: the old decision matches the query better, yet its replacement
/// comes first.
#[test]
fn the_quickstart_supersession_ranks_the_replacement_first() {
    let (_repo, mut lore) = with_builtin_embedder();
    let ctx = WriteContext::default();
    let old = remember(
        &lore,
        "decisions",
        Some("index-engine"),
        "Use SQLite for the index: SQLite is embedded, SQLite needs no server",
    );
    let done = lore
        .supersede(
            "index-engine",
            &NewMemory {
                namespace: "decisions".into(),
                summary: "Use SQLite in WAL mode so readers never block the writer".into(),
                ..NewMemory::default()
            },
            &ctx,
        )
        .unwrap();
    let hits = lore
        .search(
            "sqlite",
            &ListFilter::default(),
            &RankOptions::default(),
            true,
        )
        .unwrap();
    let order: Vec<String> = hits.iter().map(|h| h.memory.id.to_string()).collect();
    let new = done.new.memory.id.to_string();
    assert_eq!(order.first(), Some(&new), "{hits:#?}");
    let old_at = order
        .iter()
        .position(|id| *id == old)
        .expect("old is found");
    assert!(old_at > 0);
    assert_eq!(
        hits[0].explain.as_ref().and_then(|e| e.supersedes.clone()),
        Some(old),
        "the explanation says why"
    );
}

/// An active memory and a resolved near-copy of it: the active one stands for the pair.
#[test]
fn an_active_memory_is_not_folded_under_a_resolved_copy() {
    let (_repo, mut lore) = with_builtin_embedder();
    let ctx = WriteContext::default();
    let text = "The nightly build fails when the cache volume is full; prune the cache first";
    let resolved = remember(&lore, "blockers", None, &format!("{text}, cache cache"));
    lore.update(
        &resolved,
        &Patch {
            status: Some(Status::Resolved),
            ..Patch::default()
        },
        &ctx,
    )
    .unwrap();
    let active = remember(&lore, "blockers", None, text);
    let flat = RankOptions {
        status_weights: lore::index::rank::EQUAL_STATUS_WEIGHTS,
        ..RankOptions::default()
    };
    for options in [RankOptions::default(), flat] {
        let hits = lore
            .search("cache", &ListFilter::default(), &options, false)
            .unwrap();
        let at = places(&hits);
        assert!(at[&active] < at[&resolved], "{hits:#?}");
    }
}
