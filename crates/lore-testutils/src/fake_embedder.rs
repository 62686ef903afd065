//! A deterministic embedder for tests: each word hashes to a fixed random direction.
//!
//! Texts sharing words get similar vectors, so ranking, novelty and near-duplicate logic can be
//! tested without a model; the vectors carry no meaning beyond word overlap. It is not an
//! embedder users can choose: lore's own tiers are `none`, `static`, `minilm` and `e5`.

use lore::embed::{ChunkPolicy, Embedder, EmbedderId, normalize};
use lore::hash::fnv1a;

/// Hashing "bag of words" vectors.
pub struct FakeEmbedder {
    id: EmbedderId,
}

impl FakeEmbedder {
    /// A fake embedder with vectors of `dims` components.
    pub fn new(dims: usize) -> FakeEmbedder {
        FakeEmbedder {
            id: EmbedderId {
                tier: "fake".into(),
                model: "word-hash".into(),
                revision: "1".into(),
                dims,
            },
        }
    }

    fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0f32; self.id.dims];
        for word in text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            let mut state = fnv1a(word.to_lowercase().as_bytes());
            for x in v.iter_mut() {
                state = splitmix(state);
                *x += ((state >> 40) as f32 / (1u64 << 24) as f32) - 0.5;
            }
        }
        normalize(&mut v);
        v
    }
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Embedder for FakeEmbedder {
    fn id(&self) -> &EmbedderId {
        &self.id
    }

    fn embed(&self, texts: &[&str]) -> lore::Result<Vec<Vec<f32>>> {
        Ok(texts.iter().map(|t| self.embed_one(t)).collect())
    }

    fn chunking(&self) -> ChunkPolicy {
        ChunkPolicy {
            words: 64,
            overlap: 8,
            max_chunks: 32,
        }
    }

    fn near_duplicate(&self) -> f32 {
        0.85
    }

    fn relevance_floor(&self) -> f32 {
        0.2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_words_make_close_unit_vectors() {
        let e = FakeEmbedder::new(64);
        let v = e
            .embed(&["cache latency", "latency cache", "deploy schema"])
            .unwrap();
        let dot = |a: &[f32], b: &[f32]| -> f32 { a.iter().zip(b).map(|(x, y)| x * y).sum() };
        assert!((dot(&v[0], &v[0]) - 1.0).abs() < 1e-5);
        assert!(
            (dot(&v[0], &v[1]) - 1.0).abs() < 1e-5,
            "word order is ignored"
        );
        assert!(dot(&v[0], &v[2]) < 0.5);
    }
}
