//! The vector matrix cache beside the index (`index.sqlite3.vectors`): a copy of the index's
//! chunk vectors that the next process reads instead of scanning the `chunks` table, caught up
//! by appending one segment per index catch-up instead of being rewritten after every write.
//!
//! **Format.** A header (`LOREVEC4`, dimensions, the embedder's id, the center sketches are
//! taken around, a checksum of all that), then segments. A segment is a body — its parent's
//! stamp, the memories (row ids) it removes, the chunks it adds (row ids, scales, a checksum of
//! each chunk's components, sign sketches, then the `i8` components) — and a trailer: its stamp,
//! the body's length, a checksum of the body up to the components and the stamp, and an end
//! mark. The first segment (the base, parent stamp 0) holds every vector of one index state;
//! each later one is what a catch-up removed and added.
//!
//! **Reading.** A reader reads every segment's body up to the components (≈ 50 bytes a chunk:
//! ids, scales, checksums, sketches), decoding it into the matrix a piece at a time, and the
//! components themselves (positioned reads) only when the matrix is small (below
//! [`vectors::SHORTLIST_FROM`] chunks) or when a search scores a chunk exactly; each chunk's
//! components are checked against their checksum when read.
//!
//! **Stamps.** Every catch-up that changes the index draws a random stamp and records it in the
//! index's `meta` (`vectors_stamp`) in its transaction. A reader wants the segment whose stamp is
//! the one its read transaction sees, and applies the chain up to it (a catch-up that has
//! appended but not yet committed leaves a later segment the reader ignores). A segment whose
//! transaction never committed carries a stamp the index never recorded, so it is never taken
//! for another state.
//!
//! **Torn or damaged files** (a crash mid-append, a truncated copy, bytes flipped) fail the
//! length, parent or checksum checks and are rebuilt from the table, never trusted (a damaged
//! chunk found by a search makes that search load the table instead).
//!
//! **Concurrency.** Appends and whole rewrites hold `index.sqlite3.vectors.lock` (see
//! [`crate::localstate`]); an append also runs inside the catch-up's SQLite write transaction,
//! and only onto a file whose last stamp is the one that transaction started from. Readers take
//! no lock: a rewrite is a rename, and an append only adds bytes after the segments they read.
//! The workspace forbids `unsafe`, so the file is read rather than mapped: components are read
//! per chunk with positioned reads.

use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

use rusqlite::{Connection, OptionalExtension};

use super::Index;
use super::sketch;
use super::vector_changes::Removals;
use super::vectors::{self, StoredValues, Values, VectorMatrix};
use crate::error::{Error, Result};
use crate::localstate::{self, FileLock};

const MAGIC: &[u8; 8] = b"LOREVEC4";
const END_MARK: &[u8; 8] = b"LOREVSEG";
/// Stamp (8) + body length (8) + checksum (8) + end mark (8).
const TRAILER: usize = 32;
/// Segments after which a reader writes the file again as one base segment.
const COMPACT_AFTER_SEGMENTS: usize = 16;

/// The `meta` entry holding the stamp of the index's current vectors.
const STAMP_KEY: &str = "vectors_stamp";

/// The stamp of the vectors the index holds (0 when none was recorded yet).
pub fn read_stamp(conn: &Connection) -> Result<u64> {
    let value: Option<String> = conn
        .query_row("SELECT value FROM meta WHERE name = ?1", [STAMP_KEY], |r| {
            r.get(0)
        })
        .optional()?;
    Ok(value.and_then(|v| v.parse().ok()).unwrap_or(0))
}

/// Draws and records a new stamp (inside the catch-up's transaction).
pub fn new_stamp(conn: &Connection) -> Result<u64> {
    let mut random = [0u8; 8];
    getrandom::fill(&mut random).map_err(|e| Error::Io {
        context: "reading the system's random source".into(),
        source: std::io::Error::other(e.to_string()),
    })?;
    // 0 means "no stamp": never drawn.
    let stamp = u64::from_le_bytes(random).max(1);
    conn.execute(
        "INSERT INTO meta (name, value) VALUES (?1, ?2)
         ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        rusqlite::params![STAMP_KEY, stamp.to_string()],
    )?;
    Ok(stamp)
}

