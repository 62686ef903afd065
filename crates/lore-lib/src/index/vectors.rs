//! Chunk vectors in the index: storing them, and an in-memory matrix for exhaustive search.
//!
//! Each memory's text is cut into chunks ([`crate::embed::chunks`]); each chunk's unit vector is
//! stored quantised (`i8` components and one scale) in `chunks`. Search loads every vector once
//! per index state into one contiguous matrix and scores them all: exact, and at 256 dims a
//! 100k-memory scan is a few milliseconds.

use rusqlite::{Connection, params};

use crate::embed::{self, Embedder, Quantized};
use crate::error::Result;
use crate::model::Memory;

/// The text of a memory that is embedded: summary, tags, body.
pub fn embedding_text(m: &Memory) -> String {
    text_of(&m.summary, &m.tags, &m.body)
}

/// [`embedding_text`] from the parts.
pub fn text_of(summary: &str, tags: &[String], body: &str) -> String {
    let mut text = summary.to_string();
    if !tags.is_empty() {
        text.push('\n');
        text.push_str(&tags.join(" "));
    }
    if !body.is_empty() {
        text.push('\n');
        text.push_str(body);
    }
    text
}

/// Memories waiting to be embedded (batched so a transformer sees many chunks per pass).
#[derive(Default)]
pub struct Pending {
    rows: Vec<(i64, Vec<String>)>,
    chunks: usize,
}

impl Pending {
    /// Chunks queued per flush.
    const BATCH: usize = 256;

    /// Queues a memory; flushes when enough chunks are waiting.
    pub fn push(
        &mut self,
        conn: &Connection,
        embedder: &dyn Embedder,
        rowid: i64,
        text: &str,
    ) -> Result<()> {
        let chunks = embed::chunks(text, embedder.chunking());
        self.chunks += chunks.len();
        self.rows.push((rowid, chunks));
        if self.chunks >= Self::BATCH {
            self.flush(conn, embedder)?;
        }
        Ok(())
    }

    /// Embeds and stores everything queued.
    pub fn flush(&mut self, conn: &Connection, embedder: &dyn Embedder) -> Result<()> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let texts: Vec<&str> = self
            .rows
            .iter()
            .flat_map(|(_, c)| c.iter().map(String::as_str))
            .collect();
        let vectors = embedder.embed(&texts)?;
        let mut insert = conn.prepare_cached(
            "INSERT OR REPLACE INTO chunks (memory, ordinal, vector) VALUES (?1, ?2, ?3)",
        )?;
        let mut next = vectors.iter();
        for (rowid, chunks) in &self.rows {
            for ordinal in 0..chunks.len() {
                let v = next.next().expect("one vector per chunk");
                insert.execute(params![rowid, ordinal as i64, Quantized::new(v).to_bytes()])?;
            }
        }
        self.rows.clear();
        self.chunks = 0;
        Ok(())
    }
}

/// Every chunk vector of the index, contiguous.
pub struct VectorMatrix {
    pub(super) dims: usize,
    /// The memory (row id) of each chunk, ascending (a memory's chunks are adjacent).
    pub(super) memory: Vec<i64>,
    /// `dims` bytes per chunk, each an `i8` component.
    pub(super) values: Vec<u8>,
    pub(super) scales: Vec<f32>,
}

/// A query vector quantised like the stored ones, for integer dot products.
pub struct Probe {
    values: Vec<i8>,
    scale: f32,
}

impl Probe {
    /// Quantises a unit query vector.
    pub fn new(q: &[f32]) -> Probe {
        let quantized = Quantized::new(q);
        Probe {
            values: quantized.values,
            scale: quantized.scale,
        }
    }
}

/// Σ a·b over `i8` components (as stored bytes and as the probe), in `i32`.
fn dot_i8(row: &[u8], q: &[i8]) -> i32 {
    row.iter()
        .zip(q)
        .map(|(&a, &b)| (a as i8 as i32) * (b as i32))
        .sum()
}

/// Chunk count from which a search uses every core.
const PARALLEL_FROM: usize = 32_768;

