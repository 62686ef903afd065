//! The best-scoring rows of a long stream of (row, score) pairs, ties at the cut kept, holding
//! a bounded number of pairs at a time (BM25 over common words scores most of the store).

use super::postings_scores::Scores;

/// Pairs held beyond twice the limit before a cut (a cut costs a pass over what is held).
const CUT_AFTER: usize = 4_096;

/// The `limit` highest-scoring (row, score) pairs handed to it, and every pair tied with the
/// last of them (every pair when `limit` is 0), holding a bounded number at a time.
pub(super) struct BestWithTies {
    limit: usize,
    held: Vec<(i64, f64)>,
    /// The `limit`-th best score at the last cut: nothing below it can be kept.
    floor: f64,
    /// How many pairs are held before the next cut (twice what the last cut left, so that
    /// many ties at the cut cost no more than a few cuts).
    cut_at: usize,
    /// Pairs handed to it.
    seen: usize,
    /// Whether pairs below the floor were left out before being handed to it.
    left_out: bool,
    /// Pairs held after the last cut (a cut of the same pairs again changes nothing).
    held_at_cut: usize,
}

impl BestWithTies {
    pub(super) fn new(limit: usize) -> Self {
        BestWithTies {
            limit,
            held: Vec::new(),
            floor: f64::NEG_INFINITY,
            cut_at: limit.saturating_mul(2).saturating_add(CUT_AFTER),
            seen: 0,
            left_out: false,
            held_at_cut: 0,
        }
    }

    pub(super) fn add(&mut self, row: i64, score: f64) {
        self.seen += 1;
        if score < self.floor {
            return;
        }
        self.held.push((row, score));
        if self.limit > 0 && self.held.len() >= self.cut_at {
            self.cut();
            self.cut_at = self.cut_at.max(self.held.len().saturating_mul(2));
        }
    }

    /// A score nothing below which can be kept: the `limit`-th best of the pairs handed so far
    /// when they first number `limit`, then again each time the pairs held have doubled since
    /// the last cut (an older floor is still a floor, and cuts stay a bounded share of the
    /// adds however often it is asked); minus infinity before that, or when every pair is
    /// kept.
    pub(super) fn floor(&mut self) -> f64 {
        let first = self.floor == f64::NEG_INFINITY;
        if first || self.held.len() >= self.held_at_cut.saturating_mul(2) {
            self.cut();
        }
        self.floor
    }

    /// Drops every pair below the `limit`-th best score.
    fn cut(&mut self) {
        if self.held.len() >= self.limit && self.limit > 0 && self.held.len() != self.held_at_cut {
            let order = |a: &(i64, f64), b: &(i64, f64)| b.1.total_cmp(&a.1);
            self.held.select_nth_unstable_by(self.limit - 1, order);
            let cut = self.held[self.limit - 1].1;
            self.held.retain(|&(_, s)| s >= cut);
            self.floor = cut;
            self.held_at_cut = self.held.len();
        }
    }

    /// The pairs kept, in no particular order, and whether they are every pair there was: every
    /// pair handed to it, and none left out below its floor by the scorer
    /// ([`Scores::left_out`]).
    pub(super) fn finish(mut self) -> (Vec<(i64, f64)>, bool) {
        self.cut();
        let every = !self.left_out && self.held.len() == self.seen;
        (self.held, every)
    }
}

impl Scores for BestWithTies {
    fn add(&mut self, row: i64, score: f64) {
        BestWithTies::add(self, row, score);
    }

    fn floor(&mut self) -> f64 {
        BestWithTies::floor(self)
    }

    fn left_out(&mut self) {
        self.left_out = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Pairs a scorer left out below the floor make the ranking partial, even when every pair
    /// handed over is kept.
    #[test]
    fn pairs_left_out_make_the_ranking_partial() {
        let mut best = BestWithTies::new(2);
        best.add(1, 5.0);
        best.add(2, 4.0);
        assert_eq!(best.floor(), 4.0);
        Scores::left_out(&mut best);
        let (kept, every) = best.finish();
        assert_eq!(kept.len(), 2);
        assert!(!every);
        let mut whole = BestWithTies::new(2);
        whole.add(1, 5.0);
        whole.add(2, 4.0);
        assert!(whole.finish().1);
    }

    proptest! {
        /// The pairs kept are those scoring at least the `limit`-th best score of all, however
        /// many pairs came and however many tie, and however often the floor was asked; the
        /// floor never falls and never passes that score.
        #[test]
        fn keeps_the_best_and_every_tie_at_the_cut(
            scores in proptest::collection::vec(0u8..40, 0..12_000),
            limit in 0usize..30,
            ask_every in 1usize..64,
        ) {
            let mut best = BestWithTies::new(limit);
            let mut floors = Vec::new();
            for (row, &s) in scores.iter().enumerate() {
                best.add(row as i64, f64::from(s));
                if row % ask_every == 0 {
                    floors.push(best.floor());
                }
            }
            let (mut got, every) = best.finish();
            got.sort_by_key(|p| p.0);
            prop_assert_eq!(every, got.len() == scores.len());
            let mut sorted: Vec<u8> = scores.clone();
            sorted.sort_unstable_by(|a, b| b.cmp(a));
            let cut = match limit {
                0 => 0,
                _ => sorted.get(limit - 1).copied().unwrap_or(0),
            };
            let expected: Vec<(i64, f64)> = (scores.iter().enumerate())
                .filter(|(_, s)| **s >= cut)
                .map(|(row, &s)| (row as i64, f64::from(s)))
                .collect();
            prop_assert_eq!(got, expected);
            prop_assert!(floors.windows(2).all(|w| w[0] <= w[1]));
            let reached = limit > 0 && scores.len() >= limit;
            prop_assert!(floors.iter().all(|&f| !reached && f == f64::NEG_INFINITY
                || reached && f <= f64::from(cut)));
        }
    }
}