/// A checksum of bytes (CRC-32, hardware-assisted where the CPU has it), fast enough to run over
/// the whole file on every read. Detects torn, zeroed and changed bytes (not an adversary).
pub(super) fn checksum(parts: &[&[u8]]) -> u64 {
    let mut hasher = crc32fast::Hasher::new();
    for part in parts {
        hasher.update(part);
    }
    u64::from(hasher.finalize())
}

/// The header's fixed part: magic, dimensions, embedder.
fn header_prefix(dims: usize, embedder: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + embedder.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(dims as u32).to_le_bytes());
    out.extend_from_slice(&(embedder.len() as u32).to_le_bytes());
    out.extend_from_slice(embedder.as_bytes());
    out
}

/// The whole header: the fixed part, the center, a checksum of both.
fn header(dims: usize, embedder: &str, center: &[f32]) -> Vec<u8> {
    let mut out = header_prefix(dims, embedder);
    for c in center {
        out.extend_from_slice(&c.to_le_bytes());
    }
    let sum = checksum(&[&out]);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// Reads the header of a file of these dimensions and embedder: the center and where the
/// segments start.
fn read_header(file: &File, dims: usize, embedder: &str) -> Option<(Vec<f32>, u64)> {
    let prefix = header_prefix(dims, embedder);
    let mut got = vec![0u8; prefix.len() + dims * 4 + 8];
    file.read_exact_at(&mut got, 0).ok()?;
    if got[..prefix.len()] != prefix[..] {
        return None;
    }
    let end = prefix.len() + dims * 4;
    if u64::from_le_bytes(got[end..].try_into().ok()?) != checksum(&[&got[..end]]) {
        return None;
    }
    let center = got[prefix.len()..end]
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
        .collect();
    Some((center, got.len() as u64))
}

/// The chunks one segment adds.
struct Rows<'a> {
    memory: &'a [i64],
    scales: &'a [f32],
    values: &'a [u8],
    /// Their sketches around the file's center, when already at hand (a matrix's own, written
    /// again whole); computed from the values otherwise.
    sketches: Option<&'a [u8]>,
}

/// One segment's bytes: body and trailer.
fn segment(parent: u64, stamp: u64, removed: &[i64], rows: &Rows, center: &[f32]) -> Vec<u8> {
    let dims = center.len();
    let added = rows.memory.len();
    let mut body = Vec::with_capacity(
        24 + removed.len() * 8 + added * (16 + sketch::sketch_len(dims) + dims) + TRAILER,
    );
    body.extend_from_slice(&parent.to_le_bytes());
    body.extend_from_slice(&(removed.len() as u64).to_le_bytes());
    body.extend_from_slice(&(added as u64).to_le_bytes());
    for r in removed {
        body.extend_from_slice(&r.to_le_bytes());
    }
    for m in rows.memory {
        body.extend_from_slice(&m.to_le_bytes());
    }
    for s in rows.scales {
        body.extend_from_slice(&s.to_le_bytes());
    }
    for row in rows.values.chunks_exact(dims.max(1)).take(added) {
        body.extend_from_slice(&vectors::row_check(row).to_le_bytes());
    }
    match rows.sketches {
        Some(sketches) if sketches.len() == added * sketch::sketch_len(dims) => {
            body.extend_from_slice(sketches);
        }
        _ => body.extend_from_slice(&sketch::sketches(rows.values, rows.scales, dims, center)),
    }
    let stamp_bytes = stamp.to_le_bytes();
    let sum = checksum(&[&body, &stamp_bytes]);
    body.extend_from_slice(rows.values);
    let len = body.len() as u64;
    body.extend_from_slice(&stamp_bytes);
    body.extend_from_slice(&len.to_le_bytes());
    body.extend_from_slice(&sum.to_le_bytes());
    body.extend_from_slice(END_MARK);
    body
}

/// What reading the cache found.
pub struct Loaded {
    /// The matrix as of the wanted stamp.
    pub matrix: VectorMatrix,
    /// Segments applied to build it.
    pub segments: usize,
}

/// Reads `len` bytes at `at`.
fn read_at(file: &File, at: u64, len: usize) -> Option<Vec<u8>> {
    let mut out = vec![0u8; len];
    file.read_exact_at(&mut out, at).ok()?;
    Some(out)
}

