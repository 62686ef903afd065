//! Tests of ranked thought search: the early-stopping top-k returns exactly what ordering
//! every thought by ρ returns.

use proptest::prelude::*;

use super::*;

const NOW_MS: i64 = 1_800_000_000_000;
const DAY_MS: i64 = 86_400_000;

/// One thought's ranking inputs: score (tenths), age (quarter days), outcome, best, children, session (each from a
/// few values, so that ties are common).
type Row = (u8, u8, u8, bool, u8, u8);

fn index_of(rows: &[Row]) -> ThoughtIndex {
    let index = ThoughtIndex::empty_in_memory().unwrap();
    index
        .conn
        .execute(
            "INSERT INTO sessions(session, ledger, finished) VALUES ('s0', '', 1)",
            [],
        )
        .unwrap();
    for (i, (score, age, outcome, best, children, session)) in rows.iter().enumerate() {
        let outcome = [None, Some("success"), Some("failed")][usize::from(*outcome % 3)];
        index
            .conn
            .execute(
                "INSERT INTO thoughts(id, session, depth, created, score, outcome, best, \
                 children, text) VALUES (?1, ?2, 0, ?3, ?4, ?5, ?6, ?7, 'a thought')",
                rusqlite::params![
                    format!("{i:040x}"),
                    format!("s{}", session % 3),
                    NOW_MS - i64::from(*age) * DAY_MS / 4,
                    f64::from(*score) / 10.0,
                    outcome,
                    i64::from(*best),
                    i64::from(*children % 2),
                ],
            )
            .unwrap();
    }
    index
}

fn by_scan(index: &ThoughtIndex, q: &ThoughtQuery) -> Vec<ThoughtHit> {
    let mut params = Params::default();
    let rho = rho_sql(q, &mut params);
    let filters = filter_sql(q, &mut params);
    index
        .top_by_scan(&rho, &filters, params, q.limit.max(1))
        .unwrap()
}

