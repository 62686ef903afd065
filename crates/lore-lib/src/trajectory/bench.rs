//! `lore eval trajectories`: a seeded generator of long agent trajectories with planted
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

use std::collections::HashSet;
use std::time::Instant;

use serde::Serialize;

use super::{Params, Strategy, TrajectoryIndex};
use crate::ctx::TrajectoryStep;
use crate::ctx::step::{Step, StepKind};
use crate::embed::SharedEmbedder;
use crate::error::Result;

/// The budgets every strategy is measured at (tokens).
pub const BUDGETS: [usize; 5] = [64, 128, 256, 512, 1024];
/// Evidence this many steps from the end or closer is "near".
pub const NEAR_STEPS: usize = 50;

/// The benchmark's size.
#[derive(Clone, Debug, Serialize)]
pub struct BenchConfig {
    /// The generator's seed.
    pub seed: u64,
    /// Trajectories generated.
    pub trajectories: usize,
    /// Steps per trajectory.
    pub steps: usize,
    /// Queries of each kind per trajectory.
    pub queries_per_kind: usize,
}

impl Default for BenchConfig {
    fn default() -> BenchConfig {
        BenchConfig {
            seed: 7,
            trajectories: 3,
            steps: 10_000,
            queries_per_kind: 20,
        }
    }
}

/// The three query sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
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
#[derive(Clone, Debug, Serialize)]
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
#[derive(Clone, Debug, Serialize)]
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
#[derive(Clone, Debug, Serialize)]
pub struct TrajectoryReport {
    /// The configuration.
    pub config: BenchConfig,
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

/// A small deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    /// `k` distinct items.
    fn sample<'a>(&mut self, items: &[&'a str], k: usize) -> Vec<&'a str> {
        let mut pool: Vec<&str> = items.to_vec();
        let mut out = Vec::new();
        for _ in 0..k.min(pool.len()) {
            let i = self.below(pool.len());
            out.push(pool.swap_remove(i));
        }
        out
    }
}

const COMMON_TOOLS: [&str; 7] = ["bash", "read", "edit", "grep", "write", "test", "git"];
const RARE_TOOLS: [&str; 12] = [
    "kubectl",
    "psql",
    "curl",
    "docker",
    "terraform",
    "redis-cli",
    "pytest",
    "helm",
    "jq",
    "strace",
    "perf",
    "openssl",
];
const COMMON_ENTITIES: [&str; 12] = [
    "api-server",
    "auth-service",
    "database",
    "frontend",
    "worker",
    "scheduler",
    "config",
    "cache",
    "gateway",
    "logger",
    "billing",
    "search",
];
const ENTITY_HEADS: [&str; 16] = [
    "ledger", "orbit", "quartz", "falcon", "harbor", "maple", "nimbus", "pixel", "raven", "sierra",
    "tundra", "vector", "willow", "zephyr", "cobalt", "delta",
];
const ENTITY_TAILS: [&str; 12] = [
    "sync", "relay", "store", "proxy", "queue", "index", "probe", "shard", "bridge", "agent",
    "mirror", "vault",
];
const FILLER: [&str; 94] = [
    "checked", "listed", "opened", "looked", "value", "field", "module", "function", "struct",
    "method", "return", "branch", "line", "output", "input", "result", "message", "string",
    "number", "list", "map", "entry", "table", "column", "row", "query", "handler", "request",
    "response", "status", "code", "path", "file", "folder", "import", "export", "type", "trait",
    "option", "flag", "argument", "default", "setting", "variable", "helper", "wrapper", "client",
    "server", "service", "thread", "task", "job", "event", "hook", "callback", "loop", "step",
    "stage", "check", "assert", "expect", "compare", "parse", "format", "render", "print", "load",
    "save", "read", "write", "update", "delete", "insert", "select", "filter", "sort", "group",
    "merge", "split", "join", "count", "size", "length", "width", "height", "offset", "limit",
    "page", "token", "name", "label", "title", "comment", "note",
];
const TOPIC: [&str; 120] = [
    "latency",
    "timeout",
    "eviction",
    "deadlock",
    "overflow",
    "leak",
    "throttling",
    "backoff",
    "retry",
    "handshake",
    "certificate",
    "expiry",
    "rollback",
    "migration",
    "schema",
    "index",
    "vacuum",
    "replication",
    "failover",
    "quorum",
    "partition",
    "rebalance",
    "checksum",
    "corruption",
    "compaction",
    "snapshot",
    "restore",
    "backup",
    "encryption",
    "rotation",
    "credential",
    "permission",
    "quota",
    "billing",
    "invoice",
    "refund",
    "currency",
    "rounding",
    "locale",
    "timezone",
    "daylight",
    "cron",
    "batch",
    "stream",
    "watermark",
    "backpressure",
    "buffer",
    "allocation",
    "fragmentation",
    "garbage",
    "pause",
    "heap",
    "stack",
    "recursion",
    "unicode",
    "encoding",
    "escaping",
    "injection",
    "sanitizer",
    "fuzzing",
    "flaky",
    "race",
    "mutex",
    "semaphore",
    "atomic",
    "ordering",
    "clock",
    "skew",
    "drift",
    "jitter",
    "dns",
    "resolver",
    "proxy",
    "redirect",
    "cookie",
    "session",
    "csrf",
    "cors",
    "preflight",
    "websocket",
    "heartbeat",
    "keepalive",
    "pooling",
    "saturation",
    "headroom",
    "autoscaling",
    "cooldown",
    "canary",
    "rollout",
    "feature",
    "toggle",
    "experiment",
    "cohort",
    "sampling",
    "telemetry",
    "tracing",
    "span",
    "metric",
    "alerting",
    "paging",
    "runbook",
    "postmortem",
    "regression",
    "bisect",
    "benchmark",
    "profiling",
    "flamegraph",
    "hotpath",
    "inlining",
    "vectorize",
    "alignment",
    "padding",
    "endianness",
    "serialization",
    "protobuf",
    "checkpoint",
    "manifest",
    "lockfile",
    "vendoring",
    "toolchain",
];

