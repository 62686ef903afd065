//! Lists of similar chunks in a large vector cache: the base segment's chunks are partitioned
//! by nearest centroid (spherical k-means, two levels so that a million chunks are partitioned
//! in seconds), and a search reads only the lists whose centroids are nearest the query
//! instead of every chunk's sketch (see [`super::vector_cache`] for where the lists are kept).

use std::collections::HashSet;
use std::fs::File;
use std::os::unix::fs::FileExt;

use super::sketch;
use super::vector_search::RowIdHash;
use super::vectors::SHORTLIST_FROM;
use crate::embed::dot;

/// Chunk count from which the cache's base segment is written as lists.
pub const LISTED_FROM: usize = SHORTLIST_FROM;
/// Chunks per list the partition aims at.
const CHUNKS_PER_LIST: usize = 512;
/// A search reads the nearest lists until it holds at least this many chunks, or
/// [`PROBED_SHARE`] of them, whichever is more.
const PROBED_MIN: usize = 49_152;
/// The share of all chunks a search reads at least (1 / this). It rules above 786,432 chunks
/// (about 375,000 memories at the bench corpus's 2.1 chunks a memory); between 393,216 chunks,
/// where an eighth used to rule, and that size a search reads the [`PROBED_MIN`] floor, less
/// than before. Measured on real text (LongMemEval's 114,000 chat turns as memories, 303,000
/// chunks, its 241 questions, the floor set aside): a sixteenth found every question's
/// evidence as often as reading every list did (hybrid: the same to three decimals;
/// vector-only: 0.394 of questions found and 0.292 of the evidence, against 0.390 and 0.290),
/// its top ten agreeing with that exact scan 0.996 (vector only: 0.944); an eighth cost a
/// million-memory recall 5–9 ms more (docs/performance.md).
const PROBED_SHARE: usize = 16;
/// Passes of k-means over its sample.
const ITERATIONS: usize = 8;
/// Sample rows per centroid trained.
const SAMPLE_PER_CENTROID: usize = 64;

/// How many lists a base segment of `chunks` chunks is written as (1: not partitioned).
pub fn lists_for(chunks: usize) -> usize {
    if chunks < LISTED_FROM {
        1
    } else {
        chunks / CHUNKS_PER_LIST
    }
}

/// The chunks partitioned: unit centroids (`dims` each) and each chunk's list.
#[derive(Clone, Debug, PartialEq)]
pub struct Partition {
    pub centroids: Vec<f32>,
    pub list_of: Vec<u32>,
}

impl Partition {
    /// Number of lists.
    pub fn lists(&self, dims: usize) -> usize {
        self.centroids.len() / dims.max(1)
    }
}

/// One chunk's direction as `f32` (its `i8` components times its scale).
fn row_of(values: &[u8], scales: &[f32], dims: usize, i: usize, out: &mut [f32]) {
    for (o, &x) in out.iter_mut().zip(&values[i * dims..(i + 1) * dims]) {
        *o = (x as i8) as f32 * scales[i];
    }
}

/// The centroid (of `centroids`, `dims` each) nearest `row` by dot product.
fn nearest(row: &[f32], centroids: &[f32], dims: usize) -> usize {
    let mut best = (0, f32::NEG_INFINITY);
    for (c, centroid) in centroids.chunks_exact(dims).enumerate() {
        let score = dot(row, centroid);
        if score > best.1 {
            best = (c, score);
        }
    }
    best.0
}

/// Rows `0..n` spread evenly (a deterministic sample of `want` rows, all when fewer).
fn sample(rows: &[usize], want: usize) -> Vec<usize> {
    if rows.len() <= want {
        return rows.to_vec();
    }
    (0..want).map(|i| rows[i * rows.len() / want]).collect()
}

