//! Searching the vector matrix: every chunk scored below [`SHORTLIST_FROM`] chunks; above, sign
//! sketches rank the chunks and a shortlist of memories is scored exactly; a listed matrix's
//! search reads the lists nearest the query and orders only the shortlisted memories' chunks.

use std::collections::HashSet;

use super::sketch::{self, SketchQuery};
use super::vector_lists::ListRows;
use super::vectors::{Damaged, Probe, SHORTLIST_FROM, StoredValues, Values, VectorMatrix};
use crate::embed::dot_i8;

/// Chunk count from which a search uses every core.
pub(super) const PARALLEL_FROM: usize = 32_768;

/// Memories a sketch ranking hands to exact scoring: at least this many, or
/// [`SHORTLIST_PER_RESULT`] per result wanted.
const SHORTLIST_MIN: usize = 1_500;
const SHORTLIST_PER_RESULT: usize = 8;
/// Chunks whose sketch estimate is computed, per memory shortlisted: those whose sketch agrees
/// with the most of the query's signs.
const PREFILTER_PER_SHORTLISTED: usize = 12;

/// Keeps the `limit` best (highest score; ties by row id), sorted best first.
pub(super) fn top_k(items: &mut Vec<(i64, f32)>, limit: usize) {
    let order = |a: &(i64, f32), b: &(i64, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if items.len() > limit && limit > 0 {
        items.select_nth_unstable_by(limit - 1, order);
        items.truncate(limit);
    }
    items.sort_by(order);
}

/// The sketch prefilter fed one chunk at a time: keeps the sketch estimate of every chunk
/// whose sketch agrees most with the query's signs (at least `wanted` of the chunks: those
/// within the distance that holds `wanted` of them), without keeping anything of the others but
/// a histogram of their distances.
struct Nearest<'q> {
    query: &'q SketchQuery,
    wanted: usize,
    /// How many chunks lie at each distance.
    counts: Vec<usize>,
    seen: usize,
    farthest: u16,
    /// The distance within which the chunks seen so far hold `wanted` of them: what the final
    /// distance cannot exceed.
    within: u16,
    /// (memory, distance, estimate) of the chunks within `within` when they were seen.
    kept: Vec<(i64, u16, f32)>,
    /// How many may be kept before the chunks beyond the distance are forgotten.
    retain_at: usize,
}

impl<'q> Nearest<'q> {
    fn new(query: &'q SketchQuery, shortlist: usize) -> Self {
        Nearest {
            query,
            wanted: PREFILTER_PER_SHORTLISTED * shortlist,
            counts: vec![0; query.signs().len() * 8 + 1],
            seen: 0,
            farthest: 0,
            within: u16::MAX,
            kept: Vec::new(),
            retain_at: 2 * PREFILTER_PER_SHORTLISTED * shortlist,
        }
    }

    fn add(&mut self, memory: i64, sketch: &[u8]) {
        let d = sketch::distance(sketch, self.query.signs());
        self.counts[usize::from(d)] += 1;
        self.seen += 1;
        self.farthest = self.farthest.max(d);
        if d <= self.within {
            self.kept.push((memory, d, self.query.score(sketch)));
        }
    }

    /// The distance that holds `wanted` of the chunks seen (every chunk's when fewer).
    fn distance_holding_wanted(&self) -> u16 {
        sketch::nearest_in_counts(&self.counts[..=usize::from(self.farthest)], self.wanted)
    }

    /// Lowers the kept distance to what the chunks seen allow, and forgets the chunks beyond it
    /// once they are many (called between batches of chunks).
    fn tighten(&mut self) {
        if self.seen < self.wanted {
            return;
        }
        self.within = self.distance_holding_wanted();
        if self.kept.len() > self.retain_at {
            let within = self.within;
            self.kept.retain(|k| k.1 <= within);
            // Many ties within the distance: forget again only once the kept have doubled.
            self.retain_at = self.retain_at.max(2 * self.kept.len());
        }
    }

