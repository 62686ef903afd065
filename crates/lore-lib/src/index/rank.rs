//! Hybrid ranking: BM25 and vector similarity fused, then recency, namespace and status weights,
//! near-duplicate flags and collapse. One code path serves `recall`, `context` and the benchmark.

use jiff::Timestamp;
use serde::Serialize;

use super::time_window::{TimeWindow, WindowUse};
use crate::model::{Memory, Status};

/// How the lexical and vector rankings are combined.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "lowercase", tag = "method")]
pub enum Fusion {
    /// Reciprocal rank fusion: Σ 1/(k + rank).
    Rrf {
        /// The rank offset (60 in the original paper).
        k: f64,
    },
    /// Calibrated score fusion: `lexical·bm25/max_bm25 + (1 − lexical)·cosine'`, where cosine'
    /// maps the candidates' cosine range onto 0..1.
    Score {
        /// Weight of the lexical part.
        lexical: f64,
    },
}

/// Knobs of the ranking.
#[derive(Clone, Debug)]
pub struct RankOptions {
    /// Fusion method.
    pub fusion: Fusion,
    /// Recency half-life in days (`None`: no recency decay).
    pub half_life_days: Option<f64>,
    /// Share of the score subject to recency decay (0..1).
    pub recency_weight: f64,
    /// Multipliers per namespace (absent: 1).
    pub namespace_weights: Vec<(String, f64)>,
    /// Multipliers per status.
    pub status_weights: [(Status, f64); 4],
    /// Candidates taken from each ranking before fusion.
    pub candidates: usize,
    /// Fold near-duplicate memories into the best-ranked one.
    pub collapse: bool,
    /// "Now" for recency and for reading time expressions (default: the clock).
    pub now: Option<Timestamp>,
    /// The window of time recall keeps to (a filter) or prefers (a boost). `None`: the one the
    /// query names, if [`RankOptions::read_time`].
    pub time_window: Option<TimeWindow>,
    /// Read time expressions in the query ("last week", "two days ago") into a window.
    pub read_time: bool,
    /// How much a memory written inside a boosting window gains: its score is multiplied by
    /// `1 + time_boost × closeness` (closeness 1 inside, falling off outside).
    pub time_boost: f64,
    /// The share of a strong hit's relevance that the candidates written just before and after
    /// it in the same agent session take, at the least (0: no expansion; see `expand.rs`).
    pub beside: f64,
}

/// Status weights that weigh every status alike (status then only orders near-copies and
/// replacements, see [`in_force_first`]).
pub const EQUAL_STATUS_WEIGHTS: [(Status, f64); 4] = [
    (Status::Active, 1.0),
    (Status::Resolved, 1.0),
    (Status::Superseded, 1.0),
    (Status::Archived, 1.0),
];

/// How much a memory inside a boosting time window gains, by default.
pub const DEFAULT_TIME_BOOST: f64 = 0.5;

/// The share of a strong hit's relevance its session neighbours take, by default.
pub const DEFAULT_BESIDE: f64 = 0.5;

/// The weight of BM25 in score fusion by default (the vector part gets the rest).
pub const DEFAULT_LEXICAL_WEIGHT: f64 = 0.5;
/// The recency half-life by default, in days.
pub const DEFAULT_HALF_LIFE_DAYS: f64 = 90.0;
/// The share of the score that decays with age, by default.
pub const DEFAULT_RECENCY_WEIGHT: f64 = 0.2;
/// The constant of reciprocal rank fusion (1 / (k + rank)).
pub const RRF_K: f64 = 60.0;

impl Default for RankOptions {
    fn default() -> Self {
        RankOptions {
            // Measured on LongMemEval (docs/evaluation.md): score fusion ranks better than RRF here.
            fusion: Fusion::Score {
                lexical: DEFAULT_LEXICAL_WEIGHT,
            },
            half_life_days: Some(DEFAULT_HALF_LIFE_DAYS),
            recency_weight: DEFAULT_RECENCY_WEIGHT,
            namespace_weights: Vec::new(),
            status_weights: [
                (Status::Active, 1.0),
                (Status::Resolved, 0.85),
                (Status::Superseded, 0.5),
                (Status::Archived, 0.6),
            ],
            candidates: 40,
            collapse: true,
            now: None,
            time_window: None,
            read_time: true,
            time_boost: DEFAULT_TIME_BOOST,
            beside: DEFAULT_BESIDE,
        }
    }
}