/// Spherical k-means of `k` centroids trained on `rows` (a sample), seeded with rows spread
/// through it; a centroid that loses every row keeps its place.
fn train(values: &[u8], scales: &[f32], dims: usize, rows: &[usize], k: usize) -> Vec<f32> {
    let k = k.clamp(1, rows.len().max(1));
    let mut centroids = vec![0f32; k * dims];
    let mut row = vec![0f32; dims];
    for (c, &r) in sample(rows, k).iter().enumerate() {
        row_of(
            values,
            scales,
            dims,
            r,
            &mut centroids[c * dims..(c + 1) * dims],
        );
    }
    for _ in 0..ITERATIONS {
        let mut sums = vec![0f32; k * dims];
        for &r in rows {
            row_of(values, scales, dims, r, &mut row);
            let c = nearest(&row, &centroids, dims);
            for (s, x) in sums[c * dims..(c + 1) * dims].iter_mut().zip(&row) {
                *s += x;
            }
        }
        for (centroid, sum) in centroids
            .chunks_exact_mut(dims)
            .zip(sums.chunks_exact(dims))
        {
            let norm = dot(sum, sum).sqrt();
            if norm > 0.0 {
                for (c, s) in centroid.iter_mut().zip(sum) {
                    *c = s / norm;
                }
            }
        }
    }
    centroids
}

/// The nearest of `centroids` for each of `rows`, on every core.
fn assign(
    values: &[u8],
    scales: &[f32],
    dims: usize,
    rows: &[usize],
    centroids: &[f32],
) -> Vec<u32> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    let part = rows.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let parts: Vec<_> = rows
            .chunks(part)
            .map(|rows| {
                scope.spawn(move || {
                    let mut row = vec![0f32; dims];
                    rows.iter()
                        .map(|&r| {
                            row_of(values, scales, dims, r, &mut row);
                            nearest(&row, centroids, dims) as u32
                        })
                        .collect::<Vec<u32>>()
                })
            })
            .collect();
        parts
            .into_iter()
            .flat_map(|p| p.join().expect("partition thread"))
            .collect()
    })
}

/// Partitions the chunks (`i8` rows with their scales) into about `k` lists: k-means into
/// √k coarse cells, then each cell into lists in proportion to its size, so each chunk is
/// compared with about 2√k centroids rather than k.
pub fn partition(values: &[u8], scales: &[f32], dims: usize, k: usize) -> Partition {
    let n = scales.len();
    let all: Vec<usize> = (0..n).collect();
    let coarse_k = ((k as f64).sqrt().ceil() as usize).max(1);
    let coarse = train(
        values,
        scales,
        dims,
        &sample(&all, coarse_k * SAMPLE_PER_CENTROID * 4),
        coarse_k,
    );
    let cell_of = assign(values, scales, dims, &all, &coarse);
    let mut cells: Vec<Vec<usize>> = vec![Vec::new(); coarse.len() / dims.max(1)];
    for (r, &c) in cell_of.iter().enumerate() {
        cells[c as usize].push(r);
    }
    let mut centroids = Vec::with_capacity(k * dims);
    let mut list_of = vec![0u32; n];
    for members in cells.iter().filter(|m| !m.is_empty()) {
        let first = (centroids.len() / dims.max(1)) as u32;
        let lists = ((k * members.len()) as f64 / n as f64).round().max(1.0) as usize;
        let fine = train(
            values,
            scales,
            dims,
            &sample(members, lists * SAMPLE_PER_CENTROID),
            lists,
        );
        for (&r, l) in members
            .iter()
            .zip(assign(values, scales, dims, members, &fine))
        {
            list_of[r] = first + l;
        }
        centroids.extend_from_slice(&fine);
    }
    Partition { centroids, list_of }
}

/// Extends a partition to chunks that have no list yet (`u32::MAX`), each to its nearest
/// centroid.
pub fn place_new(partition: &mut Partition, values: &[u8], scales: &[f32], dims: usize) {
    let new: Vec<usize> = (0..partition.list_of.len())
        .filter(|&r| partition.list_of[r] == u32::MAX)
        .collect();
    if new.is_empty() {
        return;
    }
    let lists = assign(values, scales, dims, &new, &partition.centroids);
    for (r, l) in new.into_iter().zip(lists) {
        partition.list_of[r] = l;
    }
}

