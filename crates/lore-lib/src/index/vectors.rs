//! Chunk vectors in the index: storing them, and the matrix a search runs over.
//!
//! Each memory's text is cut into chunks ([`crate::embed::chunks`]); each chunk's unit vector is
//! stored quantised (`i8` components and one scale) in `chunks`. A process loads the vectors
//! once per index state into one contiguous matrix (its components left in the cache file from
//! [`SHORTLIST_FROM`] chunks); how it is searched is in [`super::vector_search`].

use std::borrow::Cow;

use rusqlite::{Connection, params};

use super::sketch;
use super::vector_lists::{Lists, Partition};

use crate::embed::{self, Embedder, Quantized, dot_i8};
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
    pub(super) scales: Vec<f32>,
    /// The point sketches are taken around (see [`sketch`]).
    pub(super) center: Vec<f32>,
    /// [`sketch::sketch_len`] bytes per chunk.
    pub(super) sketches: Vec<u8>,
    /// Each chunk's `i8` components.
    pub(super) values: Values,
    /// The cache's base segment, kept in the file as lists: its chunks are not in the fields
    /// above (which hold the later segments'), and a search reads the lists it probes.
    pub(super) lists: Option<Lists>,
    /// The lists the chunks were read from (`u32::MAX` for a chunk of no list), when the whole
    /// matrix was read from a base segment of lists: writing it again keeps them.
    pub(super) partition: Option<Partition>,
}

/// Where a matrix's components are.
pub(super) enum Values {
    /// `dims` bytes per chunk, in memory.
    Resident(Vec<u8>),
    /// In the cache file, read (and checked) per chunk when a chunk is scored exactly.
    Stored(StoredValues),
}

/// Components left in the cache file: each chunk's offset and checksum.
pub(super) struct StoredValues {
    pub(super) file: std::fs::File,
    pub(super) offsets: Vec<u64>,
    pub(super) checks: Vec<u32>,
}

/// A chunk's components in the cache file no longer match their checksum (or cannot be read):
/// the caller loads the vectors from the table instead.
#[derive(Debug)]
pub struct Damaged;

/// A query vector quantised like the stored ones, for integer dot products.
pub struct Probe {
    pub(super) values: Vec<i8>,
    pub(super) scale: f32,
    pub(super) unit: Vec<f32>,
}

impl Probe {
    /// The query's unit vector.
    pub(super) fn unit_vector(&self) -> &[f32] {
        &self.unit
    }

    /// Quantises a unit query vector.
    pub fn new(q: &[f32]) -> Probe {
        let quantized = Quantized::new(q);
        Probe {
            values: quantized.values,
            scale: quantized.scale,
            unit: q.to_vec(),
        }
    }
}

/// Chunk count from which a search ranks sketches first and scores only a shortlist exactly
/// (and a process leaves the components in the cache file). Below it every chunk is scored:
/// reading and scanning this many is a few milliseconds.
pub const SHORTLIST_FROM: usize = 65_536;