impl RankOptions {
    fn status_weight(&self, status: Status) -> f64 {
        self.status_weights
            .iter()
            .find(|(s, _)| *s == status)
            .map(|(_, w)| *w)
            .unwrap_or(1.0)
    }

    fn namespace_weight(&self, namespace: &str) -> f64 {
        self.namespace_weights
            .iter()
            .find(|(n, _)| n == namespace)
            .map(|(_, w)| *w)
            .unwrap_or(1.0)
    }
}

/// Why a hit ranks where it does.
#[derive(Clone, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Explain {
    /// BM25 score, if the words matched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bm25: Option<f64>,
    /// Place in the BM25 ranking (1 = best).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bm25_rank: Option<usize>,
    /// Best chunk cosine with the query.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cosine: Option<f32>,
    /// Place in the vector ranking (1 = best).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vector_rank: Option<usize>,
    /// The fused relevance before weights.
    pub fused: f64,
    /// Recency multiplier.
    pub recency: f64,
    /// Namespace multiplier.
    pub namespace: f64,
    /// Status multiplier.
    pub status: f64,
    /// Time-window multiplier (when the query names a time to prefer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<f64>,
    /// The superseded memory whose relevance this one took, so that a replacement always ranks
    /// above what it replaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub supersedes: Option<String>,
    /// The strong hit this memory was written beside (same agent session, one or two turns
    /// away), whose relevance it took a share of (then `fused` is that share).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub beside: Option<String>,
}

/// A candidate for fusion.
pub struct Candidate {
    /// Index row.
    pub rowid: i64,
    /// The memory.
    pub memory: Memory,
    /// BM25 score and rank.
    pub lexical: Option<(f64, usize)>,
    /// Cosine and rank (rank `None` if outside the vector candidates).
    pub cosine: Option<(f32, Option<usize>)>,
}

/// A candidate with its score and why.
pub type Scored = (Candidate, f64, Explain);

/// Fuses and weights candidates; returns them best first with their explanations.
pub fn fuse(candidates: Vec<Candidate>, options: &RankOptions) -> Vec<Scored> {
    let scale = Scale::of(&candidates);
    let now = options.now.unwrap_or_else(Timestamp::now);
    let mut out: Vec<Scored> = candidates
        .into_iter()
        .map(|c| {
            let fused = scale.fused(&c, options.fusion);
            let recency = recency(options, now, c.memory.updated);
            let namespace = options.namespace_weight(c.memory.namespace.as_str());
            let status = options.status_weight(c.memory.status);
            let time = time_boost(options, &c.memory);
            let explain = Explain {
                bm25: c.lexical.map(|l| l.0),
                bm25_rank: c.lexical.map(|l| l.1),
                cosine: c.cosine.map(|v| v.0),
                vector_rank: c.cosine.and_then(|v| v.1),
                fused,
                recency,
                namespace,
                status,
                time,
                supersedes: None,
                beside: None,
            };
            let score = fused * recency * namespace * status * time.unwrap_or(1.0);
            (c, score, explain)
        })
        .collect();
    reorder(&mut out);
    out
}

/// Orders scored candidates best first (then the newer, then by id), after lifting every
/// replacement above what it replaced.
pub(crate) fn reorder(out: &mut [Scored]) {
    successors_take_relevance(out);
    out.sort_by(|a, b| {
        b.1.total_cmp(&a.1)
            .then(b.0.memory.updated.cmp(&a.0.memory.updated))
            .then_with(|| a.0.memory.id.cmp(&b.0.memory.id))
    });
}