/// Whether placing the chunks without a list (each compared with every centroid) costs less
/// than partitioning all chunks afresh (each compared with about 2√k centroids).
pub fn placing_is_cheaper(partition: &Partition, dims: usize) -> bool {
    let lists = partition.lists(dims);
    let new = partition.list_of.iter().filter(|&&l| l == u32::MAX).count();
    let afresh = partition.list_of.len() * 2 * ((lists as f64).sqrt().ceil() as usize);
    new.saturating_mul(lists) <= afresh
}

/// Each chunk's place among its memory's chunks, for chunks in row-id order (each memory's
/// chunks adjacent, in their order).
pub fn ordinals_of(memory: &[i64]) -> Vec<u32> {
    let mut ordinals = vec![0u32; memory.len()];
    for i in 1..memory.len() {
        if memory[i] == memory[i - 1] {
            ordinals[i] = ordinals[i - 1].saturating_add(1);
        }
    }
    ordinals
}

/// Bytes of one chunk's head in a list: row id, scale, checksum of its components, its place
/// among its memory's chunks, sign sketch.
pub fn head_len(dims: usize) -> usize {
    20 + sketch::sketch_len(dims)
}

/// Where one list of a base segment is in the cache file.
#[derive(Clone, Debug)]
pub(super) struct ListAt {
    pub(super) count: usize,
    /// Its head: memories, scales, checksums, sketches.
    pub(super) head_at: u64,
    /// The checksum of its head.
    pub(super) check: u32,
    /// Its first chunk's components.
    pub(super) values_at: u64,
}

/// The chunks of one list, read from the file.
#[derive(Default)]
pub(super) struct ListRows {
    pub(super) memory: Vec<i64>,
    pub(super) scales: Vec<f32>,
    pub(super) checks: Vec<u32>,
    /// Each chunk's place among its memory's chunks.
    pub(super) ordinals: Vec<u32>,
    pub(super) sketches: Vec<u8>,
    pub(super) offsets: Vec<u64>,
}

impl ListRows {
    /// The order that puts the rows in row-id order, each memory's chunks in theirs, leaving
    /// out the rows `keep` refuses.
    pub(super) fn order(&self, keep: impl Fn(usize) -> bool) -> Vec<usize> {
        let mut keyed: Vec<(i64, u32, usize)> = (0..self.memory.len())
            .filter(|&i| keep(i))
            .map(|i| (self.memory[i], self.ordinals[i], i))
            .collect();
        keyed.sort_unstable();
        keyed.into_iter().map(|(.., i)| i).collect()
    }
}

/// A base segment kept as lists in the file: its centroids and where each list is, read on
/// demand by the searches that probe it.
pub(super) struct Lists {
    pub(super) dims: usize,
    /// Each list's centroid as the file keeps it: `dims` `i8` components, then a scale (`f32`,
    /// little-endian).
    pub(super) centroids: Vec<u8>,
    pub(super) at: Vec<ListAt>,
    /// Memories later segments removed (every base chunk of theirs is gone).
    pub(super) removed: HashSet<i64, RowIdHash>,
}

/// A centroid as the file keeps it (see [`Lists::centroids`]) into `row`.
fn dequantise(centroid: &[u8], row: &mut [f32]) {
    let (values, scale) = centroid.split_at(row.len());
    let scale = f32::from_le_bytes(scale.try_into().expect("4 bytes of scale"));
    for (out, &x) in row.iter_mut().zip(values) {
        *out = f32::from(x as i8) * scale;
    }
}

impl Lists {
    /// The centroids, `dims` components each (what a compaction places new chunks by).
    pub(super) fn centroid_rows(&self) -> Vec<f32> {
        let mut rows = vec![0f32; self.at.len() * self.dims];
        for (centroid, row) in self
            .stored_centroids()
            .zip(rows.chunks_exact_mut(self.dims.max(1)))
        {
            dequantise(centroid, row);
        }
        rows
    }