    /// The best estimate of each memory with a chunk within the final distance, in row-id
    /// order; and whether any chunk was left out.
    fn estimates(self) -> (Vec<(i64, f32)>, bool) {
        let within = self.distance_holding_wanted();
        let mut estimates: Vec<(i64, f32)> = (self.kept.into_iter())
            .filter(|k| k.1 <= within)
            .map(|(memory, _, estimate)| (memory, estimate))
            .collect();
        // Best first within each memory, then one per memory.
        estimates.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)));
        estimates.dedup_by_key(|e| e.0);
        (estimates, within < self.farthest)
    }

    /// [`Nearest::estimates`] of the memories `keep` accepts; `None` when a filter left fewer
    /// than `shortlist` of them and chunks were left out (every chunk must then be estimated).
    fn filtered(self, shortlist: usize, keep: impl Fn(i64) -> bool) -> Option<Vec<(i64, f32)>> {
        let (mut estimates, cut) = self.estimates();
        estimates.retain(|&(memory, _)| keep(memory));
        (estimates.len() >= shortlist || !cut).then_some(estimates)
    }
}

/// Memories a sketch ranking hands to exact scoring for `limit` results.
fn shortlist_len(limit: usize) -> usize {
    SHORTLIST_MIN.max(limit * SHORTLIST_PER_RESULT)
}

/// [`Nearest::filtered`] over `memory`'s chunks (`sketches` in the same order).
fn filtered_estimates(
    memory: &[i64],
    sketches: &[u8],
    query: &SketchQuery,
    shortlist: usize,
    keep: impl Fn(i64) -> bool,
) -> Option<Vec<(i64, f32)>> {
    let mut nearest = Nearest::new(query, shortlist);
    for (c, &m) in memory.iter().enumerate() {
        nearest.add(
            m,
            &sketches[c * query.signs().len()..(c + 1) * query.signs().len()],
        );
        // Tightened as it goes, so only the chunks near enough are estimated.
        if c % 512 == 511 {
            nearest.tighten();
        }
    }
    nearest.filtered(shortlist, keep)
}

/// Hashes row ids (already well spread integers) by one multiplication, for the sets a search
/// fills and asks per chunk.
#[derive(Clone, Copy, Default)]
pub(super) struct RowIdHash;

impl std::hash::BuildHasher for RowIdHash {
    type Hasher = RowIdHasher;

    fn build_hasher(&self) -> RowIdHasher {
        RowIdHasher(0)
    }
}

/// See [`RowIdHash`].
pub(super) struct RowIdHasher(u64);

