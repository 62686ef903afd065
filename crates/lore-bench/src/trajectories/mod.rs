//! `eval_trajectories` (`lore eval trajectories`): seeded long agent trajectories with planted
//! evidence, and Hit@2 / evidence recall of every strategy against the token budget.
//!
//! A trajectory is background steps (common tools and entities, filler words, subgoals that
//! change every 30–80 steps, topic words sprinkled in as noise) with queries planted into it.
//! Each query has four topic words and three evidence steps, plus eight distractor steps that
//! carry some of the same words under unrelated tools and entities:
//! * **shared** — the evidence shares one entity (used nowhere else but in one unrelated step)
//!   and one rarely used tool. The first evidence step holds two query words, the second one,
//!   the third none: it is reachable only through what it shares with the others (the situation
//!   where grouping by entity or tool should help).
//! * **heterogeneous** — each evidence step has its own common tool and common entity and two
//!   of the query words (overlapping pairs); distractors hold one word each. Nothing links the
//!   evidence but the query.
//! * **mixed** — each query is drawn as one of the two.
//!
//! About one query in seven has its evidence among the last 50 steps ("near"); the rest are
//! spread over the whole trajectory ("far").

mod generate;

use std::collections::HashSet;
use std::time::Instant;

use lore::embed::SharedEmbedder;
use lore::ops::{Effect, Env, Operation};
use lore::progress::{Progress, Throttle};
use lore::steps::TrajectoryStep;
use lore::trajectory::{Params, Strategy, TrajectoryIndex};
use lore::{Error, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{PROGRESS_STEPS, percentile};
use generate::{Rng, generate};

/// The budgets every strategy is measured at (tokens).
pub const BUDGETS: [usize; 5] = [64, 128, 256, 512, 1024];
/// Evidence this many steps from the end or closer is "near".
pub const NEAR_STEPS: usize = 50;

/// Measure every trajectory retrieval strategy (those of `ctx recall`) on seeded long
/// trajectories whose queries' evidence shares tools and entities, shares nothing, or a mix.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct EvalTrajectories {
    /// The generator's seed (default 7).
    pub seed: u64,
    /// Trajectories generated (default 3).
    pub trajectories: usize,
    /// Steps per trajectory, at least 200 (default 10,000).
    pub steps: usize,
    /// Queries of each kind per trajectory (default 20).
    pub queries_per_kind: usize,
}

impl Default for EvalTrajectories {
    fn default() -> EvalTrajectories {
        EvalTrajectories {
            seed: 7,
            trajectories: 3,
            steps: 10_000,
            queries_per_kind: 20,
        }
    }
}

impl Operation for EvalTrajectories {
    const NAME: &'static str = "eval_trajectories";
    const TITLE: &'static str = "Evaluate trajectory retrieval";
    const DESCRIPTION: &'static str = "Measure every trajectory retrieval strategy on seeded \
        synthetic trajectories with planted evidence: Hit@2 and evidence recall (near and far) \
        at token budgets 64 to 1024, query latency and index build time, using this handle's \
        embedder (the built-in static model without one).";
    const EFFECT: Effect = Effect::ReadOnly;
    type Output = TrajectoryReport;

    fn run(self, env: &mut Env<'_>) -> Result<TrajectoryReport> {
        if self.steps < 200 || self.trajectories == 0 || self.queries_per_kind == 0 {
            return Err(Error::Invalid {
                what: "trajectory benchmark size",
                value: format!(
                    "{} trajectories x {} steps, {} queries per kind",
                    self.trajectories, self.steps, self.queries_per_kind
                ),
                reason: "use at least 200 steps, one trajectory and one query per kind".into(),
            });
        }
        let embedder = env.lore.embedder().cloned();
        run(&self, embedder, &Params::default(), &*env.progress)
    }
}

/// The three query sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum QueryKind {
    /// (a) evidence shares an entity and a tool.
    Shared,
    /// (b) evidence shares neither.
    Heterogeneous,
    /// (c) a mix of both.
    Mixed,
}

impl QueryKind {
    /// All kinds, in report order.
    pub const ALL: [QueryKind; 3] = [
        QueryKind::Shared,
        QueryKind::Heterogeneous,
        QueryKind::Mixed,
    ];

