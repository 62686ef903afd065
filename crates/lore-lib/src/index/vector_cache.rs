//! The vector matrix cache beside the index (`index.sqlite3.vectors`): a copy of the index's
//! chunk vectors that the next process reads instead of scanning the `chunks` table, caught up
//! by appending one segment per index catch-up instead of being rewritten after every write.
//!
//! **Format.** A header (`LOREVEC5`, dimensions, the embedder's id, the center sketches are
//! taken around, a checksum of all that), then segments. A segment is a body — its counts
//! (parent stamp, memories removed, chunks added, lists, centroid dimensions), the memories
//! (row ids) it removes, a directory of its lists (each list's chunk count and the checksum of
//! its head), the lists' centroids (quantised; none for a segment of one list), then each
//! list's head (its chunks' row ids, scales, checksums of their components, places among
//! their memory's chunks, sign sketches) and after all heads the `i8` components, list by list
//! — and a trailer: its stamp, the body's length, a checksum of the counts, removals,
//! directory, centroids and stamp, and an end mark.
//! The first segment (the base, parent stamp 0) holds every vector of one index state, as
//! lists of similar chunks when it has [`vector_lists::LISTED_FROM`] chunks or more (see
//! [`super::vector_lists`]); each later one is what a catch-up removed and added, as one list.
//!
//! **Reading.** A reader reads every segment's counts, removals, directory and centroids, and
//! the heads of its lists (≈ 50 bytes a chunk), decoding them into the matrix — except a base
//! written as lists, whose heads a search reads only for the lists nearest its query. The
//! components themselves are read (positioned reads) only when the matrix is small (below
//! [`vectors::SHORTLIST_FROM`] chunks) or when a search scores a chunk exactly; each list's
//! head is checked against the directory's checksum and each chunk's components against their
//! checksum when read.
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
//! chunk found by a search makes that search load the table instead). A segment left after the
//! index's state by a catch-up that never committed (killed between its append and its commit,
//! whole or in part) is dropped by the next append or compaction, which hold the index's write
//! lock and so know no catch-up is under way.
//!
//! **Concurrency.** Appends and whole rewrites hold `index.sqlite3.vectors.lock` (see
//! [`crate::localstate`]); an append also runs inside the catch-up's SQLite write transaction,
//! and only onto a file that holds the state that transaction started from; a compaction takes
//! that write lock too (before the file's), and only while the state it read is the latest.
//! Readers take no lock: a rewrite is a rename, and an append only changes bytes after the
//! segments they read.
//! The workspace forbids `unsafe`, so the file is read rather than mapped: components are read
//! per chunk with positioned reads.

use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

use rusqlite::{Connection, OptionalExtension};

use super::sketch;
use super::vector_changes::Removals;
use super::vector_lists::{self, ListAt, ListRows, Lists, Partition};
use super::vectors::{self, StoredValues, Values, VectorMatrix};
use crate::embed::Quantized;
use crate::error::{Error, Result};
use crate::localstate::{self, FileLock};

const MAGIC: &[u8; 8] = b"LOREVEC5";
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

/// One segment's bytes: body and trailer. With a partition, its chunks are written list by
/// list with the lists' centroids; without, as one list.
fn segment(
    (parent, stamp): (u64, u64),
    removed: &[i64],
    rows: &Rows,
    center: &[f32],
    partition: Option<&Partition>,
) -> Vec<u8> {
    let mut out = Vec::new();
    segment_into(&mut out, (parent, stamp), removed, rows, center, partition)
        .expect("writing to memory cannot fail");
    out
}