fn le_u64(bytes: &[u8]) -> u64 {
    u64::from_le_bytes(bytes.try_into().expect("8 bytes"))
}

/// Reads the matrix as of `stamp` from the cache at `path`, if the file holds that state for
/// this embedder and every segment up to it is whole; `None` otherwise (absent, stale, torn or
/// damaged: the caller rebuilds). The components are read (and checked) now when the matrix is
/// small or `whole` asks for them, and otherwise left in the file for exact scoring.
pub fn read(path: &Path, stamp: u64, dims: usize, embedder: &str, whole: bool) -> Option<Loaded> {
    if stamp == 0 {
        return None;
    }
    let file = File::open(path).ok()?;
    let size = file.metadata().ok()?.len();
    let (center, mut at) = read_header(&file, dims, embedder)?;
    let mut chunks = ChunksRead::default();
    let mut offsets = Vec::new();
    let mut previous = 0u64;
    let mut segments = 0;
    let mut removals = Removals::default();
    loop {
        let segment = read_segment(&file, size, at, previous, dims, &mut chunks)?;
        segments += 1;
        for r in &segment.removed {
            removals.note(*r, segments);
        }
        let added = segment.added;
        offsets.extend((0..added as u64).map(|i| segment.values_at + i * dims as u64));
        removals.rows_added(added, segments);
        at = segment.next;
        previous = segment.stamp;
        if segment.stamp == stamp {
            break;
        }
    }
    let ChunksRead {
        memory,
        scales,
        checks,
        sketches,
    } = chunks;
    let mut matrix = VectorMatrix {
        dims,
        memory,
        scales,
        center,
        sketches,
        values: Values::Stored(StoredValues {
            file,
            offsets,
            checks,
        }),
    };
    matrix.remove(&removals);
    matrix.restore_order();
    if whole || matrix.len() < vectors::SHORTLIST_FROM {
        matrix.read_values(size)?;
    }
    Some(Loaded { matrix, segments })
}

/// One segment as read, its components left in the file (what it adds is appended to a
/// [`ChunksRead`]).
struct SegmentRead {
    stamp: u64,
    /// The memories (row ids) it removes.
    removed: Vec<i64>,
    /// How many chunks it adds.
    added: usize,
    /// Where its first chunk's components start.
    values_at: u64,
    /// Where the next segment starts.
    next: u64,
}

/// The chunks the segments read so far add: their memories, scales, component checksums and
/// sketches, decoded straight from the file into these (no copy of a segment's whole head).
#[derive(Default)]
struct ChunksRead {
    memory: Vec<i64>,
    scales: Vec<f32>,
    checks: Vec<u32>,
    sketches: Vec<u8>,
}

/// Bytes read at a time from a segment's head.
const PIECE: usize = 1 << 16;

/// Reads `len` bytes at `at` a piece at a time (each a whole number of `item`-byte items, as
/// `item` divides [`PIECE`]), feeding each piece to `hasher` and each item to `each`.
fn read_items(
    file: &File,
    (at, len): (u64, usize),
    item: usize,
    hasher: &mut crc32fast::Hasher,
    mut each: impl FnMut(&[u8]),
) -> Option<()> {
    let mut piece = vec![0u8; PIECE.min(len)];
    let mut done = 0;
    while done < len {
        let n = (len - done).min(PIECE);
        file.read_exact_at(&mut piece[..n], at + done as u64).ok()?;
        hasher.update(&piece[..n]);
        piece[..n].chunks_exact(item).for_each(&mut each);
        done += n;
    }
    Some(())
}