    /// The kind's name.
    pub fn as_str(self) -> &'static str {
        match self {
            QueryKind::Shared => "shared",
            QueryKind::Heterogeneous => "heterogeneous",
            QueryKind::Mixed => "mixed",
        }
    }
}

/// One strategy on one query set.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct StrategyScore {
    /// The strategy.
    pub strategy: Strategy,
    /// Share of queries with an evidence step among the first two chosen (budget 1024).
    pub hit_at_2: f64,
    /// Evidence recall at each of [`BUDGETS`].
    pub recall: Vec<f64>,
    /// Recall of near evidence at each budget.
    pub recall_near: Vec<f64>,
    /// Recall of far evidence at each budget.
    pub recall_far: Vec<f64>,
    /// Median query time (ms, budget 1024).
    pub query_p50_ms: f64,
    /// 95th percentile query time (ms).
    pub query_p95_ms: f64,
    /// `auto` only: the share of queries it answered with OSU.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub osu_share: Option<f64>,
}

/// One query set.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct KindReport {
    /// The set.
    pub kind: QueryKind,
    /// Queries.
    pub queries: usize,
    /// Evidence steps, near and far.
    pub evidence_near: usize,
    /// Far evidence steps.
    pub evidence_far: usize,
    /// Every strategy.
    pub strategies: Vec<StrategyScore>,
}

/// The whole report.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct TrajectoryReport {
    /// The configuration.
    pub config: EvalTrajectories,
    /// The embedder.
    pub embedder: String,
    /// The retrieval parameters.
    pub params: Params,
    /// The budgets.
    pub budgets: Vec<usize>,
    /// Mean time to build one trajectory's index, step by step (ms).
    pub build_ms: f64,
    /// Mean units per trajectory, by view.
    pub units: Vec<(String, usize)>,
    /// The query sets.
    pub kinds: Vec<KindReport>,
}

#[derive(Default)]
struct Tally {
    hits: usize,
    found: [usize; BUDGETS.len()],
    found_near: [usize; BUDGETS.len()],
    found_far: [usize; BUDGETS.len()],
    times: Vec<f64>,
    osu: usize,
}

/// Asks one planted query at every budget with one strategy and adds what it found to the
/// strategy's tally (hits within the first two steps, timing and the share answered by OSU at
/// the 1,024-token budget).
fn tally_query(
    index: &TrajectoryIndex,
    q: &generate::Planted,
    near: &[bool],
    strategy: Strategy,
    tally: &mut Tally,
) -> Result<()> {
    for (bi, budget) in BUDGETS.iter().enumerate() {
        let started = Instant::now();
        let got = index.recall(&q.query, *budget, strategy)?;
        let elapsed = started.elapsed().as_secs_f64() * 1e3;
        let positions: HashSet<usize> = got.steps.iter().map(|p| p.position - 1).collect();
        for (e, is_near) in q.evidence.iter().zip(near) {
            if positions.contains(e) {
                tally.found[bi] += 1;
                if *is_near {
                    tally.found_near[bi] += 1;
                } else {
                    tally.found_far[bi] += 1;
                }
            }
        }
        if *budget == 1024 {
            tally.times.push(elapsed);
            if got
                .steps
                .iter()
                .take(2)
                .any(|p| q.evidence.contains(&(p.position - 1)))
            {
                tally.hits += 1;
            }
            if got.used == Strategy::Osu && strategy == Strategy::Auto {
                tally.osu += 1;
            }
        }
    }
    Ok(())
}

/// Each query kind's scores per strategy, from the tallies and the counts of queries and of
/// near and far evidence.
fn kind_reports(tallies: &mut [Vec<Tally>], counts: &[[usize; 3]; 3]) -> Vec<KindReport> {
    QueryKind::ALL
        .iter()
        .enumerate()
        .map(|(k, kind)| {
            let [queries, near, far] = counts[k];
            let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
            let strategies = Strategy::ALL
                .iter()
                .enumerate()
                .map(|(si, strategy)| {
                    let t = &mut tallies[k][si];
                    t.times.sort_by(f64::total_cmp);
                    StrategyScore {
                        strategy: *strategy,
                        hit_at_2: ratio(t.hits, queries),
                        recall: t.found.iter().map(|f| ratio(*f, near + far)).collect(),
                        recall_near: t.found_near.iter().map(|f| ratio(*f, near)).collect(),
                        recall_far: t.found_far.iter().map(|f| ratio(*f, far)).collect(),
                        query_p50_ms: percentile(&t.times, 0.5),
                        query_p95_ms: percentile(&t.times, 0.95),
                        osu_share: (*strategy == Strategy::Auto).then(|| ratio(t.osu, queries)),
                    }
                })
                .collect();
            KindReport {
                kind: *kind,
                queries,
                evidence_near: near,
                evidence_far: far,
                strategies,
            }
        })
        .collect()
}