/// Writes a segment (see [`segment`]) to `out` as it is made: the rows' components (most of a
/// whole cache) go from the matrix to `out` without a copy of them all in memory.
fn segment_into(
    out: &mut dyn Write,
    (parent, stamp): (u64, u64),
    removed: &[i64],
    rows: &Rows,
    center: &[f32],
    partition: Option<&Partition>,
) -> std::io::Result<()> {
    let dims = center.len();
    let added = rows.memory.len();
    let sketch_len = sketch::sketch_len(dims);
    let computed;
    let sketches = match rows.sketches {
        Some(sketches) if sketches.len() == added * sketch_len => sketches,
        _ => {
            computed = sketch::sketches(rows.values, rows.scales, dims, center);
            &computed[..]
        }
    };
    let (lists, mut order) = match partition {
        Some(p) => (p.lists(dims).max(1), (0..added).collect::<Vec<usize>>()),
        None => (1, (0..added).collect()),
    };
    let list_of = |i: usize| partition.map_or(0, |p| p.list_of[i] as usize);
    order.sort_by_key(|&i| list_of(i));
    let row = |i: usize| &rows.values[i * dims..(i + 1) * dims];
    // Each chunk's place among its memory's chunks (the rows come in memory order, each
    // memory's chunks in theirs): lists part a memory's chunks, a reader puts them back.
    let ordinal = vector_lists::ordinals_of(rows.memory);
    let mut heads = Vec::with_capacity(added * vector_lists::head_len(dims));
    let mut directory = Vec::with_capacity(lists * 16);
    let mut next = 0;
    for l in 0..lists {
        let first = next;
        while next < order.len() && list_of(order[next]) == l {
            next += 1;
        }
        let members = &order[first..next];
        let head_start = heads.len();
        members
            .iter()
            .for_each(|&i| heads.extend_from_slice(&rows.memory[i].to_le_bytes()));
        members
            .iter()
            .for_each(|&i| heads.extend_from_slice(&rows.scales[i].to_le_bytes()));
        members
            .iter()
            .for_each(|&i| heads.extend_from_slice(&vectors::row_check(row(i)).to_le_bytes()));
        members
            .iter()
            .for_each(|&i| heads.extend_from_slice(&ordinal[i].to_le_bytes()));
        members.iter().for_each(|&i| {
            heads.extend_from_slice(&sketches[i * sketch_len..(i + 1) * sketch_len])
        });
        directory.extend_from_slice(&(members.len() as u64).to_le_bytes());
        directory
            .extend_from_slice(&u64::from(crc32fast::hash(&heads[head_start..])).to_le_bytes());
    }
    let centroid_dims = if partition.is_some() { dims } else { 0 };
    // What precedes the heads (checksummed with the stamp), then the heads and the rows.
    let mut body = Vec::with_capacity(COUNTS + removed.len() * 8 + directory.len());
    for count in [
        parent,
        removed.len() as u64,
        added as u64,
        lists as u64,
        centroid_dims as u64,
    ] {
        body.extend_from_slice(&count.to_le_bytes());
    }
    for r in removed {
        body.extend_from_slice(&r.to_le_bytes());
    }
    body.extend_from_slice(&directory);
    if let Some(p) = partition {
        for centroid in p.centroids.chunks_exact(dims.max(1)) {
            body.extend_from_slice(&Quantized::new(centroid).to_bytes());
        }
    }
    let stamp_bytes = stamp.to_le_bytes();
    let sum = checksum(&[&body, &stamp_bytes]);
    out.write_all(&body)?;
    out.write_all(&heads)?;
    for &i in &order {
        out.write_all(row(i))?;
    }
    let len = (body.len() + heads.len() + order.len() * dims) as u64;
    out.write_all(&stamp_bytes)?;
    out.write_all(&len.to_le_bytes())?;
    out.write_all(&sum.to_le_bytes())?;
    out.write_all(END_MARK)
}