/// What score fusion normalises by, taken over all candidates: the best BM25 score, and the
/// range of the cosines (if any candidate has one).
struct Scale {
    max_lexical: f64,
    lo: f32,
    hi: f32,
    any_cosine: bool,
}

impl Scale {
    fn of(candidates: &[Candidate]) -> Scale {
        let max_lexical = candidates
            .iter()
            .filter_map(|c| c.lexical.map(|l| l.0))
            .fold(0f64, f64::max);
        let (lo, hi) = candidates
            .iter()
            .filter_map(|c| c.cosine.map(|v| v.0))
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), c| {
                (lo.min(c), hi.max(c))
            });
        Scale {
            max_lexical,
            lo,
            hi,
            any_cosine: candidates.iter().any(|c| c.cosine.is_some()),
        }
    }

    /// A candidate's fused relevance: reciprocal rank fusion, or the weighted sum of BM25 over
    /// the best and cosine over the candidates' range (BM25 alone when no candidate has a
    /// cosine).
    fn fused(&self, c: &Candidate, fusion: Fusion) -> f64 {
        match fusion {
            Fusion::Rrf { k } => {
                c.lexical.map(|(_, r)| 1.0 / (k + r as f64)).unwrap_or(0.0)
                    + c.cosine
                        .and_then(|(_, r)| r)
                        .map(|r| 1.0 / (k + r as f64))
                        .unwrap_or(0.0)
            }
            Fusion::Score { lexical } => {
                let lex = match (c.lexical, self.max_lexical > 0.0) {
                    (Some((s, _)), true) => s / self.max_lexical,
                    _ => 0.0,
                };
                let vec = match c.cosine {
                    Some((s, _)) if self.hi > self.lo => {
                        ((s - self.lo) / (self.hi - self.lo)) as f64
                    }
                    Some(_) => 1.0,
                    None => 0.0,
                };
                if self.any_cosine {
                    lexical * lex + (1.0 - lexical) * vec
                } else {
                    lex
                }
            }
        }
    }
}

/// Recency's multiplier for a memory last updated at `updated`: `1 − w + w·½^(age/half-life)`,
/// and 1 without a (positive) half-life.
fn recency(options: &RankOptions, now: Timestamp, updated: Timestamp) -> f64 {
    match options.half_life_days {
        Some(half_life) if half_life > 0.0 => {
            let age_days =
                (now.as_millisecond() - updated.as_millisecond()).max(0) as f64 / 86_400_000.0;
            let decay = 0.5f64.powf(age_days / half_life);
            (1.0 - options.recency_weight) + options.recency_weight * decay
        }
        _ => 1.0,
    }
}

/// The boosting time window's multiplier for a memory (created or updated near it), if the
/// query named a vague time.
fn time_boost(options: &RankOptions, memory: &Memory) -> Option<f64> {
    match &options.time_window {
        Some(w) if w.usage == WindowUse::Boost => {
            let near = w.closeness(memory.created).max(w.closeness(memory.updated));
            Some(1.0 + options.time_boost * near)
        }
        _ => None,
    }
}