    fn stored_centroids(&self) -> std::slice::ChunksExact<'_, u8> {
        self.centroids.chunks_exact(self.dims + 4)
    }

    /// Chunks in all lists (before removals).
    pub(super) fn chunks(&self) -> usize {
        self.at.iter().map(|l| l.count).sum()
    }

    /// The lists to read for a query (unit vector `q`): nearest centroid first, until they hold
    /// at least the probed share of the chunks; every list when `all`.
    pub(super) fn probed(&self, q: &[f32], all: bool) -> Vec<usize> {
        if all {
            return (0..self.at.len()).collect();
        }
        let mut row = vec![0f32; self.dims];
        let mut order: Vec<(usize, f32)> = (self.stored_centroids())
            .map(|c| {
                dequantise(c, &mut row);
                dot(&row, q)
            })
            .enumerate()
            .collect();
        order.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let budget = PROBED_MIN.max(self.chunks() / PROBED_SHARE);
        let mut held = 0;
        let mut out = Vec::new();
        for (l, _) in order {
            if held >= budget {
                break;
            }
            held += self.at[l].count;
            out.push(l);
        }
        out
    }

    /// Reads list `l`'s head into `head` and checks it against its checksum; `None` if the
    /// bytes are torn or damaged.
    pub(super) fn head<'h>(
        &self,
        file: &File,
        l: usize,
        head: &'h mut Vec<u8>,
    ) -> Option<Head<'h>> {
        let list = &self.at[l];
        head.clear();
        head.resize(list.count * head_len(self.dims), 0);
        file.read_exact_at(head, list.head_at).ok()?;
        if crc32fast::hash(head) != list.check {
            return None;
        }
        let n = list.count;
        let (memory, rest) = head.split_at(n * 8);
        let (scales, rest) = rest.split_at(n * 4);
        let (checks, rest) = rest.split_at(n * 4);
        let (ordinals, sketches) = rest.split_at(n * 4);
        Some(Head {
            memory,
            scales,
            checks,
            ordinals,
            sketches,
            sketch_len: sketch::sketch_len(self.dims),
            values_at: list.values_at,
            dims: self.dims,
        })
    }

    /// Whether a later segment removed `memory`.
    pub(super) fn is_removed(&self, memory: i64) -> bool {
        !self.removed.is_empty() && self.removed.contains(&memory)
    }
}

/// One list's head as read from the file (see [`head_len`]): each chunk's row id, scale,
/// checksum, place among its memory's chunks and sketch, and where its components are.
pub(super) struct Head<'h> {
    memory: &'h [u8],
    scales: &'h [u8],
    checks: &'h [u8],
    ordinals: &'h [u8],
    sketches: &'h [u8],
    sketch_len: usize,
    values_at: u64,
    dims: usize,
}

fn four(b: &[u8], i: usize) -> [u8; 4] {
    b[i * 4..i * 4 + 4].try_into().expect("4 bytes")
}

impl Head<'_> {
    /// Chunks in the list.
    pub(super) fn len(&self) -> usize {
        self.memory.len() / 8
    }

    pub(super) fn memory(&self, i: usize) -> i64 {
        i64::from_le_bytes(self.memory[i * 8..i * 8 + 8].try_into().expect("8 bytes"))
    }

    pub(super) fn sketch(&self, i: usize) -> &[u8] {
        &self.sketches[i * self.sketch_len..(i + 1) * self.sketch_len]
    }

    /// Appends chunk `i` to `out`.
    pub(super) fn push(&self, i: usize, out: &mut ListRows) {
        out.memory.push(self.memory(i));
        out.scales.push(f32::from_le_bytes(four(self.scales, i)));
        out.checks.push(u32::from_le_bytes(four(self.checks, i)));
        out.ordinals
            .push(u32::from_le_bytes(four(self.ordinals, i)));
        out.sketches.extend_from_slice(self.sketch(i));
        out.offsets.push(self.values_at + (i * self.dims) as u64);
    }
}