/// What reading the cache found.
pub struct Loaded {
    /// The matrix as of the wanted stamp.
    pub matrix: VectorMatrix,
    /// Segments applied to build it.
    pub segments: usize,
    /// Where the segment of the wanted stamp ends in the file.
    pub end: u64,
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
/// small or `whole` asks for them, and otherwise left in the file for exact scoring; a base
/// segment written as lists is then left in the file too, but for its directory (each search
/// reads the lists it probes).
pub fn read(path: &Path, stamp: u64, dims: usize, embedder: &str, whole: bool) -> Option<Loaded> {
    if stamp == 0 {
        return None;
    }
    let file = File::open(path).ok()?;
    let size = file.metadata().ok()?.len();
    let (center, mut at) = read_header(&file, dims, embedder)?;
    let mut chunks = ChunksRead::default();
    let mut previous = 0u64;
    let mut segments = 0;
    let mut removals = Removals::default();
    let mut lists = None;
    let mut centroids = None;
    loop {
        let lazy = !whole && segments == 0;
        let segment = read_segment(&file, (size, at), previous, dims, &mut chunks, lazy)?;
        segments += 1;
        for r in &segment.removed {
            removals.note(*r, segments);
        }
        removals.rows_added(segment.added, segments);
        lists = lists.or(segment.lists);
        centroids = centroids.or(segment.centroids);
        at = segment.next;
        previous = segment.stamp;
        if segment.stamp == stamp {
            break;
        }
    }
    let ChunksRead { rows, list_of } = chunks;
    if let Some(lists) = &mut lists {
        lists.removed = removals.memories();
    }
    // Later segments' removals applied, and the chunks in row-id order, each memory's in theirs
    // (a base of lists parts them).
    let order = rows.order(|i| removals.keeps(rows.memory[i], i));
    let mut matrix = VectorMatrix {
        dims,
        memory: rows.memory,
        scales: rows.scales,
        center,
        sketches: rows.sketches,
        values: Values::Stored(StoredValues {
            file,
            offsets: rows.offsets,
            checks: rows.checks,
        }),
        lists,
        partition: centroids.map(|centroids| Partition { centroids, list_of }),
    };
    matrix.gather(&order);
    if whole || (!matrix.is_listed() && matrix.len() < vectors::SHORTLIST_FROM) {
        matrix.read_values(size)?;
    }
    Some(Loaded {
        matrix,
        segments,
        end: at,
    })
}

/// One segment as read, its components left in the file (what it adds is appended to a
/// [`ChunksRead`], unless its lists are left in the file).
struct SegmentRead {
    stamp: u64,
    /// The memories (row ids) it removes.
    removed: Vec<i64>,
    /// How many chunks it added to the [`ChunksRead`].
    added: usize,
    /// Where the next segment starts.
    next: u64,
    /// Its lists, left in the file.
    lists: Option<Lists>,
    /// Its lists' centroids, when it has them and its chunks were read (each chunk's list is
    /// in [`ChunksRead::list_of`]).
    centroids: Option<Vec<f32>>,
}

/// The chunks the segments read so far add, and the list each came from (`u32::MAX`: a
/// segment without lists).
#[derive(Default)]
struct ChunksRead {
    rows: ListRows,
    list_of: Vec<u32>,
}

/// A segment's counts: parent stamp, removed memories, chunks added, lists, the centroids'
/// dimensions (0: none).
const COUNTS: usize = 40;

/// Bytes of one list's centroid of `dims` components (quantised like a chunk: `i8`
/// components and a scale), 0 for none.
fn centroid_len(dims: usize) -> usize {
    if dims == 0 { 0 } else { dims + 4 }
}

/// Reads the segment at `at` of a file of `size` bytes, which must name `parent` as its parent,
/// appending what it adds to `chunks` (or, when `lazy` and it has lists with centroids,
/// returning its lists to read later); `None` if it is torn, damaged or of another chain (what
/// was appended is then of no use: the caller drops the whole read). Its counts are checked
/// against the file's size before anything else is read; its counts, removals, directory and
/// centroids against the trailer's checksum, and each list against the directory's.
fn read_segment(
    file: &File,
    (size, at): (u64, u64),
    parent: u64,
    dims: usize,
    chunks: &mut ChunksRead,
    lazy: bool,
) -> Option<SegmentRead> {
    if at.checked_add((COUNTS + TRAILER) as u64)? > size {
        return None;
    }
    let counts = read_at(file, at, COUNTS)?;
    let field = |i: usize| le_u64(&counts[i * 8..i * 8 + 8]);
    let (removed, added) = (field(1) as usize, field(2) as usize);
    let (lists, centroid_dims) = (field(3) as usize, field(4) as usize);
    if field(0) != parent || lists == 0 || (centroid_dims != 0 && centroid_dims != dims) {
        return None;
    }
    // Checked sums: damaged counts must not wrap past the size check.
    let fixed_len = removed
        .checked_mul(8)?
        .checked_add(lists.checked_mul(16)?)?
        .checked_add(lists.checked_mul(centroid_len(centroid_dims))?)?;
    let head_len = added.checked_mul(vector_lists::head_len(dims))?;
    let body_len = COUNTS
        .checked_add(fixed_len)?
        .checked_add(head_len)?
        .checked_add(added.checked_mul(dims)?)?;
    let end = at
        .checked_add(body_len as u64)?
        .checked_add(TRAILER as u64)?;
    if end > size {
        return None;
    }
    let fixed = read_at(file, at + COUNTS as u64, fixed_len)?;
    let trailer = read_at(file, at + body_len as u64, TRAILER)?;
    if &trailer[24..] != END_MARK
        || le_u64(&trailer[8..16]) != body_len as u64
        || le_u64(&trailer[16..24]) != checksum(&[&counts, &fixed, &trailer[0..8]])
    {
        return None;
    }
    let (removed_bytes, rest) = fixed.split_at(removed * 8);
    let (directory, centroid_bytes) = rest.split_at(lists * 16);
    let mut at_list = Vec::with_capacity(lists);
    let heads_at = at + (COUNTS + fixed_len) as u64;
    let (mut head_at, mut values_at) = (heads_at, heads_at + head_len as u64);
    let mut total = 0usize;
    for entry in directory.chunks_exact(16) {
        let count = le_u64(&entry[..8]) as usize;
        total = total.checked_add(count).filter(|&t| t <= added)?;
        at_list.push(ListAt {
            count,
            head_at,
            check: le_u64(&entry[8..]) as u32,
            values_at,
        });
        head_at += (count * vector_lists::head_len(dims)) as u64;
        values_at += (count * dims) as u64;
    }
    if total != added {
        return None;
    }
    let found = Lists {
        dims,
        centroids: match centroid_dims == dims && dims > 0 {
            true => centroid_bytes.to_vec(),
            false => Vec::new(),
        },
        at: at_list,
        removed: Default::default(),
    };
    let mut read = SegmentRead {
        stamp: le_u64(&trailer[0..8]),
        removed: removed_bytes
            .chunks_exact(8)
            .map(|b| le_u64(b) as i64)
            .collect(),
        added: 0,
        next: end,
        lists: None,
        centroids: None,
    };
    let listed = centroid_dims == dims && found.at.len() > 1;
    if lazy && listed {
        read.lists = Some(found);
        return Some(read);
    }
    let mut head = Vec::new();
    for l in 0..found.at.len() {
        let head = found.head(file, l, &mut head)?;
        for i in 0..head.len() {
            head.push(i, &mut chunks.rows);
        }
        let list = if listed { l as u32 } else { u32::MAX };
        chunks.list_of.extend(std::iter::repeat_n(list, head.len()));
    }
    read.added = added;
    read.centroids = listed.then(|| found.centroid_rows());
    Some(read)
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
    write_whole_over(path, matrix, stamp, embedder, None).map(|_| ())
}

/// [`write_whole`] for a compaction of the index's current state: `hold_writers` is called
/// after the slow part (the partition's k-means, the new file written beside the old) and
/// before the file's lock; it takes the index's write lock for the rest of the compaction and
/// says whether the state read is still the latest (an error: the index cannot be written).
/// Only then is the file replaced, by a rename (a catch-up that appended since keeps its segment),
/// and any segment after `stamp` is dropped: no catch-up is under way, so it is what one that
/// never committed left (a process killed between its append and its commit). Returns whether
/// it wrote.
pub fn compact_whole(
    path: &Path,
    matrix: &VectorMatrix,
    stamp: u64,
    embedder: &str,
    hold_writers: &dyn Fn() -> std::result::Result<bool, String>,
) -> std::result::Result<bool, String> {
    write_whole_over(path, matrix, stamp, embedder, Some(hold_writers))
}

fn write_whole_over(
    path: &Path,
    matrix: &VectorMatrix,
    stamp: u64,
    embedder: &str,
    hold_writers: Option<&dyn Fn() -> std::result::Result<bool, String>>,
) -> std::result::Result<bool, String> {
    if stamp == 0 {
        return Ok(false);
    }
    // Vectors read in place from the file (in part, when its lists stay there) are not
    // resident: nothing to write from.
    if matrix.is_listed() {
        return Ok(false);
    }
    let Ok(values) = matrix.resident_values() else {
        return Ok(false);
    };
    let unsaved = |what: &str, e: &dyn std::fmt::Display| {
        format!(
            "the vector cache {} could not be {what} ({e}): every process will load the \
             vectors from the index until it can",
            path.display()
        )
    };
    // The k-means and the file's bytes come before the locks: a catch-up's append waits on the
    // file's lock inside SQLite's write transaction, so every writer would wait for them.
    let partition = partition_of(matrix, &values);
    let rows = Rows {
        memory: matrix.memory(),
        scales: matrix.scales(),
        values: &values,
        sketches: Some(&matrix.sketches),
    };
    let written = localstate::write_beside_with(path, |out| {
        out.write_all(&header(matrix.dims(), embedder, &matrix.center))?;
        segment_into(
            out,
            (0, stamp),
            &[],
            &rows,
            &matrix.center,
            partition.as_ref(),
        )
    })
    .map_err(|e| unsaved("written", &e))?;
    // Writers held off, then the file's lock: only the rename happens under both (the file's
    // lock is only ever held for a rename or a catch-up's append, which cannot be under way).
    if let Some(hold) = hold_writers
        && !hold()?
    {
        return Ok(false);
    }
    let _lock = FileLock::exclusive(path).map_err(|e| unsaved("locked", &e))?;
    written.put_in_place().map_err(|e| unsaved("written", &e))?;
    Ok(true)
}

/// How the chunks of a whole matrix are written as lists: the partition it was read with,
/// extended to the chunks added since, while the number of lists still suits its size and
/// placing the new chunks costs less than a partition afresh; trained afresh otherwise.
/// `None` for a matrix too small for lists.
fn partition_of(matrix: &VectorMatrix, values: &[u8]) -> Option<Partition> {
    let wanted = vector_lists::lists_for(matrix.len());
    if wanted <= 1 {
        return None;
    }
    let dims = matrix.dims();
    Some(match &matrix.partition {
        Some(p)
            if p.list_of.len() == matrix.len()
                && (wanted / 2..=wanted * 2).contains(&p.lists(dims))
                && vector_lists::placing_is_cheaper(p, dims) =>
        {
            let mut p = p.clone();
            vector_lists::place_new(&mut p, values, matrix.scales(), dims);
            p
        }
        _ => vector_lists::partition(values, matrix.scales(), dims, wanted),
    })
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

/// Appends what one catch-up changed as a segment stamped `change.stamp` after the segment of
/// `change.parent` (the state the catch-up started from), dropping whatever follows that segment
/// (see below). Returns whether it appended; a file that does not hold the parent's state is
/// left for the next reader to rebuild.
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
    let Some((center, _)) = read_header(&file, dims, embedder) else {
        return Ok(false);
    };
    let end = match last_stamp(&file, dims, embedder) {
        Some((last, _)) if last == change.parent => match file.metadata() {
            Ok(meta) => meta.len(),
            Err(_) => return Ok(false),
        },
        // Whatever follows the parent's segment was appended by a catch-up that never
        // committed (this one holds the index's write lock, taken at the parent's state): a
        // process killed between its append and its commit. It is dropped; readers never read
        // past the segment of the stamp they see.
        _ => match read(path, change.parent, dims, embedder, false) {
            Some(loaded) => loaded.end,
            None => return Ok(false),
        },
    };
    let rows = Rows {
        memory: &added.memory,
        scales: &added.scales,
        values: &added.values,
        sketches: None,
    };
    let bytes = segment(
        (change.parent, change.stamp),
        &change.removed,
        &rows,
        &center,
        None,
    );
    let appended = file
        .set_len(end)
        .and_then(|_| file.seek(SeekFrom::Start(end)))
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
