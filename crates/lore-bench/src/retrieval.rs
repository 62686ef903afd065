//! What the retrieval evaluations (LongMemEval, LoCoMo) share: scoring one ranking against its
//! gold set at several cut-offs, averaging those scores per category, and running independent
//! work items on every core with progress.

use std::collections::{BTreeMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use lore::Result;
use lore::progress::{Progress, Throttle};
use schemars::JsonSchema;
use serde::Serialize;

use crate::PROGRESS_STEPS;

/// The cut-offs every retrieval report gives.
pub const CUTOFFS: [usize; 4] = [1, 3, 5, 10];

/// Metrics at one cut-off.
#[derive(Clone, Debug, Default, Serialize, JsonSchema)]
pub struct AtK {
    /// k.
    pub k: usize,
    /// Share of queries with a gold item in the top k.
    pub recall_any: f64,
    /// Share of queries with every gold item in the top k.
    pub recall_all: f64,
    /// Binary-relevance NDCG over the top k, the textbook discount (a hit at rank r counts
    /// 1/log2(r+1)).
    pub ndcg_any: f64,
    /// The same NDCG as LongMemEval's own `eval_utils.py` computes it: ranks 1 and 2 both count
    /// fully, rank r ≥ 2 counts 1/log2(r).
    pub ndcg_longmemeval: f64,
    /// Share of the gold items found in the top k (averaged over queries).
    pub recall: f64,
}

/// One query's scores at one cut-off (or their sums over queries).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Scores {
    /// A gold item is in the top k.
    pub any: f64,
    /// Every gold item is in the top k.
    pub all: f64,
    /// NDCG, textbook discount.
    pub ndcg: f64,
    /// NDCG as LongMemEval's `eval_utils.py` discounts.
    pub ndcg_longmemeval: f64,
    /// The share of the gold items in the top k.
    pub share: f64,
}

impl std::ops::AddAssign for Scores {
    fn add_assign(&mut self, o: Scores) {
        self.any += o.any;
        self.all += o.all;
        self.ndcg += o.ndcg;
        self.ndcg_longmemeval += o.ndcg_longmemeval;
        self.share += o.share;
    }
}

/// One query's scores at each of [`CUTOFFS`].
#[derive(Clone, Debug, Default)]
pub struct QueryScores {
    /// Per cut-off.
    pub at: [Scores; CUTOFFS.len()],
}

/// The gain of a hit at 0-based position `i`: textbook, and as LongMemEval's `eval_utils.py`
/// (`rel[0] + sum(rel[1:] / log2(arange(2, n + 1)))`).
fn discount(i: usize, longmemeval: bool) -> f64 {
    match (longmemeval, i) {
        (true, 0) => 1.0,
        (true, i) => 1.0 / ((i + 1) as f64).log2(),
        (false, i) => 1.0 / ((i + 2) as f64).log2(),
    }
}

/// Scores a ranking (best first, ids of the ranked items) against a non-empty gold set.
pub fn score_ranking(ranking: &[&str], gold: &HashSet<&str>) -> QueryScores {
    let mut scores = QueryScores::default();
    for (slot, &k) in CUTOFFS.iter().enumerate() {
        let top = &ranking[..k.min(ranking.len())];
        let found = top.iter().filter(|s| gold.contains(*s)).count();
        let ndcg = |longmemeval: bool| {
            let dcg: f64 = top
                .iter()
                .enumerate()
                .filter(|(_, s)| gold.contains(*s))
                .map(|(i, _)| discount(i, longmemeval))
                .sum();
            let ideal: f64 = (0..gold.len().min(k))
                .map(|i| discount(i, longmemeval))
                .sum();
            if ideal > 0.0 { dcg / ideal } else { 0.0 }
        };
        scores.at[slot] = Scores {
            any: (found > 0) as u8 as f64,
            all: (found == gold.len()) as u8 as f64,
            ndcg: ndcg(false),
            ndcg_longmemeval: ndcg(true),
            share: found as f64 / gold.len().max(1) as f64,
        };
    }
    scores
}

/// The metrics of one category (or of all queries).
#[derive(Clone, Debug, Default, Serialize, JsonSchema)]
pub struct CategoryMetrics {
    /// The category (`all` for every query).
    pub category: String,
    /// Queries scored.
    pub queries: usize,
    /// Metrics at k = 1, 3, 5, 10.
    pub at: Vec<AtK>,
}

impl CategoryMetrics {
    /// The metrics at cut-off `k` (zeros if `k` is not one of [`CUTOFFS`]).
    pub fn at(&self, k: usize) -> AtK {
        self.at
            .iter()
            .find(|a| a.k == k)
            .cloned()
            .unwrap_or_default()
    }
}

/// Sums query scores per category.
#[derive(Default)]
pub struct Tally {
    sums: BTreeMap<String, (usize, QueryScores)>,
    all: (usize, QueryScores),
}

