//! A matrix built segment by segment from the vector cache, and brought forward in memory by
//! catch-ups: which rows later segments removed, the components read whole when wanted, and
//! catch-ups' changes applied to a matrix a handle holds (see [`super::vector_cache`]).

use super::sketch;
use super::vector_cache::{Added, Change};
use super::vectors::{self, Values, VectorMatrix};
use std::io::{Seek as _, SeekFrom};

/// The memories changes removed, and in which change each row was added (0: the base).
#[derive(Default)]
pub(super) struct Removals {
    /// Memory (row id) → the last change that removed it.
    last: std::collections::HashMap<i64, usize>,
    /// `(first row, change)` where each change's added rows begin, ascending.
    starts: Vec<(usize, usize)>,
    rows: usize,
}

impl Removals {
    pub(super) fn note(&mut self, memory: i64, change: usize) {
        self.last.insert(memory, change);
    }

    /// Records that `n` rows were appended by `change`.
    pub(super) fn rows_added(&mut self, n: usize, change: usize) {
        if change > 0 {
            self.starts.push((self.rows, change));
        }
        self.rows += n;
    }

    /// Every memory a change removed.
    pub(super) fn memories(
        &self,
    ) -> std::collections::HashSet<i64, super::vector_search::RowIdHash> {
        self.last.keys().copied().collect()
    }

    /// Whether chunk `row` (of `memory`) stays: no change after the one that added it removed
    /// its memory.
    pub(super) fn keeps(&self, memory: i64, row: usize) -> bool {
        self.last
            .get(&memory)
            .is_none_or(|&r| r <= self.added_in(row))
    }

    /// The change that added `row` (0 for the base).
    fn added_in(&self, row: usize) -> usize {
        let at = self.starts.partition_point(|&(first, _)| first <= row);
        if at == 0 { 0 } else { self.starts[at - 1].1 }
    }
}

/// Building a matrix segment by segment.
impl VectorMatrix {
    pub(super) fn dims(&self) -> usize {
        self.dims
    }

    pub(super) fn memory(&self) -> &[i64] {
        &self.memory
    }

    pub(super) fn scales(&self) -> &[f32] {
        &self.scales
    }

    /// Reads every chunk's components from the file (`size` bytes long) into memory, checking
    /// each against its checksum. Each run of chunks adjacent in the file is read straight into
    /// place (no copy of the whole file, no zeroed buffer first).
    pub(super) fn read_values(&mut self, size: u64) -> Option<()> {
        use std::io::Read as _;
        let Values::Stored(stored) = &self.values else {
            return Some(());
        };
        let dims = self.dims as u64;
        let mut values = Vec::with_capacity(stored.offsets.len() * self.dims);
        let mut file = &stored.file;
        let mut first = 0;
        while first < stored.offsets.len() {
            let start = stored.offsets[first];
            let mut end = first + 1;
            while end < stored.offsets.len()
                && stored.offsets[end] == start + (end - first) as u64 * dims
            {
                end += 1;
            }
            let len = (end - first) as u64 * dims;
            if start.checked_add(len)? > size {
                return None;
            }
            file.seek(SeekFrom::Start(start)).ok()?;
            let before = values.len();
            file.take(len).read_to_end(&mut values).ok()?;
            if (values.len() - before) as u64 != len {
                return None;
            }
            first = end;
        }
        for (row, &check) in values.chunks_exact(self.dims.max(1)).zip(&stored.checks) {
            if vectors::row_check(row) != check {
                return None;
            }
        }
        self.values = Values::Resident(values);
        Some(())
    }

    /// Whether the components are in memory (a matrix read from the file leaves them there
    /// when it is large).
    pub(super) fn is_resident(&self) -> bool {
        matches!(self.values, Values::Resident(_))
    }

    /// Applies catch-ups' changes, in order, to a matrix held in memory (the state the first
    /// one's parent stamp names), in one pass over the matrix whatever their number.
    pub(super) fn apply_changes(&mut self, changes: &[(Change, Added)]) {
        let Values::Resident(values) = &mut self.values else {
            unreachable!("only matrices in memory are held across catch-ups");
        };
        // Written again whole, the matrix is partitioned afresh.
        self.partition = None;
        let mut removals = Removals {
            rows: self.memory.len(),
            ..Removals::default()
        };
        for (i, (change, added)) in changes.iter().enumerate() {
            for row in &change.removed {
                removals.note(*row, i + 1);
            }
            self.memory.extend_from_slice(&added.memory);
            self.scales.extend_from_slice(&added.scales);
            values.extend_from_slice(&added.values);
            self.sketches.extend_from_slice(&sketch::sketches(
                &added.values,
                &added.scales,
                self.dims,
                &self.center,
            ));
            removals.rows_added(added.memory.len(), i + 1);
        }
        self.remove(&removals);
        self.restore_order();
    }

    /// Drops every chunk whose memory a later change removed (SQLite may give a removed row id
    /// to a memory inserted after it, so a removal reaches only the rows that were there
    /// before it).
    pub(super) fn remove(&mut self, removals: &Removals) {
        if removals.last.is_empty() {
            return;
        }
        let kept: Vec<usize> = (0..self.memory.len())
            .filter(|&row| removals.keeps(self.memory[row], row))
            .collect();
        self.gather(&kept);
    }

    /// Puts the chunks back in row-id order when a segment added rows below existing ones
    /// (SQLite reuses the largest row id after it is deleted), keeping each memory's chunks in
    /// their order.
    pub(super) fn restore_order(&mut self) {
        if self.memory.is_sorted() {
            return;
        }
        // Sorted by value (no lookup per comparison): runs already in order (lists read from
        // the file, segments) are merged, not sorted again.
        let mut keyed: Vec<(i64, usize)> = self.memory.iter().copied().zip(0..).collect();
        keyed.sort_by_key(|&(memory, _)| memory);
        let order: Vec<usize> = keyed.into_iter().map(|(_, i)| i).collect();
        self.gather(&order);
    }

    /// Keeps chunks `rows`, in that order.
    pub(super) fn gather(&mut self, rows: &[usize]) {
        fn pick<T: Copy>(items: &[T], rows: &[usize]) -> Vec<T> {
            rows.iter().map(|&i| items[i]).collect()
        }
        fn pick_rows(items: &[u8], width: usize, rows: &[usize]) -> Vec<u8> {
            let mut out = Vec::with_capacity(rows.len() * width);
            for &i in rows {
                out.extend_from_slice(&items[i * width..(i + 1) * width]);
            }
            out
        }
        self.memory = pick(&self.memory, rows);
        self.scales = pick(&self.scales, rows);
        if let Some(p) = &mut self.partition {
            p.list_of = pick(&p.list_of, rows);
        }
        self.sketches = pick_rows(&self.sketches, sketch::sketch_len(self.dims), rows);
        match &mut self.values {
            Values::Resident(values) => *values = pick_rows(values, self.dims, rows),
            Values::Stored(stored) => {
                stored.offsets = pick(&stored.offsets, rows);
                stored.checks = pick(&stored.checks, rows);
            }
        }
    }
}
