//! What the transformer tiers (minilm, e5) share: padded batches of token ids, mean pooling over
//! the attention mask, and batching texts of similar length together.

use candle_core::{DType, Device, Tensor};

use super::ChunkPolicy;
use crate::error::Result;

/// How the transformer tiers cut texts: 128 words are about 180 tokens of English, inside
/// minilm's 256-token window and e5's 512.
pub const CHUNKING: ChunkPolicy = ChunkPolicy {
    words: 128,
    overlap: 24,
    max_chunks: 64,
};

/// Runs `forward` on a padded batch (ids and mask, `batch × longest`, padded with `pad`) and
/// mean-pools its output over the mask: one vector per sequence, not normalised.
pub fn pooled(
    batch: &[Vec<u32>],
    pad: u32,
    device: &Device,
    forward: impl FnOnce(&Tensor, &Tensor) -> candle_core::Result<Tensor>,
) -> candle_core::Result<Vec<Vec<f32>>> {
    if batch.is_empty() {
        return Ok(Vec::new());
    }
    let len = batch.iter().map(Vec::len).max().unwrap_or(0).max(1);
    let mut ids = Vec::with_capacity(batch.len() * len);
    let mut mask = Vec::with_capacity(batch.len() * len);
    for seq in batch {
        ids.extend_from_slice(seq);
        ids.extend(std::iter::repeat_n(pad, len - seq.len()));
        mask.extend(std::iter::repeat_n(1u32, seq.len()));
        mask.extend(std::iter::repeat_n(0u32, len - seq.len()));
    }
    let shape = (batch.len(), len);
    let ids = Tensor::from_vec(ids, shape, device)?;
    let mask = Tensor::from_vec(mask, shape, device)?;
    let out = forward(&ids, &mask)?;
    let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
    let sum = out.broadcast_mul(&mask)?.sum(1)?;
    let count = mask.sum(1)?;
    sum.broadcast_div(&count)?.to_vec2::<f32>()
}

/// The additive attention bias of a `batch × len` mask (0 where attended, the lowest `f32`
/// where padded), shaped `batch × 1 × 1 × len` for candle's BERT encoder.
pub fn attention_bias(mask: &Tensor) -> candle_core::Result<Tensor> {
    let mask = mask.to_dtype(DType::F32)?.unsqueeze(1)?.unsqueeze(1)?;
    (mask.ones_like()? - &mask)?.affine(f32::MIN as f64, 0.0)
}

/// Pools every sequence with `run`, sequences of similar length together (little is spent on
/// padding), at most `batch` at a time and at most `tokens` padded tokens a batch (one
/// sequence alone may exceed it); the vectors come back in the sequences' order.
pub fn by_length(
    seqs: &[Vec<u32>],
    batch: usize,
    tokens: usize,
    mut run: impl FnMut(&[Vec<u32>]) -> Result<Vec<Vec<f32>>>,
) -> Result<Vec<Vec<f32>>> {
    let mut order: Vec<usize> = (0..seqs.len()).collect();
    order.sort_by_key(|&i| seqs[i].len());
    let mut out = vec![Vec::new(); seqs.len()];
    let mut start = 0;
    while start < order.len() {
        // Sorted by length, so the last member is the longest.
        let mut end = start + 1;
        while end < order.len()
            && end - start < batch
            && (end - start + 1) * seqs[order[end]].len() <= tokens
        {
            end += 1;
        }
        let group = &order[start..end];
        let members: Vec<Vec<u32>> = group.iter().map(|&i| seqs[i].clone()).collect();
        for (&i, v) in group.iter().zip(run(&members)?) {
            out[i] = v;
        }
        start = end;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_keep_order_and_respect_both_limits() {
        let seqs: Vec<Vec<u32>> = [3usize, 1, 8, 2, 2, 9, 1]
            .iter()
            .map(|&n| vec![n as u32; n])
            .collect();
        let mut sizes = Vec::new();
        let out = by_length(&seqs, 3, 16, |batch| {
            let longest = batch.iter().map(Vec::len).max().unwrap();
            assert!(batch.len() == 1 || batch.len() * longest <= 16);
            sizes.push(batch.len());
            Ok(batch.iter().map(|s| vec![s.len() as f32]).collect())
        })
        .unwrap();
        let lengths: Vec<f32> = seqs.iter().map(|s| s.len() as f32).collect();
        assert_eq!(out.concat(), lengths);
        // 1 1 2 | 2 3 | 8 | 9
        assert_eq!(sizes, vec![3, 2, 1, 1]);
    }
}