impl Tally {
    /// Adds one query's scores to its category and to the total.
    pub fn add(&mut self, category: &str, scores: &QueryScores) {
        let add = |into: &mut (usize, QueryScores)| {
            into.0 += 1;
            for (sum, s) in into.1.at.iter_mut().zip(&scores.at) {
                *sum += *s;
            }
        };
        add(self.sums.entry(category.to_string()).or_default());
        add(&mut self.all);
    }

    /// Queries added.
    pub fn count(&self) -> usize {
        self.all.0
    }

    /// The averages over every query.
    pub fn overall(&self) -> CategoryMetrics {
        average("all", &self.all)
    }

    /// The averages per category, by category name.
    pub fn by_category(&self) -> Vec<CategoryMetrics> {
        self.sums.iter().map(|(c, s)| average(c, s)).collect()
    }
}

fn average(category: &str, (n, sums): &(usize, QueryScores)) -> CategoryMetrics {
    let d = (*n).max(1) as f64;
    CategoryMetrics {
        category: category.to_string(),
        queries: *n,
        at: CUTOFFS
            .iter()
            .zip(&sums.at)
            .map(|(&k, s)| AtK {
                k,
                recall_any: s.any / d,
                recall_all: s.all / d,
                ndcg_any: s.ndcg / d,
                ndcg_longmemeval: s.ndcg_longmemeval / d,
                recall: s.share / d,
            })
            .collect(),
    }
}

/// Runs `work` on every item with `threads` threads (at least one), reporting each finished
/// item to `progress` as a phase called `label`; results come back in the items' order. The
/// first error stops the remaining items and is returned.
pub fn run_parallel<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    progress: &dyn Progress,
    label: &str,
    work: impl Fn(usize, &T) -> Result<R> + Sync,
) -> Result<Vec<R>> {
    let throttle = Mutex::new((
        Throttle::new(progress, label, items.len() as u64, PROGRESS_STEPS),
        0u64,
    ));
    let next = AtomicUsize::new(0);
    let failed = std::sync::atomic::AtomicBool::new(false);
    let results: Vec<Mutex<Option<Result<R>>>> = items.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, items.len().max(1)) {
            scope.spawn(|| {
                while !failed.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let result = work(i, item);
                    failed.fetch_or(result.is_err(), Ordering::Relaxed);
                    *results[i].lock().expect("result slot") = Some(result);
                    let mut t = throttle.lock().expect("progress");
                    t.1 += 1;
                    let done = t.1;
                    t.0.advance(done);
                }
            });
        }
    });
    let mut out = Vec::with_capacity(items.len());
    for slot in results {
        match slot.into_inner().expect("result slot") {
            Some(r) => out.push(r?),
            None => break,
        }
    }
    Ok(out)
}

/// Threads to use when the request does not say: one per core.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_follow_the_definitions() {
        let gold: HashSet<&str> = ["a", "b"].into();
        let s = score_ranking(&["x", "a", "y", "z", "b"], &gold);
        // k = 1: nothing; k = 3: one of two; k = 5: both.
        assert_eq!(s.at[0], Scores::default());
        assert_eq!((s.at[1].any, s.at[1].all, s.at[1].share), (1.0, 0.0, 0.5));
        assert_eq!((s.at[2].any, s.at[2].all, s.at[2].share), (1.0, 1.0, 1.0));
        let ideal = 1.0 + 1.0 / 3f64.log2();
        let dcg = 1.0 / 3f64.log2() + 1.0 / 6f64.log2();
        assert!((s.at[2].ndcg - dcg / ideal).abs() < 1e-12);
        // LongMemEval's discount: ranks 1 and 2 both count fully, rank 5 counts 1/log2(5).
        let ideal = 1.0 + 1.0;
        let dcg = 1.0 + 1.0 / 5f64.log2();
        assert!((s.at[2].ndcg_longmemeval - dcg / ideal).abs() < 1e-12);
        // A single gold item at rank 2 loses nothing there, and 1/log2(3) textbook.
        let one: HashSet<&str> = ["a"].into();
        let s = score_ranking(&["x", "a"], &one);
        assert_eq!(s.at[1].ndcg_longmemeval, 1.0);
        assert!((s.at[1].ndcg - 1.0 / 3f64.log2()).abs() < 1e-12);
    }

    #[test]
    fn parallel_results_keep_the_items_order_and_the_first_error_wins() {
        let items: Vec<usize> = (0..57).collect();
        let out = run_parallel(&items, 3, &lore::progress::Silent, "x", |i, v| {
            Ok::<_, lore::Error>(i * 100 + v)
        })
        .unwrap();
        assert_eq!(out, items.iter().map(|v| v * 101).collect::<Vec<_>>());
        let err = run_parallel(&items, 2, &lore::progress::Silent, "x", |_, &v| {
            if v == 7 {
                Err(lore::Error::Invalid {
                    what: "item",
                    value: v.to_string(),
                    reason: "seven".into(),
                })
            } else {
                Ok(v)
            }
        });
        assert!(err.unwrap_err().to_string().contains("seven"));
    }
}