impl std::hash::Hasher for RowIdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_i64(&mut self, i: i64) {
        self.0 = (self.0 ^ i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

impl VectorMatrix {
    /// The chunks a search for `q` looks at: the lists nearest it (every list when `all`) read
    /// from the file, with the chunks of the later segments, in row-id order.
    #[cfg(test)]
    pub(super) fn probed(
        &self,
        q: &[f32],
        all: bool,
    ) -> std::result::Result<VectorMatrix, Damaged> {
        let rows = self.probed_rows(&self.stored_lists().0.probed(q, all), |_| true)?;
        let order = rows.order(|_| true);
        self.of_rows(rows, &order)
    }

    /// A listed matrix's lists and file.
    fn stored_lists(&self) -> (&super::vector_lists::Lists, &StoredValues) {
        let (Some(lists), Values::Stored(stored)) = (&self.lists, &self.values) else {
            unreachable!("lists are left in the file only by a matrix read from it");
        };
        (lists, stored)
    }

    /// The chunks of the memories `want` accepts in lists `probed` (read from the file) and in
    /// the later segments, in no particular order.
    fn probed_rows(
        &self,
        probed: &[usize],
        want: impl Fn(i64) -> bool,
    ) -> std::result::Result<ListRows, Damaged> {
        let (lists, stored) = self.stored_lists();
        let mut rows = ListRows::default();
        let mut head = Vec::new();
        for &l in probed {
            let head = lists.head(&stored.file, l, &mut head).ok_or(Damaged)?;
            for i in 0..head.len() {
                let memory = head.memory(i);
                if want(memory) && !lists.is_removed(memory) {
                    head.push(i, &mut rows);
                }
            }
        }
        let len = sketch::sketch_len(self.dims);
        let ordinals = super::vector_lists::ordinals_of(&self.memory);
        for (c, &memory) in self.memory.iter().enumerate() {
            if want(memory) {
                rows.memory.push(memory);
                rows.scales.push(self.scales[c]);
                rows.checks.push(stored.checks[c]);
                rows.ordinals.push(ordinals[c]);
                rows.sketches
                    .extend_from_slice(&self.sketches[c * len..(c + 1) * len]);
                rows.offsets.push(stored.offsets[c]);
            }
        }
        Ok(rows)
    }

    /// A matrix of chunks `order` of `rows` (read from this listed matrix's file), unlisted.
    fn of_rows(&self, rows: ListRows, order: &[usize]) -> std::result::Result<Self, Damaged> {
        let Values::Stored(stored) = &self.values else {
            unreachable!("lists are left in the file only by a matrix read from it");
        };
        let mut m = VectorMatrix {
            dims: self.dims,
            memory: rows.memory,
            scales: rows.scales,
            center: self.center.clone(),
            sketches: rows.sketches,
            values: Values::Stored(StoredValues {
                file: stored.file.try_clone().map_err(|_| Damaged)?,
                offsets: rows.offsets,
                checks: rows.checks,
            }),
            lists: None,
            partition: None,
        };
        m.gather(order);
        Ok(m)
    }

    /// The `limit` memories whose best chunk is most similar to `q`, best first (ties by row
    /// id), among those `keep` accepts. Exact below [`SHORTLIST_FROM`] chunks; above, the
    /// memories whose sketches rank best are scored exactly.
    pub fn search(
        &self,
        q: &Probe,
        limit: usize,
        keep: impl Fn(i64) -> bool + Sync,
    ) -> std::result::Result<Vec<(i64, f32)>, Damaged> {
        if self.is_listed() {
            return self.search_lists(q, false, limit, &keep);
        }
        let keep = &keep;
        if self.memory.len() < SHORTLIST_FROM {
            let Values::Resident(values) = &self.values else {
                return self.search_shortlisted(q, limit, keep);
            };
            let mut best = self.in_parallel(|range| {
                let score = |c: usize| {
                    dot_i8(&values[c * self.dims..(c + 1) * self.dims], &q.values) as f32
                        * self.scales[c]
                        * q.scale
                };
                let mut found = self.best_per_memory(range, score, keep);
                top_k(&mut found, limit);
                found
            });
            top_k(&mut best, limit);
            return Ok(best);
        }
        self.search_shortlisted(q, limit, keep)
    }

    /// [`VectorMatrix::search`] over every chunk, lists left in the file included: for a
    /// filter that lets few memories through (the nearest lists may hold none of them).
    pub fn search_everywhere(
        &self,
        q: &Probe,
        limit: usize,
        keep: impl Fn(i64) -> bool + Sync,
    ) -> std::result::Result<Vec<(i64, f32)>, Damaged> {
        match self.is_listed() {
            true => self.search_lists(q, true, limit, &keep),
            false => self.search(q, limit, keep),
        }
    }

    /// Ranks memories by their best sketch estimate, then scores the best of them exactly. The
    /// estimate is computed only for the chunks whose sketch agrees most with the query's signs
    /// (a popcount per chunk); with a filter that leaves too few of them, for every chunk.
    fn search_shortlisted(
        &self,
        q: &Probe,
        limit: usize,
        keep: &(impl Fn(i64) -> bool + Sync),
    ) -> std::result::Result<Vec<(i64, f32)>, Damaged> {
        let (shortlist, query) = (
            shortlist_len(limit),
            SketchQuery::new(&q.unit, &self.center),
        );
        let estimates = filtered_estimates(&self.memory, &self.sketches, &query, shortlist, keep)
            .unwrap_or_else(|| self.estimate_every_chunk(&query, shortlist, keep));
        self.exact_scores(estimates, shortlist, q, limit)
    }

    /// The best sketch estimate of every memory `keep` accepts, over every chunk (for a filter
    /// that left too few of the nearest chunks' memories): the `shortlist` best.
    fn estimate_every_chunk(
        &self,
        query: &SketchQuery,
        shortlist: usize,
        keep: &(impl Fn(i64) -> bool + Sync),
    ) -> Vec<(i64, f32)> {
        let len = sketch::sketch_len(self.dims);
        let sketch = |c: usize| &self.sketches[c * len..(c + 1) * len];
        self.in_parallel(|range| {
            let mut found = self.best_per_memory(range, |c| query.score(sketch(c)), keep);
            top_k(&mut found, shortlist);
            found
        })
    }

    /// The `shortlist` best `estimates` scored exactly, reading the file in order: the `limit`
    /// best.
    fn exact_scores(
        &self,
        mut estimates: Vec<(i64, f32)>,
        shortlist: usize,
        q: &Probe,
        limit: usize,
    ) -> std::result::Result<Vec<(i64, f32)>, Damaged> {
        top_k(&mut estimates, shortlist);
        estimates.sort_by_key(|&(memory, _)| memory);
        let mut best = Vec::with_capacity(estimates.len());
        for (memory, _) in estimates {
            best.push((memory, self.best_in(self.span(memory), q)?));
        }
        top_k(&mut best, limit);
        Ok(best)
    }

    /// [`VectorMatrix::search_shortlisted`] over the lists nearest `q` (every list when `all`),
    /// a list at a time: the sketch prefilter keeps only the chunks nearest the query, and the
    /// shortlisted memories' chunks are read again into a small matrix scored exactly. A filter
    /// that leaves too few estimates reads every probed chunk and estimates them all.
    fn search_lists(
        &self,
        q: &Probe,
        all: bool,
        limit: usize,
        keep: &(impl Fn(i64) -> bool + Sync),
    ) -> std::result::Result<Vec<(i64, f32)>, Damaged> {
        let (lists, stored) = self.stored_lists();
        let probed = lists.probed(q.unit_vector(), all);
        let (shortlist, query) = (
            shortlist_len(limit),
            SketchQuery::new(&q.unit, &self.center),
        );
        let mut nearest = Nearest::new(&query, shortlist);
        let mut head = Vec::new();
        for &l in &probed {
            let head = lists.head(&stored.file, l, &mut head).ok_or(Damaged)?;
            for i in 0..head.len() {
                let memory = head.memory(i);
                if !lists.is_removed(memory) {
                    nearest.add(memory, head.sketch(i));
                }
            }
            nearest.tighten();
        }
        let len = sketch::sketch_len(self.dims);
        for (c, &memory) in self.memory.iter().enumerate() {
            nearest.add(memory, &self.sketches[c * len..(c + 1) * len]);
        }
        let Some(mut estimates) = nearest.filtered(shortlist, keep) else {
            let rows = self.probed_rows(&probed, |_| true)?;
            let order = rows.order(|_| true);
            let m = self.of_rows(rows, &order)?;
            let estimates = m.estimate_every_chunk(&query, shortlist, keep);
            return m.exact_scores(estimates, shortlist, q, limit);
        };
        top_k(&mut estimates, shortlist);
        let shortlisted: HashSet<i64, RowIdHash> = estimates.iter().map(|e| e.0).collect();
        let rows = self.probed_rows(&probed, |memory| shortlisted.contains(&memory))?;
        let order = rows.order(|_| true);
        self.of_rows(rows, &order)?
            .exact_scores(estimates, shortlist, q, limit)
    }

    /// Runs `part` over ranges of chunks that start and end at memory boundaries, one per core
    /// above [`PARALLEL_FROM`] chunks, and joins what they found.
    fn in_parallel<T: Send>(
        &self,
        part: impl Fn(std::ops::Range<usize>) -> Vec<T> + Sync,
    ) -> Vec<T> {
        let threads = if self.memory.len() >= PARALLEL_FROM {
            std::thread::available_parallelism().map_or(1, |n| n.get().min(8))
        } else {
            1
        };
        if threads == 1 {
            return part(0..self.memory.len());
        }
        let mut bounds = vec![0];
        for t in 1..threads {
            let mut at = self.memory.len() * t / threads;
            while at < self.memory.len() && at > 0 && self.memory[at] == self.memory[at - 1] {
                at += 1;
            }
            bounds.push(at.max(*bounds.last().expect("non-empty")));
        }
        bounds.push(self.memory.len());
        let part = &part;
        std::thread::scope(|scope| {
            let parts: Vec<_> = bounds
                .windows(2)
                .map(|w| {
                    let range = w[0]..w[1];
                    scope.spawn(move || part(range))
                })
                .collect();
            parts
                .into_iter()
                .flat_map(|p| p.join().expect("vector scan thread"))
                .collect()
        })
    }

    /// Best chunk score per memory over `range` (which starts and ends at memory boundaries),
    /// for the memories `keep` accepts.
    pub(super) fn best_per_memory(
        &self,
        range: std::ops::Range<usize>,
        score: impl Fn(usize) -> f32,
        keep: &(impl Fn(i64) -> bool + Sync),
    ) -> Vec<(i64, f32)> {
        let mut best: Vec<(i64, f32)> = Vec::new();
        let mut chunk = range.start;
        while chunk < range.end {
            let memory = self.memory[chunk];
            let mut top = f32::NEG_INFINITY;
            while chunk < range.end && self.memory[chunk] == memory {
                top = top.max(score(chunk));
                chunk += 1;
            }
            if keep(memory) {
                best.push((memory, top));
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Fed a list at a time and tightened between lists, the prefilter keeps exactly the
        /// estimates the definition gives: the chunks within the distance that holds the
        /// wanted number of all of them.
        #[test]
        fn the_streamed_prefilter_keeps_what_the_whole_ranking_keeps(
            chunks in proptest::collection::vec((0i64..60, any::<[u8; 4]>()), 0..600),
            list in 1usize..100,
            shortlist in 1usize..6,
            seed in proptest::collection::vec(-1f32..1.0, 32),
        ) {
            let query = SketchQuery::new(&seed, &[0.0; 32]);
            let mut nearest = Nearest::new(&query, shortlist);
            for (i, (memory, sketch)) in chunks.iter().enumerate() {
                nearest.add(*memory, sketch);
                if (i + 1) % list == 0 {
                    nearest.tighten();
                }
            }
            let (got, cut) = nearest.estimates();

            let distances: Vec<u16> =
                chunks.iter().map(|(_, s)| sketch::distance(s, query.signs())).collect();
            let wanted = PREFILTER_PER_SHORTLISTED * shortlist;
            let mut sorted = distances.clone();
            sorted.sort_unstable();
            let farthest = sorted.last().copied().unwrap_or(0);
            let within = sorted.get(wanted.saturating_sub(1)).copied().unwrap_or(farthest);
            let mut expected: Vec<(i64, f32)> = (chunks.iter().zip(&distances))
                .filter(|(_, d)| **d <= within)
                .map(|((m, s), _)| (*m, query.score(s)))
                .collect();
            expected.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)));
            expected.dedup_by_key(|e| e.0);
            prop_assert_eq!(got, expected);
            prop_assert_eq!(cut, within < farthest);
        }
    }
}