/// Reads the segment at `at` of a file of `size` bytes, which must name `parent` as its parent,
/// appending what it adds to `chunks`; `None` if it is torn, damaged or of another chain (what
/// was appended is then of no use: the caller drops the whole read). Its three counts are
/// checked against the file's size before anything else is read.
fn read_segment(
    file: &File,
    size: u64,
    at: u64,
    parent: u64,
    dims: usize,
    chunks: &mut ChunksRead,
) -> Option<SegmentRead> {
    use std::io::Read as _;
    if at + 24 + TRAILER as u64 > size {
        return None;
    }
    let counts = read_at(file, at, 24)?;
    let removed = le_u64(&counts[8..16]) as usize;
    let added = le_u64(&counts[16..24]) as usize;
    let sketch_len = sketch::sketch_len(dims);
    let ids_len = removed
        .checked_mul(8)?
        .checked_add(added.checked_mul(16)?)?;
    let head_len = ids_len.checked_add(added.checked_mul(sketch_len)?)?;
    let body_len = head_len
        .checked_add(added.checked_mul(dims)?)?
        .checked_add(24)?;
    // Checked sums: damaged counts must not wrap past the size check.
    let end = at
        .checked_add(body_len as u64)?
        .checked_add(TRAILER as u64)?;
    if le_u64(&counts[0..8]) != parent || end > size {
        return None;
    }
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&counts);
    let four = |b: &[u8]| -> [u8; 4] { b.try_into().expect("4 bytes") };
    // The head's sections in file order: removed ids, then the added chunks' memories, scales
    // and checksums, then their sketches.
    let mut next = at + 24;
    let mut section = |bytes: usize| {
        let start = next;
        next += bytes as u64;
        (start, bytes)
    };
    let mut removed_ids = Vec::with_capacity(removed);
    read_items(file, section(removed * 8), 8, &mut hasher, |b| {
        removed_ids.push(le_u64(b) as i64)
    })?;
    chunks.memory.reserve(added);
    read_items(file, section(added * 8), 8, &mut hasher, |b| {
        chunks.memory.push(le_u64(b) as i64)
    })?;
    chunks.scales.reserve(added);
    read_items(file, section(added * 4), 4, &mut hasher, |b| {
        chunks.scales.push(f32::from_le_bytes(four(b)))
    })?;
    chunks.checks.reserve(added);
    read_items(file, section(added * 4), 4, &mut hasher, |b| {
        chunks.checks.push(u32::from_le_bytes(four(b)))
    })?;
    let (sketches_at, sketches_len) = section(added * sketch_len);
    let before = chunks.sketches.len();
    chunks.sketches.reserve(sketches_len);
    let mut reader = file;
    reader.seek(SeekFrom::Start(sketches_at)).ok()?;
    reader
        .take(sketches_len as u64)
        .read_to_end(&mut chunks.sketches)
        .ok()?;
    if chunks.sketches.len() - before != sketches_len {
        return None;
    }
    hasher.update(&chunks.sketches[before..]);
    let trailer = read_at(file, at + body_len as u64, TRAILER)?;
    hasher.update(&trailer[0..8]);
    if &trailer[24..] != END_MARK
        || le_u64(&trailer[8..16]) != body_len as u64
        || le_u64(&trailer[16..24]) != u64::from(hasher.finalize())
    {
        return None;
    }
    Some(SegmentRead {
        stamp: le_u64(&trailer[0..8]),
        removed: removed_ids,
        added,
        values_at: at + 24 + head_len as u64,
        next: at + body_len as u64 + TRAILER as u64,
    })
}

/// The stamp of the file's last segment, read from its trailer, and the file's center (`None`
/// if the file is of another embedder or does not end with a trailer).
fn last_stamp(file: &File, dims: usize, embedder: &str) -> Option<(u64, Vec<f32>)> {
    let (center, start) = read_header(file, dims, embedder)?;
    let size = file.metadata().ok()?.len();
    if size < start + TRAILER as u64 {
        return None;
    }
    let trailer = read_at(file, size - TRAILER as u64, TRAILER)?;
    if &trailer[24..] != END_MARK {
        return None;
    }
    Some((le_u64(&trailer[0..8]), center))
}