/// The checksum kept per chunk of components in the cache file.
pub(super) fn row_check(row: &[u8]) -> u32 {
    crc32fast::hash(row)
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

/// One memory's best chunk cosine with `q`, read from the `chunks` table (for a memory whose
/// chunks a listed matrix left in the file).
pub fn best_in_table(
    conn: &Connection,
    memory: i64,
    dims: usize,
    q: &Probe,
) -> Result<Option<f32>> {
    let mut stmt = conn.prepare_cached("SELECT vector FROM chunks WHERE memory = ?1")?;
    let mut rows = stmt.query([memory])?;
    let mut best: Option<f32> = None;
    while let Some(row) = rows.next()? {
        if let Some(cosine) = super::schema::blob_at(row, 0)
            .ok()
            .and_then(|b| stored_cosine(b, dims, q))
        {
            best = Some(best.map_or(cosine, |b| b.max(cosine)));
        }
    }
    Ok(best)
}

/// One memory's first chunk as a unit vector, read from the `chunks` table (see
/// [`VectorMatrix::head`]).
pub fn head_in_table(conn: &Connection, memory: i64, dims: usize) -> Result<Option<Vec<f32>>> {
    let mut stmt =
        conn.prepare_cached("SELECT vector FROM chunks WHERE memory = ?1 AND ordinal = 0")?;
    let mut rows = stmt.query([memory])?;
    let Some(row) = rows.next()? else {
        return Ok(None);
    };
    let bytes = super::schema::blob_at(row, 0)?;
    if bytes.len() != dims + 4 {
        return Ok(None);
    }
    Ok(Some(unit_of(&bytes[..dims])))
}

/// A stored `i8` row as a unit vector.
fn unit_of(row: &[u8]) -> Vec<f32> {
    let mut v: Vec<f32> = row.iter().map(|&x| x as i8 as f32).collect();
    embed::normalize(&mut v);
    v
}

impl VectorMatrix {
    /// Loads all vectors of `dims` components.
    pub fn load(conn: &Connection, dims: usize) -> Result<VectorMatrix> {
        let count: i64 = conn.query_row("SELECT count(*) FROM chunks", [], |r| r.get(0))?;
        let count = count.max(0) as usize;
        let mut memory = Vec::with_capacity(count);
        let mut values = Vec::with_capacity(count * dims);
        let mut scales = Vec::with_capacity(count);
        let mut stmt =
            conn.prepare_cached("SELECT memory, vector FROM chunks ORDER BY memory, ordinal")?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let m: i64 = row.get(0)?;
            let bytes = super::schema::blob_at(row, 1)?;
            if bytes.len() != dims + 4 {
                // Written by another embedder shape: ignore (a re-embed replaces it).
                continue;
            }
            memory.push(m);
            values.extend_from_slice(&bytes[..dims]);
            scales.push(f32::from_le_bytes(
                bytes[dims..].try_into().expect("4 bytes"),
            ));
        }
        Ok(VectorMatrix::resident(dims, memory, values, scales))
    }

    /// A matrix holding all its components in memory, sketched.
    pub(crate) fn resident(
        dims: usize,
        memory: Vec<i64>,
        values: Vec<u8>,
        scales: Vec<f32>,
    ) -> VectorMatrix {
        let center = sketch::center(&values, &scales, dims);
        let sketches = sketch::sketches(&values, &scales, dims, &center);
        VectorMatrix {
            dims,
            memory,
            scales,
            center,
            sketches,
            values: Values::Resident(values),
            lists: None,
            partition: None,
        }
    }

    /// Number of chunk vectors (with those of lists left in the file, removed ones included).
    pub fn len(&self) -> usize {
        self.memory.len() + self.lists.as_ref().map_or(0, Lists::chunks)
    }

    /// Whether there are no vectors.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether part of the matrix stays in the file as lists: a memory's chunks may then be
    /// in none of the fields ([`VectorMatrix::best`] and [`VectorMatrix::head`] answer `None`
    /// for them), and a search reads only the lists nearest its query.
    pub fn is_listed(&self) -> bool {
        self.lists.is_some()
    }

    /// The components of chunks `range` (of one memory, so adjacent in the file when stored),
    /// checked against their checksums when read from the file.
    pub(super) fn rows(
        &self,
        range: std::ops::Range<usize>,
    ) -> std::result::Result<Cow<'_, [u8]>, Damaged> {
        let dims = self.dims;
        match &self.values {
            Values::Resident(values) => {
                Ok(Cow::Borrowed(&values[range.start * dims..range.end * dims]))
            }
            Values::Stored(stored) => {
                use std::os::unix::fs::FileExt;
                let mut out = vec![0u8; range.len() * dims];
                let offsets = &stored.offsets[range.clone()];
                let adjacent = offsets.windows(2).all(|w| w[1] == w[0] + dims as u64);
                if adjacent && !offsets.is_empty() {
                    stored
                        .file
                        .read_exact_at(&mut out, offsets[0])
                        .map_err(|_| Damaged)?;
                } else {
                    for (row, &at) in out.chunks_exact_mut(dims.max(1)).zip(offsets) {
                        stored.file.read_exact_at(row, at).map_err(|_| Damaged)?;
                    }
                }
                for (row, &check) in out.chunks_exact(dims.max(1)).zip(&stored.checks[range]) {
                    if row_check(row) != check {
                        return Err(Damaged);
                    }
                }
                Ok(Cow::Owned(out))
            }
        }
    }

    /// Every chunk's components, in memory (read and checked from the file when stored).
    pub(super) fn resident_values(&self) -> std::result::Result<Cow<'_, [u8]>, Damaged> {
        self.rows(0..self.memory.len())
    }

    /// The best exact score over chunks `range` (one memory's).
    pub(super) fn best_in(
        &self,
        range: std::ops::Range<usize>,
        q: &Probe,
    ) -> std::result::Result<f32, Damaged> {
        let start = range.start;
        let rows = self.rows(range)?;
        Ok(rows
            .chunks_exact(self.dims.max(1))
            .enumerate()
            .map(|(i, row)| dot_i8(row, &q.values) as f32 * self.scales[start + i] * q.scale)
            .fold(f32::NEG_INFINITY, f32::max))
    }

    /// The chunks of one memory.
    pub(super) fn span(&self, memory: i64) -> std::ops::Range<usize> {
        let start = self.memory.partition_point(|&m| m < memory);
        let end = self.memory.partition_point(|&m| m <= memory);
        start..end
    }

    /// One memory's best chunk cosine with `q`.
    pub fn best(&self, memory: i64, q: &Probe) -> std::result::Result<Option<f32>, Damaged> {
        let span = self.span(memory);
        if span.is_empty() {
            return Ok(None);
        }
        self.best_in(span, q).map(Some)
    }

    /// A memory's first chunk (summary, tags and the start of the body) as a unit vector.
    pub fn head(&self, memory: i64) -> std::result::Result<Option<Vec<f32>>, Damaged> {
        let Some(c) = self.span(memory).next() else {
            return Ok(None);
        };
        Ok(Some(unit_of(&self.rows(c..c + 1)?)))
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::vector_search::{PARALLEL_FROM, top_k};
    use super::*;

    /// A resident matrix of these rows.
    pub(crate) fn matrix(
        dims: usize,
        memory: Vec<i64>,
        values: Vec<u8>,
        scales: Vec<f32>,
    ) -> VectorMatrix {
        VectorMatrix::resident(dims, memory, values, scales)
    }

    /// Every memory scored exactly in one pass (the reference for faster searches).
    pub(crate) fn exact(
        m: &VectorMatrix,
        q: &Probe,
        limit: usize,
        keep: impl Fn(i64) -> bool + Sync,
    ) -> Vec<(i64, f32)> {
        let values = m.resident_values().unwrap();
        let score = |c: usize| {
            dot_i8(&values[c * m.dims..(c + 1) * m.dims], &q.values) as f32 * m.scales[c] * q.scale
        };
        let mut best = m.best_per_memory(0..m.len(), score, &keep);
        top_k(&mut best, limit);
        best
    }

    #[test]
    fn a_memory_read_from_the_table_scores_as_in_the_matrix() {
        let conn = Connection::open_in_memory().unwrap();
        super::super::schema::create(&conn).unwrap();
        let dims = 8;
        let mut insert = conn
            .prepare("INSERT INTO chunks (memory, ordinal, vector) VALUES (?1, ?2, ?3)")
            .unwrap();
        for memory in 1..=3i64 {
            for ordinal in 0..memory {
                let v: Vec<f32> = (0..dims)
                    .map(|i| ((i as i64 * 7 + memory * 3 + ordinal * 5) % 11) as f32 - 5.0)
                    .collect();
                let mut v = v;
                embed::normalize(&mut v);
                let bytes = Quantized::new(&v).to_bytes();
                insert.execute(params![memory, ordinal, bytes]).unwrap();
            }
        }
        let m = VectorMatrix::load(&conn, dims).unwrap();
        let mut q: Vec<f32> = (0..dims).map(|i| i as f32 - 3.0).collect();
        embed::normalize(&mut q);
        let probe = Probe::new(&q);
        for memory in 1..=4 {
            assert_eq!(
                best_in_table(&conn, memory, dims, &probe).unwrap(),
                m.best(memory, &probe).unwrap(),
                "memory {memory}"
            );
            assert_eq!(
                head_in_table(&conn, memory, dims).unwrap(),
                m.head(memory).unwrap()
            );
        }
    }

    #[test]
    fn parallel_search_equals_one_scan_and_respects_memory_boundaries() {
        let dims = 16;
        let (mut memory, mut values, mut scales) = (Vec::new(), Vec::new(), Vec::new());
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut row = 0i64;
        while memory.len() < PARALLEL_FROM + 7_123 {
            row += 1 + (next() % 3) as i64;
            for _ in 0..1 + next() % 4 {
                memory.push(row);
                values.extend((0..dims).map(|_| next() as u8));
                scales.push(0.01);
            }
        }
        let m = matrix(dims, memory, values, scales);
        assert!(m.len() < SHORTLIST_FROM);
        let q = Probe::new(
            &(0..dims)
                .map(|i| (i as f32 - 7.5) / 10.0)
                .collect::<Vec<_>>(),
        );
        let keep = |row: i64| row % 5 != 0;
        let fast = m.search(&q, 50, keep).unwrap();
        let slow = exact(&m, &q, 50, keep);
        assert_eq!(fast, slow);
        assert_eq!(fast.len(), 50);
        assert!(fast.iter().all(|(row, _)| keep(*row)));
        // Each memory appears once, with its best chunk.
        let best = fast[0];
        assert_eq!(m.best(best.0, &q).unwrap(), Some(best.1));
    }
}
