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

#[test]
fn negative_weights_order_every_thought() {
    let rows: Vec<Row> = (0..300u16)
        .map(|i| ((i % 5) as u8, (i % 7) as u8, 0, false, 0, 1))
        .collect();
    let index = index_of(&rows);
    let q = ThoughtQuery {
        limit: 5,
        weights: RankWeights {
            score: -1.0,
            ..RankWeights::default()
        },
        now: Timestamp::from_millisecond(NOW_MS).ok(),
        ..ThoughtQuery::default()
    };
    assert!(!monotone(&q.weights));
    let hits = index.search(&q).unwrap();
    assert_eq!(hits, by_scan(&index, &q));
    assert!(hits.iter().all(|h| h.score == 0.0), "{hits:?}");
}
