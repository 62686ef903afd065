//! Trajectory retrieval invariants: packed context never exceeds its budget, holds each step
//! once, an index grown step by step answers exactly like one built in a batch, and `auto`
//! picks the units only when the evidence shares a specific entity.

use lore::steps::{Step, TrajectoryStep};
use lore::tokens::estimate_tokens;
use lore::trajectory::{Params, Strategy as Retrieval, TrajectoryIndex};
use proptest::prelude::*;

const WORDS: [&str; 16] = [
    "cache", "latency", "deploy", "retry", "schema", "index", "timeout", "cart", "query", "worker",
    "queue", "token", "config", "migrate", "build", "test",
];

fn step(i: usize, words: &[usize], tool: usize, entity: usize, long: bool) -> TrajectoryStep {
    let mut text: Vec<&str> = words.iter().map(|w| WORDS[w % WORDS.len()]).collect();
    if long {
        text.extend(std::iter::repeat_n("padding", 60));
    }
    step_with(
        i,
        &text.join(" "),
        ["bash", "edit", "grep"][tool % 3],
        &format!("e{}", entity % 5),
    )
}

fn step_with(i: usize, text: &str, tool: &str, entity: &str) -> TrajectoryStep {
    TrajectoryStep {
        step: Step {
            id: format!("s{i:05}"),
            time: jiff::Timestamp::from_second(1_700_000_000 + i as i64).unwrap(),
            kind: None,
            tool: Some(tool.to_string()),
            arguments: None,
            result: None,
            entities: vec![entity.to_string()],
            subgoal: Some(format!("goal {}", i / 10)),
            files: Vec::new(),
            text: Some(text.to_string()),
            origin: None,
            agent: None,
            session: None,
        },
        branch: "main".into(),
        committed: true,
    }
}

fn steps_strategy() -> impl Strategy<Value = Vec<TrajectoryStep>> {
    prop::collection::vec(
        (
            prop::collection::vec(0usize..16, 1..6),
            0usize..3,
            0usize..5,
            prop::bool::weighted(0.1),
        ),
        0..60,
    )
    .prop_map(|raw| {
        raw.into_iter()
            .enumerate()
            .map(|(i, (w, t, e, long))| step(i, &w, t, e, long))
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn packed_context_never_exceeds_its_budget(
        steps in steps_strategy(),
        budget in 0usize..400,
        query in prop::collection::vec(0usize..16, 0..4),
    ) {
        let mut index = TrajectoryIndex::new(None, Params::default());
        index.extend(steps).unwrap();
        let query: Vec<&str> = query.iter().map(|w| WORDS[*w]).collect();
        for strategy in Retrieval::ALL {
            let got = index.recall(&query.join(" "), budget, strategy).unwrap();
            prop_assert!(got.tokens <= budget, "{strategy:?}: {} > {budget}", got.tokens);
            prop_assert!(estimate_tokens(&got.render()) <= budget);
            let mut positions: Vec<usize> = got.steps.iter().map(|p| p.position).collect();
            positions.sort_unstable();
            positions.dedup();
            prop_assert_eq!(positions.len(), got.steps.len(), "a step packed twice");
        }
    }
}

#[test]
fn growing_step_by_step_equals_building_at_once() {
    let steps: Vec<TrajectoryStep> = (0..300)
        .map(|i| step(i, &[i % 7, (i * 5) % 11, i % 16], i % 4, i % 9, false))
        .collect();
    let mut batch = TrajectoryIndex::new(None, Params::default());
    batch.extend(steps.clone()).unwrap();
    let mut grown = TrajectoryIndex::new(None, Params::default());
    for s in steps {
        grown.push(s).unwrap();
    }
    assert_eq!(batch.unit_counts(), grown.unit_counts());
    for strategy in Retrieval::ALL {
        for query in ["cache latency", "schema migrate", "worker queue token"] {
            let a = batch.recall(query, 200, strategy).unwrap();
            let b = grown.recall(query, 200, strategy).unwrap();
            let pa: Vec<usize> = a.steps.iter().map(|p| p.position).collect();
            let pb: Vec<usize> = b.steps.iter().map(|p| p.position).collect();
            assert_eq!(pa, pb, "{strategy:?} {query}");
        }
    }
}

#[test]
fn recency_takes_the_newest_steps() {
    let steps: Vec<TrajectoryStep> = (0..50).map(|i| step(i, &[i % 16], 0, 0, false)).collect();
    let mut index = TrajectoryIndex::new(None, Params::default());
    index.extend(steps).unwrap();
    let got = index.recall("anything", 30, Retrieval::Recency).unwrap();
    assert_eq!(got.steps[0].position, 50);
    assert!(got.steps.windows(2).all(|w| w[0].position > w[1].position));
}

/// Background steps (one common tool and entity, words the query does not use) and two
/// evidence steps, each holding one query word, under the entities given.
fn evidence_trajectory(entities: [&str; 2]) -> TrajectoryIndex {
    let filler = ["parser", "lexer", "grammar", "token", "syntax", "module"];
    let mut steps: Vec<TrajectoryStep> = (0..40)
        .map(|i| {
            step_with(
                i,
                &format!("{} work", filler[i % filler.len()]),
                "bash",
                "core",
            )
        })
        .collect();
    steps.push(step_with(40, "cache latency spike", "bash", entities[0]));
    steps.push(step_with(41, "deploy rollback done", "bash", entities[1]));
    let mut index = TrajectoryIndex::new(None, Params::default());
    index.extend(steps).unwrap();
    index
}

#[test]
fn auto_groups_by_unit_only_when_the_evidence_shares_a_specific_entity() {
    // Both evidence steps name the same rare entity: the top step's unit holds a query word it
    // lacks, so auto takes the units.
    let shared = evidence_trajectory(["ledger", "ledger"]);
    let got = shared.recall("cache deploy", 200, Retrieval::Auto).unwrap();
    assert_eq!(got.strategy, Retrieval::Auto);
    assert_eq!(got.used, Retrieval::Osu);
    // Each names its own entity, and the shared tool and entity are common: flat.
    let separate = evidence_trajectory(["ledger", "invoice"]);
    let got = separate
        .recall("cache deploy", 200, Retrieval::Auto)
        .unwrap();
    assert_eq!(got.used, Retrieval::Flat);
    // Asked for by name, a strategy runs as asked.
    let got = separate
        .recall("cache deploy", 200, Retrieval::Osu)
        .unwrap();
    assert_eq!(got.used, Retrieval::Osu);
}