/// Keeps the `limit` best (highest score; ties by row id), sorted best first.
fn top_k(items: &mut Vec<(i64, f32)>, limit: usize) {
    let order = |a: &(i64, f32), b: &(i64, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if items.len() > limit && limit > 0 {
        items.select_nth_unstable_by(limit - 1, order);
        items.truncate(limit);
    }
    items.sort_by(order);
}

/// Cosine of a vector as stored in `chunks` (see [`Quantized::to_bytes`]) with a probe; `None`
/// if the bytes are not `dims` components and a scale.
pub fn stored_cosine(bytes: &[u8], dims: usize, q: &Probe) -> Option<f32> {
    if bytes.len() != dims + 4 {
        return None;
    }
    let scale = f32::from_le_bytes(bytes[dims..].try_into().ok()?);
    Some(dot_i8(&bytes[..dims], &q.values) as f32 * scale * q.scale)
}

impl VectorMatrix {
    /// Loads all vectors of `dims` components.
    pub fn load(conn: &Connection, dims: usize) -> Result<VectorMatrix> {
        let count: i64 = conn.query_row("SELECT count(*) FROM chunks", [], |r| r.get(0))?;
        let count = count.max(0) as usize;
        let mut m = VectorMatrix {
            dims,
            memory: Vec::with_capacity(count),
            values: Vec::with_capacity(count * dims),
            scales: Vec::with_capacity(count),
        };
        let mut stmt =
            conn.prepare_cached("SELECT memory, vector FROM chunks ORDER BY memory, ordinal")?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let memory: i64 = row.get(0)?;
            let bytes = row.get_ref(1)?.as_blob().map_err(|e| {
                rusqlite::Error::FromSqlConversionFailure(
                    1,
                    rusqlite::types::Type::Blob,
                    Box::new(e),
                )
            })?;
            if bytes.len() != dims + 4 {
                // Written by another embedder shape: ignore (a re-embed replaces it).
                continue;
            }
            m.memory.push(memory);
            m.values.extend_from_slice(&bytes[..dims]);
            m.scales.push(f32::from_le_bytes(
                bytes[dims..].try_into().expect("4 bytes"),
            ));
        }
        Ok(m)
    }

    /// Number of chunk vectors.
    pub fn len(&self) -> usize {
        self.memory.len()
    }

    /// Whether there are no vectors.
    pub fn is_empty(&self) -> bool {
        self.memory.is_empty()
    }

    fn score(&self, chunk: usize, q: &Probe) -> f32 {
        let row = &self.values[chunk * self.dims..(chunk + 1) * self.dims];
        dot_i8(row, &q.values) as f32 * self.scales[chunk] * q.scale
    }

    /// The chunks of one memory.
    fn span(&self, memory: i64) -> std::ops::Range<usize> {
        let start = self.memory.partition_point(|&m| m < memory);
        let end = self.memory.partition_point(|&m| m <= memory);
        start..end
    }

    /// The `limit` memories whose best chunk is most similar to `q`, best first (ties by row
    /// id), among those `keep` accepts.
    pub fn search(
        &self,
        q: &Probe,
        limit: usize,
        keep: impl Fn(i64) -> bool + Sync,
    ) -> Vec<(i64, f32)> {
        // Large matrices are scanned by one thread per core, split at memory boundaries.
        let threads = if self.memory.len() >= PARALLEL_FROM {
            std::thread::available_parallelism().map_or(1, |n| n.get().min(8))
        } else {
            1
        };
        let mut bounds = vec![0];
        for t in 1..threads {
            let mut at = self.memory.len() * t / threads;
            while at < self.memory.len() && at > 0 && self.memory[at] == self.memory[at - 1] {
                at += 1;
            }
            bounds.push(at.max(*bounds.last().expect("non-empty")));
        }
        bounds.push(self.memory.len());
        let keep = &keep;
        let mut best: Vec<(i64, f32)> = if threads == 1 {
            self.scan(0..self.memory.len(), q, limit, keep)
        } else {
            std::thread::scope(|scope| {
                let parts: Vec<_> = bounds
                    .windows(2)
                    .map(|w| {
                        let range = w[0]..w[1];
                        scope.spawn(move || self.scan(range, q, limit, keep))
                    })
                    .collect();
                parts
                    .into_iter()
                    .flat_map(|p| p.join().expect("vector scan thread"))
                    .collect()
            })
        };
        top_k(&mut best, limit);
        best
    }

    /// Best chunk per memory over `range` (which starts and ends at memory boundaries), top
    /// `limit` of them.
    fn scan(
        &self,
        range: std::ops::Range<usize>,
        q: &Probe,
        limit: usize,
        keep: &(impl Fn(i64) -> bool + Sync),
    ) -> Vec<(i64, f32)> {
        let mut best: Vec<(i64, f32)> = Vec::new();
        let mut chunk = range.start;
        while chunk < range.end {
            let memory = self.memory[chunk];
            let mut top = f32::NEG_INFINITY;
            while chunk < range.end && self.memory[chunk] == memory {
                top = top.max(self.score(chunk, q));
                chunk += 1;
            }
            if keep(memory) {
                best.push((memory, top));
            }
        }
        top_k(&mut best, limit);
        best
    }

    /// One memory's best chunk cosine with `q`.
    pub fn best(&self, memory: i64, q: &Probe) -> Option<f32> {
        self.span(memory).map(|c| self.score(c, q)).reduce(f32::max)
    }

    /// A memory's first chunk (summary, tags and the start of the body) as a unit vector.
    pub fn head(&self, memory: i64) -> Option<Vec<f32>> {
        let c = self.span(memory).next()?;
        let mut v: Vec<f32> = self.values[c * self.dims..(c + 1) * self.dims]
            .iter()
            .map(|&x| x as i8 as f32)
            .collect();
        embed::normalize(&mut v);
        Some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_search_equals_one_scan_and_respects_memory_boundaries() {
        let dims = 16;
        let mut m = VectorMatrix {
            dims,
            memory: Vec::new(),
            values: Vec::new(),
            scales: Vec::new(),
        };
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut memory = 0i64;
        while m.memory.len() < PARALLEL_FROM * 2 + 123 {
            memory += 1 + (next() % 3) as i64;
            for _ in 0..1 + next() % 4 {
                m.memory.push(memory);
                m.values.extend((0..dims).map(|_| next() as u8));
                m.scales.push(0.01);
            }
        }
        let q = Probe::new(
            &(0..dims)
                .map(|i| (i as f32 - 7.5) / 10.0)
                .collect::<Vec<_>>(),
        );
        let keep = |row: i64| row % 5 != 0;
        let fast = m.search(&q, 50, keep);
        let slow = m.scan(0..m.memory.len(), &q, 50, &keep);
        assert_eq!(fast, slow);
        assert_eq!(fast.len(), 50);
        assert!(fast.iter().all(|(row, _)| keep(*row)));
        // Each memory appears once, with its best chunk.
        let best = fast[0];
        assert_eq!(m.best(best.0, &q), Some(best.1));
    }
}