struct Planted {
    kind: QueryKind,
    query: String,
    evidence: Vec<usize>,
}

fn filler_words(rng: &mut Rng, n: usize) -> Vec<&'static str> {
    (0..n).map(|_| rng.pick(&FILLER)).collect()
}

fn step_at(
    i: usize,
    kind: StepKind,
    tool: &str,
    entities: Vec<String>,
    subgoal: &str,
    words: Vec<&str>,
    result: Vec<&str>,
) -> Step {
    Step {
        id: format!("s{i:07}"),
        time: jiff::Timestamp::from_second(1_700_000_000 + i as i64)
            .unwrap_or(jiff::Timestamp::UNIX_EPOCH),
        kind: Some(kind),
        tool: Some(tool.to_string()),
        arguments: None,
        result: Some(result.join(" ")),
        entities,
        subgoal: Some(subgoal.to_string()),
        files: Vec::new(),
        text: Some(words.join(" ")),
        origin: None,
        agent: None,
        session: None,
    }
}

/// Generates one trajectory and its queries.
fn generate(rng: &mut Rng, steps: usize, per_kind: usize) -> (Vec<Step>, Vec<Planted>) {
    let specific: Vec<String> = ENTITY_HEADS
        .iter()
        .flat_map(|h| ENTITY_TAILS.iter().map(move |t| format!("{h}-{t}")))
        .enumerate()
        .map(|(i, e)| format!("{e}-{}", i % 10))
        .collect();
    // Specific entities: the first 120 appear in background steps, the rest are reserved for
    // planted evidence (each used by one query).
    let (background_specific, reserved) = specific.split_at(120);
    let mut reserved: Vec<String> = reserved.to_vec();
    let mut subgoals: Vec<String> = Vec::new();
    let mut trajectory = Vec::with_capacity(steps);
    let mut subgoal = String::new();
    let mut next_switch = 0;
    for i in 0..steps {
        if i == next_switch {
            subgoal = format!(
                "phase {}: {} the {}",
                subgoals.len() + 1,
                rng.pick(&FILLER),
                rng.pick(&FILLER)
            );
            subgoals.push(subgoal.clone());
            next_switch = i + 30 + rng.below(51);
        }
        let tool = if rng.chance(0.85) {
            rng.pick(&COMMON_TOOLS)
        } else {
            rng.pick(&RARE_TOOLS)
        };
        let mut entities = Vec::new();
        for _ in 0..1 + rng.below(2) {
            let e = if rng.chance(0.75) {
                rng.pick(&COMMON_ENTITIES).to_string()
            } else {
                background_specific[rng.below(background_specific.len())].clone()
            };
            if !entities.contains(&e) {
                entities.push(e);
            }
        }
        let mut words = filler_words(rng, 8);
        if rng.chance(0.3) {
            words.insert(rng.below(words.len()), rng.pick(&TOPIC));
        }
        let kind = [StepKind::Action, StepKind::Observation, StepKind::Thought][rng.below(3)];
        let result = filler_words(rng, 4);
        trajectory.push(step_at(i, kind, tool, entities, &subgoal, words, result));
    }
    let mut used: HashSet<usize> = HashSet::new();
    let mut free = |rng: &mut Rng, near: bool| -> usize {
        for _ in 0..1000 {
            let p = if near {
                steps - 1 - rng.below(NEAR_STEPS.min(steps))
            } else {
                rng.below(steps.saturating_sub(NEAR_STEPS).max(1))
            };
            if used.insert(p) {
                return p;
            }
        }
        // Crowded: take any free slot.
        let p = (0..steps).find(|p| !used.contains(p)).unwrap_or(0);
        used.insert(p);
        p
    };
    let mut planted = Vec::new();
    for kind in QueryKind::ALL {
        for _ in 0..per_kind {
            let shape = match kind {
                QueryKind::Mixed => {
                    if rng.chance(0.5) {
                        QueryKind::Shared
                    } else {
                        QueryKind::Heterogeneous
                    }
                }
                k => k,
            };
            let near = rng.chance(1.0 / 7.0);
            let t = rng.sample(&TOPIC, 4);
            let query = format!(
                "what happened with the {} {} and the {} {}?",
                t[0], t[1], t[2], t[3]
            );
            let positions: Vec<usize> = (0..3).map(|_| free(rng, near)).collect();
            let subgoal_of =
                |p: usize, traj: &Vec<Step>| traj[p].subgoal.clone().unwrap_or_default();
            if shape == QueryKind::Shared {
                let entity = reserved
                    .pop()
                    .unwrap_or_else(|| format!("entity-{}", rng.next() % 100_000));
                let tool = rng.pick(&RARE_TOOLS);
                let texts: [Vec<&str>; 3] = [vec![t[0], t[1]], vec![t[2]], vec![]];
                for (p, topic) in positions.iter().zip(texts) {
                    let mut words = filler_words(rng, 8 - topic.len());
                    for w in topic {
                        words.insert(rng.below(words.len() + 1), w);
                    }
                    let sg = subgoal_of(*p, &trajectory);
                    trajectory[*p] = step_at(
                        *p,
                        StepKind::Action,
                        tool,
                        vec![entity.clone()],
                        &sg,
                        words,
                        filler_words(rng, 4),
                    );
                }
                // One unrelated step names the entity too.
                let p = free(rng, false);
                let sg = subgoal_of(p, &trajectory);
                let words = filler_words(rng, 8);
                trajectory[p] = step_at(
                    p,
                    StepKind::Observation,
                    rng.pick(&COMMON_TOOLS),
                    vec![entity.clone()],
                    &sg,
                    words,
                    filler_words(rng, 4),
                );
            } else {
                let tools = rng.sample(&COMMON_TOOLS, 3);
                let entities = rng.sample(&COMMON_ENTITIES, 3);
                let pairs = [[t[0], t[1]], [t[1], t[2]], [t[2], t[3]]];
                for (i, p) in positions.iter().enumerate() {
                    let mut words = filler_words(rng, 6);
                    for w in pairs[i] {
                        words.insert(rng.below(words.len() + 1), w);
                    }
                    let sg = subgoal_of(*p, &trajectory);
                    trajectory[*p] = step_at(
                        *p,
                        StepKind::Action,
                        tools[i],
                        vec![entities[i].to_string()],
                        &sg,
                        words,
                        filler_words(rng, 4),
                    );
                }
            }
            // Distractors: query words under unrelated tools and entities.
            for d in 0..8 {
                let p = free(rng, false);
                let mut words = filler_words(rng, 7);
                let topic: Vec<&str> = if shape == QueryKind::Shared {
                    vec![t[d % 4], t[(d + 1) % 4]]
                } else {
                    vec![t[d % 4]]
                };
                for w in topic {
                    words.insert(rng.below(words.len() + 1), w);
                }
                let sg = subgoal_of(p, &trajectory);
                trajectory[p] = step_at(
                    p,
                    StepKind::Observation,
                    rng.pick(&COMMON_TOOLS),
                    vec![rng.pick(&COMMON_ENTITIES).to_string()],
                    &sg,
                    words,
                    filler_words(rng, 4),
                );
            }
            planted.push(Planted {
                kind,
                query,
                evidence: positions,
            });
        }
    }
    (trajectory, planted)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
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

/// Runs the benchmark.
pub fn run(
    config: &BenchConfig,
    embedder: Option<SharedEmbedder>,
    params: &Params,
) -> Result<TrajectoryReport> {
    let mut rng = Rng(config.seed);
    let mut tallies: Vec<Vec<Tally>> = QueryKind::ALL
        .iter()
        .map(|_| Strategy::ALL.iter().map(|_| Tally::default()).collect())
        .collect();
    let mut counts = [[0usize; 3]; 3]; // per kind: queries, near, far evidence
    let mut build_ms = 0.0;
    let mut unit_totals: Vec<(String, usize)> = Vec::new();
    let mut embedder_name = String::from("hashed words (no embedder)");
    for _ in 0..config.trajectories {
        let (steps, planted) = generate(&mut rng, config.steps, config.queries_per_kind);
        let mut index = TrajectoryIndex::new(embedder.clone(), params.clone());
        embedder_name = index.embedder.id().to_string();
        let started = Instant::now();
        for step in steps {
            index.push(TrajectoryStep {
                step,
                branch: "bench".into(),
                committed: true,
            })?;
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
        for q in &planted {
            let k = QueryKind::ALL
                .iter()
                .position(|x| *x == q.kind)
                .unwrap_or(0);
            counts[k][0] += 1;
            let near: Vec<bool> = q.evidence.iter().map(|p| n - 1 - p < NEAR_STEPS).collect();
            counts[k][1] += near.iter().filter(|x| **x).count();
            counts[k][2] += near.iter().filter(|x| !**x).count();
            for (si, strategy) in Strategy::ALL.iter().enumerate() {
                let tally = &mut tallies[k][si];
                for (bi, budget) in BUDGETS.iter().enumerate() {
                    let started = Instant::now();
                    let got = index.recall(&q.query, *budget, *strategy)?;
                    let elapsed = started.elapsed().as_secs_f64() * 1e3;
                    let positions: HashSet<usize> =
                        got.steps.iter().map(|p| p.position - 1).collect();
                    for (e, is_near) in q.evidence.iter().zip(&near) {
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
                        if got.used == Strategy::Osu && *strategy == Strategy::Auto {
                            tally.osu += 1;
                        }
                    }
                }
            }
        }
    }
    let trajectories = config.trajectories.max(1) as f64;
    let kinds = QueryKind::ALL
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
        .collect();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_is_seeded_and_plants_every_query() {
        let (a, qa) = generate(&mut Rng(3), 2_000, 4);
        let (b, qb) = generate(&mut Rng(3), 2_000, 4);
        assert_eq!(a, b);
        assert_eq!(qa.len(), 12);
        assert_eq!(qa.len(), qb.len());
        for q in &qa {
            let mut e = q.evidence.clone();
            e.dedup();
            assert_eq!(e.len(), 3);
            assert!(e.iter().all(|p| *p < 2_000));
        }
    }
}
