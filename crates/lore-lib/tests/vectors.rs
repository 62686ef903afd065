//! The vector matrix cache: used when it matches the index, rebuilt when stale or damaged.

use std::sync::Arc;

use lore::index::{index_path, vectors_cache_path};
use lore::{ListFilter, Lore, NewMemory, Store, WriteContext};
use lore_testutils::{FakeEmbedder, TestRepo};

fn open(repo: &TestRepo) -> Lore {
    let mut lore = Lore::new(Store::discover(&repo.path()).unwrap());
    lore.set_embedder(Some(Arc::new(FakeEmbedder::new(32))));
    lore
}

fn remember(lore: &Lore, summary: &str) {
    let new = NewMemory {
        namespace: "learnings".into(),
        summary: summary.into(),
        ..NewMemory::default()
    };
    lore.remember(&new, &WriteContext::default()).unwrap();
}

fn top(lore: &mut Lore, q: &str) -> Vec<String> {
    lore.recall(q, &ListFilter::default())
        .unwrap()
        .into_iter()
        .map(|h| h.memory.summary)
        .collect()
}

#[test]
fn the_cache_follows_the_index_and_survives_damage() {
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    remember(&lore, "alpha beta gamma");
    remember(&lore, "delta epsilon zeta");
    assert_eq!(top(&mut lore, "gamma alpha")[0], "alpha beta gamma");
    let cache = vectors_cache_path(&index_path(lore.store()));
    assert!(cache.exists());

    // A new handle reads the cache; a write makes it stale, and the next search sees the new
    // memory.
    let mut second = open(&repo);
    assert_eq!(top(&mut second, "zeta delta")[0], "delta epsilon zeta");
    remember(&second, "eta theta iota");
    let mut third = open(&repo);
    assert_eq!(top(&mut third, "iota theta")[0], "eta theta iota");

    // Garbage in the cache file is ignored and replaced.
    std::fs::write(&cache, b"LOREVEC1 not really").unwrap();
    let mut fourth = open(&repo);
    assert_eq!(top(&mut fourth, "iota theta")[0], "eta theta iota");
    assert!(std::fs::read(&cache).unwrap().len() > 100);
}

#[test]
fn filtered_vector_search_equals_filtering_the_full_ranking() {
    use lore::index::{Fusion, RankOptions};
    let repo = TestRepo::new();
    let mut lore = open(&repo);
    const WORDS: &[&str] = &[
        "cache", "deploy", "retry", "schema", "token", "index", "branch", "merge", "build",
        "queue", "parser", "config", "latency", "socket", "thread", "lock",
    ];
    let ctx = WriteContext::default();
    let memories: Vec<lore::Memory> = (0..400usize)
        .map(|i| {
            let words: Vec<&str> = (0..6)
                .map(|k| WORDS[(i * 7 + k * 3 + i / 5) % 16])
                .collect();
            let new = NewMemory {
                // A selective namespace (5 memories) and a broad one.
                namespace: if i % 80 == 0 {
                    "decisions"
                } else {
                    "learnings"
                }
                .into(),
                summary: format!("{} {i}", words.join(" ")),
                ..NewMemory::default()
            };
            lore.prepare(&new, &ctx).unwrap()
        })
        .collect();
    lore.write_batch(&memories, "fill", false, &ctx).unwrap();
    // Vector order only: no BM25 weight, no recency.
    let options = RankOptions {
        fusion: Fusion::Score { lexical: 0.0 },
        half_life_days: None,
        collapse: false,
        ..RankOptions::default()
    };
    let query = "socket lock thread latency";
    let everything = lore
        .search(
            query,
            &ListFilter {
                limit: Some(400),
                ..ListFilter::default()
            },
            &options,
            false,
        )
        .unwrap();
    for ns in ["decisions", "learnings"] {
        let expected: Vec<String> = everything
            .iter()
            .filter(|h| h.memory.namespace.as_str() == ns)
            .take(3)
            .map(|h| h.memory.summary.clone())
            .collect();
        let filter = ListFilter {
            namespace: Some(ns.into()),
            limit: Some(3),
            ..ListFilter::default()
        };
        let got: Vec<String> = lore
            .search(query, &filter, &options, false)
            .unwrap()
            .into_iter()
            .map(|h| h.memory.summary)
            .collect();
        assert_eq!(got, expected, "{ns}");
        assert!(!got.is_empty());
    }
}
