//! BM25 scores from the index's postings (see [`super::postings`]): every matching memory's, or
//! only those that may still rank when the caller keeps the best few (MaxScore, a block of row
//! ids at a time).

use rusqlite::params;

use super::postings::{READ_TERM, covering_totals};
use super::postings_block::{BLOCK_BITS, Entry, each_entry, entries_in};
use super::query::BM25_WEIGHTS;
use crate::error::Result;

/// FTS5's BM25 constants.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Row ids per block.
const WIDTH: usize = 1 << BLOCK_BITS;

/// Where scores go: every memory's, or the best few's (which may then be spared the rest).
pub trait Scores {
    /// A memory's score.
    fn add(&mut self, row: i64, score: f64);
    /// A score below which nothing handed over from now on is kept: memories that cannot reach
    /// it need not be scored. Minus infinity keeps everything. Asked once per block of row ids.
    fn floor(&mut self) -> f64 {
        f64::NEG_INFINITY
    }
    /// Told that memories below [`Scores::floor`] were left out.
    fn left_out(&mut self) {}
}

impl<F: FnMut(i64, f64)> Scores for F {
    fn add(&mut self, row: i64, score: f64) {
        self(row, score)
    }
}

/// One query phrase's postings as read: its blocks' data in block order, the tail's entries in
/// row-id order, and how many entries the blocks hold (counted without decoding:
/// [`entries_in`]).
#[derive(Default)]
struct PhrasePostings {
    blocks: Vec<(i64, Vec<u8>)>,
    tail: Vec<(i64, Entry)>,
    in_blocks: usize,
}

impl PhrasePostings {
    /// Reads `stem`'s postings with `read` (see [`scores`]).
    fn read(read: &mut rusqlite::CachedStatement<'_>, stem: &str) -> Result<PhrasePostings> {
        let mut phrase = PhrasePostings::default();
        let mut rows = read.query(params![stem])?;
        while let Some(row) = rows.next()? {
            let block: Option<i64> = row.get(0)?;
            let tail_row: Option<i64> = row.get(1)?;
            let data: Vec<u8> = row.get(2)?;
            match (block, tail_row) {
                (Some(block), _) => {
                    phrase.in_blocks += entries_in(&data);
                    phrase.blocks.push((block, data));
                }
                (None, Some(rowid)) => each_entry(&data, |e| phrase.tail.push((rowid, e)))?,
                (None, None) => {}
            }
        }
        if !phrase.tail.is_sorted_by_key(|(rowid, _)| *rowid) {
            phrase.tail.sort_by_key(|(rowid, _)| *rowid);
        }
        Ok(phrase)
    }

    fn hits(&self) -> usize {
        self.in_blocks + self.tail.len()
    }
}

/// Where one phrase's reading stands as the blocks are scored in order.
struct Cursor<'p> {
    phrase: &'p PhrasePostings,
    block: usize,
    tail: usize,
}

impl Cursor<'_> {
    /// Hands `f` each of the phrase's entries in `block` (its offset in the block, the entry),
    /// staying where it is; a block that does not decode whole is damage (an error, answered by
    /// a rebuild). A block passed over is not decoded, so damage there shows when a later query
    /// decodes it.
    fn each_in(&self, block: i64, mut f: impl FnMut(usize, &Entry)) -> Result<()> {
        if let Some((b, data)) = self.phrase.blocks.get(self.block)
            && *b == block
        {
            each_entry(data, |e| f(usize::from(e.offset), &e))?;
        }
        for (rowid, e) in &self.phrase.tail[self.tail..] {
            if rowid >> BLOCK_BITS != block {
                break;
            }
            f((rowid & (WIDTH as i64 - 1)) as usize, e);
        }
        Ok(())
    }

    /// Moves past the phrase's entries in `block`.
    fn pass(&mut self, block: i64) {
        if self
            .phrase
            .blocks
            .get(self.block)
            .is_some_and(|b| b.0 == block)
        {
            self.block += 1;
        }
        while (self.phrase.tail.get(self.tail))
            .is_some_and(|(rowid, _)| rowid >> BLOCK_BITS == block)
        {
            self.tail += 1;
        }
    }
}

/// Per-offset sums over one block of row ids, and which offsets were touched.
struct BlockSums {
    sums: [f64; WIDTH],
    touched: [u64; WIDTH / 64],
}

impl BlockSums {
    fn add(&mut self, offset: usize, part: f64) {
        self.sums[offset] += part;
        self.touched[offset / 64] |= 1 << (offset % 64);
    }

    /// Each touched offset with its sum, in offset order, leaving every sum at zero.
    fn drain(&mut self, mut f: impl FnMut(usize, f64)) {
        for (w, word) in self.touched.iter_mut().enumerate() {
            while *word != 0 {
                let offset = w * 64 + word.trailing_zeros() as usize;
                f(offset, self.sums[offset]);
                self.sums[offset] = 0.0;
                *word &= *word - 1;
            }
        }
    }
}

