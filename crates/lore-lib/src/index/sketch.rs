//! Sign sketches of chunk vectors: one bit per component (is it above the matrix's center?), a
//! first stage that ranks every chunk of a large matrix cheaply so only a shortlist is scored
//! exactly.
//!
//! A chunk's sketch `s` (±1 per component) approximates the direction of `v − center`. The
//! query is centered too (the center's direction is in every chunk, so its components would
//! weigh bits close to coin flips) and stays real-valued (an asymmetric estimate): per sketch
//! byte, a table of the 256 possible sums of ±q over its eight components, so a chunk costs one
//! lookup per byte. A cheaper popcount against the query's own signs picks which chunks get the
//! estimate.

/// Bytes of one sketch.
pub fn sketch_len(dims: usize) -> usize {
    dims.div_ceil(8)
}

/// The mean of `i8` rows (`dims` bytes each) scaled by `scales`: the center sketches are taken
/// around.
pub fn center(values: &[u8], scales: &[f32], dims: usize) -> Vec<f32> {
    let mut sum = vec![0f64; dims];
    if dims == 0 {
        return Vec::new();
    }
    for (row, &scale) in values.chunks_exact(dims).zip(scales) {
        for (s, &x) in sum.iter_mut().zip(row) {
            *s += (x as i8) as f64 * scale as f64;
        }
    }
    let n = scales.len().max(1) as f64;
    sum.into_iter().map(|s| (s / n) as f32).collect()
}

/// Appends the sketch of one `i8` row with its scale to `out`.
pub fn push_sketch(row: &[u8], scale: f32, center: &[f32], out: &mut Vec<u8>) {
    for (byte, part) in row.chunks(8).enumerate() {
        let mut bits = 0u8;
        for (j, &x) in part.iter().enumerate() {
            let c = center.get(byte * 8 + j).copied().unwrap_or(0.0);
            if (x as i8) as f32 * scale > c {
                bits |= 1 << j;
            }
        }
        out.push(bits);
    }
}

/// The sketches of `i8` rows.
pub fn sketches(values: &[u8], scales: &[f32], dims: usize, center: &[f32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(scales.len() * sketch_len(dims));
    if dims == 0 {
        return out;
    }
    for (row, &scale) in values.chunks_exact(dims).zip(scales) {
        push_sketch(row, scale, center, &mut out);
    }
    out
}

/// A query prepared for scoring sketches: per sketch byte, the sum of `±q` for each of its 256
/// values.
pub struct SketchQuery {
    table: Vec<f32>,
    len: usize,
    /// The query's own sketch (bit set where it is above the center).
    signs: Vec<u8>,
}

impl SketchQuery {
    /// Prepares `q` (a unit vector of `dims` components) for sketches around `center`.
    pub fn new(q: &[f32], center: &[f32]) -> SketchQuery {
        // The center's direction is in every chunk: left in the query it would weigh sketch bits
        // that are close to coin flips.
        let q: Vec<f32> = q.iter().zip(center).map(|(x, c)| x - c).collect();
        let len = sketch_len(q.len());
        let mut signs = vec![0u8; len];
        for (i, &x) in q.iter().enumerate() {
            if x > 0.0 {
                signs[i / 8] |= 1 << (i % 8);
            }
        }
        let mut table = vec![0f32; len * 256];
        for byte in 0..len {
            let part = &q[byte * 8..(byte * 8 + 8).min(q.len())];
            for value in 0..256usize {
                table[byte * 256 + value] = part
                    .iter()
                    .enumerate()
                    .map(|(j, &x)| if value >> j & 1 == 1 { x } else { -x })
                    .sum();
            }
        }
        SketchQuery { table, len, signs }
    }

    /// The query's own sketch.
    pub fn signs(&self) -> &[u8] {
        &self.signs
    }

    /// The estimate of one sketch (higher: more similar).
    pub fn score(&self, sketch: &[u8]) -> f32 {
        // Four independent sums, so the additions do not wait on each other.
        let mut sums = [0f32; 4];
        let tables = self.table.chunks_exact(256).take(self.len);
        for (i, (&v, table)) in sketch.iter().zip(tables).enumerate() {
            sums[i % 4] += table[v as usize];
        }
        (sums[0] + sums[1]) + (sums[2] + sums[3])
    }
}

/// How many bits two sketches differ in.
pub fn distance(a: &[u8], b: &[u8]) -> u16 {
    let mut words_a = a.chunks_exact(8);
    let mut words_b = b.chunks_exact(8);
    let mut bits = 0u32;
    for (x, y) in (&mut words_a).zip(&mut words_b) {
        let x = u64::from_le_bytes(x.try_into().expect("8 bytes"));
        let y = u64::from_le_bytes(y.try_into().expect("8 bytes"));
        bits += (x ^ y).count_ones();
    }
    for (x, y) in words_a.remainder().iter().zip(words_b.remainder()) {
        bits += (x ^ y).count_ones();
    }
    bits as u16
}

/// The smallest distance within which at least `n` of some distances fall (the largest distance
/// when there are fewer), from their histogram: `counts[d]` is how many are `d`, and the last
/// entry is the largest distance seen.
pub fn nearest_in_counts(counts: &[usize], n: usize) -> u16 {
    let mut seen = 0;
    for (d, count) in counts.iter().enumerate() {
        seen += count;
        if seen >= n {
            return d as u16;
        }
    }
    counts.len().saturating_sub(1) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_sums_signed_components() {
        let q = [0.5, -0.25, 0.125, 0.0, 1.0, 2.0, -1.0, 0.5, 3.0];
        let query = SketchQuery::new(&q, &[0.0; 9]);
        // Bits: component 0 and 8 set, the rest clear.
        let sketch = [0b0000_0001u8, 0b1];
        let expected = 0.5 + 0.25 - 0.125 - 0.0 - 1.0 - 2.0 + 1.0 - 0.5 + 3.0;
        assert!((query.score(&sketch) - expected).abs() < 1e-6);
    }

    fn nearest_distance(distances: &[u16], n: usize) -> u16 {
        let mut counts = vec![0usize; distances.iter().max().map_or(0, |&d| d as usize) + 1];
        for &d in distances {
            counts[d as usize] += 1;
        }
        nearest_in_counts(&counts, n)
    }

    #[test]
    fn distances_count_differing_bits_and_the_cut_keeps_enough() {
        let a = [0xFFu8; 9];
        let mut b = [0xFFu8; 9];
        b[0] = 0xF0;
        b[8] = 0xFE;
        assert_eq!(distance(&a, &b), 5);
        let d = [3, 1, 4, 1, 5, 9, 2, 6];
        assert_eq!(nearest_distance(&d, 3), 2);
        assert_eq!(nearest_distance(&d, 4), 3);
        assert_eq!(nearest_distance(&d, 100), 9);
    }

    #[test]
    fn sketches_mark_components_above_the_center() {
        let values = [10u8, (-10i8) as u8, 3, 0];
        let scales = [0.1, 0.1];
        let c = center(&values, &scales, 2);
        assert!((c[0] - 0.65).abs() < 1e-6 && (c[1] + 0.5).abs() < 1e-6);
        assert_eq!(sketches(&values, &scales, 2, &c), vec![0b01, 0b10]);
    }
}
