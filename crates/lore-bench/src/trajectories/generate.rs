//! The trajectory generator: seeded background steps with queries and their evidence planted
//! into them (the shapes are described in the parent module).

use std::collections::HashSet;

use lore::steps::{Step, StepKind};

use super::{NEAR_STEPS, QueryKind};

/// A small deterministic generator (SplitMix64), seeded by its one field. Written here for the
/// reason the bench corpus's is (see `bench::corpus::Rng`): the generated trajectories behind
/// the published figures are pinned (a test checks the hash of seed 42's).
pub(super) struct Rng(pub(super) u64);

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

/// A query planted into a trajectory.
pub(super) struct Planted {
    /// The query set it belongs to.
    pub(super) kind: QueryKind,
    /// The question asked.
    pub(super) query: String,
    /// Positions (0-based) of its evidence steps.
    pub(super) evidence: Vec<usize>,
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
pub(super) fn generate(rng: &mut Rng, steps: usize, per_kind: usize) -> (Vec<Step>, Vec<Planted>) {
    let specific: Vec<String> = ENTITY_HEADS
        .iter()
        .flat_map(|h| ENTITY_TAILS.iter().map(move |t| format!("{h}-{t}")))
        .enumerate()
        .map(|(i, e)| format!("{e}-{}", i % 10))
        .collect();
    // Specific entities: the first 120 appear in background steps, the rest are reserved for
    // planted evidence (each used by one query).
    let (background_specific, reserved) = specific.split_at(120);
    let mut plot = Plot {
        trajectory: background(rng, steps, background_specific),
        used: HashSet::new(),
        reserved: reserved.to_vec(),
    };
    let mut planted = Vec::new();
    for kind in QueryKind::ALL {
        for _ in 0..per_kind {
            planted.push(plot.plant(rng, kind));
        }
    }
    (plot.trajectory, planted)
}

/// The background: `steps` steps under subgoals that change every 30 to 80 steps, mostly
/// common tools and entities.
fn background(rng: &mut Rng, steps: usize, background_specific: &[String]) -> Vec<Step> {
    let mut subgoals = 0;
    let mut trajectory = Vec::with_capacity(steps);
    let mut subgoal = String::new();
    let mut next_switch = 0;
    for i in 0..steps {
        if i == next_switch {
            subgoals += 1;
            subgoal = format!(
                "phase {subgoals}: {} the {}",
                rng.pick(&FILLER),
                rng.pick(&FILLER)
            );
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
    trajectory
}

/// A trajectory being planted with queries: its steps, the positions already taken, and the
/// specific entities not yet used.
struct Plot {
    trajectory: Vec<Step>,
    used: HashSet<usize>,
    reserved: Vec<String>,
}

impl Plot {
    /// A position no query has taken: among the last [`NEAR_STEPS`] when `near`, else before.
    fn free(&mut self, rng: &mut Rng, near: bool) -> usize {
        let steps = self.trajectory.len();
        for _ in 0..1000 {
            let p = if near {
                steps - 1 - rng.below(NEAR_STEPS.min(steps))
            } else {
                rng.below(steps.saturating_sub(NEAR_STEPS).max(1))
            };
            if self.used.insert(p) {
                return p;
            }
        }
        // Crowded: take any free slot.
        let p = (0..steps).find(|p| !self.used.contains(p)).unwrap_or(0);
        self.used.insert(p);
        p
    }

    /// Replaces the step at `p` (keeping its subgoal) with one of these fields.
    fn put(
        &mut self,
        p: usize,
        kind: StepKind,
        tool: &str,
        entity: String,
        words: Vec<&str>,
        result: Vec<&str>,
    ) {
        let subgoal = self.trajectory[p].subgoal.clone().unwrap_or_default();
        self.trajectory[p] = step_at(p, kind, tool, vec![entity], &subgoal, words, result);
    }

    /// Plants one query of `kind`: three evidence steps and eight distractors.
    fn plant(&mut self, rng: &mut Rng, kind: QueryKind) -> Planted {
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
        let positions: Vec<usize> = (0..3).map(|_| self.free(rng, near)).collect();
        if shape == QueryKind::Shared {
            self.plant_shared(rng, &positions, &t);
        } else {
            self.plant_spread(rng, &positions, &t);
        }
        self.plant_distractors(rng, shape, &t);
        Planted {
            kind,
            query,
            evidence: positions,
        }
    }

    /// Evidence that shares one rare tool and one reserved entity, the topic words split
    /// 2/1/0 over the steps; one unrelated step names the entity too.
    fn plant_shared(&mut self, rng: &mut Rng, positions: &[usize], t: &[&str]) {
        let entity = self
            .reserved
            .pop()
            .unwrap_or_else(|| format!("entity-{}", rng.next() % 100_000));
        let tool = rng.pick(&RARE_TOOLS);
        let texts: [Vec<&str>; 3] = [vec![t[0], t[1]], vec![t[2]], vec![]];
        for (p, topic) in positions.iter().zip(texts) {
            let mut words = filler_words(rng, 8 - topic.len());
            for w in topic {
                words.insert(rng.below(words.len() + 1), w);
            }
            let result = filler_words(rng, 4);
            self.put(*p, StepKind::Action, tool, entity.clone(), words, result);
        }
        let p = self.free(rng, false);
        let words = filler_words(rng, 8);
        let tool = rng.pick(&COMMON_TOOLS);
        let result = filler_words(rng, 4);
        self.put(p, StepKind::Observation, tool, entity, words, result);
    }

    /// Evidence under three different common tools and entities, each step holding two
    /// neighbouring topic words.
    fn plant_spread(&mut self, rng: &mut Rng, positions: &[usize], t: &[&str]) {
        let tools = rng.sample(&COMMON_TOOLS, 3);
        let entities = rng.sample(&COMMON_ENTITIES, 3);
        let pairs = [[t[0], t[1]], [t[1], t[2]], [t[2], t[3]]];
        for (i, p) in positions.iter().enumerate() {
            let mut words = filler_words(rng, 6);
            for w in pairs[i] {
                words.insert(rng.below(words.len() + 1), w);
            }
            let result = filler_words(rng, 4);
            let entity = entities[i].to_string();
            self.put(*p, StepKind::Action, tools[i], entity, words, result);
        }
    }

    /// Distractors: query words under unrelated tools and entities.
    fn plant_distractors(&mut self, rng: &mut Rng, shape: QueryKind, t: &[&str]) {
        for d in 0..8 {
            let p = self.free(rng, false);
            let mut words = filler_words(rng, 7);
            let topic: Vec<&str> = if shape == QueryKind::Shared {
                vec![t[d % 4], t[(d + 1) % 4]]
            } else {
                vec![t[d % 4]]
            };
            for w in topic {
                words.insert(rng.below(words.len() + 1), w);
            }
            let tool = rng.pick(&COMMON_TOOLS);
            let entity = rng.pick(&COMMON_ENTITIES).to_string();
            let result = filler_words(rng, 4);
            self.put(p, StepKind::Observation, tool, entity, words, result);
        }
    }
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
        let mut all = HashSet::new();
        for q in &qa {
            let mut e = q.evidence.clone();
            e.sort_unstable();
            e.dedup();
            assert_eq!(e.len(), 3);
            assert!(e.iter().all(|p| *p < 2_000));
            // No two queries share an evidence step.
            assert!(e.iter().all(|p| all.insert(*p)));
        }
        let (c, _) = generate(&mut Rng(4), 2_000, 4);
        assert_ne!(a, c, "another seed, another trajectory");
    }

    /// The published figures of `lore bench trajectories` were taken on this generator's output:
    /// a change to what it draws, or in which order, changes the benchmark and must be deliberate.
    #[test]
    fn seed_42_draws_the_trajectory_the_figures_were_measured_on() {
        let (steps, planted) = generate(&mut Rng(42), 3_000, 10);
        let fnv = |s: String| {
            s.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
            })
        };
        let queries: Vec<_> = planted.iter().map(|p| (&p.query, &p.evidence)).collect();
        assert_eq!(fnv(format!("{steps:?}")), 0xfc51_7062_3f3e_d251);
        assert_eq!(fnv(format!("{queries:?}")), 0x1593_dea5_a029_af45);
    }
}
