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

/// Sketch estimates for the chunks whose sketches agree most with the query's signs (at least
/// [`PREFILTER_PER_SHORTLISTED`] per memory shortlisted), best per memory, in row-id order;
/// and whether any chunk was left out. The chunks may come in any order.
fn nearest_estimates(
    memory: &[i64],
    sketches: &[u8],
    query: &SketchQuery,
    shortlist: usize,
) -> (Vec<(i64, f32)>, bool) {
    let len = sketches.len() / memory.len().max(1);
    let sketch = |c: usize| &sketches[c * len..(c + 1) * len];
    let distances: Vec<u16> = (0..memory.len())
        .map(|c| sketch::distance(sketch(c), query.signs()))
        .collect();
    let within = sketch::nearest_distance(&distances, PREFILTER_PER_SHORTLISTED * shortlist);
    let mut estimates: Vec<(i64, f32)> = (distances.iter().enumerate())
        .filter(|(_, d)| **d <= within)
        .map(|(c, _)| (memory[c], query.score(sketch(c))))
        .collect();
    // Best first within each memory, then one per memory.
    estimates.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)));
    estimates.dedup_by_key(|e| e.0);
    let cut = within < distances.iter().copied().max().unwrap_or(0);
    (estimates, cut)
}

/// Memories a sketch ranking hands to exact scoring for `limit` results.
fn shortlist_len(limit: usize) -> usize {
    SHORTLIST_MIN.max(limit * SHORTLIST_PER_RESULT)
}

/// [`nearest_estimates`] of the memories `keep` accepts; `None` when a filter left fewer than
/// `shortlist` of them and chunks were left out (every chunk must then be estimated).
fn filtered_estimates(
    memory: &[i64],
    sketches: &[u8],
    query: &SketchQuery,
    shortlist: usize,
    keep: impl Fn(i64) -> bool,
) -> Option<Vec<(i64, f32)>> {
    let (mut estimates, cut) = nearest_estimates(memory, sketches, query, shortlist);
    estimates.retain(|&(memory, _)| keep(memory));
    (estimates.len() >= shortlist || !cut).then_some(estimates)
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
        let rows = self.probed_rows(q, all)?;
        let order = rows.order(|_| true);
        self.of_rows(rows, &order)
    }

    /// [`VectorMatrix::probed`]'s chunks as read, in no particular order.
    fn probed_rows(&self, q: &[f32], all: bool) -> std::result::Result<ListRows, Damaged> {
        let (Some(lists), Values::Stored(stored)) = (&self.lists, &self.values) else {
            unreachable!("lists are left in the file only by a matrix read from it");
        };
        let probed = lists.probed(q, all);
        let count = probed.iter().map(|&l| lists.at[l].count).sum::<usize>() + self.memory.len();
        let mut rows = ListRows::with_capacity(count, sketch::sketch_len(self.dims));
        let mut head = Vec::new();
        for l in probed {
            lists
                .read(&stored.file, l, &mut head, &mut rows)
                .ok_or(Damaged)?;
        }
        rows.push_ordered(
            (&self.memory, &self.scales, &stored.checks),
            &self.sketches,
            &stored.offsets,
        );
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

    /// [`VectorMatrix::search_shortlisted`] over the lists nearest `q` (every list when `all`)
    /// without putting their chunks in row-id order: only the shortlisted memories' chunks are
    /// ordered, into a small matrix scored exactly. A filter that leaves too few estimates
    /// orders them all and estimates every chunk.
    fn search_lists(
        &self,
        q: &Probe,
        all: bool,
        limit: usize,
        keep: &(impl Fn(i64) -> bool + Sync),
    ) -> std::result::Result<Vec<(i64, f32)>, Damaged> {
        let rows = self.probed_rows(q.unit_vector(), all)?;
        let (shortlist, query) = (
            shortlist_len(limit),
            SketchQuery::new(&q.unit, &self.center),
        );
        let Some(mut estimates) =
            filtered_estimates(&rows.memory, &rows.sketches, &query, shortlist, keep)
        else {
            let order = rows.order(|_| true);
            let m = self.of_rows(rows, &order)?;
            let estimates = m.estimate_every_chunk(&query, shortlist, keep);
            return m.exact_scores(estimates, shortlist, q, limit);
        };
        top_k(&mut estimates, shortlist);
        let shortlisted: HashSet<i64, RowIdHash> = estimates.iter().map(|e| e.0).collect();
        let order = rows.order(|i| shortlisted.contains(&rows.memory[i]));
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