/// Writes `matrix` as the whole cache, one base segment stamped `stamp` (a temporary file
/// renamed into place, under the file's lock). A failure loses nothing (the cache only saves
/// the next process a load) but is returned, so that the caller can say every process will
/// load the vectors from the table until it is fixed.
pub fn write_whole(
    path: &Path,
    matrix: &VectorMatrix,
    stamp: u64,
    embedder: &str,
) -> std::result::Result<(), String> {
    if stamp == 0 {
        return Ok(());
    }
    // Vectors read in place from the file are not resident: nothing to write from.
    let Ok(values) = matrix.resident_values() else {
        return Ok(());
    };
    let unsaved = |what: &str, e: &dyn std::fmt::Display| {
        format!(
            "the vector cache {} could not be {what} ({e}): every process will load the \
             vectors from the index until it can",
            path.display()
        )
    };
    let _lock = FileLock::exclusive(path).map_err(|e| unsaved("locked", &e))?;
    let mut bytes = header(matrix.dims(), embedder, &matrix.center);
    bytes.extend_from_slice(&segment(
        0,
        stamp,
        &[],
        &Rows {
            memory: matrix.memory(),
            scales: matrix.scales(),
            values: &values,
            sketches: Some(&matrix.sketches),
        },
        &matrix.center,
    ));
    localstate::replace_contents(path, &bytes).map_err(|e| unsaved("written", &e))
}

/// The chunks a catch-up added, read from `conn` (row ids ascending, each memory's chunks in
/// order).
pub struct Added {
    pub(super) memory: Vec<i64>,
    pub(super) scales: Vec<f32>,
    pub(super) values: Vec<u8>,
}

impl Added {
    /// Reads the chunk vectors of the `added` memories.
    pub fn read(conn: &Connection, added: &[i64], dims: usize) -> Result<Added> {
        let mut rows = added.to_vec();
        rows.sort_unstable();
        rows.dedup();
        let mut out = Added {
            memory: Vec::new(),
            scales: Vec::new(),
            values: Vec::new(),
        };
        let mut stmt =
            conn.prepare_cached("SELECT vector FROM chunks WHERE memory = ?1 ORDER BY ordinal")?;
        for row in &rows {
            let vectors = stmt.query_map([row], |r| r.get::<_, Vec<u8>>(0))?;
            for bytes in vectors {
                let bytes = bytes?;
                if bytes.len() != dims + 4 {
                    continue;
                }
                out.memory.push(*row);
                out.values.extend_from_slice(&bytes[..dims]);
                out.scales.push(f32::from_le_bytes(
                    bytes[dims..].try_into().expect("4 bytes"),
                ));
            }
        }
        Ok(out)
    }
}

/// Appends what one catch-up changed as a segment stamped `change.stamp`, if the file's last
/// segment is `change.parent` (the state the catch-up started from). Returns whether it
/// appended; a file it cannot extend is left for the next reader to rebuild.
pub fn append(
    path: &Path,
    change: &Change,
    added: &Added,
    dims: usize,
    embedder: &str,
) -> Result<bool> {
    if change.parent == 0 || !path.exists() {
        return Ok(false);
    }
    let _lock = FileLock::exclusive(path)?;
    let Ok(mut file) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
    else {
        return Ok(false);
    };
    let Some((last, center)) = last_stamp(&file, dims, embedder) else {
        return Ok(false);
    };
    if last != change.parent {
        return Ok(false);
    }
    let rows = Rows {
        memory: &added.memory,
        scales: &added.scales,
        values: &added.values,
        sketches: None,
    };
    let bytes = segment(change.parent, change.stamp, &change.removed, &rows, &center);
    let appended = file
        .seek(SeekFrom::End(0))
        .and_then(|_| file.write_all(&bytes));
    // A partial segment fails every later read's checks; the next reader rebuilds.
    Ok(appended.is_ok())
}

/// What one catch-up did to the vectors.
#[derive(Debug, Default)]
pub struct Change {
    /// The stamp the catch-up started from.
    pub parent: u64,
    /// The stamp it recorded.
    pub stamp: u64,
    /// Memories (row ids) removed.
    pub removed: Vec<i64>,
    /// Memories (row ids) inserted.
    pub added: Vec<i64>,
}

/// Whether a loaded file has grown enough segments to be written again as one.
pub fn wants_compaction(loaded: &Loaded) -> bool {
    loaded.segments > COMPACT_AFTER_SEGMENTS
}

/// Loading the matrix for searches, and checks of the cache for tests.
impl Index {
    /// Keeps a cache write's failure for [`Index::take_warnings`].
    fn note(&self, written: std::result::Result<(), String>) {
        if let Err(warning) = written {
            self.warnings.borrow_mut().push(warning);
        }
    }