/// Runs the benchmark, reporting each trajectory's indexing and querying to `progress`.
// Long: one loop over the generated trajectories (index, then ask every planted query), its
// tallies kept across them; the scoring and the per-query tally are functions of their own.
pub fn run(
    config: &EvalTrajectories,
    embedder: Option<SharedEmbedder>,
    params: &Params,
    progress: &dyn Progress,
) -> Result<TrajectoryReport> {
    let mut rng = Rng(config.seed);
    let mut tallies: Vec<Vec<Tally>> = QueryKind::ALL
        .iter()
        .map(|_| Strategy::ALL.iter().map(|_| Tally::default()).collect())
        .collect();
    let mut counts = [[0usize; 3]; 3]; // per kind: queries, near, far evidence
    let mut build_ms = 0.0;
    let mut unit_totals: Vec<(String, usize)> = Vec::new();
    let mut embedder_name = String::new();
    for trajectory in 1..=config.trajectories {
        let (steps, planted) = generate(&mut rng, config.steps, config.queries_per_kind);
        let mut index = TrajectoryIndex::new(embedder.clone(), params.clone());
        embedder_name = index.embedder().id().to_string();
        let mut indexed = Throttle::new(
            progress,
            &format!(
                "trajectory {trajectory} of {}: steps indexed",
                config.trajectories
            ),
            steps.len() as u64,
            PROGRESS_STEPS,
        );
        let started = Instant::now();
        for (done, step) in steps.into_iter().enumerate() {
            index.push(TrajectoryStep {
                step,
                branch: "bench".into(),
                committed: true,
            })?;
            indexed.advance(done as u64 + 1);
        }
        build_ms += started.elapsed().as_secs_f64() * 1e3;
        let mut counts_by_view: Vec<(String, usize)> = index
            .unit_counts()
            .into_iter()
            .map(|(v, n)| (v.as_str().to_string(), n))
            .collect();
        counts_by_view.sort();
        for (view, n) in counts_by_view {
            match unit_totals.iter_mut().find(|(v, _)| *v == view) {
                Some((_, total)) => *total += n,
                None => unit_totals.push((view, n)),
            }
        }
        let n = index.len();
        let mut answered = Throttle::new(
            progress,
            &format!(
                "trajectory {trajectory} of {}: queries answered",
                config.trajectories
            ),
            planted.len() as u64,
            PROGRESS_STEPS,
        );
        for (done, q) in planted.iter().enumerate() {
            let k = QueryKind::ALL
                .iter()
                .position(|x| *x == q.kind)
                .unwrap_or(0);
            counts[k][0] += 1;
            let near: Vec<bool> = q.evidence.iter().map(|p| n - 1 - p < NEAR_STEPS).collect();
            counts[k][1] += near.iter().filter(|x| **x).count();
            counts[k][2] += near.iter().filter(|x| !**x).count();
            for (si, strategy) in Strategy::ALL.iter().enumerate() {
                tally_query(&index, q, &near, *strategy, &mut tallies[k][si])?;
            }
            answered.advance(done as u64 + 1);
        }
    }
    let trajectories = config.trajectories.max(1) as f64;
    let kinds = kind_reports(&mut tallies, &counts);
    Ok(TrajectoryReport {
        config: config.clone(),
        embedder: embedder_name,
        params: params.clone(),
        budgets: BUDGETS.to_vec(),
        build_ms: build_ms / trajectories,
        units: unit_totals
            .into_iter()
            .map(|(v, n)| (v, (n as f64 / trajectories).round() as usize))
            .collect(),
        kinds,
    })
}
