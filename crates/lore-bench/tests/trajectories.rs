//! The trajectory benchmark operation on small seeded trajectories: every strategy is scored on
//! every query set at every budget, the same seed gives the same scores, progress covers each
//! trajectory's indexing and querying, and a size too small to plant queries in is refused.

mod common;

use common::run_recorded;
use lore::ErrorClass;
use lore::trajectory::Strategy;
use lore_bench::EvalTrajectories;

fn small(seed: u64) -> EvalTrajectories {
    EvalTrajectories {
        seed,
        trajectories: 2,
        steps: 400,
        queries_per_kind: 3,
    }
}

/// Everything seeded in a report: every score but the timings.
fn scores(report: &lore_bench::TrajectoryReport) -> Vec<(String, String, Vec<f64>)> {
    report
        .kinds
        .iter()
        .flat_map(|k| {
            k.strategies.iter().map(move |s| {
                let mut v = vec![s.hit_at_2];
                v.extend(&s.recall);
                v.extend(&s.recall_near);
                v.extend(&s.recall_far);
                v.extend(s.osu_share);
                (
                    k.kind.as_str().to_string(),
                    s.strategy.as_str().to_string(),
                    v,
                )
            })
        })
        .collect()
}

#[test]
fn every_strategy_is_scored_on_every_query_set_and_the_seed_decides_the_scores() {
    let work = tempfile::tempdir().unwrap();
    let (first, progress) = run_recorded(small(7), &work.path().join("a"), None);
    let first = first.unwrap();
    let (again, _) = run_recorded(small(7), &work.path().join("b"), None);
    let again = again.unwrap();
    let (other, _) = run_recorded(small(8), &work.path().join("c"), None);
    let other = other.unwrap();

    // Without an embedder the index uses the built-in static model.
    assert_eq!(
        first.embedder,
        lore::trajectory::builtin_embedder().id().to_string()
    );
    assert_eq!(first.budgets, vec![64, 128, 256, 512, 1024]);
    assert_eq!(first.kinds.len(), 3);
    for kind in &first.kinds {
        // Two trajectories, three queries each, three evidence steps per query.
        assert_eq!(kind.queries, 6);
        assert_eq!(kind.evidence_near + kind.evidence_far, 18);
        assert_eq!(kind.strategies.len(), Strategy::ALL.len());
        for s in &kind.strategies {
            assert_eq!(s.recall.len(), 5);
            assert!(s.recall.iter().all(|r| (0.0..=1.0).contains(r)));
            assert_eq!(s.osu_share.is_some(), s.strategy == Strategy::Auto);
        }
    }
    assert!(
        first
            .kinds
            .iter()
            .any(|k| k.strategies.iter().any(|s| s.recall[4] > 0.0)),
        "some evidence is found at 1024 tokens"
    );
    assert_eq!(scores(&first), scores(&again));
    assert_ne!(
        scores(&first),
        scores(&other),
        "another seed, other trajectories"
    );

    let labels: Vec<(String, Option<u64>)> = progress
        .phases()
        .into_iter()
        .map(|p| (p.label, p.total))
        .collect();
    assert_eq!(
        labels,
        vec![
            ("trajectory 1 of 2: steps indexed".to_string(), Some(400)),
            ("trajectory 1 of 2: queries answered".to_string(), Some(9)),
            ("trajectory 2 of 2: steps indexed".to_string(), Some(400)),
            ("trajectory 2 of 2: queries answered".to_string(), Some(9)),
        ]
    );
}

#[test]
fn too_few_steps_trajectories_or_queries_are_refused() {
    let work = tempfile::tempdir().unwrap();
    for request in [
        EvalTrajectories {
            steps: 199,
            ..small(1)
        },
        EvalTrajectories {
            trajectories: 0,
            ..small(1)
        },
        EvalTrajectories {
            queries_per_kind: 0,
            ..small(1)
        },
    ] {
        let (out, _) = run_recorded(request, &work.path().join("h"), None);
        assert_eq!(out.unwrap_err().class(), ErrorClass::InvalidInput);
    }
}

#[test]
fn json_arguments_fill_the_defaults() {
    let parsed: EvalTrajectories =
        serde_json::from_value(serde_json::json!({ "steps": 500 })).unwrap();
    assert_eq!(
        (
            parsed.seed,
            parsed.trajectories,
            parsed.steps,
            parsed.queries_per_kind
        ),
        (7, 3, 500, 20)
    );
    assert!(serde_json::from_value::<EvalTrajectories>(serde_json::json!({ "x": 1 })).is_err());
}