    /// What went wrong without stopping the operation (a cache that could not be saved),
    /// since the last call.
    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut *self.warnings.borrow_mut())
    }

    /// Every chunk vector, loaded once per process (queued catch-up changes applied first;
    /// read from the cache file, or the table when the file does not hold this state).
    pub(super) fn matrix(&self) -> Result<Option<&VectorMatrix>> {
        let Some(embedder) = &self.embedder else {
            return Ok(None);
        };
        if let Some(m) = self.reloaded.get() {
            return Ok(Some(m));
        }
        if self.vectors.get().is_none()
            && let Some((mut m, changes)) = self.held.borrow_mut().take()
        {
            m.apply_changes(&changes);
            let _ = self.vectors.set(m);
        }
        if self.vectors.get().is_none() {
            let dims = embedder.id().dims;
            // The stamp and the vectors are read in one transaction, so they agree.
            let tx = self.conn.unchecked_transaction()?;
            let stamp = read_stamp(&tx)?;
            let name = super::schema::read_meta(&tx, "embedder")?.unwrap_or_default();
            let cache = super::vectors_cache_path(&self.path);
            let m = match read(&cache, stamp, dims, &name, false) {
                Some(loaded) => {
                    if !self.read_only
                        && wants_compaction(&loaded)
                        && let Some(whole) = read(&cache, stamp, dims, &name, true)
                    {
                        self.note(write_whole(&cache, &whole.matrix, stamp, &name));
                    }
                    loaded.matrix
                }
                None => {
                    let m = VectorMatrix::load(&tx, dims)?;
                    if !self.read_only {
                        self.note(write_whole(&cache, &m, stamp, &name));
                    }
                    m
                }
            };
            tx.finish()?;
            let _ = self.vectors.set(m);
            self.vectors_stamp.set(stamp);
        }
        Ok(self.vectors.get())
    }

    /// After a search found a damaged chunk in the cache file: the vectors loaded from the
    /// table for the rest of this handle's life (until the next catch-up), and the file written
    /// again from them.
    pub(super) fn reload_matrix(&self) -> Result<Option<&VectorMatrix>> {
        let Some(embedder) = &self.embedder else {
            return Ok(None);
        };
        if self.reloaded.get().is_none() {
            let tx = self.conn.unchecked_transaction()?;
            let stamp = read_stamp(&tx)?;
            let name = super::schema::read_meta(&tx, "embedder")?.unwrap_or_default();
            let m = VectorMatrix::load(&tx, embedder.id().dims)?;
            if !self.read_only {
                let cache = super::vectors_cache_path(&self.path);
                self.note(write_whole(&cache, &m, stamp, &name));
            }
            tx.finish()?;
            let _ = self.reloaded.set(m);
        }
        Ok(self.reloaded.get())
    }

    /// Whether the vectors searches use (held in memory, or read from the cache file) are
    /// exactly the `chunks` table's, in order: for tests of the cache.
    #[doc(hidden)]
    pub fn vectors_agree_with_table(&self) -> Result<bool> {
        let Some(held) = self.matrix()? else {
            return Ok(true);
        };
        let fresh = VectorMatrix::load(&self.conn, held.dims())?;
        let (Ok(held_values), Ok(fresh_values)) = (held.resident_values(), fresh.resident_values())
        else {
            return Ok(false);
        };
        Ok(held.memory() == fresh.memory()
            && held.scales() == fresh.scales()
            && held_values == fresh_values)
    }

    /// How many segments the cache file holds up to the index's current vectors, or `None`
    /// when the file does not hold them whole (absent, stale, torn, a chunk damaged): for tests
    /// of the cache.
    #[doc(hidden)]
    pub fn vector_cache_segments(&self) -> Result<Option<usize>> {
        let Some(embedder) = &self.embedder else {
            return Ok(None);
        };
        let stamp = read_stamp(&self.conn)?;
        let name = super::schema::read_meta(&self.conn, "embedder")?.unwrap_or_default();
        Ok(read(
            &super::vectors_cache_path(&self.path),
            stamp,
            embedder.id().dims,
            &name,
            true,
        )
        .map(|loaded| loaded.segments))
    }
}