fn weights(choice: u8) -> RankWeights {
    let [score, outcome, recency] = match choice % 5 {
        0 => [0.7, 0.2, 0.1],
        1 => [0.1, 0.1, 5.0],
        2 => [0.0, 0.0, 0.0],
        3 => [1.0, 0.0, 1.0],
        _ => [1.0, 0.0, 0.0],
    };
    RankWeights {
        score,
        outcome,
        recency,
        half_life_days: 2.0,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn stopping_early_returns_what_ordering_every_thought_returns(
        rows in proptest::collection::vec(
            (0u8..11, 0u8..24, 0u8..3, proptest::bool::weighted(0.1), 0u8..2, 0u8..3),
            0..600,
        ),
        limit in 1usize..12,
        outcome in 0u8..5,
        frontier in proptest::bool::weighted(0.3),
        choice in 0u8..5,
    ) {
        let index = index_of(&rows);
        let q = ThoughtQuery {
            limit,
            outcome: [
                None,
                Some(OutcomeFilter::Success),
                Some(OutcomeFilter::Failed),
                Some(OutcomeFilter::Best),
                Some(OutcomeFilter::Unmarked),
            ][usize::from(outcome)],
            frontier,
            weights: weights(choice),
            now: Timestamp::from_millisecond(NOW_MS).ok(),
            ..ThoughtQuery::default()
        };
        prop_assert!(monotone(&q.weights));
        let ids = |hits: Vec<ThoughtHit>| {
            hits.into_iter().map(|h| (h.id, h.rho)).collect::<Vec<_>>()
        };
        prop_assert_eq!(ids(index.search(&q).unwrap()), ids(by_scan(&index, &q)));
    }
}

/// What the early-stopping top-k returns for `q`, and how many rows it read.
fn by_bound(index: &ThoughtIndex, q: &ThoughtQuery) -> (Vec<i64>, usize) {
    let mut params = Params::default();
    let rho = rho_sql(q, &mut params);
    let filters = filter_sql(q, &mut params);
    let top = index
        .bounded_top(q, &rho, &filters, &mut params, q.limit.max(1))
        .unwrap();
    (top.rowids(), top.seen.len())
}

#[test]
fn negative_weights_order_every_thought() {
    // The newest thoughts score 0.2, the next 0.4, the oldest 0: under a negative score weight
    // the oldest rank first. A bound that assumes ρ grows with score takes the first 0.4 read
    // by score as the best unread could do, and stops at the newest.
    let rows: Vec<Row> = (0..300u16)
        .map(|i| {
            let score = match i {
                0..20 => 2,
                20..100 => 4,
                _ => 0,
            };
            (score, (i / 10) as u8, 0, false, 0, 1)
        })
        .collect();
    let index = index_of(&rows);
    let q = ThoughtQuery {
        limit: 5,
        weights: RankWeights {
            score: -1.0,
            outcome: 0.0,
            recency: 0.0,
            ..RankWeights::default()
        },
        now: Timestamp::from_millisecond(NOW_MS).ok(),
        ..ThoughtQuery::default()
    };
    assert!(!monotone(&q.weights));
    let hits = index.search(&q).unwrap();
    assert_eq!(hits, by_scan(&index, &q));
    assert!(hits.iter().all(|h| h.score == 0.0), "{hits:?}");
    // The data trips the bound: stopping early would return the wrong thoughts.
    let (rowids, _) = by_bound(&index, &q);
    let scores: Vec<f64> = rowids
        .iter()
        .map(|r| {
            index
                .conn
                .query_row("SELECT score FROM thoughts WHERE rowid = ?1", [r], |row| {
                    row.get(0)
                })
                .unwrap()
        })
        .collect();
    assert!(scores.iter().any(|s| *s > 0.0), "{scores:?}");
}

#[test]
fn the_top_of_a_large_store_is_found_reading_a_small_part() {
    // 3,000 thoughts of distinct scores and ages: the best few by ρ sit at the head of both
    // lists, so the top-k stops long before reading every thought.
    let rows: Vec<Row> = (0..3000u16)
        .map(|i| ((i % 11) as u8, (i % 24) as u8, (i % 3) as u8, false, 0, 1))
        .collect();
    let index = index_of(&rows);
    for choice in [0, 3, 4] {
        let q = ThoughtQuery {
            limit: 3,
            weights: weights(choice),
            now: Timestamp::from_millisecond(NOW_MS).ok(),
            ..ThoughtQuery::default()
        };
        let (rowids, read) = by_bound(&index, &q);
        let scanned = by_scan(&index, &q);
        assert_eq!(index.search(&q).unwrap(), scanned);
        assert_eq!(rowids.len(), 3);
        assert!(
            read < rows.len() / 3,
            "weights {choice}: read {read} of {}",
            rows.len()
        );
    }
}

/// Words thoughts are made of: stems shared by several forms, a diacritic, a digit.
const VOCAB: [&str; 12] = [
    "cache", "caching", "cached", "parser", "parsers", "café", "cafe", "retry", "x2", "queue",
    "budget", "the",
];

/// An index of `texts` written as a catch-up writes thoughts: rows, full text and postings;
/// then the first `removed` rows taken out again as a deleted session's are.
fn index_of_texts(texts: &[Vec<u8>], removed: usize) -> ThoughtIndex {
    let index = ThoughtIndex::empty_in_memory().unwrap();
    let mut postings = crate::index::postings::PendingPostings::default();
    for (i, words) in texts.iter().enumerate() {
        let text = words
            .iter()
            .map(|w| VOCAB[usize::from(*w) % VOCAB.len()])
            .collect::<Vec<_>>()
            .join(" ");
        index
            .conn
            .execute(
                "INSERT INTO thoughts(id, session, depth, created, score, text) \
                 VALUES (?1, ?2, 0, ?3, 0.5, ?4)",
                rusqlite::params![format!("{i:040x}"), format!("s{}", i % 2), NOW_MS, text],
            )
            .unwrap();
        let rowid = index.conn.last_insert_rowid();
        index
            .conn
            .execute(
                "INSERT INTO thoughts_fts(rowid, text) VALUES (?1, ?2)",
                rusqlite::params![rowid, text],
            )
            .unwrap();
        postings.add(rowid, &text, "", "");
    }
    postings.apply(&index.conn).unwrap();
    let mut postings = crate::index::postings::PendingPostings::default();
    for rowid in 1..=removed as i64 {
        let text: String = index
            .conn
            .query_row("SELECT text FROM thoughts WHERE rowid = ?1", [rowid], |r| {
                r.get(0)
            })
            .unwrap();
        index
            .conn
            .execute(
                "INSERT INTO thoughts_fts(thoughts_fts, rowid, text) VALUES ('delete', ?1, ?2)",
                rusqlite::params![rowid, text],
            )
            .unwrap();
        index
            .conn
            .execute("DELETE FROM thoughts WHERE rowid = ?1", [rowid])
            .unwrap();
        postings.remove(rowid, text, String::new(), String::new());
    }
    postings.apply(&index.conn).unwrap();
    index
}

/// Each matching row's BM25 as FTS5's `bm25()` gives it (negated, so higher is better).
fn fts_scores(index: &ThoughtIndex, query: &str) -> BTreeMap<i64, f64> {
    let terms = fts_terms(query).join(" OR ");
    let mut stmt = index
        .conn
        .prepare("SELECT rowid, -bm25(thoughts_fts) FROM thoughts_fts WHERE thoughts_fts MATCH ?1")
        .unwrap();
    stmt.query_map([terms], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
}

/// Each matching row's BM25 from the postings.
fn postings_scores(index: &ThoughtIndex, query: &str) -> BTreeMap<i64, f64> {
    let stems = crate::index::query_stems::stems(&index.conn, &words(query))
        .unwrap()
        .unwrap();
    let docs = crate::index::schema::read_meta(&index.conn, "postings_docs")
        .unwrap()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut out = BTreeMap::new();
    crate::index::postings_scores::weighted_scores(
        &index.conn,
        &stems,
        docs,
        (1.0, 0.0, 0.0),
        &mut |r, s| {
            out.insert(r, s);
        },
    )
    .unwrap();
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn postings_score_free_text_as_fts5_does(
        texts in proptest::collection::vec(proptest::collection::vec(0u8..12, 1..9), 1..120),
        removed in 0usize..20,
        query in proptest::collection::vec(0u8..12, 1..4),
        candidates in 1usize..8,
    ) {
        let removed = removed.min(texts.len() - 1);
        let index = index_of_texts(&texts, removed);
        let query = query
            .iter()
            .map(|w| VOCAB[usize::from(*w)])
            .collect::<Vec<_>>()
            .join(" ");
        let fts = fts_scores(&index, &query);
        let ours = postings_scores(&index, &query);
        prop_assert_eq!(fts.keys().collect::<Vec<_>>(), ours.keys().collect::<Vec<_>>());
        for (rowid, score) in &fts {
            prop_assert!((score - ours[rowid]).abs() <= 1e-9 * score.abs().max(1.0),
                "row {}: FTS5 {} postings {}", rowid, score, ours[rowid]);
        }
        // Every match a candidate: both ways return the same hits in the same order.
        let q = ThoughtQuery {
            text: Some(query.clone()),
            limit: 200,
            candidates: 200,
            now: Timestamp::from_millisecond(NOW_MS).ok(),
            ..ThoughtQuery::default()
        };
        let ids = |hits: Vec<ThoughtHit>| hits.into_iter().map(|h| h.id).collect::<Vec<_>>();
        prop_assert_eq!(
            ids(index.search_with(&q, true).unwrap()),
            ids(index.search_with(&q, false).unwrap())
        );
        // A few candidates: the best by BM25, ties to the newer row.
        let mut best: Vec<(f64, i64)> = ours.iter().map(|(r, s)| (*s, *r)).collect();
        best.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
        let mut expected: Vec<i64> = best.iter().take(candidates).map(|(_, r)| *r).collect();
        let mut got = index.bm25_candidates(&words(&query), candidates).unwrap().unwrap();
        expected.sort_unstable();
        got.sort_unstable();
        prop_assert_eq!(got, expected);
    }
}

/// Postings follow the index through real writes, a session dropped and a ledger rewritten:
/// they count every thought indexed, score as FTS5 does, and select the same hits.
#[test]
fn postings_follow_sessions_written_dropped_and_rewritten() {
    use crate::memory::WriteContext;
    use crate::store::Store;
    use crate::thoughts::write::{NewThought, add_thought};

    let repo = lore_testutils::TestRepo::new();
    let store = Store::discover(&repo.path()).unwrap();
    let write = |session: &str, text: &str| {
        add_thought(
            &store,
            &NewThought {
                session: session.into(),
                text: text.into(),
                ..NewThought::default()
            },
            &WriteContext::default(),
        )
        .unwrap()
    };
    let agree = |index: &ThoughtIndex, query: &str| {
        let counted: i64 = index
            .conn
            .query_row("SELECT count(*) FROM thoughts", [], |r| r.get(0))
            .unwrap();
        let docs = crate::index::schema::read_meta(&index.conn, "postings_docs").unwrap();
        assert_eq!(docs, Some(counted.to_string()));
        assert_eq!(
            fts_scores(index, query).len(),
            postings_scores(index, query).len()
        );
        for (rowid, score) in fts_scores(index, query) {
            let ours = postings_scores(index, query)[&rowid];
            assert!(
                (score - ours).abs() <= 1e-9,
                "row {rowid}: {score} vs {ours}"
            );
        }
        let q = ThoughtQuery {
            text: Some(query.into()),
            limit: 50,
            candidates: 50,
            ..ThoughtQuery::default()
        };
        let ids = |hits: Vec<ThoughtHit>| hits.into_iter().map(|h| h.id).collect::<Vec<_>>();
        let found = ids(index.search_with(&q, true).unwrap());
        assert_eq!(found, ids(index.search_with(&q, false).unwrap()));
        found
    };
    for i in 0..6 {
        write("kept", &format!("cache the parser output, try {i}"));
        write("dropped", &format!("the parser caching fails on input {i}"));
    }
    let index = ThoughtIndex::open(&store).unwrap();
    assert_eq!(agree(&index, "parser caching").len(), 12);
    drop(index);
    // A session whose ledger ref is gone leaves the index, postings and all.
    repo.git(&["update-ref", "-d", "refs/lore/thoughts/dropped"]);
    write("kept", "one more parser");
    let index = ThoughtIndex::open(&store).unwrap();
    assert_eq!(agree(&index, "parser caching").len(), 7);
    drop(index);
    // A ledger rewritten so that the recorded tip is no longer on it is read whole again.
    let earlier = repo.git(&["rev-parse", "refs/lore/thoughts/kept~3"]);
    repo.git(&["update-ref", "refs/lore/thoughts/kept", earlier.trim()]);
    let index = ThoughtIndex::open(&store).unwrap();
    assert_eq!(agree(&index, "parser caching").len(), 4);
}

/// A limit beyond any count (hostile input) reserves nothing and returns every thought.
#[test]
fn the_largest_limit_returns_every_thought() {
    let rows: Vec<Row> = (0..40u8)
        .map(|i| (i % 11, i % 24, i % 3, false, 0, 1))
        .collect();
    let index = index_of(&rows);
    let q = ThoughtQuery {
        limit: usize::MAX,
        now: Timestamp::from_millisecond(NOW_MS).ok(),
        ..ThoughtQuery::default()
    };
    let hits = index.search(&q).unwrap();
    assert_eq!(hits.len(), 40);
    assert_eq!(hits, by_scan(&index, &q));
}