/// A memory that supersedes another candidate scores just above it when it scored lower: the
/// old memory matched the query, and its replacement is the answer in force. Follows chains (a
/// replacement that was itself replaced) to a fixed point; a cycle of `superseded_by` links
/// (only damaged data makes one) stops after one pass per candidate.
fn successors_take_relevance(out: &mut [Scored]) {
    let at: std::collections::HashMap<String, usize> = out
        .iter()
        .enumerate()
        .map(|(i, c)| (c.0.memory.id.to_string(), i))
        .collect();
    let links: Vec<(usize, usize)> = out
        .iter()
        .enumerate()
        .filter_map(|(old, c)| {
            let by = c.0.memory.superseded_by.as_ref()?;
            at.get(by.as_str()).map(|&new| (old, new))
        })
        .filter(|(old, new)| old != new)
        .collect();
    for _ in 0..out.len() {
        let mut changed = false;
        for &(old, new) in &links {
            if out[new].1 <= out[old].1 {
                let lifted = out[old].1.next_up();
                out[new].1 = lifted;
                out[new].2.supersedes = Some(out[old].0.memory.id.to_string());
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
}

/// Groups ranked items into near-duplicate clusters: each item joins the first kept item it is a
/// near-duplicate of, else is kept (while fewer than `limit` are). Returns, per kept item, its index and the indexes folded in.
pub fn collapse(
    count: usize,
    limit: usize,
    is_duplicate: impl Fn(usize, usize) -> bool,
) -> Vec<(usize, Vec<usize>)> {
    let mut kept: Vec<(usize, Vec<usize>)> = Vec::new();
    for i in 0..count {
        match kept.iter().position(|(k, _)| is_duplicate(*k, i)) {
            Some(slot) => kept[slot].1.push(i),
            // Once `limit` items are kept, later ones are only folded, never kept.
            None if kept.len() < limit => kept.push((i, Vec::new())),
            None => {}
        }
    }
    kept
}

/// How current a status is, for choosing among near-copies: active, then resolved, archived,
/// superseded. A fixed order, not the ranking weights: with every weight set to 1, an active
/// memory still stands for its stale copies.
fn currency(status: Status) -> u8 {
    match status {
        Status::Active => 3,
        Status::Resolved => 2,
        Status::Archived => 1,
        Status::Superseded => 0,
    }
}

/// The member of a near-duplicate group that stands for it: the best-ranked one of the most
/// current status, so an active memory is never folded under a resolved, archived or superseded
/// near-copy of itself. The group keeps its place (the kept member's). `status` gives a
/// member's status (`None`: no longer available).
pub fn in_force_first(
    kept: usize,
    folded: Vec<usize>,
    status: impl Fn(usize) -> Option<Status>,
) -> (usize, Vec<usize>) {
    let rank = |i: usize| status(i).map(currency);
    let mut best = (kept, rank(kept));
    for &i in &folded {
        let r = rank(i);
        if r > best.1 {
            best = (i, r);
        }
    }
    if best.0 == kept {
        return (kept, folded);
    }
    let mut members: Vec<usize> = std::iter::once(kept).chain(folded).collect();
    members.retain(|&i| i != best.0);
    (best.0, members)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::model::MemoryId;

    const NOW: &str = "2026-06-01T00:00:00Z";

    /// A candidate: its namespace, status, age in days, BM25 score and cosine.
    fn candidate(
        id: &str,
        namespace: &str,
        status: Status,
        age_days: i64,
        bm25: f64,
        cosine: f32,
    ) -> Candidate {
        let now: Timestamp = NOW.parse().unwrap();
        let updated = now - jiff::SignedDuration::from_hours(age_days * 24);
        Candidate {
            rowid: 0,
            memory: Memory::bare(MemoryId::parse(id).unwrap(), namespace, id, status, updated),
            lexical: Some((bm25, 0)),
            cosine: Some((cosine, Some(0))),
        }
    }

    /// The ids best first: `better` matches the query a little better than `other`; a third,
    /// weak match keeps the normalised scores away from the extremes.
    fn order(better: Candidate, other: Candidate, options: &RankOptions) -> Vec<String> {
        let weak = candidate("zzzzzzzzzzzz", "learnings", Status::Active, 0, 1.0, 0.2);
        let options = RankOptions {
            now: Some(NOW.parse().unwrap()),
            ..options.clone()
        };
        fuse(vec![better, other, weak], &options)
            .into_iter()
            .map(|(c, _, _)| c.memory.id.to_string())
            .take(2)
            .collect()
    }

    const BETTER: &str = "aaaaaaaaaaaa";
    const OTHER: &str = "bbbbbbbbbbbb";

    #[test]
    fn a_fresh_memory_outranks_a_slightly_better_match_a_year_old_and_not_without_recency() {
        let old = candidate(BETTER, "learnings", Status::Active, 365, 10.0, 0.80);
        let fresh = candidate(OTHER, "learnings", Status::Active, 0, 9.0, 0.78);
        let weighted = RankOptions::default();
        assert_eq!(order(old, fresh, &weighted), [OTHER, BETTER]);
        let old = candidate(BETTER, "learnings", Status::Active, 365, 10.0, 0.80);
        let fresh = candidate(OTHER, "learnings", Status::Active, 0, 9.0, 0.78);
        let flat = RankOptions {
            half_life_days: None,
            ..RankOptions::default()
        };
        assert_eq!(order(old, fresh, &flat), [BETTER, OTHER]);
    }

    #[test]
    fn a_superseded_or_resolved_memory_ranks_below_an_active_one_and_not_without_status_weights() {
        for status in [Status::Superseded, Status::Resolved, Status::Archived] {
            let weighted = RankOptions::default();
            let stale = candidate(BETTER, "learnings", status, 0, 10.0, 0.80);
            let active = candidate(OTHER, "learnings", Status::Active, 0, 9.5, 0.79);
            assert_eq!(
                order(stale, active, &weighted),
                [OTHER, BETTER],
                "{status:?}"
            );
            let flat = RankOptions {
                status_weights: EQUAL_STATUS_WEIGHTS,
                ..RankOptions::default()
            };
            let stale = candidate(BETTER, "learnings", status, 0, 10.0, 0.80);
            let active = candidate(OTHER, "learnings", Status::Active, 0, 9.5, 0.79);
            assert_eq!(order(stale, active, &flat), [BETTER, OTHER], "{status:?}");
        }
    }

    #[test]
    fn a_weighted_namespace_lifts_its_memory_past_a_slightly_better_match() {
        let weighted = RankOptions {
            namespace_weights: vec![("decisions".into(), 1.3)],
            ..RankOptions::default()
        };
        let learning = candidate(BETTER, "learnings", Status::Active, 0, 10.0, 0.80);
        let decision = candidate(OTHER, "decisions", Status::Active, 0, 9.0, 0.78);
        assert_eq!(order(learning, decision, &weighted), [OTHER, BETTER]);
        let learning = candidate(BETTER, "learnings", Status::Active, 0, 10.0, 0.80);
        let decision = candidate(OTHER, "decisions", Status::Active, 0, 9.0, 0.78);
        assert_eq!(
            order(learning, decision, &RankOptions::default()),
            [BETTER, OTHER]
        );
    }

    #[test]
    fn reciprocal_rank_fusion_adds_one_over_k_plus_rank_of_each_ranking() {
        let ranked = |id: &str, lexical: Option<usize>, vector: Option<usize>| Candidate {
            lexical: lexical.map(|r| (1.0, r)),
            cosine: Some((0.5, vector)),
            ..candidate(id, "learnings", Status::Active, 0, 1.0, 0.5)
        };
        let options = RankOptions {
            fusion: Fusion::Rrf { k: 60.0 },
            half_life_days: None,
            now: Some(NOW.parse().unwrap()),
            ..RankOptions::default()
        };
        let fused: Vec<(String, f64)> = fuse(
            vec![
                ranked("aaaaaaaaaaaa", Some(1), None),
                ranked("bbbbbbbbbbbb", Some(3), None),
                ranked("cccccccccccc", None, Some(1)),
                ranked("dddddddddddd", None, Some(4)),
                ranked("eeeeeeeeeeee", Some(2), Some(2)),
            ],
            &options,
        )
        .into_iter()
        .map(|(c, _, explain)| (c.memory.id.to_string(), explain.fused))
        .collect();
        let expected = [
            // Second in both rankings beats first in one: 2/62 against 1/61.
            ("eeeeeeeeeeee", 2.0 / 62.0),
            ("aaaaaaaaaaaa", 1.0 / 61.0),
            ("cccccccccccc", 1.0 / 61.0),
            ("bbbbbbbbbbbb", 1.0 / 63.0),
            ("dddddddddddd", 1.0 / 64.0),
        ];
        for (got, (id, score)) in fused.iter().zip(expected) {
            assert_eq!(got.0, id, "{fused:?}");
            assert!((got.1 - score).abs() < 1e-12, "{id}: {} ≠ {score}", got.1);
        }
    }

    /// The fused relevance of each candidate (BM25 score and cosine, either absent) under
    /// score fusion with this lexical weight, in the order given.
    fn score_fused(lexical: f64, given: &[(Option<f64>, Option<f32>)]) -> Vec<f64> {
        let ids = [
            "aaaaaaaaaaaa",
            "bbbbbbbbbbbb",
            "cccccccccccc",
            "dddddddddddd",
        ];
        let candidates = given
            .iter()
            .zip(ids)
            .map(|((bm25, cosine), id)| Candidate {
                lexical: bm25.map(|s| (s, 1)),
                cosine: cosine.map(|c| (c, Some(1))),
                ..candidate(id, "learnings", Status::Active, 0, 1.0, 0.5)
            })
            .collect();
        let options = RankOptions {
            fusion: Fusion::Score { lexical },
            half_life_days: None,
            now: Some(NOW.parse().unwrap()),
            ..RankOptions::default()
        };
        let fused = fuse(candidates, &options);
        ids[..given.len()]
            .iter()
            .map(|id| {
                let (_, _, explain) = fused
                    .iter()
                    .find(|(c, _, _)| c.memory.id.as_str() == *id)
                    .unwrap();
                explain.fused
            })
            .collect()
    }

    fn assert_close(got: &[f64], want: &[f64]) {
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-6, "{got:?} ≠ {want:?}");
        }
    }

    #[test]
    fn score_fusion_weighs_bm25_over_the_best_and_cosine_over_the_candidates_range() {
        // BM25 over the best (10); cosine mapped from its range 0.4..0.8 onto 0..1.
        let given = [
            (Some(10.0), Some(0.8)),
            (Some(5.0), Some(0.6)),
            (None, Some(0.4)),
            (Some(2.5), None),
        ];
        assert_close(&score_fused(0.5, &given), &[1.0, 0.5, 0.0, 0.125]);
        assert_close(&score_fused(0.8, &given), &[1.0, 0.5, 0.0, 0.2]);
        // Cosines all alike: each counts fully.
        let alike = [(Some(4.0), Some(0.5)), (Some(2.0), Some(0.5))];
        assert_close(&score_fused(0.5, &alike), &[1.0, 0.75]);
        // No BM25 score above zero: the lexical part is zero, not a division by it.
        let zero = [(Some(0.0), Some(0.9)), (Some(0.0), Some(0.3))];
        assert_close(&score_fused(0.5, &zero), &[0.5, 0.0]);
        // No cosine at all (no embedder): BM25 alone, unweighted.
        let lexical_only = [(Some(8.0), None), (Some(2.0), None)];
        assert_close(&score_fused(0.5, &lexical_only), &[1.0, 0.25]);
    }

    #[test]
    fn recency_halves_a_share_of_the_score_per_half_life_and_a_zero_half_life_decays_nothing() {
        let recency = |half_life_days: Option<f64>, age_days: i64| {
            let options = RankOptions {
                half_life_days,
                recency_weight: 0.4,
                now: Some(NOW.parse().unwrap()),
                ..RankOptions::default()
            };
            let c = candidate(BETTER, "learnings", Status::Active, age_days, 1.0, 0.5);
            fuse(vec![c], &options)[0].2.recency
        };
        // 0.6 of the score does not decay; 0.4 halves every 30 days.
        assert!((recency(Some(30.0), 0) - 1.0).abs() < 1e-9);
        assert!((recency(Some(30.0), 30) - 0.8).abs() < 1e-9);
        assert!((recency(Some(30.0), 60) - 0.7).abs() < 1e-9);
        for age in [0, 30] {
            assert_eq!(recency(Some(0.0), age), 1.0, "age {age}");
            assert_eq!(recency(None, age), 1.0, "age {age}");
        }
    }

    #[test]
    fn a_boosting_window_multiplies_a_memory_written_inside_it_and_a_filter_does_not() {
        let now: Timestamp = NOW.parse().unwrap();
        let window = |usage| TimeWindow {
            phrase: "last week".into(),
            start: now - jiff::SignedDuration::from_hours(7 * 24),
            end: now,
            usage,
        };
        let ranked = |usage| {
            let options = RankOptions {
                half_life_days: None,
                time_window: Some(window(usage)),
                time_boost: 0.5,
                now: Some(now),
                ..RankOptions::default()
            };
            let inside = candidate(BETTER, "learnings", Status::Active, 2, 9.5, 0.78);
            let long_before = candidate(OTHER, "learnings", Status::Active, 400, 10.0, 0.8);
            let weak = candidate("zzzzzzzzzzzz", "learnings", Status::Active, 400, 1.0, 0.2);
            fuse(vec![inside, long_before, weak], &options)
                .into_iter()
                .map(|(c, score, explain)| (c.memory.id.to_string(), score, explain))
                .collect::<Vec<_>>()
        };
        let boosted = ranked(WindowUse::Boost);
        let (id, score, explain) = &boosted[0];
        assert_eq!(id, BETTER, "the memory inside the window comes first");
        assert_eq!(explain.time, Some(1.5));
        assert!((score - explain.fused * 1.5).abs() < 1e-12, "{score}");
        let far = boosted[1].2.time.unwrap();
        assert!(
            (1.0..1.001).contains(&far),
            "{far}: a year away gains almost nothing"
        );
        // A filtering window is applied before ranking: it weighs nothing here.
        let filtered = ranked(WindowUse::Filter);
        assert_eq!(filtered[0].0, OTHER);
        assert!(filtered.iter().all(|(_, _, e)| e.time.is_none()));
    }

    #[test]
    fn a_chain_of_replacements_ranks_in_order_whatever_order_it_is_met_in() {
        // X was replaced by Y, Y by Z; X matches best and Z worst, and Y is met first.
        let (x, y, z) = ("xxxxxxxxxxxx", "yyyyyyyyyyyy", "zzzzzzzzzzzz");
        let replaced = |id: &str, by: &str, bm25: f64, cosine: f32| {
            let mut c = candidate(id, "learnings", Status::Active, 0, bm25, cosine);
            c.memory.superseded_by = Some(MemoryId::parse(by).unwrap());
            c
        };
        let options = RankOptions {
            status_weights: EQUAL_STATUS_WEIGHTS,
            half_life_days: None,
            now: Some(NOW.parse().unwrap()),
            ..RankOptions::default()
        };
        let candidates = vec![
            replaced(y, z, 5.0, 0.5),
            replaced(x, y, 10.0, 0.9),
            candidate(z, "learnings", Status::Active, 0, 1.0, 0.1),
        ];
        let order: Vec<String> = fuse(candidates, &options)
            .into_iter()
            .map(|(c, _, _)| c.memory.id.to_string())
            .collect();
        assert_eq!(order, [z, y, x]);
    }

    #[test]
    fn among_equally_current_copies_the_best_ranked_stands() {
        assert_eq!(
            in_force_first(0, vec![1, 2], |_| Some(Status::Active)),
            (0, vec![1, 2])
        );
    }

    #[test]
    fn collapse_folds_into_the_first_kept() {
        // 0 ~ 2, 1 ~ 3; limit 2 stops after two kept items.
        let dup = |a: usize, b: usize| (a % 2) == (b % 2);
        let got = collapse(5, 2, dup);
        assert_eq!(got, vec![(0, vec![2, 4]), (1, vec![3])]);
        let none = collapse(3, 10, |_, _| false);
        assert_eq!(none, vec![(0, vec![]), (1, vec![]), (2, vec![])]);
        // Past the limit, what is no near-duplicate is dropped, not kept.
        let limited = collapse(4, 2, |_, _| false);
        assert_eq!(limited, vec![(0, vec![]), (1, vec![])]);
    }
}