/// Hands `out` the BM25 score of every memory holding one of `stems` (each a query phrase,
/// in query order), as FTS5's `bm25()` with [`BM25_WEIGHTS`] computes it, in row-id order;
/// `false` (and nothing handed) when the postings do not cover the index (`docs` memories).
///
/// Scores are summed a block of row ids at a time in a small array, each phrase's part added in
/// phrase order (the order FTS5 sums them in, so the scores are the same to the last bit): the
/// cost is one pass over the entries, however many phrases and however common.
///
/// A caller keeping only the best few ([`Scores::floor`]) is spared most of the common words
/// (MaxScore): a phrase's part is below idf·(k1 + 1) whatever its counts (FTS5's term score is
/// idf·f·(k1 + 1)/(f + K) with K > 0), so the phrases whose bounds sum below the floor cannot
/// lift a memory to it alone. In a block where no memory holding one of the other phrases comes
/// within those bounds of the floor, nothing can be kept: the block is passed over without
/// decoding them (a word in most memories, whose idf FTS5 floors at 10⁻⁶, is passed over in
/// nearly every block). Any other block is scored whole, as above, so every score handed over
/// is exact.
pub fn scores(
    conn: &rusqlite::Connection,
    stems: &[String],
    docs: i64,
    out: &mut impl Scores,
) -> Result<bool> {
    weighted_scores(conn, stems, docs, BM25_WEIGHTS, out)
}

/// [`scores`] with the columns (summary, body, tags) weighted by `weights`: the thoughts
/// index keeps a thought's text as the summary, weighted 1, as its one-column FTS5 table's
/// `bm25()` weighs it.
pub fn weighted_scores(
    conn: &rusqlite::Connection,
    stems: &[String],
    docs: i64,
    weights: (f64, f64, f64),
    out: &mut impl Scores,
) -> Result<bool> {
    let Some((n, tokens)) = covering_totals(conn, docs)? else {
        return Ok(false);
    };
    let rows = n as f64;
    let avgdl = tokens as f64 / rows;
    let (ws, wb, wt) = weights;
    let mut read = conn.prepare_cached(READ_TERM)?;
    let phrases = (stems.iter())
        .map(|stem| PhrasePostings::read(&mut read, stem))
        .collect::<Result<Vec<_>>>()?;
    let idfs: Vec<f64> = (phrases.iter())
        .map(|p| {
            let hits = p.hits() as f64;
            let idf = ((rows - hits + 0.5) / (hits + 0.5)).ln();
            if idf <= 0.0 { 1e-6 } else { idf }
        })
        .collect();
    let part = |phrase: usize, e: &Entry| {
        let [s, b, t] = e.counts.map(f64::from);
        let f = ws * s + wb * b + wt * t;
        let d = e.length as f64;
        idfs[phrase] * ((f * (K1 + 1.0)) / (f + K1 * (1.0 - B + B * d / avgdl)))
    };
    let bounds = Bounds::new(&idfs);
    let mut blocks: Vec<i64> = (phrases.iter())
        .flat_map(|p| {
            let tail = p.tail.iter().map(|(rowid, _)| rowid >> BLOCK_BITS);
            p.blocks.iter().map(|b| b.0).chain(tail)
        })
        .collect();
    blocks.sort_unstable();
    blocks.dedup();
    let mut cursors: Vec<Cursor> = (phrases.iter())
        .map(|phrase| Cursor {
            phrase,
            block: 0,
            tail: 0,
        })
        .collect();
    let mut sums = BlockSums {
        sums: [0.0; WIDTH],
        touched: [0; WIDTH / 64],
    };
    for &block in &blocks {
        let floor = out.floor();
        let (weak, weak_bound) = bounds.weak_below(floor);
        if !weak.is_empty() {
            // The others' parts alone: does any memory come within the weak bounds of the floor?
            for &i in bounds.strong(weak.len()) {
                cursors[i].each_in(block, |offset, e| sums.add(offset, part(i, e)))?;
            }
            let mut within = false;
            sums.drain(|_, sum| within |= reaches(sum + weak_bound, floor));
            if !within {
                cursors.iter_mut().for_each(|c| c.pass(block));
                out.left_out();
                continue;
            }
        }
        for (i, cursor) in cursors.iter_mut().enumerate() {
            cursor.each_in(block, |offset, e| sums.add(offset, part(i, e)))?;
            cursor.pass(block);
        }
        sums.drain(|offset, sum| out.add((block << BLOCK_BITS) | offset as i64, sum));
    }
    Ok(true)
}

/// Whether a score of at most `bound` may reach `floor`, with a margin for the rounding of sums
/// taken in another order.
fn reaches(bound: f64, floor: f64) -> bool {
    bound >= floor - 1e-9 * floor.abs().max(1.0)
}

/// Each phrase's bound on its part of a score, the phrases ordered by it (weakest first).
struct Bounds {
    order: Vec<usize>,
    /// `sums[k]`: the sum of the `k` weakest bounds.
    sums: Vec<f64>,
}

impl Bounds {
    fn new(idfs: &[f64]) -> Bounds {
        let bound = |i: usize| idfs[i] * (K1 + 1.0);
        let mut order: Vec<usize> = (0..idfs.len()).collect();
        order.sort_by(|&a, &b| bound(a).total_cmp(&bound(b)));
        let mut sums = vec![0.0];
        for &i in &order {
            sums.push(sums.last().copied().unwrap_or(0.0) + bound(i));
        }
        Bounds { order, sums }
    }

    /// The weakest phrases whose bounds together stay below `floor` (by the margin of
    /// [`reaches`]), and that sum.
    fn weak_below(&self, floor: f64) -> (&[usize], f64) {
        let k = (1..=self.order.len())
            .take_while(|&k| !reaches(self.sums[k], floor))
            .last()
            .unwrap_or(0);
        (&self.order[..k], self.sums[k])
    }

    /// The phrases but the `weak` weakest.
    fn strong(&self, weak: usize) -> &[usize] {
        &self.order[weak..]
    }
}
